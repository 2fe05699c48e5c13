#include "backends/process/process_runtime.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "backends/http/thread_executor.h"

namespace rcsim {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// Polls `pred` until it holds or `deadline` passes (a short pause between polls, never a fixed wait).
bool WaitFor(const std::function<bool()>& pred, std::chrono::milliseconds deadline = 10s) {
  const auto end = std::chrono::steady_clock::now() + deadline;
  while (std::chrono::steady_clock::now() < end) {
    if (pred()) return true;
    std::this_thread::sleep_for(5ms);
  }
  return pred();
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool Alive(pid_t pid) { return ProcessRuntime::ProcessStartTime(pid).has_value(); }

ContainerConfig Config(const std::string& pod, std::vector<std::string> command,
                       std::vector<std::string> args = {}) {
  ContainerConfig c;
  c.pod_namespace = "default";
  c.pod_name = pod;
  c.pod_uid = "uid-" + pod;
  c.container_name = "main";
  c.image = "busybox:1.36";
  c.command = std::move(command);
  c.args = std::move(args);
  return c;
}

class ProcessRuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/rcsim-process-runtime-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    Open();
  }
  void TearDown() override {
    // Nothing a test started may outlive it.
    if (runtime_) {
      for (const ProcessInfo& p : runtime_->Running()) kill(-p.pid, SIGKILL);
    }
    for (pid_t pid : extra_pids_) kill(-pid, SIGKILL);
    runtime_.reset();
    // The killed containers' shims record their exits as they see them (an exit file written and
    // renamed): removing the tree can race one, so retry until it is gone.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    std::error_code ec;
    do {
      ec.clear();
      fs::remove_all(root_, ec);
    } while (ec && std::chrono::steady_clock::now() < deadline);
    EXPECT_FALSE(ec) << "cannot remove " << root_ << ": " << ec.message();
  }

  void Open() {
    ProcessRuntimeOptions options;
    options.root_dir = root_;
    options.executor = &executor_;
    Result<std::unique_ptr<ProcessRuntime>> rt = ProcessRuntime::Open(options);
    ASSERT_TRUE(rt.ok()) << rt.status().ToString();
    runtime_ = std::move(rt).value();
    runtime_->SetExitListener([this](const std::string& id, int code) {
      std::lock_guard<std::mutex> lock(mu_);
      exits_[id] = code;
    });
  }
  // Leaves the containers running, as an agent restart does.
  void Reopen() {
    for (const ProcessInfo& p : runtime_->Running()) extra_pids_.push_back(p.pid);
    runtime_.reset();
    Open();
  }

  Result<std::string> StartSync(const ContainerConfig& config) {
    std::promise<Result<std::string>> p;
    runtime_->Start(config, [&p](Result<std::string> r) { p.set_value(std::move(r)); });
    return p.get_future().get();
  }
  void StopSync(const std::string& id, Duration grace) {
    std::promise<void> p;
    runtime_->Stop(id, grace, [&p](const Status&) { p.set_value(); });
    p.get_future().get();
  }
  std::optional<int> ExitOf(const std::string& id) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = exits_.find(id);
    if (it == exits_.end()) return std::nullopt;
    return it->second;
  }
  std::optional<ProcessInfo> Info(const std::string& id) {
    for (const ProcessInfo& p : runtime_->Running()) {
      if (p.id == id) return p;
    }
    return std::nullopt;
  }

  std::string root_;
  ThreadExecutor executor_;
  std::unique_ptr<ProcessRuntime> runtime_;
  std::vector<pid_t> extra_pids_;
  std::mutex mu_;
  std::map<std::string, int> exits_;  // guarded by mu_
};

