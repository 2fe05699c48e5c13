// The API server and the controller-manager SIGKILLed under load, as real processes over a real etcd:
// - the API server killed and restarted (same port) while the manager scales a controller up and 100
//   watch clients follow the pods: the manager recovers and converges, the watchers are served again,
//   and active pods never exceed replicas;
// - the controller-manager killed 20 times, at seeded random moments of scale-ups that end at 500
//   replicas, a new one started each time (leader election on, with a short lease, as an HA
//   deployment runs it): active pods never exceed replicas.
// A watch from the test (PodTracker) counts active pods at every revision. Figures are printed.
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "tests/api_http_contract/apiserver_process.h"
#include "tests/api_http_contract/controller_manager_process.h"
#include "tests/etcd_fixture/etcd_process.h"
#include "tests/faults/fault_fixture.h"

#if !defined(RCSIM_APISERVER_BINARY) || !defined(RCSIM_CONTROLLER_MANAGER_BINARY)
#error "the apiserver and controller-manager binaries must be given"
#endif

namespace rcsim::faults {
namespace {

constexpr auto kConverge = std::chrono::seconds(120);

class ProcessKillTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto etcd = EtcdProcess::Start();
    ASSERT_TRUE(etcd.ok()) << etcd.status().ToString();
    etcd_ = std::move(etcd).value();
    ApiServerProcessOptions api_options;
    api_options.binary = RCSIM_APISERVER_BINARY;
    api_options.etcd_servers = etcd_->endpoint();
    auto api = ApiServerProcess::Start(api_options);
    ASSERT_TRUE(api.ok()) << api.status().ToString();
    api_ = std::move(api).value();
    client_ = TestClient(api_->url());
    ASSERT_NE(client_, nullptr);
    Status s = CreateNamespace(*client_, "faults");
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  std::unique_ptr<ControllerManagerProcess> StartManager(std::vector<std::string> extra) {
    std::vector<std::string> flags = {"--apiserver=" + api_->url(), "--workers=2", "--resync=1"};
    flags.insert(flags.end(), extra.begin(), extra.end());
    return std::make_unique<ControllerManagerProcess>(RCSIM_CONTROLLER_MANAGER_BINARY, flags);
  }

