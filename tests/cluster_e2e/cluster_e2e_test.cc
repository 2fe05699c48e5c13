// End to end with real processes: etcd, the apiserver, the controller-manager and three node agents,
// each agent running its pods' containers as child processes (`sh` + `sleep`). kubectl drives the
// deletions. Nothing sleeps to wait: every step polls with a deadline.
//
// The scheduler, garbage collector and node lifecycle controller run inside controller-manager once it
// takes --controllers. Against a controller-manager without that flag, the test binds pending pods
// itself (as a manual scheduler would, through pods/binding) and skips the steps that need the garbage
// collector or the node lifecycle controller, saying so. RCSIM_E2E_CONTROLLER_MANAGER=PATH runs another
// controller-manager binary (e.g. one built from a branch that has them).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "backends/httpclient/http_api_client.h"
#include "engine/lease.h"
#include "engine/node_types.h"
#include "tests/api_http_contract/apiserver_process.h"
#include "tests/etcd_fixture/etcd_process.h"

namespace rcsim {
namespace {

namespace fs = std::filesystem;
using SteadyClock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr const char* kKubectl = "/usr/bin/kubectl";
constexpr const char* kLabel = "app=sleep-e2e";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Polls `pred` until it holds or the deadline passes (a short pause between polls, never a fixed wait).
bool Eventually(const std::function<bool()>& pred, SteadyClock::duration deadline = 30s) {
  const auto end = SteadyClock::now() + deadline;
  while (SteadyClock::now() < end) {
    if (pred()) return true;
    std::this_thread::sleep_for(50ms);
  }
  return pred();
}

double SecondsSince(SteadyClock::time_point t0) {
  return std::chrono::duration<double>(SteadyClock::now() - t0).count();
}

// A long-running child (controller-manager, node-agent) with its output in a log file. SIGKILLed by the
// kernel if this test dies (PR_SET_PDEATHSIG, tied to the starting thread: the test's main thread).
class Daemon {
 public:
  Daemon(std::vector<std::string> argv, std::string log_path)
      : argv_(std::move(argv)), log_path_(std::move(log_path)) {
    Start();
  }
  ~Daemon() { Kill(); }
  void Start() {
    const int log = open(log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    pid_ = fork();
    if (pid_ == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      dup2(log, 1);
      dup2(log, 2);
      std::vector<char*> args;
      for (std::string& a : argv_) args.push_back(a.data());
      args.push_back(nullptr);
      execv(args[0], args.data());
      _exit(127);
    }
    close(log);
  }
  // SIGTERM and wait (up to 20 s, then SIGKILL); the exit status, or -1.
  int Terminate() {
    if (pid_ <= 0) return -1;
    kill(pid_, SIGTERM);
    const auto end = SteadyClock::now() + 20s;
    int status = 0;
    while (waitpid(pid_, &status, WNOHANG) == 0) {
      if (SteadyClock::now() > end) {
        Kill();
        return -1;
      }
      std::this_thread::sleep_for(10ms);
    }
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  void Kill() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  bool running() const { return pid_ > 0; }
  std::string Log() const { return ReadFile(log_path_); }
  // Waits until the log holds `needle` `count` times (restarts append to the same log).
  bool WaitForLog(const std::string& needle, int count = 1, SteadyClock::duration deadline = 30s) {
    return Eventually(
        [&] {
          const std::string log = Log();
          int n = 0;
          for (size_t at = log.find(needle); at != std::string::npos; at = log.find(needle, at + 1)) ++n;
          return n >= count;
        },
        deadline);
  }

 private:
  std::vector<std::string> argv_;
  std::string log_path_;
  pid_t pid_ = -1;
};

struct CommandResult {
  int code = -1;
  std::string output;
};

CommandResult RunShell(const std::string& command) {
  CommandResult r;
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

template <typename T>
T Sync(const std::function<void(Callback<T>)>& call) {
  auto p = std::make_shared<std::promise<T>>();
  std::future<T> f = p->get_future();
  call([p](T v) { p->set_value(std::move(v)); });
  return f.get();
}

// A container process as its node agent's state file records it.
struct ContainerProcess {
  std::string node;
  std::string pod_name;
  std::string pod_uid;
  pid_t pid = 0;
  std::string stdout_path;
};

std::optional<uint64_t> StartTicks(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  std::istringstream rest(line.substr(line.rfind(')') + 1));
  std::string field;
  for (int i = 3; i <= 22; ++i) {
    if (!(rest >> field)) return std::nullopt;
    if (i == 3 && field == "Z") return std::nullopt;
  }
  return std::stoull(field);
}

const std::string kRcYaml = R"(apiVersion: v1
kind: ReplicationController
metadata:
  name: sleep
spec:
  replicas: 5
  selector:
    app: sleep-e2e
  template:
    metadata:
      labels:
        app: sleep-e2e
    spec:
      terminationGracePeriodSeconds: 10
      containers:
      - name: sleep
        image: busybox:1.36
        command: ["sh", "-c", "trap 'echo got SIGTERM; exit 0' TERM; sleep 600 & wait"]
)";

class ClusterE2eTest : public ::testing::Test {
 protected:
  static constexpr int kNodes = 3;

  void SetUp() override {
    if (access(kKubectl, X_OK) != 0) GTEST_SKIP() << "no " << kKubectl;
    // The shims of containers whose agent was killed are re-parented here rather than to an init that
    // may not reap them; TearDown reaps them.
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    char tmpl[] = "/tmp/rcsim-cluster-e2e-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    // NOLINTNEXTLINE(concurrency-mt-unsafe): read once, before this test starts any thread.
    const char* cm_override = getenv("RCSIM_E2E_CONTROLLER_MANAGER");
    const std::string cm_binary = cm_override != nullptr ? cm_override : RCSIM_CONTROLLER_MANAGER_BINARY;
    const std::string cm_help = RunShell(cm_binary + " --help").output;
    cm_has_controllers_ = cm_help.find("--controllers") != std::string::npos;
    const auto t0 = SteadyClock::now();
    Result<std::unique_ptr<EtcdProcess>> etcd = EtcdProcess::Start();
    ASSERT_TRUE(etcd.ok()) << etcd.status().ToString();
    etcd_ = std::move(etcd).value();
    ApiServerProcessOptions api_options;
    api_options.binary = RCSIM_APISERVER_BINARY;
    api_options.etcd_servers = etcd_->endpoint();
    Result<std::unique_ptr<ApiServerProcess>> api = ApiServerProcess::Start(api_options);
    ASSERT_TRUE(api.ok()) << api.status().ToString();
    apiserver_ = std::move(api).value();
    HttpApiClientOptions client_options;
    client_options.base_url = apiserver_->url();
    Result<std::unique_ptr<HttpApiClient>> client = HttpApiClient::Create(client_options);
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    client_ = std::move(client).value();
    kubeconfig_ = dir_ + "/kubeconfig";
    std::ofstream(kubeconfig_)
        << "apiVersion: v1\nkind: Config\nclusters:\n- name: e2e\n  cluster:\n    server: "
        << apiserver_->url()
        << "\nusers:\n- name: e2e\n  user: {}\ncontexts:\n- name: e2e\n  context: "
           "{cluster: e2e, user: e2e}\ncurrent-context: e2e\n";

    std::vector<std::string> cm = {cm_binary,  "--kubeconfig",         kubeconfig_,
                                   "--port=0", "--leader-elect=false", "--resync=5"};
    // No HTTPS on the default 10257 (other tests run managers at the same time); older binaries
    // (RCSIM_E2E_CONTROLLER_MANAGER) serve none and have no --tls-cert-file.
    if (cm_help.find("--tls-cert-file") != std::string::npos) cm.emplace_back("--secure-port=-1");
    if (cm_has_controllers_) {
      // Shortened node lifecycle: a node silent for 4 s is unreachable, its pods evicted 2 s later.
      cm.insert(cm.end(), {"--node-monitor-grace-period=4s", "--pod-eviction-timeout=2s"});
      if (cm_help.find("--node-monitor-period") != std::string::npos)
        cm.emplace_back("--node-monitor-period=1s");
    }
    manager_ = std::make_unique<Daemon>(cm, dir_ + "/controller-manager.log");
    ASSERT_TRUE(manager_->WaitForLog("controller-manager running")) << manager_->Log();
    for (int i = 0; i < kNodes; ++i) {
      agents_.push_back(std::make_unique<Daemon>(AgentArgs(i), dir_ + "/node-" + std::to_string(i) + ".log"));
    }
    for (int i = 0; i < kNodes; ++i) {
      ASSERT_TRUE(agents_[i]->WaitForLog("node-agent running")) << agents_[i]->Log();
    }
    ASSERT_TRUE(Eventually([&] { return ReadyNodes().size() == kNodes; })) << "nodes never became Ready";
    std::cout << "[timing] cluster up (etcd, apiserver, controller-manager, " << kNodes
              << " node agents Ready): " << SecondsSince(t0) << " s"
              << (cm_has_controllers_ ? ""
                                      : " (controller-manager without --controllers: the test binds pods)")
              << std::endl;
  }

  void TearDown() override {
    agents_.clear();
    manager_.reset();
    // Nothing this test started may outlive it: every container's process group.
    for (const ContainerProcess& p : AllRecordedProcesses()) kill(-p.pid, SIGKILL);
    client_.reset();
    apiserver_.reset();
    etcd_.reset();
    // Every child left is a shim whose container was just killed: reap them as they exit.
    const auto end = SteadyClock::now() + 10s;
    while (SteadyClock::now() < end) {
      const pid_t pid = waitpid(-1, nullptr, WNOHANG);
      if (pid < 0) break;  // ECHILD: none left
      if (pid == 0) std::this_thread::sleep_for(10ms);
    }
    if (!dir_.empty() && !HasFailure()) fs::remove_all(dir_);
    if (HasFailure()) std::cerr << "cluster e2e: logs kept in " << dir_ << "\n";
  }

  std::vector<std::string> AgentArgs(int i) const {
    return {RCSIM_NODE_AGENT_BINARY,
            "--kubeconfig",
            kubeconfig_,
            "--node-name",
            NodeName(i),
            "--root-dir",
            dir_ + "/" + NodeName(i),
            "--node-status-update-frequency=1s",
            "--orphan-grace=5s",
            "--pod-cidr=10.244." + std::to_string(i + 1) + ".0/24",  // pod IPs of each node's own /24
            "--port=0"};  // the kubelet endpoint (pods/log) on any free port
  }
  static std::string NodeName(int i) { return "node-" + std::to_string(i); }
  int NodeIndex(const std::string& name) const { return std::stoi(name.substr(5)); }

  std::vector<std::string> ReadyNodes() {
    auto r = Sync<Result<ObjectList<Node>>>([&](Callback<Result<ObjectList<Node>>> done) {
      client_->nodes().List("", ListOptions{}, std::move(done));
    });
    std::vector<std::string> out;
    if (!r.ok()) return out;
    for (const auto& n : r->items) {
      for (const NodeCondition& c : n->status.conditions) {
        if (c.type == "Ready" && c.status == "True") out.push_back(n->metadata.name);
      }
    }
    return out;
  }

  // The renewTime of the node's Lease kube-node-lease/<node>, if it can be read.
  std::optional<TimePoint> LeaseRenewTime(const std::string& node) {
    auto r = Sync<Result<LeasePtr>>([&](Callback<Result<LeasePtr>> done) {
      client_->leases().Get(kNodeLeaseNamespace, node, std::move(done));
    });
    if (!r.ok()) return std::nullopt;
    return (*r)->spec.renew_time;
  }
  std::optional<TimePoint> ReadyHeartbeat(const std::string& node) {
    auto r = Sync<Result<NodePtr>>(
        [&](Callback<Result<NodePtr>> done) { client_->nodes().Get("", node, std::move(done)); });
    if (!r.ok()) return std::nullopt;
    const NodeCondition* ready = FindNodeCondition((*r)->status, "Ready");
    return ready ? ready->last_heartbeat_time : std::nullopt;
  }

  std::vector<PodPtr> Pods() {
    ListOptions opts;
    opts.label_selector = *LabelSelector::Parse(kLabel);
    auto r = Sync<Result<ObjectList<Pod>>>([&](Callback<Result<ObjectList<Pod>>> done) {
      client_->pods().List("default", opts, std::move(done));
    });
    if (!r.ok()) return {};
    return r->items;
  }

  // Without an in-cluster scheduler: binds pending pods to the least-loaded Ready node, as a manual
  // scheduler would. A no-op when controller-manager runs the scheduler.
  void BindPending() {
    if (cm_has_controllers_) return;
    std::vector<std::string> nodes = ReadyNodes();
    if (nodes.empty()) return;
    std::map<std::string, int> load;
    for (const std::string& n : nodes) load[n] = 0;
    std::vector<PodPtr> pods = Pods();
    for (const PodPtr& p : pods) {
      if (load.count(p->spec.node_name) && !p->metadata.deletion_timestamp) ++load[p->spec.node_name];
    }
    for (const PodPtr& p : pods) {
      if (!p->spec.node_name.empty() || p->metadata.deletion_timestamp) continue;
      std::string best = nodes[0];
      for (const auto& [n, l] : load) {
        if (l < load[best]) best = n;
      }
      Binding b;
      b.metadata.name = p->metadata.name;
      b.metadata.uid = p->metadata.uid;
      b.target_name = best;
      const Status s =
          Sync<Status>([&](Callback<Status> done) { client_->BindPod("default", b, std::move(done)); });
      if (s.ok()) ++load[best];
    }
  }

  std::optional<ReplicationController> Rc() {
    auto r = Sync<Result<std::shared_ptr<const ReplicationController>>>(
        [&](Callback<Result<std::shared_ptr<const ReplicationController>>> done) {
          client_->controllers().Get("default", "sleep", std::move(done));
        });
    if (!r.ok()) return std::nullopt;
    return **r;
  }

  // Every container process recorded in the agents' root dirs, alive or not.
  std::vector<ContainerProcess> AllRecordedProcesses() const {
    std::vector<ContainerProcess> out;
    std::error_code ec;
    for (int i = 0; i < kNodes; ++i) {
      const fs::path dir = fs::path(dir_) / NodeName(i) / "containers";
      for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
        if (e.path().extension() != ".json") continue;
        try {
          nlohmann::json j = nlohmann::json::parse(ReadFile(e.path().string()));
          ContainerProcess p;
          p.node = NodeName(i);
          p.pod_name = j.value("pod_name", "");
          p.pod_uid = j.value("pod_uid", "");
          p.pid = j.value("pid", 0);
          p.stdout_path = j.value("stdout", "");
          if (StartTicks(p.pid).value_or(0) == j.value("start_ticks", uint64_t{0})) out.push_back(p);
        } catch (const std::exception&) {
        }
      }
    }
    return out;
  }
  // Live container processes by pod name.
  std::map<std::string, ContainerProcess> LiveProcesses() const {
    std::map<std::string, ContainerProcess> out;
    for (const ContainerProcess& p : AllRecordedProcesses()) {
      if (StartTicks(p.pid)) out[p.pod_name] = p;
    }
    return out;
  }

  // 5 pods Running and Ready, not terminating, each with one live process on its node; the RC says so.
  bool FiveReadyWithProcesses(const std::set<std::string>& avoid_nodes = {}) {
    BindPending();
    std::optional<ReplicationController> rc = Rc();
    if (!rc || rc->status.ready_replicas != 5) return false;
    const std::map<std::string, ContainerProcess> procs = LiveProcesses();
    int ok = 0;
    for (const PodPtr& p : Pods()) {
      if (p->metadata.deletion_timestamp) continue;
      if (!IsReady(*p) || avoid_nodes.count(p->spec.node_name)) return false;
      auto it = procs.find(p->metadata.name);
      if (it == procs.end() || it->second.node != p->spec.node_name || it->second.pod_uid != p->metadata.uid)
        return false;
      ++ok;
    }
    return ok == 5;
  }

  std::string Kubectl(const std::string& args) {
    CommandResult r = RunShell(std::string(kKubectl) + " --kubeconfig " + kubeconfig_ + " " + args);
    EXPECT_EQ(r.code, 0) << "kubectl " << args << ": " << r.output;
    return r.output;
  }

  void CreateRcAndWaitForFive() {
    std::ofstream(dir_ + "/rc.yaml") << kRcYaml;
    Kubectl("apply -f " + dir_ + "/rc.yaml");
    const auto t0 = SteadyClock::now();
    ASSERT_TRUE(Eventually([&] { return FiveReadyWithProcesses(); }, 60s))
        << "readyReplicas " << (Rc() ? Rc()->status.ready_replicas : -1) << ", " << LiveProcesses().size()
        << " processes";
    std::cout << "[timing] RC of 5 to readyReplicas 5 with 5 live processes: " << SecondsSince(t0) << " s"
              << std::endl;
  }

  std::string dir_;
  std::string kubeconfig_;
  bool cm_has_controllers_ = false;
  std::unique_ptr<EtcdProcess> etcd_;
  std::unique_ptr<ApiServerProcess> apiserver_;
  std::unique_ptr<HttpApiClient> client_;
  std::unique_ptr<Daemon> manager_;
  std::vector<std::unique_ptr<Daemon>> agents_;
};

TEST_F(ClusterE2eTest, PodsRunAsProcessesRestartOnKillStopOnDeleteAndSurviveAnAgentRestart) {
  CreateRcAndWaitForFive();

  // SIGKILL of one container process: the agent restarts it (restartCount 1), same pod.
  {
    const auto procs = LiveProcesses();
    const ContainerProcess victim = procs.begin()->second;
    const auto t0 = SteadyClock::now();
    ASSERT_EQ(kill(victim.pid, SIGKILL), 0);
    ASSERT_TRUE(Eventually([&] {
      for (const PodPtr& p : Pods()) {
        if (p->metadata.name != victim.pod_name) continue;
        const auto now = LiveProcesses();
        auto it = now.find(victim.pod_name);
        return IsReady(*p) && !p->status.container_statuses.empty() &&
               p->status.container_statuses[0].restart_count == 1 && it != now.end() &&
               it->second.pid != victim.pid;
      }
      return false;
    })) << "pod "
        << victim.pod_name << " was not restarted";
    std::cout << "[timing] SIGKILLed container restarted and Ready again: " << SecondsSince(t0) << " s"
              << std::endl;
    EXPECT_EQ(Pods().size(), 5u);  // restarted in place, not replaced
    // As a kubelet reports it: running again, the kill (137, Error) in lastState.
    for (const PodPtr& p : Pods()) {
      if (p->metadata.name != victim.pod_name) continue;
      const ContainerStatus& cs = p->status.container_statuses.at(0);
      EXPECT_TRUE(cs.state.running.has_value());
      ASSERT_TRUE(cs.last_state.terminated.has_value());
      EXPECT_EQ(cs.last_state.terminated->exit_code, 137);
      EXPECT_EQ(cs.last_state.terminated->reason, "Error");
      EXPECT_EQ(cs.container_id.str().rfind("rcsim://", 0), 0u) << cs.container_id;
    }
    // kubectl's RESTARTS column says when: "1 (Ns ago)".
    const std::string table = Kubectl("get pod " + victim.pod_name + " --no-headers");
    EXPECT_NE(table.find(" 1 ("), std::string::npos) << table;
  }

  // kubectl delete pod: its process gets SIGTERM (the shell's trap logs it and exits 0), a replacement runs.
  {
    const auto procs = LiveProcesses();
    const ContainerProcess victim = std::next(procs.begin())->second;
    const auto t0 = SteadyClock::now();
    Kubectl("delete pod " + victim.pod_name + " --wait=false");
    ASSERT_TRUE(Eventually([&] { return !StartTicks(victim.pid).has_value(); })) << "process survived";
    EXPECT_TRUE(Eventually([&] {
      return ReadFile(victim.stdout_path).find("got SIGTERM") != std::string::npos;
    })) << victim.stdout_path
        << ": " << ReadFile(victim.stdout_path);
    ASSERT_TRUE(Eventually([&] {
      if (!FiveReadyWithProcesses()) return false;
      for (const PodPtr& p : Pods()) {
        if (p->metadata.name == victim.pod_name) return false;  // the agent finished the deletion
      }
      return true;
    })) << "no replacement";
    std::cout << "[timing] kubectl delete pod to SIGTERMed, deleted and replaced (5 Ready): "
              << SecondsSince(t0) << " s" << std::endl;
  }

  // SIGTERM of an agent leaves its pods running; restarted on the same root dir it re-adopts them.
  {
    const auto before = LiveProcesses();
    int node = -1;
    for (const auto& [name, p] : before) node = std::max(node, NodeIndex(p.node));
    std::map<std::string, pid_t> on_node;
    for (const auto& [name, p] : before) {
      if (p.node == NodeName(node)) on_node[name] = p.pid;
    }
    std::map<std::string, int32_t> restarts;
    for (const PodPtr& p : Pods())
      restarts[p->metadata.name] = p->status.container_statuses.at(0).restart_count;
    ASSERT_FALSE(on_node.empty());
    ASSERT_EQ(agents_[node]->Terminate(), 0) << agents_[node]->Log();
    for (const auto& [name, pid] : on_node) {
      EXPECT_TRUE(StartTicks(pid).has_value()) << name << " died with its agent";
    }
    const auto t0 = SteadyClock::now();
    agents_[node]->Start();
    ASSERT_TRUE(agents_[node]->WaitForLog("node-agent running", 2)) << agents_[node]->Log();
    EXPECT_NE(agents_[node]->Log().find(std::to_string(on_node.size()) + " running container(s) re-adopted"),
              std::string::npos)
        << agents_[node]->Log();
    ASSERT_TRUE(Eventually([&] { return FiveReadyWithProcesses(); }));
    std::cout << "[timing] agent restart to 5 Ready again: " << SecondsSince(t0) << " s" << std::endl;
    const auto after = LiveProcesses();
    for (const auto& [name, pid] : on_node) {
      ASSERT_TRUE(after.count(name)) << name;
      EXPECT_EQ(after.at(name).pid, pid) << name << " was started again instead of re-adopted";
    }
    for (const PodPtr& p : Pods()) {
      if (on_node.count(p->metadata.name)) {
        EXPECT_EQ(p->status.container_statuses.at(0).restart_count, restarts[p->metadata.name])
            << p->metadata.name;
      }
    }
  }
}

TEST_F(ClusterE2eTest, AKilledAgentsPodsAreEvictedAndRunElsewhere) {
  if (!cm_has_controllers_)
    GTEST_SKIP() << "controller-manager has no --controllers (no node lifecycle controller)";
  CreateRcAndWaitForFive();
  const auto before = LiveProcesses();
  // The node with the most pods.
  std::map<int, int> per_node;
  for (const auto& [name, p] : before) ++per_node[NodeIndex(p.node)];
  int node = per_node.begin()->first;
  for (const auto& [n, count] : per_node) {
    if (count > per_node[node]) node = n;
  }
  std::set<std::string> evicted;
  for (const auto& [name, p] : before) {
    if (p.node == NodeName(node)) evicted.insert(name);
  }
  // The agents heartbeat through their Leases (every 1 s here); the Node status is posted only at
  // registration and every --node-status-report-frequency (5m0s), so the lease keeps the nodes Ready.
  std::map<std::string, TimePoint> renewed;
  for (int i = 0; i < kNodes; ++i) {
    std::optional<TimePoint> t = LeaseRenewTime(NodeName(i));
    ASSERT_TRUE(t.has_value()) << "no lease kube-node-lease/" << NodeName(i);
    renewed[NodeName(i)] = *t;
  }
  const std::optional<TimePoint> status_beat = ReadyHeartbeat(NodeName(node));
  ASSERT_TRUE(Eventually(
      [&] {
        for (const auto& [n, t] : renewed) {
          std::optional<TimePoint> now = LeaseRenewTime(n);
          if (!now || *now <= t) return false;
        }
        return true;
      },
      10s))
      << "the leases are not renewed";
  EXPECT_EQ(ReadyHeartbeat(NodeName(node)), status_beat) << "an unchanged Node status is not posted per beat";
  EXPECT_EQ(ReadyNodes().size(), static_cast<std::size_t>(kNodes));

  const auto t0 = SteadyClock::now();
  agents_[node]->Kill();
  ASSERT_TRUE(Eventually(
      [&] {
        for (const PodPtr& p : Pods()) {
          if (evicted.count(p->metadata.name) && !p->metadata.deletion_timestamp) return false;
        }
        return true;
      },
      60s))
      << "pods of " << NodeName(node) << " were not evicted";
  std::cout << "[timing] agent SIGKILL to its " << evicted.size() << " pod(s) evicted: " << SecondsSince(t0)
            << " s" << std::endl;
  ASSERT_TRUE(Eventually([&] { return FiveReadyWithProcesses({NodeName(node)}); }, 60s));
  std::cout << "[timing] agent SIGKILL to 5 Ready on the other nodes: " << SecondsSince(t0) << " s"
            << std::endl;

  // The dead agent's processes still run on the host; restarted, the agent finishes the evictions and stops
  // them.
  for (const auto& [name, p] : before) {
    if (evicted.count(name)) {
      EXPECT_TRUE(StartTicks(p.pid).has_value()) << name;
    }
  }
  agents_[node]->Start();
  ASSERT_TRUE(agents_[node]->WaitForLog("node-agent running", 2)) << agents_[node]->Log();
  for (const auto& [name, p] : before) {
    if (!evicted.count(name)) continue;
    const auto pid = p.pid;  // a structured binding cannot be captured before C++20's P1091 (clang 14)
    EXPECT_TRUE(Eventually([&] { return !StartTicks(pid).has_value(); })) << name << " still runs";
  }
  EXPECT_TRUE(Eventually([&] {
    for (const PodPtr& p : Pods()) {
      if (evicted.count(p->metadata.name)) return false;
    }
    return true;
  })) << "evicted pods were not deleted by their returning agent";

  // Issue 10: the Lease is owned by its Node (as the kubelet sets it), so deleting the Node (its agent
  // stopped first, or it registers again) has the garbage collector delete the Lease.
  auto lease = [&] {
    return Sync<Result<LeasePtr>>([&](Callback<Result<LeasePtr>> done) {
      client_->leases().Get(kNodeLeaseNamespace, NodeName(node), std::move(done));
    });
  };
  {
    auto got = lease();
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    ASSERT_EQ((*got)->metadata.owner_references.size(), 1u);
    const OwnerReference& owner = (*got)->metadata.owner_references[0];
    EXPECT_EQ(owner.kind, "Node");
    EXPECT_EQ(owner.api_version, "v1");
    EXPECT_EQ(owner.name, NodeName(node));
  }
  EXPECT_EQ(agents_[node]->Terminate(), 0) << agents_[node]->Log();
  const auto deleted_at = SteadyClock::now();
  Kubectl("delete node " + NodeName(node));
  ASSERT_TRUE(Eventually([&] { return lease().status().code() == Code::kNotFound; }, 30s))
      << "the deleted Node's Lease is left behind";
  std::cout << "[timing] kubectl delete node to its Lease deleted: " << SecondsSince(deleted_at) << " s"
            << std::endl;
}

TEST_F(ClusterE2eTest, DeletingTheRcCascadesOrOrphans) {
  if (!cm_has_controllers_) GTEST_SKIP() << "controller-manager has no --controllers (no garbage collector)";
  CreateRcAndWaitForFive();
  // --cascade=orphan: the RC goes, the pods stay running with no ownerReference.
  {
    const auto before = LiveProcesses();
    const auto t0 = SteadyClock::now();
    Kubectl("delete rc sleep --cascade=orphan");
    ASSERT_TRUE(Eventually([&] {
      if (Rc()) return false;
      const std::vector<PodPtr> pods = Pods();
      if (pods.size() != 5) return false;
      for (const PodPtr& p : pods) {
        if (!p->metadata.owner_references.empty() || p->metadata.deletion_timestamp) return false;
      }
      return true;
    })) << "orphaning did not complete";
    std::cout << "[timing] kubectl delete rc --cascade=orphan to 5 ownerless pods: " << SecondsSince(t0)
              << " s" << std::endl;
    const auto after = LiveProcesses();
    EXPECT_EQ(after.size(), 5u);
    for (const auto& [name, p] : before) {
      ASSERT_TRUE(after.count(name)) << name;
      EXPECT_EQ(after.at(name).pid, p.pid);
    }
  }
  // The same RC again adopts the orphans; kubectl delete rc (Background) then removes pods and processes.
  {
    Kubectl("apply -f " + dir_ + "/rc.yaml");
    ASSERT_TRUE(Eventually([&] {
      const std::vector<PodPtr> pods = Pods();
      if (pods.size() != 5 || !FiveReadyWithProcesses()) return false;
      for (const PodPtr& p : pods) {
        if (p->metadata.owner_references.empty()) return false;
      }
      return true;
    })) << "the orphans were not adopted";
    const auto t0 = SteadyClock::now();
    Kubectl("delete rc sleep --wait=false");
    ASSERT_TRUE(Eventually([&] { return !Rc() && Pods().empty() && LiveProcesses().empty(); }, 60s))
        << Pods().size() << " pods, " << LiveProcesses().size() << " processes left";
    std::cout << "[timing] kubectl delete rc to no pods and no processes: " << SecondsSince(t0) << " s"
              << std::endl;
  }
}

// Issue 10: an exec readinessProbe. The RC's template probes for a file: each probe run appends a line to
// a log of its pod's (so the test knows the probe ran and failed, rather than waiting a while), and
// succeeds once the file exists. The agents report the pods Running but Ready=False (ContainersReady
// too) until then, and readyReplicas stays 0; once the file is there every pod turns Ready=True and
// readyReplicas 3; removed again, the pods go back to Ready=False (failureThreshold 1).
TEST_F(ClusterE2eTest, ExecReadinessProbeHoldsPodsNotReadyUntilItsCommandSucceeds) {
  const std::string flag = dir_ + "/ready-flag";
  const std::string probes = dir_ + "/probes";
  fs::create_directories(probes);
  std::ofstream(dir_ + "/probed.yaml") << R"(apiVersion: v1
kind: ReplicationController
metadata:
  name: sleep
spec:
  replicas: 3
  selector:
    app: sleep-e2e
  template:
    metadata:
      labels:
        app: sleep-e2e
    spec:
      terminationGracePeriodSeconds: 2
      containers:
      - name: sleep
        image: busybox:1.36
        command: ["sleep", "600"]
        env:
        - name: MY_POD
          valueFrom: {fieldRef: {fieldPath: metadata.name}}
        readinessProbe:
          exec:
            command: ["sh", "-c", "echo probed >> )" +
                                              probes + R"(/$MY_POD; test -f )" + flag + R"("]
          periodSeconds: 1
          failureThreshold: 1
)";
  const auto t0 = SteadyClock::now();
  Kubectl("apply -f " + dir_ + "/probed.yaml");
  auto probe_runs = [&](const std::string& pod) {
    const std::string log = ReadFile(probes + "/" + pod);
    return static_cast<int>(std::count(log.begin(), log.end(), '\n'));
  };
  auto condition = [](const Pod& p, const std::string& type) {
    for (const PodCondition& c : p.status.conditions) {
      if (c.type == type) return c.status.str();
    }
    return std::string("(none)");
  };
  // Three pods whose processes run and whose probe failed at least twice: Running, not Ready.
  std::vector<PodPtr> pods;
  ASSERT_TRUE(Eventually(
      [&] {
        BindPending();
        pods = Pods();
        if (pods.size() != 3 || LiveProcesses().size() != 3) return false;
        for (const PodPtr& p : pods) {
          if (p->status.phase != phase::kRunning || probe_runs(p->metadata.name) < 2) return false;
        }
        return true;
      },
      60s))
      << pods.size() << " pods, " << LiveProcesses().size() << " processes";
  std::cout << "[timing] RC of 3 probed pods to Running with 2 failed probes each: " << SecondsSince(t0)
            << " s" << std::endl;
  pods = Pods();
  for (const PodPtr& p : pods) {
    EXPECT_FALSE(IsReady(*p)) << p->metadata.name;
    EXPECT_EQ(condition(*p, "Ready"), "False") << p->metadata.name;
    EXPECT_EQ(condition(*p, "ContainersReady"), "False") << p->metadata.name;
    ASSERT_EQ(p->status.container_statuses.size(), 1u) << p->metadata.name;
    EXPECT_FALSE(p->status.container_statuses[0].ready) << p->metadata.name;
    EXPECT_TRUE(p->status.container_statuses[0].state.running.has_value()) << p->metadata.name;
  }
  std::optional<ReplicationController> rc = Rc();
  ASSERT_TRUE(rc.has_value());
  EXPECT_EQ(rc->status.replicas, 3);
  EXPECT_EQ(rc->status.ready_replicas, 0);

