#include "cluster/node_agent.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cluster/cluster_test_world.h"
#include "fakes/sim_runtime.h"
#include "registry/lease_registry.h"

namespace rcsim {
namespace {

const PodCondition* FindPodCondition(const PodStatus& status, const std::string& type) {
  for (const PodCondition& c : status.conditions) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

class NodeAgentTest : public ::testing::Test {
 protected:
  NodeAgentTest() : runtime_(SimRuntimeOptions{}, &w_.loop(), &w_.rng(), "n1") {}

  void StartAgent(NodeAgentOptions o = {}) {
    o.node_name = "n1";
    agent_ = std::make_unique<NodeAgent>(o, &w_.api(), &w_.api(), &runtime_, &w_.loop(), &w_.loop(), &trace_);
    agent_->Start();
  }
  PodPtr CreateBound(const std::string& name, const std::string& policy = "Always") {
    Pod p = ClusterTestWorld::MakePod(name, policy);
    p.spec.node_name = "n1";
    return w_.CreatePod(p);
  }
  bool PodIs(const std::string& name, const char* phase, bool ready) {
    PodPtr p = w_.GetPod(name);
    return p && p->status.phase == phase && IsReady(*p) == ready;
  }
  int32_t Restarts(const std::string& name) {
    PodPtr p = w_.GetPod(name);
    return p && !p->status.container_statuses.empty() ? p->status.container_statuses[0].restart_count : -1;
  }

  ClusterTestWorld w_;
  SimRuntime runtime_;
  NullTraceSink trace_;
  std::unique_ptr<NodeAgent> agent_;
};

// The kubelet's heartbeats: the Lease kube-node-lease/<node> is renewed every heartbeat_interval; the
// Node status is posted at registration, then only every status_report_interval or when it differs
// from what the agent would write (here: Ready marked Unknown by someone else).
TEST_F(NodeAgentTest, RegistersAndHeartbeatsThroughItsLease) {
  StartAgent();
  w_.loop().RunFor(std::chrono::seconds(1));
  NodePtr n = w_.GetNode("n1");
  ASSERT_TRUE(n);
  EXPECT_TRUE(IsNodeReady(*n));
  EXPECT_EQ(NodePodCapacity(*n), 110);
  const TimePoint registered = *FindNodeCondition(n->status, "Ready")->last_heartbeat_time;
  LeaseRegistry leases(&w_.registry().context());
  auto renew_time = [&] { return *(*leases.Get(kNodeLeaseNamespace, "n1"))->spec.renew_time; };
  ASSERT_TRUE(leases.Get(kNodeLeaseNamespace, "n1").ok()) << "the lease is created at registration";
  EXPECT_EQ((*leases.Get(kNodeLeaseNamespace, "n1"))->spec.holder_identity, "n1");
  EXPECT_EQ((*leases.Get(kNodeLeaseNamespace, "n1"))->spec.lease_duration_seconds, 40);
  const TimePoint first_renewal = renew_time();

  w_.loop().RunFor(std::chrono::seconds(25));
  EXPECT_GE(renew_time() - first_renewal, std::chrono::seconds(20));
  EXPECT_EQ(*FindNodeCondition(w_.GetNode("n1")->status, "Ready")->last_heartbeat_time, registered)
      << "an unchanged status is not posted every heartbeat";
  EXPECT_EQ(agent_->counters().status_posts, 1u);
  EXPECT_EQ(agent_->counters().lease_renewals, 3u);  // at registration, 10s, 20s

  // The status is posted again once nodeStatusReportFrequency (5 min) has passed.
  w_.loop().RunFor(std::chrono::minutes(5));
  EXPECT_GE(*FindNodeCondition(w_.GetNode("n1")->status, "Ready")->last_heartbeat_time - registered,
            std::chrono::minutes(5));
  EXPECT_EQ(agent_->counters().status_posts, 2u);

  // Marked Unknown (by the node lifecycle controller): Ready=True again within one heartbeat.
  Node marked = *w_.GetNode("n1");
  for (NodeCondition& c : marked.status.conditions) c.status = "Unknown";
  ASSERT_TRUE(w_.registry().nodes().UpdateStatus(marked).ok());
  w_.loop().RunFor(std::chrono::seconds(11));
  EXPECT_TRUE(IsNodeReady(*w_.GetNode("n1")));

  agent_->Stop();
  const TimePoint last = renew_time();
  w_.loop().RunFor(std::chrono::seconds(60));
  EXPECT_EQ(renew_time(), last) << "a stopped agent does not heartbeat";
}

// A lease renewed by someone else meanwhile (a conflict) is read again and renewed at once.
TEST_F(NodeAgentTest, ALeaseChangedBehindItsBackIsReadAgain) {
  StartAgent();
  w_.loop().RunFor(std::chrono::seconds(1));
  LeaseRegistry leases(&w_.registry().context());
  Lease other = **leases.Get(kNodeLeaseNamespace, "n1");
  other.spec.holder_identity = "someone-else";
  ASSERT_TRUE(leases.Update(other).ok());
  const TimePoint changed = w_.loop().Now();
  w_.loop().RunFor(std::chrono::seconds(10));
  LeasePtr now = *leases.Get(kNodeLeaseNamespace, "n1");
  EXPECT_EQ(now->spec.holder_identity, "n1");
  EXPECT_GT(*now->spec.renew_time, changed) << "renewed at the next heartbeat, after one re-read";
  EXPECT_EQ(agent_->counters().lease_renewals, 2u);
}

// The Lease is owned by its Node (v1 Node, name, uid), as the kubelet sets it, so the garbage
// collector deletes it with the Node; a Node deleted and registered again (another uid) takes over the
// reference at the next renewal.
TEST_F(NodeAgentTest, LeaseIsOwnedByItsNode) {
  StartAgent();
  w_.loop().RunFor(std::chrono::seconds(1));
  LeaseRegistry leases(&w_.registry().context());
  auto owners = [&] { return (*leases.Get(kNodeLeaseNamespace, "n1"))->metadata.owner_references; };
  ASSERT_EQ(owners().size(), 1u);
  OwnerReference ref = owners()[0];
  EXPECT_EQ(ref.api_version, "v1");
  EXPECT_EQ(ref.kind, "Node");
  EXPECT_EQ(ref.name, "n1");
  EXPECT_EQ(ref.uid, w_.GetNode("n1")->metadata.uid);
  EXPECT_FALSE(ref.controller);
  EXPECT_FALSE(ref.block_owner_deletion);

  const std::string old_uid = ref.uid;
  ASSERT_TRUE(w_.registry().nodes().Delete("", "n1", {}).ok());
  ASSERT_TRUE(w_.RunUntil(
      [&] {
        NodePtr n = w_.GetNode("n1");
        return n && n->metadata.uid != old_uid && owners().size() == 1 && owners()[0].uid == n->metadata.uid;
      },
      std::chrono::seconds(30)));
}

// Regression (found by real mode's node_capacity, a restart of the agent with a new --max-pods): a
// restarted agent re-admitting a pod whose container it left running wrote a ContainerCreating, not
// Ready status before the claim came back, so Ready dropped for a pod that never stopped. The
// runtime here says the containers are adoptable, as the process runtime does after an agent restart.
TEST_F(NodeAgentTest, ARestartedAgentDoesNotReportItsAdoptedPodsNotReady) {
  class AdoptingRuntime final : public Runtime {
   public:
    explicit AdoptingRuntime(Runtime* inner) : inner_(inner) {}
    void SetExitListener(ExitListener l) override { inner_->SetExitListener(std::move(l)); }
    void Start(const ContainerConfig& c, Callback<Result<std::string>> done) override {
      inner_->Start(c, std::move(done));
    }
    void Stop(const std::string& id, Duration grace, Callback<Status> done) override {
      inner_->Stop(id, grace, std::move(done));
    }
    bool Adoptable(const std::string&, const std::string&) const override { return adoptable; }
    bool adoptable = false;

   private:
    Runtime* const inner_;
  };
  AdoptingRuntime runtime(&runtime_);
  ASSERT_TRUE(CreateBound("web"));
  NodeAgentOptions o;
  o.node_name = "n1";
  auto first =
      std::make_unique<NodeAgent>(o, &w_.api(), &w_.api(), &runtime, &w_.loop(), &w_.loop(), &trace_);
  first->Start();
  ASSERT_TRUE(w_.RunUntil([&] { return PodIs("web", phase::kRunning, true); }, std::chrono::seconds(5)));
  first->Stop();
  first.reset();  // a new agent process: nothing of the old one's state is left

  runtime.adoptable = true;
  auto second =
      std::make_unique<NodeAgent>(o, &w_.api(), &w_.api(), &runtime, &w_.loop(), &w_.loop(), &trace_);
  second->Start();
  bool dropped = false;
  w_.RunUntil(
      [&] {
        dropped = dropped || !PodIs("web", phase::kRunning, true);
        return second->counters().starts >= 1 && second->counters().status_writes >= 1;
      },
      std::chrono::seconds(5));
  w_.loop().RunFor(std::chrono::seconds(1));
  EXPECT_FALSE(dropped) << "the re-admitted pod was reported not Ready";
  EXPECT_TRUE(PodIs("web", phase::kRunning, true));
}

TEST_F(NodeAgentTest, RunsBoundPodsAndReportsStatus) {
  ASSERT_TRUE(CreateBound("web"));
  Pod elsewhere = ClusterTestWorld::MakePod("other");
  elsewhere.spec.node_name = "n2";
  ASSERT_TRUE(w_.CreatePod(elsewhere));
  StartAgent();
  ASSERT_TRUE(w_.RunUntil([&] { return PodIs("web", phase::kRunning, true); }, std::chrono::seconds(5)));
  PodPtr p = w_.GetPod("web");
  EXPECT_TRUE(p->status.start_time.has_value());
  EXPECT_FALSE(p->status.pod_ip.empty());
  EXPECT_EQ(p->status.host_ip, "10.0.0.1");
  // The kubelet's order: Initialized, Ready, ContainersReady, PodScheduled.
  std::vector<std::string> types;
  for (const PodCondition& pc : p->status.conditions) {
    types.push_back(pc.type);
    EXPECT_EQ(pc.status, "True") << pc.type;
  }
  EXPECT_EQ(types, (std::vector<std::string>{"Initialized", "Ready", "ContainersReady", "PodScheduled"}));
  EXPECT_EQ(w_.GetPod("other")->status.phase, phase::kPending) << "not this node's pod";
  EXPECT_EQ(runtime_.running(), 1u);
}

TEST_F(NodeAgentTest, RestartPolicyAndCrashLoopBackoff) {
  PodPtr always = CreateBound("always");
  PodPtr never = CreateBound("never", "Never");
  PodPtr onfail = CreateBound("onfail", "OnFailure");
  StartAgent();
  ASSERT_TRUE(w_.RunUntil(
      [&] {
        return PodIs("always", phase::kRunning, true) && PodIs("never", phase::kRunning, true) &&
               PodIs("onfail", phase::kRunning, true);
      },
      std::chrono::seconds(5)));
  EXPECT_EQ(runtime_.Exit(always->metadata.uid, 137), 1);
  EXPECT_EQ(runtime_.Exit(never->metadata.uid, 1), 1);
  EXPECT_EQ(runtime_.Exit(onfail->metadata.uid, 0), 1);
  ASSERT_TRUE(w_.RunUntil([&] { return Restarts("always") == 1 && PodIs("always", phase::kRunning, true); },
                          std::chrono::seconds(5)))
      << "the first restart is immediate";
  EXPECT_TRUE(w_.RunUntil([&] { return PodIs("never", phase::kFailed, false); }, std::chrono::seconds(5)));
  EXPECT_TRUE(
      w_.RunUntil([&] { return PodIs("onfail", phase::kSucceeded, false); }, std::chrono::seconds(5)));
  EXPECT_EQ(Restarts("never"), 0);

  // Crash looping: exits right after each start; the restarts back off 10 s, 20 s, 40 s.
  runtime_.CrashLoop(always->metadata.uid, true);
  EXPECT_EQ(runtime_.Exit(always->metadata.uid, 1), 1);
  const TimePoint t0 = w_.loop().Now();
  ASSERT_TRUE(w_.RunUntil([&] { return Restarts("always") >= 4; }, std::chrono::minutes(3)));
  // restart 2 at once (+start ~1s, crash after 1s), restart 3 after 10 s, restart 4 after 20 s.
  const Duration took = w_.loop().Now() - t0;
  EXPECT_GE(took, std::chrono::seconds(30));
  EXPECT_LE(took, std::chrono::seconds(45));
  EXPECT_FALSE(IsReady(*w_.GetPod("always")));
  runtime_.CrashLoop(always->metadata.uid, false);
  EXPECT_TRUE(w_.RunUntil([&] { return PodIs("always", phase::kRunning, true); }, std::chrono::minutes(2)));
}

TEST_F(NodeAgentTest, GracefulDeletionStopsTheContainersThenDeletes) {
  ASSERT_TRUE(CreateBound("web"));
  StartAgent();
  ASSERT_TRUE(w_.RunUntil([&] { return PodIs("web", phase::kRunning, true); }, std::chrono::seconds(5)));
  ASSERT_TRUE(w_.registry().pods().Delete("default", "web", DeleteOptions{}).ok());
  ASSERT_TRUE(w_.GetPod("web")) << "graceful: the pod stays until the agent finishes";
  ASSERT_TRUE(w_.RunUntil([&] { return !w_.GetPod("web"); }, std::chrono::seconds(5)));
  w_.loop().RunFor(std::chrono::seconds(1));  // the delete's reply
  EXPECT_EQ(runtime_.running(), 0u);
  EXPECT_EQ(agent_->counters().final_deletes, 1u);
  EXPECT_EQ(agent_->pod_count(), 0u);
}

TEST_F(NodeAgentTest, APodDeletedAtOnceHasItsContainersStopped) {
  ASSERT_TRUE(CreateBound("web"));
  StartAgent();
  ASSERT_TRUE(w_.RunUntil([&] { return PodIs("web", phase::kRunning, true); }, std::chrono::seconds(5)));
  DeleteOptions force;
  force.grace_period_seconds = 0;
  ASSERT_TRUE(w_.registry().pods().Delete("default", "web", force).ok());
  ASSERT_TRUE(w_.RunUntil([&] { return runtime_.running() == 0; }, std::chrono::seconds(5)));
}

TEST_F(NodeAgentTest, ARestartedAgentKeepsItsPodsRunning) {
  ASSERT_TRUE(CreateBound("web"));
  StartAgent();
  ASSERT_TRUE(w_.RunUntil([&] { return PodIs("web", phase::kRunning, true); }, std::chrono::seconds(5)));
  agent_->Stop();
  w_.loop().RunFor(std::chrono::seconds(30));
  EXPECT_EQ(runtime_.running(), 1u) << "stopping the agent leaves its containers";
  agent_->Start();
  w_.loop().RunFor(std::chrono::seconds(5));
  EXPECT_EQ(runtime_.running(), 1u);
  EXPECT_TRUE(PodIs("web", phase::kRunning, true));
}

// A container that exits while the agent is stopped (a kubelet restart): the stopped agent writes
// nothing; once started again it restarts the container and reports it (restartCount 1).
TEST_F(NodeAgentTest, AContainerThatExitsWhileTheAgentIsStoppedRestartsWhenItStarts) {
  PodPtr web = CreateBound("web");
  StartAgent();
  ASSERT_TRUE(w_.RunUntil([&] { return PodIs("web", phase::kRunning, true); }, std::chrono::seconds(5)));
  agent_->Stop();
  const uint64_t writes = agent_->counters().status_writes;
  EXPECT_EQ(runtime_.Exit(web->metadata.uid, 137), 1);
  w_.loop().RunFor(std::chrono::seconds(30));
  EXPECT_EQ(agent_->counters().status_writes, writes) << "a stopped agent writes no status";
  EXPECT_TRUE(PodIs("web", phase::kRunning, true)) << "the API still shows what the agent last wrote";
  EXPECT_EQ(runtime_.running(), 0u);
  agent_->Start();
  ASSERT_TRUE(w_.RunUntil([&] { return runtime_.running() == 1u && Restarts("web") == 1; },
                          std::chrono::seconds(10)));
  ASSERT_TRUE(w_.RunUntil([&] { return PodIs("web", phase::kRunning, true); }, std::chrono::seconds(5)));
}

// Readiness comes from the runtime's readiness check (the prober's results): a pod whose containers
// fail it stays Running with Ready=False (and ContainersReady=False, containerStatuses not ready),
// through container restarts, until it passes again; Ready then gets a new transition time.
TEST_F(NodeAgentTest, APodFailingItsReadinessCheckRunsNotReadyUntilItPasses) {
  PodPtr web = CreateBound("web");
  PodPtr other = CreateBound("other");
  StartAgent();
  ASSERT_TRUE(w_.RunUntil(
      [&] { return PodIs("web", phase::kRunning, true) && PodIs("other", phase::kRunning, true); },
      std::chrono::seconds(5)));
  const TimePoint first_ready = *FindPodCondition(w_.GetPod("web")->status, "Ready")->last_transition_time;
  w_.loop().RunFor(std::chrono::seconds(5));
  EXPECT_EQ(runtime_.SetReady(web->metadata.uid, false), 1);
  EXPECT_EQ(runtime_.SetReady(web->metadata.uid, false), 0) << "no change, nothing reported";
  ASSERT_TRUE(w_.RunUntil([&] { return PodIs("web", phase::kRunning, false); }, std::chrono::seconds(1)));
  PodPtr p = w_.GetPod("web");
  EXPECT_EQ(FindPodCondition(p->status, "ContainersReady")->status, "False");
  EXPECT_FALSE(p->status.container_statuses[0].ready);
  EXPECT_TRUE(PodIs("other", phase::kRunning, true)) << "readiness is per pod";

  // A restarted container of a not-ready pod is not ready either.
  EXPECT_EQ(runtime_.Exit(web->metadata.uid, 137), 1);
  ASSERT_TRUE(
      w_.RunUntil([&] { return Restarts("web") == 1 && runtime_.running() == 2; }, std::chrono::seconds(5)));
  w_.loop().RunFor(std::chrono::seconds(1));
  EXPECT_TRUE(PodIs("web", phase::kRunning, false));

  EXPECT_EQ(runtime_.SetReady(web->metadata.uid, true), 1);
  ASSERT_TRUE(w_.RunUntil([&] { return PodIs("web", phase::kRunning, true); }, std::chrono::seconds(1)));
  p = w_.GetPod("web");
  EXPECT_GT(*FindPodCondition(p->status, "Ready")->last_transition_time, first_ready)
      << "ready again: minReadySeconds counts from now";
  EXPECT_TRUE(p->status.container_statuses[0].ready);
}

// Two changes within one instant: the agent writes what holds (the report carries the current value).
TEST_F(NodeAgentTest, ReadinessFlippedTwiceInOneInstantEndsAsTheLastSetting) {
  PodPtr web = CreateBound("web");
  StartAgent();
  ASSERT_TRUE(w_.RunUntil([&] { return PodIs("web", phase::kRunning, true); }, std::chrono::seconds(5)));
  runtime_.SetReady(web->metadata.uid, false);
  runtime_.SetReady(web->metadata.uid, true);
  w_.loop().RunFor(std::chrono::seconds(1));
  EXPECT_TRUE(PodIs("web", phase::kRunning, true));
  runtime_.SetReady(web->metadata.uid, false);
  runtime_.SetReady(web->metadata.uid, true);
  runtime_.SetReady(web->metadata.uid, false);
  w_.loop().RunFor(std::chrono::seconds(1));
  EXPECT_TRUE(PodIs("web", phase::kRunning, false));
}

// Every status write repeats the pod's IPs, container name, image and id: the versions share one copy
// of each (a pod version was about 2.6 KB, most of it repeated strings).
TEST_F(NodeAgentTest, StatusVersionsShareTheirRepeatedStrings) {
  PodPtr web = CreateBound("web");
  StartAgent();
  ASSERT_TRUE(w_.RunUntil([&] { return PodIs("web", phase::kRunning, true); }, std::chrono::seconds(5)));
  const PodPtr ready = w_.GetPod("web");
  runtime_.SetReady(web->metadata.uid, false);
  ASSERT_TRUE(w_.RunUntil([&] { return PodIs("web", phase::kRunning, false); }, std::chrono::seconds(5)));
  const PodPtr not_ready = w_.GetPod("web");
  ASSERT_NE(ready, not_ready);
  const PodStatus& a = ready->status;
  const PodStatus& b = not_ready->status;
  EXPECT_EQ(&a.host_ip.str(), &b.host_ip.str());
  EXPECT_EQ(&a.pod_ip.str(), &b.pod_ip.str());
  EXPECT_FALSE(a.pod_ip.empty());
  ASSERT_EQ(a.container_statuses.size(), 1u);
  ASSERT_EQ(b.container_statuses.size(), 1u);
  const ContainerStatus& ca = a.container_statuses[0];
  const ContainerStatus& cb = b.container_statuses[0];
  EXPECT_EQ(&ca.name.str(), &cb.name.str());
  EXPECT_EQ(&ca.image.str(), &cb.image.str());
  EXPECT_EQ(&ca.container_id.str(), &cb.container_id.str());
  EXPECT_FALSE(ca.container_id.empty());
  EXPECT_TRUE(a.phase.is_constant());
}

// Issue 10: containerStatuses had no state, lastState, exit code or image; kubectl's STATUS column
// (CrashLoopBackOff, Completed, Error) and clients reading the exit code need them.
TEST_F(NodeAgentTest, ContainerStatusesReportStatesAsTheKubelet) {
  auto status = [&](const std::string& name) {
    PodPtr p = w_.GetPod(name);
    return p && !p->status.container_statuses.empty() ? p->status.container_statuses[0] : ContainerStatus{};
  };
  PodPtr web = CreateBound("web");
  PodPtr job = CreateBound("job", "Never");
  PodPtr done = CreateBound("done", "OnFailure");
  StartAgent();
  ASSERT_TRUE(w_.RunUntil([&] { return status("web").state.waiting.has_value(); }, std::chrono::seconds(1)));
  EXPECT_EQ(status("web").state.waiting->reason, "ContainerCreating");
  EXPECT_EQ(status("web").started, false);
  ASSERT_TRUE(w_.RunUntil(
      [&] {
        return PodIs("web", phase::kRunning, true) && PodIs("job", phase::kRunning, true) &&
               PodIs("done", phase::kRunning, true);
      },
      std::chrono::seconds(5)));
  ContainerStatus running = status("web");
  ASSERT_TRUE(running.state.running.has_value());
  EXPECT_TRUE(running.state.running->started_at.has_value());
  EXPECT_FALSE(running.last_state.terminated.has_value());
  EXPECT_EQ(running.image, web->spec.containers[0].image);
  EXPECT_EQ(running.container_id.str().rfind("rcsim://", 0), 0u) << running.container_id;
  EXPECT_EQ(running.started, true);

  // Killed (137) under Always: restarted at once; lastState keeps the termination.
  EXPECT_EQ(runtime_.Exit(web->metadata.uid, 137), 1);
  ASSERT_TRUE(w_.RunUntil([&] { return Restarts("web") == 1 && status("web").state.running.has_value(); },
                          std::chrono::seconds(5)));
  ContainerStatus restarted = status("web");
  ASSERT_TRUE(restarted.last_state.terminated.has_value());
  EXPECT_EQ(restarted.last_state.terminated->exit_code, 137);
  EXPECT_EQ(restarted.last_state.terminated->reason, "Error");
  EXPECT_EQ(restarted.last_state.terminated->container_id, running.container_id);
  EXPECT_NE(restarted.container_id, running.container_id) << "a new run, a new id";
  EXPECT_TRUE(restarted.last_state.terminated->finished_at.has_value());

  // Crash looping: between restarts the container waits in CrashLoopBackOff with the kubelet's message.
  runtime_.CrashLoop(web->metadata.uid, true);
  EXPECT_EQ(runtime_.Exit(web->metadata.uid, 1), 1);
  ASSERT_TRUE(w_.RunUntil(
      [&] {
        const ContainerStatus cs = status("web");
        return cs.state.waiting && cs.state.waiting->reason == "CrashLoopBackOff";
      },
      std::chrono::minutes(1)));
  ContainerStatus waiting = status("web");
  EXPECT_NE(waiting.state.waiting->message.find("back-off 10s restarting failed container=" +
                                                web->spec.containers[0].name + " pod=web_default("),
            std::string::npos)
      << waiting.state.waiting->message;
  EXPECT_EQ(waiting.last_state.terminated->exit_code, 1);
  EXPECT_FALSE(waiting.ready);
  EXPECT_EQ(waiting.started, false);

  // Terminated for good: the exit code and reason stay in state.terminated.
  EXPECT_EQ(runtime_.Exit(job->metadata.uid, 2), 1);
  EXPECT_EQ(runtime_.Exit(done->metadata.uid, 0), 1);
  ASSERT_TRUE(w_.RunUntil([&] { return PodIs("job", phase::kFailed, false); }, std::chrono::seconds(5)));
  ASSERT_TRUE(w_.RunUntil([&] { return PodIs("done", phase::kSucceeded, false); }, std::chrono::seconds(5)));
  ASSERT_TRUE(status("job").state.terminated.has_value());
  EXPECT_EQ(status("job").state.terminated->exit_code, 2);
  EXPECT_EQ(status("job").state.terminated->reason, "Error");
  EXPECT_EQ(status("done").state.terminated->exit_code, 0);
  EXPECT_EQ(status("done").state.terminated->reason, "Completed");
  EXPECT_FALSE(status("done").last_state.terminated.has_value());
}

}  // namespace
}  // namespace rcsim
