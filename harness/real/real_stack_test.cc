// RealStack and the real runner over real processes: etcd (Debian's etcd-server), apps/apiserver,
// apps/controller-manager and apps/node-agent. Every process started is gone at the end, every port free
// again and the temporary directory removed, also when a child `rcsim run --real` is interrupted by SIGINT.
#include "harness/real/real_stack.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "backends/faultproxy/fault_proxy.h"
#include "backends/httpclient/http_api_client.h"
#include "harness/event_injector.h"
#include "harness/real/real_runner.h"
#include "harness/scenario.h"

#ifndef RCSIM_APISERVER_BINARY
#error "RCSIM_APISERVER_BINARY must name the apiserver executable"
#endif

namespace rcsim {
namespace {

using SteadyClock = std::chrono::steady_clock;

// RealStack's or RunScenarioReal's options with the programs of this build.
template <typename OptionsT>
OptionsT WithThisBuildsPrograms() {
  OptionsT o;
  o.apiserver_binary = RCSIM_APISERVER_BINARY;
  o.controller_manager_binary = RCSIM_CONTROLLER_MANAGER_BINARY;
  o.node_agent_binary = RCSIM_NODE_AGENT_BINARY;
  return o;
}

RealStackOptions Options() { return WithThisBuildsPrograms<RealStackOptions>(); }
RealRunOptions RunOptions() { return WithThisBuildsPrograms<RealRunOptions>(); }

// Nothing listens on the port any more: it can be bound again (SO_REUSEADDR: connections of the
// stopped processes may linger in TIME_WAIT, which is the kernel's, not a leak).
bool PortFree(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  const bool ok = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return ok;
}

// Polls (bounded) until the process is gone.
bool Gone(pid_t pid) {
  const auto deadline = SteadyClock::now() + std::chrono::seconds(10);
  while (SteadyClock::now() < deadline) {
    if (kill(pid, 0) != 0 && errno == ESRCH) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

template <typename T>
T Call(const std::function<void(Callback<T>)>& call) {
  auto p = std::make_shared<std::promise<T>>();
  std::future<T> f = p->get_future();
  call([p](T v) { p->set_value(std::move(v)); });
  return f.get();
}

// Polls `done` every 20 ms until it holds or `limit` passes.
bool Eventually(const std::function<bool()>& done, Duration limit = std::chrono::seconds(30)) {
  const auto deadline = SteadyClock::now() + limit;
  while (SteadyClock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

TEST(RealStackTest, StartsEveryProcessAndStopLeavesNothingBehind) {
  auto stack = RealStack::Start(Options());
  ASSERT_TRUE(stack.ok()) << stack.status().ToString();
  std::vector<pid_t> pids = (*stack)->pids();
  std::vector<int> ports = (*stack)->ports();
  const std::string dir = (*stack)->temp_dir();
  EXPECT_EQ(pids.size(), 4u);   // etcd, apiserver, controller-manager, cluster controllers
  EXPECT_EQ(ports.size(), 4u);  // etcd client and peer, apiserver, proxy
  EXPECT_TRUE(std::filesystem::exists(dir + "/etcd"));
  for (int p : ports) EXPECT_FALSE(PortFree(p)) << "port " << p << " should be in use";
  (*stack)->Stop();
  for (pid_t p : pids) EXPECT_TRUE(Gone(p)) << "pid " << p;
  for (int p : ports) EXPECT_TRUE(PortFree(p)) << "port " << p;
  EXPECT_FALSE(std::filesystem::exists(dir));
}

TEST(RealStackTest, ThreeEtcdMembersElectANewLeaderAfterTheLeaderDies) {
  RealStackOptions o = Options();
  o.etcd_members = 3;
  auto stack = RealStack::Start(o);
  ASSERT_TRUE(stack.ok()) << stack.status().ToString();
  RealStack& s = **stack;
  EXPECT_EQ(s.pids().size(), 6u);   // 3 etcd members, apiserver, two controller-managers
  EXPECT_EQ(s.ports().size(), 8u);  // 3 x (client, peer), apiserver, proxy
  int leader = -1;
  ASSERT_TRUE(Eventually([&] { return (leader = s.EtcdLeader()) >= 0; }));
  s.KillEtcd(leader);
  EXPECT_FALSE(s.EtcdRunning(leader));
  int next = -1;
  ASSERT_TRUE(Eventually([&] { return (next = s.EtcdLeader()) >= 0; })) << "no new leader";
  EXPECT_NE(next, leader);
  Result<int64_t> compacted = s.CompactEtcd();  // the cluster serves with two members
  EXPECT_TRUE(compacted.ok()) << compacted.status().ToString();
  ASSERT_TRUE(s.StartEtcd(leader).ok());
  EXPECT_TRUE(s.EtcdRunning(leader));
}

TEST(RealStackTest, RestartsTheManagerAndEtcdAndCompacts) {
  auto stack = RealStack::Start(Options());
  ASSERT_TRUE(stack.ok()) << stack.status().ToString();
  RealStack& s = **stack;
  s.KillManager();
  EXPECT_FALSE(s.ManagerRunning());
  ASSERT_TRUE(s.StartManager().ok());
  EXPECT_TRUE(s.ManagerRunning());
  s.KillEtcd();
  EXPECT_FALSE(s.CompactEtcd().ok());
  ASSERT_TRUE(s.StartEtcd().ok());
  Result<int64_t> rev = s.CompactEtcd();
  ASSERT_TRUE(rev.ok()) << rev.status().ToString();
  EXPECT_GT(*rev, 0);
}

// For a failure message: each pod's name, node, phase, readiness and whether it is being deleted.
std::string DescribePods(const std::vector<PodPtr>& pods) {
  std::string out;
  for (const PodPtr& p : pods) {
    out += p->metadata.name + " node=" + p->spec.node_name + " phase=" + p->status.phase.str() +
           (IsReady(*p) ? " ready" : " not-ready") + (p->metadata.deletion_timestamp ? " deleting" : "") +
           "\n";
  }
  return out;
}

// For a failure message: the last 4,000 bytes of each of the stack's logs named.
std::string LogTails(const std::string& dir, const std::vector<std::string>& logs) {
  std::string out;
  for (const std::string& name : logs) {
    const std::string text = ReadFile(dir + "/" + name);
    out += "--- " + name + " (tail)\n" + text.substr(text.size() > 4000 ? text.size() - 4000 : 0) + "\n";
  }
  return out;
}

// Node agents run the pods as processes: a SIGKILLed container is restarted in place (restartCount 1,
// same pod); a killed agent's node is marked unreachable and its pods evicted and re-created on the
// other node; a paused agent resumes; Stop leaves no container or shim behind.
TEST(RealStackTest, NodeAgentsRunThePodsAsProcesses) {
  RealStackOptions o = Options();
  o.node_agents = 2;
  auto stack = RealStack::Start(o);
  ASSERT_TRUE(stack.ok()) << stack.status().ToString();
  RealStack& s = **stack;
  EXPECT_EQ(s.pids().size(), 6u);  // etcd, apiserver, two controller-managers, two agents
  HttpApiClientOptions ao;
  ao.base_url = s.api_url();
  auto api = HttpApiClient::Create(ao);
  ASSERT_TRUE(api.ok()) << api.status().ToString();
  ControllerConfig web;
  web.name = "web";
  web.replicas = 4;
  web.selector = {{"app", "web"}};
  web.template_.metadata.labels = web.selector;
  Container c;
  c.name = "sleep";
  c.image = "busybox";
  c.command = {"sleep", "600"};
  web.template_.spec.containers.push_back(c);
  Result<HttpReply> ns = Call<Result<HttpReply>>([&](const Callback<Result<HttpReply>>& cb) {
    (*api)->Send("POST", "/api/v1/namespaces",
                 R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"default"}})", cb);
  });
  ASSERT_TRUE(ns.ok()) << ns.status().ToString();
  Result<ControllerPtr> created = Call<Result<ControllerPtr>>([&](const Callback<Result<ControllerPtr>>& cb) {
    (*api)->controllers().Create("default", ControllerFromConfig(web), cb);
  });
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  auto pods = [&] {
    Result<ObjectList<Pod>> l =
        Call<Result<ObjectList<Pod>>>([&](const Callback<Result<ObjectList<Pod>>>& cb) {
          (*api)->pods().List("default", ListOptions{}, cb);
        });
    return l.ok() ? l->items : std::vector<PodPtr>{};
  };
  auto ready_on = [&](int want, const std::string& not_on) {
    int n = 0;
    for (const PodPtr& p : pods()) {
      if (IsActive(*p) && IsReady(*p) && p->spec.node_name != not_on) ++n;
    }
    return n == want;
  };
  ASSERT_TRUE(Eventually([&] { return ready_on(4, "") && s.Containers().size() == 4; }));

  // kill_pods: SIGKILL of one pod's container; its agent starts it again, the pod stays.
  const AgentContainer victim = s.Containers().front();
  ASSERT_EQ(s.KillPodContainers(victim.pod_uid), 1);
  ASSERT_TRUE(Eventually([&] {
    for (const PodPtr& p : pods()) {
      if (p->metadata.uid == victim.pod_uid && IsReady(*p) && !p->status.container_statuses.empty() &&
          p->status.container_statuses[0].restart_count == 1) {
        for (const AgentContainer& now : s.Containers()) {
          if (now.pod_uid == victim.pod_uid && now.pid != victim.pid) return true;
        }
      }
    }
    return false;
  })) << "the killed container was not restarted in place";
  EXPECT_EQ(pods().size(), 4u);

  // fail_node for a while: SIGSTOP of node-1's agent and containers, SIGCONT after.
  const std::size_t on_1 = s.Containers(1).size();
  s.PauseNodeAgent(1);
  EXPECT_FALSE(s.NodeAgentUp(1));
  ASSERT_TRUE(s.ResumeNodeAgent(1).ok());
  EXPECT_TRUE(s.NodeAgentUp(1));
  EXPECT_EQ(s.Containers(1).size(), on_1);

  // stop_node_agent / start_node_agent: SIGTERM of node-1's agent leaves its containers running; the
  // agent started again on the same root dir re-adopts every one of them.
  const std::vector<AgentContainer> before = s.Containers(1);
  const std::size_t log_offset = ReadFile(s.temp_dir() + "/node-1.log").size();
  s.StopNodeAgent(1);
  EXPECT_FALSE(s.NodeAgentUp(1));
  ASSERT_EQ(s.Containers(1).size(), on_1);
  for (std::size_t i = 0; i < before.size(); ++i) EXPECT_EQ(s.Containers(1)[i].pid, before[i].pid);
  ASSERT_TRUE(s.StartNodeAgent(1).ok());
  EXPECT_TRUE(s.NodeAgentUp(1));
  const std::string restarted = ReadFile(s.temp_dir() + "/node-1.log").substr(log_offset);
  EXPECT_NE(restarted.find(std::to_string(on_1) + " running container(s) re-adopted"), std::string::npos)
      << restarted;
  ASSERT_TRUE(Eventually([&] { return ready_on(4, ""); }));
  EXPECT_EQ(s.Containers(1).size(), on_1);

  // node_capacity: an agent up is restarted with the new --max-pods at once (its containers re-adopted),
  // a frozen one when it is resumed, a stopped one when it starts again; each registers its Node with
  // the new status.capacity.pods.
  auto capacity = [&](int i) -> int64_t {
    Result<NodePtr> n = Call<Result<NodePtr>>(
        [&](const Callback<Result<NodePtr>>& cb) { (*api)->nodes().Get("", RealStack::NodeName(i), cb); });
    return n.ok() ? NodePodCapacity(**n) : -1;
  };
  EXPECT_EQ(capacity(1), 110);
  const pid_t agent_before = s.pids().back();
  ASSERT_TRUE(s.SetNodeAgentMaxPods(1, 7).ok());
  EXPECT_TRUE(s.NodeAgentUp(1));
  EXPECT_NE(s.pids().back(), agent_before) << "the agent was not restarted";
  EXPECT_TRUE(Eventually([&] { return capacity(1) == 7; })) << capacity(1);
  EXPECT_EQ(s.Containers(1).size(), on_1);
  s.PauseNodeAgent(1);
  ASSERT_TRUE(s.SetNodeAgentMaxPods(1, 5).ok());
  EXPECT_FALSE(s.NodeAgentUp(1));
  EXPECT_EQ(capacity(1), 7);
  ASSERT_TRUE(s.ResumeNodeAgent(1).ok());
  EXPECT_TRUE(s.NodeAgentUp(1));
  EXPECT_TRUE(Eventually([&] { return capacity(1) == 5; })) << capacity(1);
  s.StopNodeAgent(1);
  ASSERT_TRUE(s.SetNodeAgentMaxPods(1, 4).ok());
  EXPECT_FALSE(s.NodeAgentUp(1));
  ASSERT_TRUE(s.StartNodeAgent(1).ok());
  EXPECT_TRUE(Eventually([&] { return capacity(1) == 4; })) << capacity(1);
  EXPECT_EQ(s.NodeAgentMaxPods(1), 4);
  EXPECT_EQ(capacity(0), 110);
  ASSERT_TRUE(Eventually([&] { return ready_on(4, ""); }));
  EXPECT_EQ(s.Containers(1).size(), on_1);

  // fail_node for good: node-0's agent and containers die; after the grace period its pods are
  // evicted and the manager's replacements run on node-1.
  std::vector<AgentContainer> on_0 = s.Containers(0);
  s.KillNodeAgent(0);
  EXPECT_FALSE(s.NodeAgentUp(0));
  for (const AgentContainer& gone : on_0) EXPECT_TRUE(Gone(gone.pid)) << gone.pod_name;
  EXPECT_TRUE(s.Containers(0).empty());
  ASSERT_TRUE(Eventually([&] { return ready_on(4, "node-0") && s.Containers(1).size() == 4; }))
      << "node-0's pods were not re-created on node-1 (seen once in CI under load; cause unknown)\n"
      << DescribePods(pods()) << s.Containers(1).size() << " container(s) on node-1\n"
      << LogTails(s.temp_dir(), {"cluster-controllers.log", "controller-manager.log", "node-1.log"});

  std::vector<AgentContainer> all = s.Containers();
  const std::string dir = s.temp_dir();
  s.Stop();
  for (const AgentContainer& left : all) {
    EXPECT_TRUE(Gone(left.pid)) << left.pod_name;
    EXPECT_TRUE(Gone(left.shim_pid)) << left.pod_name << "'s shim";
  }
  for (const AgentContainer& left : on_0) EXPECT_TRUE(Gone(left.shim_pid)) << left.pod_name << "'s shim";
  EXPECT_FALSE(std::filesystem::exists(dir));
}

Scenario Parse(const std::string& yaml) {
  Result<Scenario> s = ParseScenarioText(yaml, "test.yaml", DocumentFormat::kYaml);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? *s : Scenario{};
}

TEST(RealRunnerTest, RefusesWhatRealModeCannotDoNamingThePointer) {
  Scenario s = Parse(R"(
name: t
controllers: [{name: web, replicas: 2}]
events:
  - {at: 1s, scale: {controller: web, replicas: 3}}
  - {at: 2s, kill_pods: {selector: {app: web}}}
  - {at: 3s, restart_manager: {down: 1s}}
expect:
  - api_calls: {at_most: 100}
)");
  EXPECT_TRUE(RealModeProblems(s, false).empty());  // node agents run the pods: kill_pods is done
  std::vector<std::string> hollow = RealModeProblems(s, false, /*hollow_nodes=*/true);
  ASSERT_EQ(hollow.size(), 1u);
  EXPECT_NE(hollow[0].find("test.yaml: /events/1/kill_pods: "), std::string::npos) << hollow[0];
  std::vector<std::string> existing = RealModeProblems(s, true);
  ASSERT_EQ(existing.size(), 3u);
  EXPECT_NE(existing[0].find("/events/1/kill_pods"), std::string::npos) << existing[0];
  EXPECT_NE(existing[1].find("/events/2/restart_manager"), std::string::npos) << existing[1];
  EXPECT_NE(existing[2].find("/expect/0/api_calls"), std::string::npos) << existing[2];
  // More nodes than node agents real mode starts: refused, unless hollow.
  Scenario big = Parse(R"(
name: big
cluster: {nodes: 17}
controllers: [{name: web, replicas: 2}]
expect: []
)");
  std::vector<std::string> too_many = RealModeProblems(big, false);
  ASSERT_EQ(too_many.size(), 1u);
  EXPECT_NE(too_many[0].find("test.yaml: /cluster/nodes: "), std::string::npos) << too_many[0];
  EXPECT_NE(too_many[0].find("at most 16"), std::string::npos) << too_many[0];
  EXPECT_TRUE(RealModeProblems(big, false, /*hollow_nodes=*/true).empty());
  // etcd events: a member the run does not have, a leader kill without a multi-member etcd.
  Scenario etcd = Parse(R"(
name: etcd
controllers: [{name: web, replicas: 2}]
events:
  - {at: 1s, restart_etcd: {member: 2, down: 1s}}
  - {at: 2s, kill_etcd_leader: {}}
  - {at: 3s, restart_etcd: {}}
expect: []
)");
  std::vector<std::string> one = RealModeProblems(etcd, false);
  ASSERT_EQ(one.size(), 2u);
  EXPECT_NE(one[0].find("test.yaml: /events/0/restart_etcd/member: no such etcd member"), std::string::npos)
      << one[0];
  EXPECT_NE(one[1].find("test.yaml: /events/1/kill_etcd_leader: "), std::string::npos) << one[1];
  EXPECT_TRUE(RealModeProblems(etcd, false, false, /*etcd_members=*/3).empty());
  EXPECT_EQ(RealModeProblems(etcd, true).size(), 3u);  // an existing cluster's etcd is not rcsim's

  // node_capacity restarts rcsim's node agents with the new --max-pods: refused only where rcsim runs
  // none (it was refused everywhere: the agents overwrote a status write).
  Scenario capacity = Parse(R"(
name: capacity
cluster: {nodes: 2}
controllers: [{name: web, replicas: 2}]
events:
  - {at: 1s, node_capacity: {node: node-1, pods: 3}}
expect: []
)");
  EXPECT_TRUE(RealModeProblems(capacity, false).empty());
  for (bool existing : {false, true}) {
    std::vector<std::string> cap = RealModeProblems(capacity, existing, /*hollow_nodes=*/!existing);
    ASSERT_EQ(cap.size(), 1u);
    EXPECT_NE(cap[0].find("test.yaml: /events/0/node_capacity: "), std::string::npos) << cap[0];
  }
}

// Readiness events run on rcsim's node agents (a marker file fails the containers' exec readinessProbe),
// and are refused before the run with hollow nodes or --kubeconfig, naming the pointer.
TEST(RealRunnerTest, ReadinessEventsNeedNodeAgentsAndAreRefusedElsewhere) {
  Scenario s = Parse(R"(
name: t
controllers: [{name: web, replicas: 2}]
events:
  - {at: 1s, set_ready: {selector: {app: web}, count: 1}}
  - {at: 2s, scale: {controller: web, replicas: 3}}
  - {at: 3s, flap_readiness: {selector: {app: web}, period: 1s, for: 4s}}
expect: []
)");
  EXPECT_TRUE(RealModeProblems(s, false).empty());
  for (bool existing : {false, true}) {
    std::vector<std::string> problems = RealModeProblems(s, existing, /*hollow_nodes=*/!existing);
    ASSERT_EQ(problems.size(), 2u);
    EXPECT_NE(problems[0].find("test.yaml: /events/0/set_ready: "), std::string::npos) << problems[0];
    EXPECT_NE(problems[1].find("test.yaml: /events/2/flap_readiness: "), std::string::npos) << problems[1];
  }
}

// set_ready and flap_readiness on node agents: the chosen pods go not ready through their exec
// readinessProbe (behind the harness's gate, probed every second) and come back; they stay Running and
// are not replaced. Two expectations are meant to fail: they show the ready count did drop. The first
// event comes at 5 s: the four pods must be ready by 4 s, which a TSan build of the apiserver and the
// node agents did not always manage by 1 s (the first expectation once read 0 ready at 1 s).
TEST(RealRunnerTest, SetReadyAndFlapReadinessRunOnNodeAgents) {
  Scenario s = Parse(R"(
name: real-readiness
duration: 28s
cluster: {nodes: 2}
manager: {resync: 2s}
controllers: [{name: web, replicas: 4}]
events:
  - {at: 5s, set_ready: {selector: {app: web}, count: 2, ready: false}}
  - {at: 9s, set_ready: {selector: {app: web}, all: true, ready: true}}
  - {at: 12s, flap_readiness: {selector: {app: web}, count: 1, period: 3s, for: 9s}}
expect:
  - never_below: {controller: web, ready: 2, after: 4s}
  - never_below: {controller: web, ready: 3, after: 6500ms, until: 9s}
  - never_below: {controller: web, ready: 4, after: 11s, until: 12s}
  - never_below: {controller: web, ready: 4, after: 13500ms, until: 15s}
  - never_below: {controller: web, ready: 3, after: 12s}
  - never_below: {controller: web, ready: 4, after: 23s}
  - never_above: {controller: web, active: 4}
  - api_calls: {verb: create, at_most: 4}
  - api_calls: {verb: delete, at_most: 0}
  - final: {controller: web, running: 4}
)");
  RealRunOptions o = RunOptions();
  RunResult r = RunScenarioReal(s, 1, o);
  EXPECT_TRUE(r.error.empty()) << r.error;
  ASSERT_EQ(r.expectations.size(), 10u);
  for (std::size_t i = 0; i < r.expectations.size(); ++i) {
    const ExpectationOutcome& e = r.expectations[i];
    EXPECT_EQ(e.passed, i != 1 && i != 3) << e.text << ": " << e.detail;
  }
  EXPECT_EQ(r.expectations[1].measured, 2) << r.expectations[1].detail;  // set_ready false on 2 of 4
  EXPECT_EQ(r.expectations[3].measured, 3) << r.expectations[3].detail;  // one pod flapping
}

// crash_loop, stop_node_agent and start_node_agent were refused only when they fired (issue 12): now
// they are refused before the run where no node agent of rcsim's runs (crash_loop runs on node agents).
TEST(RealRunnerTest, RefusesCrashLoopAndAgentEventsWithoutAgentsBeforeTheRun) {
  Scenario s = Parse(R"(
name: t
cluster: {nodes: 2}
controllers: [{name: web, replicas: 2}]
events:
  - {at: 1s, crash_loop: {selector: {app: web}, count: 1, for: 5s}}
  - {at: 2s, stop_node_agent: {node: node-0, for: 2s}}
  - {at: 3s, start_node_agent: {node: node-0}}
expect: []
)");
  // On node agents: the agents are stopped and started for real, the crash loop is a wrapper's exit.
  EXPECT_TRUE(RealModeProblems(s, false).empty());
  for (bool existing : {false, true}) {
    std::vector<std::string> problems = RealModeProblems(s, existing, /*hollow_nodes=*/!existing);
    ASSERT_EQ(problems.size(), 3u);
    EXPECT_NE(problems[0].find("test.yaml: /events/0/crash_loop: "), std::string::npos) << problems[0];
    EXPECT_NE(problems[1].find("test.yaml: /events/1/stop_node_agent: "), std::string::npos) << problems[1];
    EXPECT_NE(problems[2].find("test.yaml: /events/2/start_node_agent: "), std::string::npos) << problems[2];
  }
}

// restart_etcd and kill_etcd_leader on a 3-member etcd: the manager's writes and watches go on
// (quorum kept, or back after an election), the run passes. The bounds are loose: the apiserver's
// etcd client may wait out a call to the dead member before it fails over (seconds on a loaded box).
TEST(RealRunnerTest, EtcdMemberAndLeaderCrashesOnThreeMembers) {
  Scenario s = Parse(R"(
name: real-runner-etcd
duration: 1m
cluster: {nodes: 2}
manager: {resync: 2s}
controllers: [{name: web, replicas: 3}]
events:
  - {at: 1s, scale: {controller: web, replicas: 6}}
  - {at: 1s, kill_etcd_leader: {down: 2s}}
  - {at: 5s, restart_etcd: {member: 1, down: 1s}}
  - {at: 5s, scale: {controller: web, replicas: 2}}
expect:
  - converged: {controller: web, after: 1s, within: 20s}
  - converged: {controller: web, after: 5s, within: 20s}
  - never_above: {controller: web, active: 6}
  - final: {controller: web, running: 2}
  - status_matches: {controller: web}
)");
  RealRunOptions o = RunOptions();
  o.etcd_members = 3;
  RunResult r = RunScenarioReal(s, 1, o);
  EXPECT_TRUE(r.passed) << r.error;
  for (const ExpectationOutcome& e : r.expectations) EXPECT_TRUE(e.passed) << e.text << ": " << e.detail;
}

TEST(RealRunnerTest, AScenarioWithAManagerCrashAndApiFaultsPasses) {
  Scenario s = Parse(R"(
name: real-runner-test
duration: 1m
cluster: {nodes: 3, pod_start_latency: {min: 50ms, max: 200ms}}
manager: {resync: 2s}
controllers: [{name: web, replicas: 4}]
events:
  - {at: 1s, restart_manager: {down: 1s}}
  - {at: 1500ms, scale: {controller: web, replicas: 8}}
  - {at: 4s, api_faults: {for: 2s, error_rate: 1.0, verbs: [create]}}
  - {at: 4500ms, delete_pods: {selector: {app: web}, count: 3}}
expect:
  - converged: {controller: web, after: 1500ms, within: 3s}
  - converged: {controller: web, after: 6s, within: 3s}
  - never_above: {controller: web, active: 8}
  - final: {controller: web, running: 8}
  - status_matches: {controller: web}
)");
  RealRunOptions o = RunOptions();
  RunResult r = RunScenarioReal(s, 1, o);
  EXPECT_TRUE(r.passed) << r.error;
  for (const ExpectationOutcome& e : r.expectations) EXPECT_TRUE(e.passed) << e.text << ": " << e.detail;
  EXPECT_EQ(r.mode, "real");
  EXPECT_EQ(r.manager_starts, 2);
  EXPECT_GT(r.api_calls.at("create"), 8u);  // the refused creates count too
  // While creates were refused, 3 pods were missing: not converged at 4.5s + a little.
  EXPECT_EQ(r.end_reason, "quiet");
}

// Regression (rcsim explore, issue 15), in real mode: stale_reads pins the manager's cache-servable
// lists to etcd's revision of `lag` ago, as the simulation does; the controller-manager restarted inside
// the window lists consistently at its start, so it counts the 5 pods its predecessor created for the
// scale and creates nothing (with a first list at resourceVersion=0 it created them again: peak 15).
TEST(RealRunnerTest, RestartedManagerInsideStaleWindowDuplicatesItsPredecessorsPods) {
  Result<Scenario> s = LoadScenarioFile(std::string(RCSIM_SOURCE_DIR) +
                                        "/scenarios/real/real-stale-list-after-manager-restart.json");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  RunResult r = RunScenarioReal(*s, 1, RunOptions());
  EXPECT_TRUE(r.passed) << r.error;
  bool saw_peak = false;
  for (const ExpectationOutcome& e : r.expectations) {
    EXPECT_TRUE(e.passed) << e.text << ": " << e.detail;
    if (e.kind == "pods_matching") {
      saw_peak = true;
      EXPECT_EQ(e.measured["peak_active"].get<int64_t>(), 10) << e.detail;
    }
  }
  EXPECT_TRUE(saw_peak);
  EXPECT_EQ(r.api_calls.at("create"), 10u);
  EXPECT_EQ(r.api_calls.at("delete"), 0u);
  EXPECT_EQ(r.manager_starts, 2);
}

// kill_pods and fail_node on node agents: the run passes, and what the watch saw shows the failed
// node's pods evicted (active below 4) and replaced.
// stop_node_agent for 1s on node-1 (a kill_pods may hit its containers while its agent is down: the
// agent started again restarts them), kill_pods, then fail_node of node-0.
TEST(RealRunnerTest, KillPodsAndFailNodeRunOnNodeAgents) {
  Scenario s = Parse(R"(
name: real-runner-nodes
duration: 1m
cluster: {nodes: 2}
manager: {resync: 2s}
controllers: [{name: web, replicas: 4}]
events:
  - {at: 500ms, stop_node_agent: {node: node-1, for: 1s}}
  - {at: 1s, kill_pods: {selector: {app: web}, count: 2}}
  - {at: 2s, fail_node: {node: node-0}}
expect:
  - never_above: {controller: web, active: 4}
  - never_below: {controller: web, ready: 4, after: 9s}
  - final: {controller: web, running: 4}
  - status_matches: {controller: web}
)");
  RealRunOptions o = RunOptions();
  RunResult r = RunScenarioReal(s, 1, o);
  EXPECT_TRUE(r.passed) << r.error;
  for (const ExpectationOutcome& e : r.expectations) EXPECT_TRUE(e.passed) << e.text << ": " << e.detail;
  bool evicted = false;
  for (const SeriesPoint& p : r.totals) evicted = evicted || (p.t > std::chrono::seconds(2) && p.active < 4);
  EXPECT_TRUE(evicted) << "node-0's pods were never evicted";
}

// Regression (CI, session 26): kill_pods of a pod whose agent was stopped before it started the
// container waited for the container inside the event, so the agent's restart (due meanwhile) never
// ran and the event failed after 10 s. The kill now waits beside the run's other actions: the agent
// starts again, starts the container, and the kill hits it.
TEST(RealRunnerTest, KillPodsOfAPodWhoseAgentIsStoppedWaitsForItsRestart) {
  Scenario s = Parse(R"(
name: real-runner-kill-before-start
duration: 1m
cluster: {nodes: 1}
controllers: [{name: web, replicas: 2}]
events:
  - {at: 0s, stop_node_agent: {node: node-0, for: 3s}}
  - {at: 1500ms, kill_pods: {selector: {app: web}, count: 1}}
expect:
  - final: {controller: web, running: 2}
)");
  RealRunOptions o = RunOptions();
  std::vector<std::string> lines;
  o.log = [&](const std::string& line) { lines.push_back(line); };
  RunResult r = RunScenarioReal(s, 1, o);
  EXPECT_TRUE(r.passed) << r.error;
  auto at = [&](const std::string& prefix) {
    return std::find_if(lines.begin(), lines.end(),
                        [&](const std::string& l) { return l.rfind(prefix, 0) == 0; }) -
           lines.begin();
  };
  const auto restarted = at("stop_node_agent: node-0 started again");
  const auto killed = at("kill_pods: default/web-");
  ASSERT_LT(restarted, static_cast<std::ptrdiff_t>(lines.size()));
  ASSERT_LT(killed, static_cast<std::ptrdiff_t>(lines.size())) << "no container was killed";
  EXPECT_LT(restarted, killed) << "the kill did not wait for the agent's restart";
}

// Regression: an action the API server answers with 503 while etcd is down was retried inside the
// event, so etcd's restart (an action due meanwhile) never ran and the scale failed after 15 s. The
// retries now pause the event and run what falls due: etcd is back at 4s and the scale applies.
TEST(RealRunnerTest, ScaleWhileEtcdIsDownAppliesOnceItIsBack) {
  Scenario s = Parse(R"(
name: real-runner-scale-while-etcd-down
duration: 20s
controllers: [{name: web, replicas: 2}]
events:
  - {at: 1s, restart_etcd: {down: 3s}}
  - {at: 2s, scale: {controller: web, replicas: 4}}
expect:
  - final: {controller: web, running: 4}
  - status_matches: {controller: web}
)");
  RunResult r = RunScenarioReal(s, 1, RunOptions());
  EXPECT_TRUE(r.passed) << r.error;
  for (const ExpectationOutcome& e : r.expectations) EXPECT_TRUE(e.passed) << e.text << ": " << e.detail;
}

// crash_loop on node agents (issue 12): the chosen pod's container is SIGKILLed and every start while
// the crash loop lasts exits 1 at once (the wrapper of its command), so the agent restarts it in place
// with the kubelet's backoff (at once, then 10 s): it is not Ready meanwhile, nothing is replaced, and
// it is Ready again after the backoff that follows the crash loop.
TEST(RealRunnerTest, CrashLoopRestartsInPlaceWithTheBackoff) {
  Scenario s = Parse(R"(
name: real-runner-crash-loop
duration: 1m
cluster: {nodes: 2}
manager: {resync: 2s}
controllers: [{name: web, replicas: 3}]
events:
  - {at: 1s, crash_loop: {selector: {app: web}, count: 1, for: 3s}}
expect:
  - converged: {controller: web, after: 1s, within: 15s}
  - never_below: {controller: web, ready: 2, after: 1s}
  - never_below: {controller: web, ready: 3, after: 14s}
  - api_calls: {verb: create, at_most: 3}
  - final: {controller: web, running: 3}
  - status_matches: {controller: web}
)");
  RealRunOptions o = RunOptions();
  RunResult r = RunScenarioReal(s, 1, o);
  EXPECT_TRUE(r.passed) << r.error;
  for (const ExpectationOutcome& e : r.expectations) EXPECT_TRUE(e.passed) << e.text << ": " << e.detail;
  // The crash loop happened: one pod was not Ready during it (the floor of 2 was reached, not 3).
  ASSERT_GE(r.expectations.size(), 2u);
  EXPECT_EQ(r.expectations[1].measured, 2) << r.expectations[1].detail;
}

// A child `rcsim run --real` interrupted by SIGINT stops every process it started, frees their
// ports and removes its temporary directory, and exits 130.
TEST(RealRunnerTest, SigintToRcsimStopsEverythingItStarted) {
  char tmpl[] = "/tmp/rcsim-sigint-test-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  std::ofstream(dir + "/long.yaml") << R"(
name: long
duration: 10m
cluster: {nodes: 2}
manager: {resync: 2s}
controllers: [{name: web, replicas: 3}]
events:
  - {at: 5m, scale: {controller: web, replicas: 4}}
expect:
  - converged: {controller: web, after: 5m, within: 10s}
)";
  const std::string err = dir + "/stderr";
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const int fd = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, STDERR_FILENO);
    dup2(fd, STDOUT_FILENO);
    execl(RCSIM_BINARY, RCSIM_BINARY, "run", "--real", (dir + "/long.yaml").c_str(), "--apiserver-binary",
          RCSIM_APISERVER_BINARY, "--controller-manager-binary", RCSIM_CONTROLLER_MANAGER_BINARY,
          "--node-agent-binary", RCSIM_NODE_AGENT_BINARY, nullptr);
    _exit(127);
  }
  // Wait until the stack is up (its line names every pid, port and the directory).
  std::smatch m;
  std::string line;
  const auto deadline = SteadyClock::now() + std::chrono::seconds(60);
  const std::regex stack_line("real stack: (.*)\n");
  while (SteadyClock::now() < deadline) {
    line = ReadFile(err);
    if (std::regex_search(line, m, stack_line)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(std::regex_search(line, m, stack_line)) << line;
  const std::string desc = m[1];
  std::vector<pid_t> pids;
  std::vector<int> ports;
  std::string temp;
  const std::regex pid_re("pid=(\\d+)"), port_re("ports?=(\\d+)(?:,(\\d+))?"), dir_re("dir=(\\S+)");
  for (auto it = std::sregex_iterator(desc.begin(), desc.end(), pid_re); it != std::sregex_iterator(); ++it) {
    pids.push_back(std::stoi((*it)[1]));
  }
  for (auto it = std::sregex_iterator(desc.begin(), desc.end(), port_re); it != std::sregex_iterator();
       ++it) {
    ports.push_back(std::stoi((*it)[1]));
    if ((*it)[2].matched) ports.push_back(std::stoi((*it)[2]));
  }
  if (std::regex_search(desc, m, dir_re)) temp = m[1];
  // etcd, apiserver, controller-manager, cluster controllers, 2 node agents.
  ASSERT_EQ(pids.size(), 6u) << desc;
  ASSERT_EQ(ports.size(), 4u) << desc;
  ASSERT_FALSE(temp.empty()) << desc;
  EXPECT_TRUE(std::filesystem::exists(temp));
  for (pid_t p : pids) EXPECT_EQ(kill(p, 0), 0) << "pid " << p << " should run";
  // The 3 pods run as processes (each under its agent's root dir).
  std::vector<AgentContainer> containers;
  const auto pods_deadline = SteadyClock::now() + std::chrono::seconds(60);
  while (SteadyClock::now() < pods_deadline) {
    containers = LiveAgentContainers(temp + "/nodes/node-0");
    std::vector<AgentContainer> more = LiveAgentContainers(temp + "/nodes/node-1");
    containers.insert(containers.end(), more.begin(), more.end());
    if (containers.size() == 3) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ(containers.size(), 3u) << ReadFile(err);

  ASSERT_EQ(kill(pid, SIGINT), 0);
  int wstatus = 0;
  pid_t reaped = 0;
  const auto exit_deadline = SteadyClock::now() + std::chrono::seconds(60);
  while (SteadyClock::now() < exit_deadline && (reaped = waitpid(pid, &wstatus, WNOHANG)) == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (reaped != pid) {
    kill(pid, SIGKILL);
    waitpid(pid, &wstatus, 0);
    FAIL() << "rcsim did not exit after SIGINT; output:\n" << ReadFile(err);
  }
  ASSERT_TRUE(WIFEXITED(wstatus)) << ReadFile(err);
  EXPECT_EQ(WEXITSTATUS(wstatus), 130) << ReadFile(err);
  EXPECT_NE(ReadFile(err).find("interrupted"), std::string::npos) << ReadFile(err);
  for (pid_t p : pids) EXPECT_TRUE(Gone(p)) << "pid " << p;
  for (const AgentContainer& c : containers) {
    EXPECT_TRUE(Gone(c.pid)) << "container of " << c.pod_name << ", pid " << c.pid;
    EXPECT_TRUE(Gone(c.shim_pid)) << "shim of " << c.pod_name << ", pid " << c.shim_pid;
  }
  for (int p : ports) EXPECT_TRUE(PortFree(p)) << "port " << p;
  EXPECT_FALSE(std::filesystem::exists(temp)) << temp;
  std::filesystem::remove_all(dir);
}

TEST(RealRunnerTest, RcsimRefusesUnsupportedEventsBeforeTheRun) {
  char tmpl[] = "/tmp/rcsim-refuse-test-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  std::ofstream(dir + "/kill.yaml") << R"(
name: kill
controllers: [{name: web, replicas: 3}]
events:
  - {at: 1s, kill_pods: {selector: {app: web}, count: 1}}
expect: []
)";
  // With hollow nodes nothing runs a pod's process to kill.
  const std::string cmd =
      std::string(RCSIM_BINARY) + " run --real --hollow-nodes " + dir + "/kill.yaml > " + dir + "/out 2>&1";
  const int status = std::system(cmd.c_str());  // NOLINT(concurrency-mt-unsafe): one thread here
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 2);
  const std::string out = ReadFile(dir + "/out");
  EXPECT_NE(out.find("kill.yaml: /events/0/kill_pods: "), std::string::npos) << out;
  EXPECT_EQ(out.find("real stack"), std::string::npos) << out;  // nothing was started
  // A leader kill needs --etcd-members 3; a malformed member is refused by the parser.
  std::ofstream(dir + "/leader.yaml") << R"(
name: leader
controllers: [{name: web, replicas: 1}]
events:
  - {at: 1s, kill_etcd_leader: {}}
expect: []
)";
  std::ofstream(dir + "/member.yaml") << R"(
name: member
controllers: [{name: web, replicas: 1}]
events:
  - {at: 1s, restart_etcd: {member: -1}}
expect: []
)";
  for (const char* name : {"leader", "member"}) {
    const std::string run =
        std::string(RCSIM_BINARY) + " run --real " + dir + "/" + name + ".yaml > " + dir + "/out 2>&1";
    const int code = std::system(run.c_str());  // NOLINT(concurrency-mt-unsafe): one thread here
    ASSERT_TRUE(WIFEXITED(code));
    EXPECT_EQ(WEXITSTATUS(code), 2) << name;
    const std::string said = ReadFile(dir + "/out");
    EXPECT_NE(said.find(std::string(name) + ".yaml"), std::string::npos)
        << said;  // a YAML error adds line:col
    EXPECT_NE(said.find(std::string(": /events/0/") +
                        (std::string(name) == "leader" ? "kill_etcd_leader: " : "restart_etcd/member: ")),
              std::string::npos)
        << said;
    EXPECT_EQ(said.find("real stack"), std::string::npos) << said;
  }
  std::filesystem::remove_all(dir);
}

// Issue 12: `rcsim run --compare --seeds 3` runs the simulation on 3 seeds and real mode once, on the
// first of them, and reports the real convergence against the seeds' median, min and max.
TEST(RealRunnerTest, CompareWithSeedsRunsRealOnceAgainstEverySimulatedSeed) {
  char tmpl[] = "/tmp/rcsim-compare-seeds-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::filesystem::path dir = tmpl;
  const std::string cmd = std::string(RCSIM_BINARY) + " run --compare " + RCSIM_SOURCE_DIR +
                          "/scenarios/real/real-scale-up.json --seeds 3 --timeout 2m --apiserver-binary " +
                          RCSIM_APISERVER_BINARY + " --controller-manager-binary " +
                          RCSIM_CONTROLLER_MANAGER_BINARY + " --node-agent-binary " +
                          RCSIM_NODE_AGENT_BINARY + " --report " + (dir / "report").string() + " > " +
                          (dir / "out").string() + " 2>&1";
  const auto t0 = SteadyClock::now();
  const int status = std::system(cmd.c_str());  // NOLINT(concurrency-mt-unsafe): one thread here
  const std::string out = ReadFile((dir / "out").string());
  std::cout << "[timing] rcsim run --compare real-scale-up --seeds 3: "
            << std::chrono::duration<double>(SteadyClock::now() - t0).count() << " s" << std::endl;
  ASSERT_TRUE(WIFEXITED(status)) << out;
  EXPECT_EQ(WEXITSTATUS(status), 0) << out;
  EXPECT_NE(out.find("SAME    real-scale-up  sim=3/3 PASS median "), std::string::npos) << out;
  EXPECT_NE(out.find("real/median="), std::string::npos) << out;
  EXPECT_NE(out.find("1 passed, 0 failed (real mode), 0 verdicts differ"), std::string::npos) << out;
  // One real run: one "mode=real" result line.
  std::size_t real_lines = 0;
  for (std::size_t at = out.find("mode=real"); at != std::string::npos; at = out.find("mode=real", at + 1)) {
    ++real_lines;
  }
  EXPECT_EQ(real_lines, 1u) << out;

  nlohmann::json cmp = nlohmann::json::parse(ReadFile((dir / "report" / "compare.json").string()));
  EXPECT_EQ(cmp["sim_seeds_per_scenario"], 3);
  EXPECT_EQ(cmp["real_runs_per_scenario"], 1);
  EXPECT_EQ(cmp["verdict_rule"], "every_seed");
  ASSERT_EQ(cmp["runs"].size(), 1u) << cmp.dump(2);
  const nlohmann::json& run = cmp["runs"][0];
  EXPECT_EQ(run["scenario"], "real-scale-up");
  EXPECT_EQ(run["outcome"], "SAME");
  EXPECT_EQ(run["same_verdict"], true);
  EXPECT_EQ(run["real"]["verdict"], "PASS");
  EXPECT_EQ(run["sim"]["verdict"], "PASS");
  EXPECT_EQ(run["sim"]["runs"], 3);
  EXPECT_EQ(run["sim"]["passed"], 3);
  ASSERT_EQ(run["sim"]["seeds"].size(), 3u);
  EXPECT_EQ(run["real"]["seed"], run["sim"]["seeds"][0]["seed"]);
  std::set<uint64_t> seeds;
  for (const auto& s : run["sim"]["seeds"]) seeds.insert(s["seed"].get<uint64_t>());
  EXPECT_EQ(seeds.size(), 3u);
  const double lo = run["sim"]["convergence_min_seconds"].get<double>();
  const double median = run["sim"]["convergence_median_seconds"].get<double>();
  const double hi = run["sim"]["convergence_max_seconds"].get<double>();
  EXPECT_LE(lo, median);
  EXPECT_LE(median, hi);
  EXPECT_DOUBLE_EQ(run["sim"]["convergence_seconds"].get<double>(), median);
  const double real = run["real"]["convergence_seconds"].get<double>();
  EXPECT_NEAR(run["convergence_ratio"].get<double>(), real / median, 1e-9);
  std::cout << "[figures] real-scale-up: real " << real << " s, sim median " << median << " s (min " << lo
            << ", max " << hi << "), real/median " << real / median << std::endl;

  // The real report in DIR (named without a seed: one run), the three simulated ones and their swarm in
  // DIR/sim, the modes table in the HTML.
  EXPECT_EQ(nlohmann::json::parse(ReadFile((dir / "report" / "real-scale-up.json").string()))["mode"],
            "real");
  for (const auto& s : run["sim"]["seeds"]) {
    const std::string name = "real-scale-up-seed" + std::to_string(s["seed"].get<uint64_t>()) + ".json";
    EXPECT_EQ(nlohmann::json::parse(ReadFile((dir / "report" / "sim" / name).string()))["mode"], "sim")
        << name;
  }
  nlohmann::json swarm = nlohmann::json::parse(ReadFile((dir / "report" / "sim" / "swarm.json").string()));
  EXPECT_EQ(swarm.at(0)["runs"], 3);
  const std::string html = ReadFile((dir / "report" / "index.html").string());
  EXPECT_NE(html.find("<table class=\"comparison modes\">"), std::string::npos);
  EXPECT_NE(html.find("<tr class=\"same\" data-scenario=\"real-scale-up\">"), std::string::npos);
  std::filesystem::remove_all(dir);
}

// A kubeconfig whose one context is `server`, without credentials.
void WriteKubeconfig(const std::string& path, const std::string& server) {
  std::ofstream(path) << "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: " << server
                      << "}\nusers:\n- name: u\n  user: {}\ncontexts:\n- name: x\n  context: "
                         "{cluster: c, user: u}\ncurrent-context: x\n";
}

// --kubeconfig: the scenario runs against a cluster rcsim did not start (here a RealStack of the
// test's own, with its manager), starting nothing itself.
TEST(RealRunnerTest, KubeconfigRunsAgainstAnExistingCluster) {
  auto stack = RealStack::Start(Options());
  ASSERT_TRUE(stack.ok()) << stack.status().ToString();
  char tmpl[] = "/tmp/rcsim-kubeconfig-test-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  WriteKubeconfig(dir + "/kubeconfig", (*stack)->api_url());
  std::ofstream(dir + "/s.yaml") << R"(
name: existing
duration: 1m
manager: {resync: 2s}
controllers: [{name: web, replicas: 3}]
events:
  - {at: 1s, scale: {controller: web, replicas: 5}}
expect:
  - never_above: {controller: web, active: 5}
  - final: {controller: web, replicas_status: 5}
  - pods_matching: {selector: {app: web}, never_above: 5}
)";
  const std::string cmd = std::string(RCSIM_BINARY) + " run --real " + dir + "/s.yaml --kubeconfig " + dir +
                          "/kubeconfig --report " + dir + "/report > " + dir + "/out 2>&1";
  const int status = std::system(cmd.c_str());  // NOLINT(concurrency-mt-unsafe): one thread here
  const std::string out = ReadFile(dir + "/out");
  ASSERT_TRUE(WIFEXITED(status)) << out;
  EXPECT_EQ(WEXITSTATUS(status), 0) << out;
  EXPECT_EQ(out.find("real stack"), std::string::npos) << out;  // nothing started
  EXPECT_NE(ReadFile(dir + "/report/existing.json").find("\"mode\": \"real\""), std::string::npos);
  // Events that need rcsim's own processes are refused with their pointer.
  std::ofstream(dir + "/r.yaml") << R"(
name: restart
controllers: [{name: web, replicas: 1}]
events:
  - {at: 1s, restart_manager: {down: 1s}}
expect: []
)";
  const std::string refused = std::string(RCSIM_BINARY) + " run --real " + dir + "/r.yaml --kubeconfig " +
                              dir + "/kubeconfig > " + dir + "/out2 2>&1";
  const int status2 = std::system(refused.c_str());  // NOLINT(concurrency-mt-unsafe): one thread here
  ASSERT_TRUE(WIFEXITED(status2));
  EXPECT_EQ(WEXITSTATUS(status2), 2);
  EXPECT_NE(ReadFile(dir + "/out2").find("r.yaml: /events/0/restart_manager: "), std::string::npos)
      << ReadFile(dir + "/out2");
  std::filesystem::remove_all(dir);
}

// Regression (CI, 2026-12-03: "/controllers/0: the API refused it: already_exists"): the scenario's
// create of a controller timed out on a loaded machine after the API server had applied it; the retry
// answered AlreadyExists and the run failed. A create whose earlier attempt's outcome was unknown now
// takes an AlreadyExists for the controller it sent as its own. Here every create through a proxy
// in front of the API server times out for 4 s (each attempt held 1 s, half of them forwarded), so
// the AlreadyExists comes with probability 1 - 2^-4 per run, and the run must pass either way.
TEST(RealRunnerTest, RetriedCreateThatHadAppliedIsTheRunsOwnController) {
  auto stack = RealStack::Start(Options());
  ASSERT_TRUE(stack.ok()) << stack.status().ToString();
  FaultProxyOptions po;
  po.upstream_port =
      static_cast<uint16_t>(std::stoi((*stack)->api_url().substr((*stack)->api_url().rfind(':') + 1)));
  po.seed = 7;
  auto proxy = FaultProxy::Start(po);
  ASSERT_TRUE(proxy.ok()) << proxy.status().ToString();
  char tmpl[] = "/tmp/rcsim-retried-create-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  WriteKubeconfig(dir + "/kubeconfig", (*proxy)->url());
  Scenario s = Parse(R"(
name: retried-create
duration: 10s
controllers: [{name: web, replicas: 2}]
expect:
  - final: {controller: web, replicas_status: 2}
)");
  RealRunOptions o = RunOptions();
  o.kubeconfig = dir + "/kubeconfig";
  (*proxy)->SetTimeouts({Verb::kCreate}, 1.0, std::chrono::seconds(4));
  RunResult r = RunScenarioReal(s, 1, o);
  EXPECT_TRUE(r.passed) << r.error;
  for (const ExpectationOutcome& e : r.expectations) EXPECT_TRUE(e.passed) << e.text << ": " << e.detail;
  const FaultProxyCounters c = (*proxy)->counters();
  EXPECT_GE(c.timeouts_injected, 3u);
  EXPECT_EQ(c.calls[static_cast<int>(Verb::kCreate)], c.timeouts_injected + 1)
      << "one create after the window";
  std::filesystem::remove_all(dir);
}
}  // namespace
}  // namespace rcsim
