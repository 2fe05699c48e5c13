// End to end: etcd, the apiserver and the controller-manager as real processes. A replication
// controller created through the API converges to its replicas (pods owned by it), follows a scale
// down, and the manager exits cleanly on SIGTERM.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "apps/controller-manager/manager_test_support.h"
#include "backends/httpclient/http_api_client.h"
#include "engine/lease.h"
#include "tests/api_http_contract/apiserver_process.h"
#include "tests/api_http_contract/controller_manager_process.h"
#include "tests/etcd_fixture/etcd_process.h"

#if !defined(RCSIM_APISERVER_BINARY) || !defined(RCSIM_CONTROLLER_MANAGER_BINARY)
#error "the apiserver and controller-manager binaries must be given"
#endif

namespace rcsim {
namespace {

TEST(ControllerManagerTest, ConvergesAControllerCreatedThroughTheApiServer) {
  auto etcd = EtcdProcess::Start();
  ASSERT_TRUE(etcd.ok()) << etcd.status().ToString();
  ApiServerProcessOptions api_options;
  api_options.binary = RCSIM_APISERVER_BINARY;
  api_options.etcd_servers = (*etcd)->endpoint();
  auto apiserver = ApiServerProcess::Start(api_options);
  ASSERT_TRUE(apiserver.ok()) << apiserver.status().ToString();
  ManagerProcess manager((*etcd)->endpoint(), (*apiserver)->url());

  HttpApiClientOptions client_options;
  client_options.base_url = (*apiserver)->url();
  auto client = HttpApiClient::Create(client_options);
  ASSERT_TRUE(client.ok());
  ApiClient& api = **client;
  const std::string ns = "cm";
  // The apiserver admits objects only into namespaces that exist.
  auto made_ns = Call<Result<HttpReply>>([&](auto cb) {
    (*client)->Send("POST", "/api/v1/namespaces",
                    R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"cm"}})", cb);
  });
  ASSERT_TRUE(made_ns.ok() && made_ns->status == 201)
      << (made_ns.ok() ? made_ns->body : made_ns.status().ToString());

  auto created =
      Call<Result<ControllerPtr>>([&](auto cb) { api.controllers().Create(ns, WebController(3), cb); });
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  const std::string uid = (*created)->metadata.uid;

  ListOptions web;
  web.label_selector = LabelSelector::FromMap({{"app", "web"}});
  auto owned_pods = [&]() -> int {
    auto list = Call<Result<ObjectList<Pod>>>([&](auto cb) { api.pods().List(ns, web, cb); });
    if (!list.ok()) return -1;
    int n = 0;
    for (const PodPtr& p : list->items) {
      const OwnerReference* ref = p->metadata.ControllerRef();
      if (ref != nullptr && ref->uid == uid && IsActive(*p)) ++n;
    }
    return n;
  };
  auto rc_status_replicas = [&]() -> int {
    auto rc = Call<Result<ControllerPtr>>([&](auto cb) { api.controllers().Get(ns, "web", cb); });
    return rc.ok() ? (*rc)->status.replicas : -1;
  };

  EXPECT_TRUE(Eventually([&] { return owned_pods() == 3 && rc_status_replicas() == 3; }))
      << "pods: " << owned_pods() << ", status.replicas: " << rc_status_replicas() << "\n"
      << manager.Log();

  // Scale down through the API (retrying a conflict with the manager's status writes).
  ASSERT_TRUE(Eventually([&] {
    auto rc = Call<Result<ControllerPtr>>([&](auto cb) { api.controllers().Get(ns, "web", cb); });
    if (!rc.ok()) return false;
    ReplicationController scaled = **rc;
    scaled.spec.replicas = 1;
    return Call<Result<ControllerPtr>>([&](auto cb) { api.controllers().Update(scaled, cb); }).ok();
  }));
  EXPECT_TRUE(Eventually([&] { return owned_pods() == 1 && rc_status_replicas() == 1; }))
      << "pods: " << owned_pods() << ", status.replicas: " << rc_status_replicas() << "\n"
      << manager.Log();