  // The file appears: the next probe of each pod succeeds, every pod turns Ready, readyReplicas follows.
  const auto ready_at = SteadyClock::now();
  std::ofstream(flag) << "ok\n";
  ASSERT_TRUE(Eventually([&] {
    rc = Rc();
    if (!rc || rc->status.ready_replicas != 3) return false;
    for (const PodPtr& p : Pods()) {
      if (!IsReady(*p) || condition(*p, "ContainersReady") != "True" ||
          !p->status.container_statuses.at(0).ready)
        return false;
    }
    return true;
  })) << "readyReplicas "
      << (rc ? rc->status.ready_replicas : -1);
  std::cout << "[timing] probe file created to readyReplicas 3: " << SecondsSince(ready_at) << " s"
            << std::endl;
  for (const PodPtr& p : Pods()) {
    EXPECT_EQ(p->status.container_statuses.at(0).restart_count, 0) << p->metadata.name;  // readiness only
  }

  // Removed: one failed probe each (failureThreshold 1) and the pods are not Ready again.
  const auto unready_at = SteadyClock::now();
  fs::remove(flag);
  ASSERT_TRUE(Eventually([&] {
    rc = Rc();
    if (!rc || rc->status.ready_replicas != 0) return false;
    for (const PodPtr& p : Pods()) {
      if (IsReady(*p)) return false;
    }
    return true;
  })) << "readyReplicas "
      << (rc ? rc->status.ready_replicas : -1);
  std::cout << "[timing] probe file removed to readyReplicas 0: " << SecondsSince(unready_at) << " s"
            << std::endl;
  EXPECT_EQ(Pods().size(), 3u);  // not ready is not replaced
  Kubectl("delete rc sleep --wait=false");
}

// Issue 10: pod IPs differ across nodes (each agent has its own --pod-cidr), and a container's env (a
// value, the downward API: its pod's name and IP) reaches its process. Issue 8: `kubectl get nodes`
// lists the agents' Nodes, Ready.
TEST_F(ClusterE2eTest, PodIpsDifferAcrossNodesEnvReachesTheProcessAndKubectlGetNodes) {
  const std::string nodes = Kubectl("get nodes");
  for (int i = 0; i < kNodes; ++i) {
    const std::size_t at = nodes.find("\n" + NodeName(i) + " ");
    ASSERT_NE(at, std::string::npos) << nodes;
    const std::string line = nodes.substr(at + 1, nodes.find('\n', at + 1) - at - 1);
    EXPECT_NE(line.find(" Ready "), std::string::npos) << nodes;
  }
  CreateRcAndWaitForFive();
  std::set<std::string> ips;
  for (const PodPtr& p : Pods()) ips.insert(p->status.pod_ip);
  EXPECT_EQ(ips.size(), 5u) << "pod IPs repeat across nodes";

  std::ofstream(dir_ + "/talker.yaml") << R"(apiVersion: v1
kind: Pod
metadata: {name: talker, namespace: default}
spec:
  nodeName: node-1
  containers:
  - name: talk
    image: busybox
    command: ["sh", "-c", "echo hello $GREETING $MY_POD $MY_IP; exec sleep 3600"]
    env:
    - {name: GREETING, value: there}
    - name: MY_POD
      valueFrom: {fieldRef: {fieldPath: metadata.name}}
    - name: MY_IP
      valueFrom: {fieldRef: {fieldPath: status.podIP}}
)";
  Kubectl("apply -f " + dir_ + "/talker.yaml");
  std::string out;
  EXPECT_TRUE(Eventually([&] {
    const auto live = LiveProcesses();
    const auto it = live.find("talker");
    if (it == live.end()) return false;
    out = ReadFile(it->second.stdout_path);
    return out.find('\n') != std::string::npos;
  })) << out;
  // node-1's pods are from 10.244.2.0/24.
  EXPECT_EQ(out.rfind("hello there talker 10.244.2.", 0), 0u) << out;
  Kubectl("delete pod talker --wait=false");
}

// Issue 8 (pods/log): `kubectl logs` reads a container's output through the API server, which proxies to
// the node agent running it (the endpoint the agent registered in its Node); --tail, -c and -f work; a
// container not in the pod is a 400 naming it.
TEST_F(ClusterE2eTest, KubectlLogsThroughTheNodeAgent) {
  std::ofstream(dir_ + "/talker.yaml") << R"(apiVersion: v1
kind: Pod
metadata: {name: talker, namespace: default}
spec:
  nodeName: node-1
  containers:
  - name: talk
    image: busybox
    command: ["sh", "-c", "echo hello $GREETING $MY_POD $MY_IP; echo from-stderr >&2; echo bye; exec sleep 3600"]
    env:
    - {name: GREETING, value: there}
    - name: MY_POD
      valueFrom: {fieldRef: {fieldPath: metadata.name}}
    - name: MY_IP
      valueFrom: {fieldRef: {fieldPath: status.podIP}}
---
apiVersion: v1
kind: Pod
metadata: {name: ticker, namespace: default}
spec:
  nodeName: node-2
  containers:
  - name: tick
    image: busybox
    command: ["sh", "-c", "i=0; while true; do i=$((i+1)); echo tick $i; sleep 0.2; done"]
)";
  Kubectl("apply -f " + dir_ + "/talker.yaml");
  const std::string kubectl = std::string(kKubectl) + " --kubeconfig " + kubeconfig_ + " ";
  std::string out;
  EXPECT_TRUE(Eventually([&] {
    CommandResult r = RunShell(kubectl + "logs talker");
    out = r.output;
    return r.code == 0 && out.find("\nbye\nfrom-stderr\n") != std::string::npos;
  })) << out;
  // The container's env: a value and the downward API (its pod's name and IP, from node-1's /24).
  EXPECT_EQ(out.rfind("hello there talker 10.244.2.", 0), 0u) << out;
  CommandResult tail = RunShell(kubectl + "logs talker --tail=1 -c talk");
  EXPECT_EQ(tail.code, 0) << tail.output;
  EXPECT_EQ(tail.output, "from-stderr\n");
  CommandResult bad = RunShell(kubectl + "logs talker -c nope");
  EXPECT_NE(bad.code, 0);
  EXPECT_NE(bad.output.find("container nope is not valid for pod talker"), std::string::npos) << bad.output;
  // -f keeps the stream open (timeout ends it: 124) while the container's new lines arrive.
  ASSERT_TRUE(
      Eventually([&] { return RunShell(kubectl + "logs ticker --tail=1").output.find("tick") == 0; }));
  CommandResult follow = RunShell("timeout 3 " + kubectl + "logs -f ticker --tail=1");
  EXPECT_EQ(follow.code, 124) << follow.output;
  int ticks = 0;
  for (std::size_t at = follow.output.find("tick "); at != std::string::npos;
       at = follow.output.find("tick ", at + 1)) {
    ++ticks;
  }
  EXPECT_GE(ticks, 4) << follow.output;
  Kubectl("delete pod talker ticker --wait=false");
}

}  // namespace
}  // namespace rcsim