// The spec's env (ContainerConfig::env) comes after the runtime's own variables and replaces one of the
// same name.
TEST_F(ProcessRuntimeTest, SpecEnvReachesTheProcessAndReplacesADefaultOfTheSameName) {
  ContainerConfig config = Config("env-1", {"sh", "-c"}, {"echo $GREETING/$POD_NAME/$EMPTY/$HOSTNAME"});
  config.env = {{"GREETING", "hello world"}, {"EMPTY", ""}, {"HOSTNAME", "custom"}};
  Result<std::string> id = StartSync(config);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  ASSERT_TRUE(WaitFor([&] { return ExitOf(*id).has_value(); }));
  EXPECT_EQ(ReadFile(root_ + "/pods/default_env-1_uid-env-1/main/" + *id + ".stdout.log"),
            "hello world/env-1//custom\n");
}

TEST_F(ProcessRuntimeTest, RunsCommandAndArgsInTheWorkDirWithEnvAndLogsAndReportsTheExitCode) {
  Result<std::string> id = StartSync(
      Config("web-1", {"sh", "-c"},
             {"echo out; echo err >&2; pwd; echo $POD_NAME $POD_NAMESPACE $CONTAINER_NAME; exit 3"}));
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  ASSERT_TRUE(WaitFor([&] { return ExitOf(*id).has_value(); }));
  EXPECT_EQ(*ExitOf(*id), 3);
  const std::string logs = root_ + "/pods/default_web-1_uid-web-1/main/" + *id;
  const std::string out = ReadFile(logs + ".stdout.log");
  EXPECT_NE(out.find("out\n"), std::string::npos) << out;
  EXPECT_NE(out.find(root_ + "/pods/default_web-1_uid-web-1/main/work\n"), std::string::npos) << out;
  EXPECT_NE(out.find("web-1 default main\n"), std::string::npos) << out;
  EXPECT_EQ(ReadFile(logs + ".stderr.log"), "err\n");
  // The exit was reported, so nothing is left to re-adopt.
  EXPECT_TRUE(runtime_->Running().empty());
  EXPECT_FALSE(fs::exists(root_ + "/containers/" + *id + ".json"));
}

TEST_F(ProcessRuntimeTest, EachContainerHasItsOwnProcessGroupAndSession) {
  Result<std::string> id = StartSync(Config("a", {"sleep", "30"}));
  ASSERT_TRUE(id.ok());
  const pid_t pid = Info(*id)->pid;
  EXPECT_EQ(getpgid(pid), pid);
  EXPECT_NE(getsid(pid), getsid(0));
  StopSync(*id, 0s);
}

TEST_F(ProcessRuntimeTest, KilledProcessReports128PlusTheSignal) {
  Result<std::string> id = StartSync(Config("a", {"sleep", "30"}));
  ASSERT_TRUE(id.ok());
  ASSERT_EQ(kill(Info(*id)->pid, SIGKILL), 0);
  ASSERT_TRUE(WaitFor([&] { return ExitOf(*id).has_value(); }));
  EXPECT_EQ(*ExitOf(*id), 137);
}

TEST_F(ProcessRuntimeTest, StopSendsSigtermToTheWholeGroup) {
  // The shell traps TERM; its background sleep (same group) dies of it.
  Result<std::string> id = StartSync(
      Config("a", {"sh", "-c", "trap 'echo term; exit 0' TERM; sleep 30 & echo $! > sleep.pid; wait"}));
  ASSERT_TRUE(id.ok());
  const ProcessInfo info = *Info(*id);
  const std::string pid_file = root_ + "/pods/default_a_uid-a/main/work/sleep.pid";
  ASSERT_TRUE(WaitFor([&] { return ReadFile(pid_file).find('\n') != std::string::npos; }));
  const pid_t sleep_pid = std::stoi(ReadFile(pid_file));
  ASSERT_TRUE(Alive(sleep_pid));
  const auto t0 = std::chrono::steady_clock::now();
  StopSync(*id, 20s);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s);  // it left on SIGTERM, not at the SIGKILL
  EXPECT_EQ(ExitOf(*id).value_or(-1), 0);
  EXPECT_EQ(ReadFile(info.stdout_path), "term\n");
  EXPECT_TRUE(WaitFor([&] { return !Alive(sleep_pid); }));
}