  EXPECT_EQ(manager.Terminate(), 0) << manager.Log();
}

// Regression: after an etcd restart the manager's watch on /registry/controllers/ never resumed (its
// gRPC channel reconnected only while some thread waited on it, and nothing did), so new, scaled and
// deleted controllers were ignored until the manager restarted, without a log line. Now, after etcd
// comes back (crash and clean stop, same data dir), every change is reconciled within 30 s, and the
// outage and the recovery are logged.
void RunEtcdRestartCase(bool etcd_mode) {
  auto etcd = EtcdProcess::Start();
  ASSERT_TRUE(etcd.ok()) << etcd.status().ToString();
  ApiServerProcessOptions api_options;
  api_options.binary = RCSIM_APISERVER_BINARY;
  api_options.etcd_servers = (*etcd)->endpoint();
  auto apiserver = ApiServerProcess::Start(api_options);
  ASSERT_TRUE(apiserver.ok()) << apiserver.status().ToString();
  std::vector<std::string> flags = {"--apiserver=" + (*apiserver)->url(), "--workers=2", "--resync=1"};
  if (etcd_mode) flags.push_back("--etcd_servers=" + (*etcd)->endpoint());
  ManagerProcess manager(flags);
  HttpApiClientOptions client_options;
  client_options.base_url = (*apiserver)->url();
  auto client = HttpApiClient::Create(client_options);
  ASSERT_TRUE(client.ok());
  Cluster cluster(client->get(), "restart");
  constexpr auto kAfterRestart = std::chrono::seconds(30);

  ASSERT_TRUE(cluster.Create(2, "keep").ok());
  ASSERT_TRUE(cluster.Create(2, "doomed").ok());
  ASSERT_TRUE(Eventually([&] {
    return cluster.ActivePods("keep") == 2 && cluster.ActivePods("doomed") == 2;
  })) << manager.Log();

  int round = 0;
  for (bool abrupt : {true, false}) {
    SCOPED_TRACE(abrupt ? "SIGKILL" : "SIGTERM");
    if (abrupt) {
      (*etcd)->Kill();
    } else {
      (*etcd)->Stop();
    }
    ASSERT_TRUE((*etcd)->Restart().ok());
    const std::string fresh = "fresh" + std::to_string(round);
    // The API server may need a moment to reach etcd again.
    ASSERT_TRUE(EventuallyWithin(kAfterRestart, [&] { return cluster.Create(3, fresh).ok(); }));
    const int keep = 3 + round;
    ASSERT_TRUE(cluster.Scale("keep", keep));
    if (round == 0) {
      ASSERT_TRUE(cluster.Delete("doomed").ok());
      // The manager's controller watch may still be catching up after the restart; a manager that has
      // not yet seen the delete would rightly recreate pods deleted now (an RC it believes exists). A
      // controller created after the delete, once served, shows the delete has been seen (one watch,
      // in revision order, or a re-list made after it).
      ASSERT_TRUE(cluster.Create(1, "after-delete").ok());
      ASSERT_TRUE(EventuallyWithin(kAfterRestart, [&] { return cluster.ActivePods("after-delete") == 1; }))
          << manager.Log();
      ASSERT_TRUE(cluster.DeletePods("doomed"));
    }
    EXPECT_TRUE(EventuallyWithin(
        kAfterRestart, [&] { return cluster.ActivePods(fresh) == 3 && cluster.ActivePods("keep") == keep; }))
        << fresh << ": " << cluster.ActivePods(fresh) << ", keep: " << cluster.ActivePods("keep") << "\n"
        << manager.Log();
    // A manager that still had "doomed" would recreate its pods at once (and at every 1 s resync):
    // none may appear over 2 s, a negative check that can only be made by watching for a while.
    const auto until = SteadyClock::now() + std::chrono::seconds(2);
    while (SteadyClock::now() < until) {
      ASSERT_EQ(cluster.ActivePods("doomed"), 0) << manager.Log();
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ++round;
  }
  const std::string log = manager.Log();
  if (etcd_mode) {
    EXPECT_NE(log.find("watch on /registry/controllers/ lost"), std::string::npos) << log;
    EXPECT_NE(log.find("watch on /registry/controllers/ resumed"), std::string::npos) << log;
  }
  EXPECT_EQ(manager.Terminate(), 0) << manager.Log();
}

TEST(ControllerManagerTest, ResumesControllerWatchAfterEtcdRestart) {
  RunEtcdRestartCase(/*etcd_mode=*/true);
}

// The same through the API only: the API server's own etcd watches must resume for the manager's
// API watches to see anything.
TEST(ControllerManagerTest, ApiOnlyModeRecoversAfterEtcdRestart) { RunEtcdRestartCase(/*etcd_mode=*/false); }

// The default mode: no --etcd_servers, so controllers are listed and watched through the API like
// pods. A controller converges, follows a scale up and a scale down, and a deleted one gets no new pods.
TEST(ControllerManagerTest, ApiOnlyModeConvergesWithoutEtcdAccess) {
  auto etcd = EtcdProcess::Start();
  ASSERT_TRUE(etcd.ok()) << etcd.status().ToString();
  ApiServerProcessOptions api_options;
  api_options.binary = RCSIM_APISERVER_BINARY;
  api_options.etcd_servers = (*etcd)->endpoint();
  auto apiserver = ApiServerProcess::Start(api_options);
  ASSERT_TRUE(apiserver.ok()) << apiserver.status().ToString();
  ManagerProcess manager({"--apiserver=" + (*apiserver)->url(), "--workers=2", "--resync=1"});
  HttpApiClientOptions client_options;
  client_options.base_url = (*apiserver)->url();
  auto client = HttpApiClient::Create(client_options);
  ASSERT_TRUE(client.ok());
  Cluster cluster(client->get(), "apionly");

  ASSERT_TRUE(cluster.Create(3, "web").ok());
  EXPECT_TRUE(Eventually([&] { return cluster.ActivePods("web") == 3; })) << manager.Log();
  ASSERT_TRUE(cluster.Scale("web", 5));
  EXPECT_TRUE(Eventually([&] { return cluster.ActivePods("web") == 5; })) << manager.Log();
  ASSERT_TRUE(cluster.Scale("web", 2));
  EXPECT_TRUE(Eventually([&] { return cluster.ActivePods("web") == 2; })) << manager.Log();
  ASSERT_TRUE(cluster.Delete("web").ok());
  ASSERT_TRUE(cluster.Create(1, "marker").ok());
  EXPECT_TRUE(Eventually([&] { return cluster.ActivePods("marker") == 1; })) << manager.Log();
  ASSERT_TRUE(cluster.DeletePods("web"));
  const auto until = SteadyClock::now() + std::chrono::seconds(2);  // a negative check: watch a while
  while (SteadyClock::now() < until) {
    ASSERT_EQ(cluster.ActivePods("web"), 0) << manager.Log();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_NE(manager.Log().find("replication controllers from the API server"), std::string::npos)
      << manager.Log();
  // One line per action at the default verbosity.
  const std::string log = manager.Log();
  EXPECT_NE(log.find("created pod apionly/web-"), std::string::npos) << log;
  EXPECT_NE(log.find("(controller web)"), std::string::npos) << log;
  EXPECT_NE(log.find("deleted pod apionly/web-"), std::string::npos) << log;
  EXPECT_NE(log.find("wrote status of replicationcontroller apionly/web replicas="), std::string::npos)
      << log;
  EXPECT_EQ(manager.Terminate(), 0) << manager.Log();
}

// Active pods labelled app=<name> as a watch sees them, with the peak: the checker is separate from the
// managers and counts what the API server actually holds.
class ActivePodWatcher {
 public:
  ActivePodWatcher(ApiClient* api, const std::string& ns, const std::string& name) {
    ListOptions sel;
    sel.label_selector = LabelSelector::FromMap({{"app", name}});
    watch_ = api->pods().Watch(ns, sel, "0", [this](const ApiWatchEvent<Pod>& ev) {
      std::lock_guard<std::mutex> lock(mu_);
      if (ev.type == ApiWatchEvent<Pod>::Type::kError) {
        ended_ = true;
        return;
      }
      if (ev.object == nullptr) return;
      const std::string& pod = ev.object->metadata.name;
      if (ev.type == ApiWatchEvent<Pod>::Type::kDeleted || !IsActive(*ev.object)) {
        active_.erase(pod);
      } else {
        active_.insert(pod);
      }
      peak_ = std::max(peak_, static_cast<int>(active_.size()));
    });
  }
  int active() const {
    std::lock_guard<std::mutex> lock(mu_);
    return static_cast<int>(active_.size());
  }
  int peak() const {
    std::lock_guard<std::mutex> lock(mu_);
    return peak_;
  }
  bool ended() const {
    std::lock_guard<std::mutex> lock(mu_);
    return ended_;
  }

 private:
  mutable std::mutex mu_;
  std::set<std::string> active_;
  int peak_ = 0;
  bool ended_ = false;
  std::unique_ptr<ApiWatch> watch_;
};

// Three managers with leader election; an RC scaled to 200; the leader SIGKILLed mid-way. Never more
// than 200 active pods (seen from a watch), converged after a standby takes over, and the takeover
// comes within lease duration + retry period of the kill.
TEST(ControllerManagerTest, LeaderElectionThreeManagersLeaderKilledDuringScaleUp) {
  auto etcd = EtcdProcess::Start();
  ASSERT_TRUE(etcd.ok()) << etcd.status().ToString();
  ApiServerProcessOptions api_options;
  api_options.binary = RCSIM_APISERVER_BINARY;
  api_options.etcd_servers = (*etcd)->endpoint();
  auto apiserver = ApiServerProcess::Start(api_options);
  ASSERT_TRUE(apiserver.ok()) << apiserver.status().ToString();
  // Sanitizer builds run several times slower: a leader that cannot renew within the renew deadline
  // exits by design, so the election's durations scale with the build (the protocol bounds below
  // scale with them).
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
  constexpr int kScale = 4;
#else
  constexpr int kScale = 1;
#endif
  const auto lease_duration = std::chrono::seconds(4) * kScale;
  const auto retry_period = std::chrono::milliseconds(500) * kScale;
  auto flag = [](const char* name, std::chrono::milliseconds d) {
    return std::string("--leader-elect-") + name + "=" + std::to_string(d.count()) + "ms";
  };
  std::vector<std::unique_ptr<ManagerProcess>> managers;
  managers.reserve(3);
  for (int i = 0; i < 3; ++i) {
    managers.push_back(std::make_unique<ManagerProcess>(std::vector<std::string>{
        "--apiserver=" + (*apiserver)->url(), "--concurrent-rc-syncs=2", "--resync=1", "--leader-elect",
        flag("lease-duration", lease_duration), flag("renew-deadline", std::chrono::seconds(3) * kScale),
        flag("retry-period", retry_period), "--leader-elect-resource-name=rcsim-test"}));
  }
  HttpApiClientOptions client_options;
  client_options.base_url = (*apiserver)->url();
  auto client = HttpApiClient::Create(client_options);
  ASSERT_TRUE(client.ok());
  HttpApiClient& http = **client;
  Cluster cluster(client->get(), "election");
  auto holder = [&]() -> std::string {
    auto reply = Call<Result<HttpReply>>([&](auto cb) {
      http.Send("GET", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/rcsim-test", "", cb);
    });
    if (!reply.ok() || reply->status != 200) return "";
    auto lease = DecodeLease(reply->body);
    return lease.ok() ? lease->spec.holder_identity.value_or("") : "";
  };
  std::string leader_id;
  ASSERT_TRUE(Eventually([&] {
    leader_id = holder();
    return !leader_id.empty();
  }));
  ManagerProcess* leader = nullptr;
  ASSERT_TRUE(Eventually([&] {
    for (auto& m : managers) {
      if (m->Identity() == leader_id) leader = m.get();
    }
    return leader != nullptr;
  }));

  ActivePodWatcher watcher(client->get(), "election", "big");
  ASSERT_TRUE(cluster.Create(1, "big").ok());
  ASSERT_TRUE(Eventually([&] { return watcher.active() == 1; })) << leader->Log();
  ASSERT_TRUE(cluster.Scale("big", 200));
  ASSERT_TRUE(EventuallyWithin(std::chrono::seconds(60), [&] { return watcher.active() >= 20; }));
  leader->Kill();
  const auto killed = SteadyClock::now();
  const int at_kill = watcher.active();
  std::string next_id;
  ASSERT_TRUE(EventuallyWithin(std::chrono::seconds(30), [&] {
    next_id = holder();
    return !next_id.empty() && next_id != leader_id;
  }));
  const auto takeover = SteadyClock::now() - killed;
  EXPECT_LE(takeover, lease_duration + retry_period + std::chrono::milliseconds(500) * kScale)
      << std::chrono::duration_cast<std::chrono::milliseconds>(takeover).count() << " ms";
  EXPECT_TRUE(EventuallyWithin(std::chrono::seconds(60), [&] { return watcher.active() == 200; }))
      << watcher.active();
  // No overshoot afterwards either (a negative check: watch for a while).
  const auto until = SteadyClock::now() + std::chrono::seconds(2);
  while (SteadyClock::now() < until) {
    ASSERT_EQ(watcher.active(), 200);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_LE(watcher.peak(), 200);
  EXPECT_FALSE(watcher.ended());
  std::cerr << "leader killed at " << at_kill << " active pods; takeover after "
            << std::chrono::duration_cast<std::chrono::milliseconds>(takeover).count() << " ms; peak "
            << watcher.peak() << "\n";
  for (auto& m : managers) {
    if (m.get() != leader) {
      EXPECT_EQ(m->Terminate(), 0) << m->Log();
    }
  }
}

// /readyz is 503 until the informers have listed (here the API server is frozen with SIGSTOP while
// the manager starts), then 200; /healthz answers all along; /metrics passes `promtool check metrics`
// and counts the pods the manager created.
TEST(ControllerManagerTest, ReadyzFalseUntilSyncedAndMetricsPassPromtool) {
  auto etcd = EtcdProcess::Start();
  ASSERT_TRUE(etcd.ok()) << etcd.status().ToString();
  ApiServerProcessOptions api_options;
  api_options.binary = RCSIM_APISERVER_BINARY;
  api_options.etcd_servers = (*etcd)->endpoint();
  auto apiserver = ApiServerProcess::Start(api_options);
  ASSERT_TRUE(apiserver.ok()) << apiserver.status().ToString();
  ASSERT_EQ(kill((*apiserver)->pid(), SIGSTOP), 0);
  ManagerProcess manager({"--apiserver=" + (*apiserver)->url(), "--resync=1", "--leader-elect=false"});
  std::string url;
  ASSERT_TRUE(Eventually([&] { return !(url = manager.StatusUrl()).empty(); })) << manager.Log();
  HttpApiClientOptions status_options;
  status_options.base_url = url;
  auto status = HttpApiClient::Create(status_options);
  ASSERT_TRUE(status.ok()) << url;
  auto get = [&](const std::string& path) {
    return Call<Result<HttpReply>>([&](auto cb) { (*status)->Send("GET", path, "", cb); });
  };
  auto healthz = get("/healthz");
  ASSERT_TRUE(healthz.ok());
  EXPECT_EQ(healthz->status, 200);
  auto readyz = get("/readyz");
  ASSERT_TRUE(readyz.ok());
  EXPECT_EQ(readyz->status, 503) << readyz->body;
  ASSERT_EQ(kill((*apiserver)->pid(), SIGCONT), 0);
  EXPECT_TRUE(Eventually([&] {
    auto r = get("/readyz");
    return r.ok() && r->status == 200;
  })) << manager.Log();

  HttpApiClientOptions client_options;
  client_options.base_url = (*apiserver)->url();
  auto client = HttpApiClient::Create(client_options);
  ASSERT_TRUE(client.ok());
  Cluster cluster(client->get(), "metrics");
  ASSERT_TRUE(cluster.Create(2, "m").ok());
  ASSERT_TRUE(Eventually([&] { return cluster.ActivePods("m") == 2; })) << manager.Log();
  // The pods are visible before the manager's sync that created them has finished (its create replies and
  // status write are still on their way): scrape until that sync is counted.
  const std::regex synced_re(
      "replication_controller_sync_duration_seconds_count\\{result=\"success\"\\} (\\d+)");
  std::string text;
  ASSERT_TRUE(Eventually([&] {
    auto metrics = get("/metrics");
    if (!metrics.ok() || metrics->status != 200) return false;
    text = metrics->body;
    std::smatch synced;
    return std::regex_search(text, synced, synced_re) && std::stoi(synced[1]) >= 1;
  })) << text;
  EXPECT_NE(
      text.find("replication_controller_pod_operations_total{operation=\"create\",result=\"success\"} 2"),
      std::string::npos)
      << text;
  for (const char* name :
       {"workqueue_depth", "workqueue_retries_total", "rest_client_requests_total",
        "rest_client_request_duration_seconds_bucket", "informers_synced 1", "leader_election_master_status",
        "workqueue_queue_duration_seconds_bucket{name=\"replicationmanager\",le=\"1e-08\"}",
        "workqueue_work_duration_seconds_count{name=\"replicationmanager\"}",
        "workqueue_unfinished_work_seconds{name=\"replicationmanager\"}",
        "workqueue_longest_running_processor_seconds{name=\"replicationmanager\"}"}) {
    EXPECT_NE(text.find(name), std::string::npos) << name;
  }
  // The manager has queued the controller at least once by now.
  std::smatch adds;
  ASSERT_TRUE(std::regex_search(text, adds,
                                std::regex("workqueue_adds_total\\{name=\"replicationmanager\"\\} (\\d+)")))
      << text;
  EXPECT_GE(std::stoi(adds[1]), 1);
  const std::string path =
      std::filesystem::temp_directory_path() / ("rcsim-metrics-" + std::to_string(getpid()));
  {
    std::ofstream out(path);
    out << text;
  }
  // NOLINTNEXTLINE(concurrency-mt-unsafe): no other thread of this test changes the environment.
  const int rc = std::system(("promtool check metrics < " + path + " > " + path + ".out 2>&1").c_str());
  std::ifstream lint(path + ".out");
  std::stringstream lint_text;
  lint_text << lint.rdbuf();
  EXPECT_EQ(rc, 0) << lint_text.str();
  std::filesystem::remove(path);
  std::filesystem::remove(path + ".out");
  EXPECT_EQ(manager.Terminate(), 0) << manager.Log();
}

// The manager given only --kubeconfig (server and bearer token from the file, the API server
// requiring the token): it converges a controller. An https:// server whose CA file cannot be read is
// refused at start with a clear message, not silently downgraded. (HTTPS itself: tests/https_e2e.)
TEST(ControllerManagerTest, OnlyAKubeconfigWithATokenConverges) {
  auto etcd = EtcdProcess::Start();
  ASSERT_TRUE(etcd.ok()) << etcd.status().ToString();
  ApiServerProcessOptions api_options;
  api_options.binary = RCSIM_APISERVER_BINARY;
  api_options.etcd_servers = (*etcd)->endpoint();
  api_options.bearer_token = "s3cr3t-token";
  auto apiserver = ApiServerProcess::Start(api_options);
  ASSERT_TRUE(apiserver.ok()) << apiserver.status().ToString();
  const std::string kubeconfig =
      (std::filesystem::temp_directory_path() / ("rcsim-kubeconfig-" + std::to_string(getpid()))).string();
  auto write_config = [&](const std::string& server, const std::string& cluster_extra = "") {
    std::ofstream(kubeconfig) << "apiVersion: v1\nkind: Config\ncurrent-context: test\n"
                              << "clusters:\n- name: c\n  cluster:\n    server: " << server << "\n"
                              << cluster_extra << "users:\n- name: u\n  user:\n    token: s3cr3t-token\n"
                              << "contexts:\n- name: test\n  context: {cluster: c, user: u}\n";
  };
  write_config("https://127.0.0.1:1", "    certificate-authority: /nonexistent/ca.crt\n");
  {
    ManagerProcess refused(std::vector<std::string>{"--kubeconfig=" + kubeconfig});
    EXPECT_EQ(refused.WaitExit(), 2);
    EXPECT_NE(refused.Log().find("certificate-authority /nonexistent/ca.crt"), std::string::npos)
        << refused.Log();
  }
  write_config((*apiserver)->url());
  ManagerProcess manager(std::vector<std::string>{"--kubeconfig=" + kubeconfig, "--resync=1"});
  HttpApiClientOptions client_options;
  client_options.base_url = (*apiserver)->url();
  client_options.bearer_token = "s3cr3t-token";
  auto client = HttpApiClient::Create(client_options);
  ASSERT_TRUE(client.ok());
  Cluster cluster(client->get(), "kubeconfig");
  ASSERT_TRUE(cluster.Create(3, "kc").ok());
  EXPECT_TRUE(Eventually([&] { return cluster.ActivePods("kc") == 3; })) << manager.Log();
  EXPECT_EQ(manager.Terminate(), 0) << manager.Log();
  std::filesystem::remove(kubeconfig);
}

// kube-controller-manager's --secure-port: /healthz, /readyz and /metrics over HTTPS, with a self-signed
// certificate made at start (a client verifying against another CA refuses it, one skipping verification
// gets the answers; plain HTTP to that port gets none), or with --tls-cert-file (a client trusting its
// CA, verifying host and chain, gets them). --port keeps serving plain HTTP beside it.
TEST(ControllerManagerTest, SecurePortServesHttpsSelfSignedOrWithTheGivenCertificate) {
  auto etcd = EtcdProcess::Start();
  ASSERT_TRUE(etcd.ok()) << etcd.status().ToString();
  ApiServerProcessOptions api_options;
  api_options.binary = RCSIM_APISERVER_BINARY;
  api_options.etcd_servers = (*etcd)->endpoint();
  auto apiserver = ApiServerProcess::Start(api_options);
  ASSERT_TRUE(apiserver.ok()) << apiserver.status().ToString();
  const std::string certs =
      std::filesystem::temp_directory_path() / ("rcsim-cm-certs-" + std::to_string(getpid()));
  // NOLINTNEXTLINE(concurrency-mt-unsafe): no other thread of this test changes the environment.
  ASSERT_EQ(std::system((std::string(RCSIM_MAKE_CERTS) + " " + certs + " > /dev/null 2>&1").c_str()), 0);

  auto get = [](const std::string& base, const std::string& path, const TlsClientConfig& tls) {
    HttpApiClientOptions o;
    o.base_url = base;
    o.tls = tls;
    o.connect_timeout = std::chrono::seconds(2);
    o.request_timeout = std::chrono::seconds(5);
    auto client = HttpApiClient::Create(o);
    if (!client.ok()) return Result<HttpReply>(client.status());
    return Call<Result<HttpReply>>([&](auto cb) { (*client)->Send("GET", path, "", cb); });
  };
  auto https_url = [](const ControllerManagerProcess& m) -> std::string {
    const std::string log = m.Log();
    const std::string marker = "/metrics on https://";
    const size_t at = log.find(marker);
    const size_t end = at == std::string::npos ? at : log.find('\n', at);
    if (end == std::string::npos) return "";
    return log.substr(at + marker.size() - 8, end - at - marker.size() + 8);
  };

  {
    ManagerProcess manager(
        {"--apiserver=" + (*apiserver)->url(), "--leader-elect=false", "--port=0", "--secure-port=0"});
    std::string url;
    ASSERT_TRUE(Eventually([&] { return !(url = https_url(manager)).empty(); })) << manager.Log();
    EXPECT_NE(manager.Log().find("self-signed"), std::string::npos) << manager.Log();
    TlsClientConfig skip;
    skip.insecure_skip_verify = true;
    auto healthz = get(url, "/healthz", skip);
    ASSERT_TRUE(healthz.ok()) << healthz.status().ToString();
    EXPECT_EQ(healthz->status, 200);
    EXPECT_TRUE(Eventually([&] {
      auto r = get(url, "/readyz", skip);
      return r.ok() && r->status == 200;
    }));
    auto metrics = get(url, "/metrics", skip);
    ASSERT_TRUE(metrics.ok());
    EXPECT_EQ(metrics->status, 200);
    EXPECT_NE(metrics->body.find("workqueue_depth"), std::string::npos);
    // Verifying against a CA that did not sign it: refused.
    TlsClientConfig other_ca;
    other_ca.ca_file = certs + "/ca.crt";
    auto refused = get(url, "/healthz", other_ca);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.status().message().find("certificate verify failed"), std::string::npos)
        << refused.status().ToString();
    // Plain HTTP to the HTTPS port gets no answer; --port still serves it.
    std::string plain_to_secure = url;
    plain_to_secure.replace(0, 5, "http");
    auto plain = get(plain_to_secure, "/healthz", {});
    EXPECT_TRUE(!plain.ok() || plain->status != 200);
    auto http = get(manager.StatusUrl(), "/healthz", {});
    ASSERT_TRUE(http.ok()) << manager.StatusUrl();
    EXPECT_EQ(http->status, 200);
    EXPECT_EQ(manager.StatusUrl().rfind("http://", 0), 0u) << manager.StatusUrl();
    EXPECT_EQ(manager.Terminate(), 0) << manager.Log();
  }
  {
    ManagerProcess manager({"--apiserver=" + (*apiserver)->url(), "--leader-elect=false", "--port=-1",
                            "--secure-port=0", "--tls-cert-file=" + certs + "/server.crt",
                            "--tls-private-key-file=" + certs + "/server.key"});
    std::string url;
    ASSERT_TRUE(Eventually([&] { return !(url = https_url(manager)).empty(); })) << manager.Log();
    TlsClientConfig verify;
    verify.ca_file = certs + "/ca.crt";
    EXPECT_TRUE(Eventually([&] {
      auto r = get(url, "/readyz", verify);
      return r.ok() && r->status == 200;
    })) << manager.Log();
    auto metrics = get(url, "/metrics", verify);
    ASSERT_TRUE(metrics.ok()) << metrics.status().ToString();
    EXPECT_EQ(metrics->status, 200);
    EXPECT_EQ(manager.Terminate(), 0) << manager.Log();
  }
  // A certificate without its key is refused at start.
  ManagerProcess half({"--apiserver=" + (*apiserver)->url(), "--leader-elect=false", "--secure-port=0",
                       "--tls-cert-file=" + certs + "/server.crt"});
  EXPECT_EQ(half.WaitExit(), 2) << half.Log();
  EXPECT_NE(half.Log().find("--tls-cert-file and --tls-private-key-file go together"), std::string::npos);
  std::filesystem::remove_all(certs);
}

}  // namespace
}  // namespace rcsim