  std::unique_ptr<EtcdProcess> etcd_;
  std::unique_ptr<ApiServerProcess> api_;
  std::unique_ptr<HttpApiClient> client_;
};

TEST_F(ProcessKillTest, ApiServerSigkilledUnderLoadFromTheManagerAnd100Watchers) {
  auto manager = StartManager({"--leader-elect=false"});
  PodTracker web(api_->url(), "faults");
  WatchCrowd crowd(api_->url(), "faults", 100);
  ASSERT_TRUE(CreateController(*client_, "faults", MakeController("web", 0)).ok());
  ASSERT_TRUE(PollUntil(kConverge, [&] { return web.synced(); }));
  std::vector<double> recoveries;
  double worst_recovery = 0;
  int target = 0;
  for (int round = 1; round <= 3; ++round) {
    const int previous = target;
    target = 150 * round;
    // Killed at the event that shows the 20th new pod: the manager is mid-burst.
    const pid_t victim = api_->pid();
    std::atomic<bool> fired{false};
    web.OnActive(previous + 20, [victim, &fired] {
      kill(victim, SIGKILL);
      fired = true;
    });
    ASSERT_TRUE(ScaleController(*client_, "faults", "web", target).ok());
    ASSERT_TRUE(PollUntil(kConverge, [&] { return fired.load(); })) << web.active();
    api_->Kill();  // reaps it
    const int at_kill = web.active();
    const auto restart_at = SteadyClock::now();
    ASSERT_TRUE(api_->Restart().ok());
    const double restart_ms = MillisSince(restart_at);
    crowd.MarkEpoch();
    ASSERT_TRUE(PollUntil(kConverge, [&] { return web.active() == target; }))
        << "round " << round << ": " << web.active() << " of " << target << "\n"
        << manager->Log().substr(0, 20000);
    const double converge_ms = MillisSince(restart_at);
    recoveries.push_back(converge_ms);
    worst_recovery = std::max(worst_recovery, converge_ms);
    // Every watcher is served by the new server (each got an event since the restart).
    ASSERT_TRUE(PollUntil(kConverge, [&] { return crowd.FreshSince() == 100; })) << crowd.FreshSince();
    EXPECT_LE(web.peak(), target) << "round " << round << "\n" << manager->Log();
    std::printf(
        "FIGURES apiserver SIGKILL round %d: killed at %d active pods of %d; restart (to /version 200) "
        "%.0f ms; converged %.0f ms after the kill; peak active %d\n",
        round, at_kill, target, restart_ms, converge_ms, web.peak());
  }
  std::printf(
      "FIGURES apiserver SIGKILL: worst recovery %.0f ms; watch events %lld, watches re-opened %lld; "
      "peak active %d of %d\n",
      worst_recovery, static_cast<long long>(crowd.events()), static_cast<long long>(crowd.reopened()),
      web.peak(), target);
  RecordProperty("worst_recovery_ms", static_cast<int>(worst_recovery));
  RecordProperty("peak_active", web.peak());
}

TEST_F(ProcessKillTest, ControllerManagerSigkilled20TimesDuringScaleUpsTo500) {
  constexpr int kRounds = 20;
  constexpr int kFinal = 500;
  // A short lease so each successor takes over in about 2 s; the dead leader's lease must expire
  // first, which is what keeps two managers from acting at once.
  const std::vector<std::string> election = {"--leader-elect=true", "--leader-elect-lease-duration=2s",
                                             "--leader-elect-renew-deadline=1500ms",
                                             "--leader-elect-retry-period=200ms"};
  PodTracker web(api_->url(), "faults");
  ASSERT_TRUE(CreateController(*client_, "faults", MakeController("web", 0)).ok());
  ASSERT_TRUE(PollUntil(kConverge, [&] { return web.synced(); }));
  auto manager = StartManager(election);
  std::mt19937_64 rng(20261201);  // seeded: the kill points repeat from run to run
  double worst_takeover = 0;
  int killed_mid_burst = 0;
  const auto start = SteadyClock::now();
  for (int round = 1; round <= kRounds; ++round) {
    // Down to a seeded size first (replicas low), then up to kFinal: a scale-up of up to 500 pods.
    const int low = static_cast<int>(rng() % (kFinal / 2));
    ASSERT_TRUE(ScaleController(*client_, "faults", "web", low).ok());
    ASSERT_TRUE(PollUntil(kConverge, [&] { return web.active() == low; }))
        << "round " << round << ": " << web.active() << " of " << low << "\n"
        << manager->Log().substr(0, 20000);
    // The kill point: a seeded count of pods between the two, acted on at the event that reaches it.
    const int kill_at = low + 1 + static_cast<int>(rng() % static_cast<uint64_t>(kFinal - low - 1));
    const pid_t victim = manager->pid();
    std::atomic<bool> fired{false};
    web.OnActive(kill_at, [victim, &fired] {
      kill(victim, SIGKILL);
      fired = true;
    });
    ASSERT_TRUE(ScaleController(*client_, "faults", "web", kFinal).ok());
    ASSERT_TRUE(PollUntil(kConverge, [&] { return fired.load(); }))
        << "round " << round << ": " << web.active() << " < " << kill_at << "\n"
        << manager->Log().substr(0, 20000);
    manager->Kill();  // reaps it
    const auto killed_at = SteadyClock::now();
    const int at_kill = web.active();
    if (at_kill < kFinal) ++killed_mid_burst;
    manager = StartManager(election);
    ASSERT_TRUE(PollUntil(kConverge, [&] { return web.active() == kFinal; }))
        << "round " << round << ": " << web.active() << " of " << kFinal << "\n"
        << manager->Log().substr(0, 20000);
    const double takeover_ms = MillisSince(killed_at);
    worst_takeover = std::max(worst_takeover, takeover_ms);
    ASSERT_LE(web.peak(), kFinal) << "round " << round << ": the controller overshot\n" << manager->Log();
    std::printf(
        "FIGURES manager SIGKILL round %d: %d -> %d, killed at pod %d (%d active when reaped); converged "
        "%.0f ms later; peak %d\n",
        round, low, kFinal, kill_at, at_kill, takeover_ms, web.peak());
  }
  EXPECT_GT(killed_mid_burst, kRounds / 2) << "the kills should land while the manager is creating";
  std::printf(
      "FIGURES manager SIGKILL x%d: %.1f s in all; %d kills before the scale-up completed; worst kill -> "
      "converged %.0f ms; peak active %d of %d\n",
      kRounds, MillisSince(start) / 1000, killed_mid_burst, worst_takeover, web.peak(), kFinal);
  RecordProperty("worst_takeover_ms", static_cast<int>(worst_takeover));
  RecordProperty("peak_active", web.peak());
}

}  // namespace
}  // namespace rcsim::faults