TEST_F(ProcessRuntimeTest, StopKillsAfterTheGracePeriod) {
  // Ignored signals stay ignored across exec, so the loop's sleeps ignore TERM too.
  Result<std::string> id =
      StartSync(Config("a", {"sh", "-c", "trap '' TERM; touch trapped; while :; do sleep 0.05; done"}));
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(WaitFor([&] { return fs::exists(root_ + "/pods/default_a_uid-a/main/work/trapped"); }));
  const auto t0 = std::chrono::steady_clock::now();
  StopSync(*id, 300ms);
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 300ms);
  EXPECT_EQ(ExitOf(*id).value_or(-1), 137);
}

TEST_F(ProcessRuntimeTest, StopOfAnUnknownIdCompletes) { StopSync("nope", 1s); }

TEST_F(ProcessRuntimeTest, StartFailsForAMissingExecutableOrNoCommand) {
  Result<std::string> missing = StartSync(Config("a", {"no-such-program-rcsim"}));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), Code::kNotFound);
  EXPECT_NE(missing.status().message().find("no-such-program-rcsim"), std::string::npos);
  Result<std::string> none = StartSync(Config("a", {}));
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("neither command nor args"), std::string::npos);
  // args alone are the command (there is no image entrypoint to prepend them to).
  Result<std::string> args_only = StartSync(Config("b", {}, {"sh", "-c", "exit 4"}));
  ASSERT_TRUE(args_only.ok()) << args_only.status().ToString();
  ASSERT_TRUE(WaitFor([&] { return ExitOf(*args_only).has_value(); }));
  EXPECT_EQ(*ExitOf(*args_only), 4);
  EXPECT_TRUE(runtime_->Running().empty());
}

TEST_F(ProcessRuntimeTest, ARestartedRuntimeReadoptsKeepsClaimedAndStopsTheRest) {
  Result<std::string> kept = StartSync(Config("kept", {"sleep", "30"}));
  Result<std::string> gone = StartSync(Config("gone", {"sleep", "30"}));
  ASSERT_TRUE(kept.ok() && gone.ok());
  const pid_t kept_pid = Info(*kept)->pid, gone_pid = Info(*gone)->pid;
  Reopen();
  ASSERT_EQ(runtime_->Running().size(), 2u);
  EXPECT_EQ(runtime_->unclaimed_count(), 2u);
  EXPECT_TRUE(Info(*kept)->adopted);
  EXPECT_TRUE(runtime_->Adoptable("uid-kept", Info(*kept)->container_name));
  EXPECT_FALSE(runtime_->Adoptable("uid-other", Info(*kept)->container_name));

  // Starting the same pod's container claims the running process: nothing new runs.
  Result<std::string> again = StartSync(Config("kept", {"sleep", "30"}));
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(runtime_->Adoptable("uid-kept", Info(*kept)->container_name)) << "claimed already";
  EXPECT_EQ(*again, *kept);
  EXPECT_EQ(Info(*kept)->pid, kept_pid);
  EXPECT_EQ(runtime_->unclaimed_count(), 1u);

  EXPECT_EQ(runtime_->StopUnclaimed({"uid-kept"}, 5s), 1);
  EXPECT_TRUE(WaitFor([&] { return !Alive(gone_pid); }));
  EXPECT_TRUE(Alive(kept_pid));
  EXPECT_FALSE(ExitOf(*gone).has_value());  // never handed out by this runtime: not reported

  // The adopted process's exit still comes with its code (its shim recorded it).
  ASSERT_EQ(kill(kept_pid, SIGKILL), 0);
  ASSERT_TRUE(WaitFor([&] { return ExitOf(*kept).has_value(); }));
  EXPECT_EQ(*ExitOf(*kept), 137);
  EXPECT_TRUE(WaitFor([&] { return runtime_->Running().empty(); }));
}

TEST_F(ProcessRuntimeTest, AContainerThatExitedWhileNoAgentRanIsStartedAfresh) {
  Result<std::string> id = StartSync(Config("a", {"sleep", "30"}));
  ASSERT_TRUE(id.ok());
  const pid_t pid = Info(*id)->pid;
  Reopen();
  runtime_.reset();  // no agent
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  ASSERT_TRUE(WaitFor([&] { return fs::exists(root_ + "/containers/" + *id + ".exit"); }));
  Open();
  EXPECT_TRUE(runtime_->Running().empty());
  Result<std::string> fresh = StartSync(Config("a", {"sleep", "30"}));
  ASSERT_TRUE(fresh.ok());
  EXPECT_NE(*fresh, *id);
  EXPECT_NE(Info(*fresh)->pid, pid);
  StopSync(*fresh, 0s);
}

TEST_F(ProcessRuntimeTest, APidWithADifferentStartTimeIsNotAdopted) {
  // A state file naming a live process (this test) with another start time: a recycled pid.
  const uint64_t mine = *ProcessRuntime::ProcessStartTime(getpid());
  nlohmann::json j = {
      {"id", "old-1"},           {"pod_uid", "uid-x"},   {"container_name", "main"},    {"pid", getpid()},
      {"start_ticks", mine + 1}, {"shim_pid", getpid()}, {"shim_start_ticks", mine + 1}};
  runtime_.reset();
  std::ofstream(root_ + "/containers/old-1.json") << j.dump();
  Open();
  EXPECT_TRUE(runtime_->Running().empty());
  EXPECT_FALSE(fs::exists(root_ + "/containers/old-1.json"));
  // A torn state file is dropped too.
  runtime_.reset();
  std::ofstream(root_ + "/containers/old-2.json") << "{\"id\": ";
  Open();
  EXPECT_TRUE(runtime_->Running().empty());
  EXPECT_FALSE(fs::exists(root_ + "/containers/old-2.json"));
}

TEST(ProcessStartTimeTest, KnowsLiveProcessesOnly) {
  EXPECT_TRUE(ProcessRuntime::ProcessStartTime(getpid()).has_value());
  EXPECT_FALSE(ProcessRuntime::ProcessStartTime(0).has_value());
  EXPECT_FALSE(ProcessRuntime::ProcessStartTime(-5).has_value());
}

// An exec readinessProbe (issue 10): not ready until the probe first succeeds, then every change goes
// to the readiness listener; the probe runs in the container's working directory and environment.
TEST_F(ProcessRuntimeTest, ExecReadinessProbeReportsReadyFromItsFirstSuccessAndEveryChange) {
  std::mutex mu;
  std::vector<std::pair<std::string, bool>> changes;  // guarded by mu
  runtime_->SetReadinessListener([&](const std::string& id, bool ready) {
    std::lock_guard<std::mutex> lock(mu);
    changes.emplace_back(id, ready);
  });
  auto changes_of = [&](const std::string& id) {
    std::lock_guard<std::mutex> lock(mu);
    std::vector<bool> out;
    for (const auto& [who, ready] : changes) {
      if (who == id) out.push_back(ready);
    }
    return out;
  };
  ContainerConfig config = Config("probed", {"sleep", "600"});
  ExecProbe probe;
  probe.command = {"sh", "-c", "echo run >> runs; test -f ready && test \"$POD_NAME\" = probed"};
  probe.period = 50ms;
  probe.failure_threshold = 2;
  config.readiness_probe = probe;
  Result<std::string> id = StartSync(config);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  EXPECT_FALSE(runtime_->Ready(*id));
  // A few failing runs: still not ready, nothing reported.
  const std::string work = root_ + "/pods/default_probed_uid-probed/main/work";
  auto runs = [&](const std::string& dir) {
    const std::string text = ReadFile(dir + "/runs");
    return std::count(text.begin(), text.end(), '\n');
  };
  ASSERT_TRUE(WaitFor([&] { return runs(work) >= 3; }));
  EXPECT_FALSE(runtime_->Ready(*id));
  EXPECT_TRUE(changes_of(*id).empty());
  std::ofstream(work + "/ready") << "";
  ASSERT_TRUE(WaitFor([&] { return runtime_->Ready(*id); }));
  ASSERT_TRUE(WaitFor([&] { return changes_of(*id) == std::vector<bool>{true}; }));
  fs::remove(work + "/ready");
  ASSERT_TRUE(WaitFor([&] { return !runtime_->Ready(*id); }));
  ASSERT_TRUE(WaitFor([&] { return changes_of(*id) == (std::vector<bool>{true, false}); }));
  std::ofstream(work + "/ready") << "";
  ASSERT_TRUE(WaitFor([&] { return changes_of(*id) == (std::vector<bool>{true, false, true}); }));
  StopSync(*id, 0s);
  EXPECT_FALSE(runtime_->Ready(*id));                                  // not running
  EXPECT_EQ(changes_of(*id), (std::vector<bool>{true, false, true}));  // none after the exit

  // No probe: ready at once. A probe past its timeout is a failure (its run is killed).
  Result<std::string> plain = StartSync(Config("plain", {"sleep", "600"}));
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_TRUE(runtime_->Ready(*plain));
  ContainerConfig slow = Config("slow", {"sleep", "600"});
  probe.command = {"sh", "-c", "echo run >> runs; exec sleep 600"};
  probe.timeout = 100ms;
  slow.readiness_probe = probe;
  Result<std::string> slow_id = StartSync(slow);
  ASSERT_TRUE(slow_id.ok()) << slow_id.status().ToString();
  ContainerConfig missing = Config("missing", {"sleep", "600"});
  probe.command = {"no-such-probe-command"};
  missing.readiness_probe = probe;
  Result<std::string> missing_id = StartSync(missing);
  ASSERT_TRUE(missing_id.ok()) << missing_id.status().ToString();
  // Three runs of the slow probe: the first two were killed at their timeout (the missing one has
  // failed as often meanwhile).
  ASSERT_TRUE(WaitFor([&] { return runs(root_ + "/pods/default_slow_uid-slow/main/work") >= 3; }));
  EXPECT_FALSE(runtime_->Ready(*slow_id));
  EXPECT_FALSE(runtime_->Ready(*missing_id));
  EXPECT_TRUE(changes_of(*slow_id).empty());
  EXPECT_TRUE(changes_of(*missing_id).empty());
}

// A container re-adopted by a restarted runtime and claimed with its probe is probed again at once, not
// ready until its first success (as a restarted kubelet's prober starts from failure).
TEST_F(ProcessRuntimeTest, AClaimedAdoptedContainerIsProbedAgain) {
  ContainerConfig config = Config("kept", {"sleep", "600"});
  ExecProbe probe;
  probe.command = {"test", "-f", "ready"};
  probe.period = 50ms;
  probe.initial_delay = 1h;  // over for an adopted container
  config.readiness_probe = probe;
  Result<std::string> id = StartSync(config);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  std::ofstream(root_ + "/pods/default_kept_uid-kept/main/work/ready") << "";
  Reopen();
  std::mutex mu;
  std::vector<bool> changes;  // guarded by mu
  runtime_->SetReadinessListener([&](const std::string&, bool ready) {
    std::lock_guard<std::mutex> lock(mu);
    changes.push_back(ready);
  });
  Result<std::string> claimed = StartSync(config);
  ASSERT_TRUE(claimed.ok()) << claimed.status().ToString();
  EXPECT_EQ(*claimed, *id);
  ASSERT_TRUE(WaitFor([&] { return runtime_->Ready(*id); }));
  ASSERT_TRUE(WaitFor([&] {  // the listener runs on the executor, after Ready changed
    std::lock_guard<std::mutex> lock(mu);
    return changes == std::vector<bool>{true};
  }));
  StopSync(*id, 0s);  // its shim's exit file is written and removed before TearDown removes the dir
}

}  // namespace
}  // namespace rcsim
