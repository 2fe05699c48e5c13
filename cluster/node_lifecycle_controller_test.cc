#include "cluster/node_lifecycle_controller.h"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "cluster/cluster_test_world.h"
#include "cluster/node_agent.h"
#include "cluster/pod_gc.h"
#include "fakes/sim_runtime.h"
#include "registry/lease_registry.h"

namespace rcsim {
namespace {

// The timeline of a node whose agent dies: heartbeats stop at t0; Unknown + taint + pods not ready
// after the grace period; pods deleted after the eviction timeout and finished by the pod GC; the
// agent comes back and the node is Ready again.
TEST(NodeLifecycleControllerTest, UnreachableNodeTimeline) {
  ClusterTestWorld w;
  NullTraceSink trace;
  SimRuntime runtime(SimRuntimeOptions{}, &w.loop(), &w.rng(), "n1");
  NodeAgentOptions ao;
  ao.node_name = "n1";
  NodeAgent agent(ao, &w.api(), &w.api(), &runtime, &w.loop(), &w.loop(), &trace);
  NodeLifecycleOptions lo;
  lo.grace_period = std::chrono::seconds(40);
  lo.eviction_timeout = std::chrono::seconds(60);
  NodeLifecycleController nlc(lo, &w.api(), &w.api(), &w.loop(), &w.loop(), &trace);
  PodGcOptions go;
  go.period = std::chrono::seconds(5);
  PodGc gc(go, &w.api(), &w.api(), &w.loop(), &w.loop(), &trace);
  agent.Start();
  nlc.Start();
  gc.Start();
  Pod p = ClusterTestWorld::MakePod("web");
  p.spec.node_name = "n1";
  ASSERT_TRUE(w.CreatePod(p));
  ASSERT_TRUE(w.RunUntil(
      [&] {
        PodPtr x = w.GetPod("web");
        return x && IsReady(*x);
      },
      std::chrono::seconds(5)));
  w.loop().RunFor(std::chrono::minutes(2));
  ASSERT_TRUE(IsNodeReady(*w.GetNode("n1"))) << "a heartbeating node stays Ready";

  agent.Stop();
  runtime.Fail();
  const TimePoint t0 = w.loop().Now();
  auto ready_status = [&] { return FindNodeCondition(w.GetNode("n1")->status, "Ready")->status; };
  ASSERT_TRUE(w.RunUntil([&] { return ready_status() == "Unknown"; }, std::chrono::minutes(2)));
  const Duration noticed = w.loop().Now() - t0;
  EXPECT_GT(noticed, std::chrono::seconds(30)) << "not before the grace period (from the last heartbeat)";
  EXPECT_LE(noticed, std::chrono::seconds(55));
  ASSERT_TRUE(
      w.RunUntil([&] { return HasTaint(*w.GetNode("n1"), kTaintUnreachable); }, std::chrono::seconds(10)));
  ASSERT_TRUE(w.RunUntil([&] { return !IsReady(*w.GetPod("web")); }, std::chrono::seconds(10)));

  ASSERT_TRUE(w.RunUntil(
      [&] {
        PodPtr x = w.GetPod("web");
        return !x || x->metadata.deletion_timestamp;
      },
      std::chrono::minutes(3)));
  EXPECT_GE(w.loop().Now() - t0, noticed + std::chrono::seconds(55)) << "eviction after the timeout";
  // No agent finishes it: the pod GC does once its grace period is over.
  ASSERT_TRUE(w.RunUntil([&] { return !w.GetPod("web"); }, std::chrono::minutes(2)));
  EXPECT_EQ(nlc.counters().evictions, 1u);

  runtime.Recover();
  agent.Start();
  ASSERT_TRUE(
      w.RunUntil([&] { return ready_status() == "True" && !HasTaint(*w.GetNode("n1"), kTaintUnreachable); },
                 std::chrono::seconds(30)));
}

// A node's Lease, created at once and renewed every 10 s from Start() while `renewing`, as its node
// agent renews it; written straight to the registry.
class LeaseRenewer {
 public:
  LeaseRenewer(ClusterTestWorld* w, std::string node)
      : w_(w), leases_(&w->registry().context()), node_(std::move(node)) {
    Lease l;
    l.metadata.name = node_;
    l.spec.holder_identity = node_;
    l.spec.renew_time = w_->loop().Now();
    created_ = leases_.Create(kNodeLeaseNamespace, l).ok();
  }
  bool created() const { return created_; }
  void Start() { Renew(); }
  bool renewing = true;

 private:
  void Renew() {
    if (!renewing) return;
    Lease next = **leases_.Get(kNodeLeaseNamespace, node_);
    next.spec.renew_time = w_->loop().Now();
    ASSERT_TRUE(leases_.Update(next).ok());
    w_->loop().Schedule(std::chrono::seconds(10), [this] { Renew(); });
  }

  ClusterTestWorld* const w_;
  LeaseRegistry leases_;
  const std::string node_;
  bool created_ = false;
};

// kube-controller-manager judges a node by the newer of its Lease's renewTime and Ready's
// lastHeartbeatTime: a node whose status is not posted for minutes (nodeStatusReportFrequency) but
// whose lease is renewed stays Ready; once the renewals stop it is Unknown after the grace period.
TEST(NodeLifecycleControllerTest, ARenewedLeaseKeepsANodeReadyWithoutStatusPosts) {
  ClusterTestWorld w;
  NullTraceSink trace;
  ASSERT_TRUE(w.CreateNode(ClusterTestWorld::MakeNode("n1", w.loop().Now())));
  LeaseRenewer lease(&w, "n1");
  ASSERT_TRUE(lease.created());
  NodeLifecycleOptions lo;
  lo.grace_period = std::chrono::seconds(40);
  NodeLifecycleController nlc(lo, &w.api(), &w.api(), &w.loop(), &w.loop(), &trace);
  nlc.Start();
  lease.Start();
  w.loop().RunFor(std::chrono::minutes(3));
  EXPECT_TRUE(IsNodeReady(*w.GetNode("n1"))) << "the lease is the heartbeat";
  EXPECT_EQ(nlc.counters().marked_unknown, 0u);

  lease.renewing = false;
  const TimePoint t0 = w.loop().Now();
  ASSERT_TRUE(w.RunUntil([&] { return !IsNodeReady(*w.GetNode("n1")); }, std::chrono::minutes(2)));
  const Duration noticed = w.loop().Now() - t0;
  EXPECT_GT(noticed, std::chrono::seconds(30)) << "not before the grace period (from the last renewal)";
  EXPECT_LE(noticed, std::chrono::seconds(50));
  EXPECT_EQ(FindNodeCondition(w.GetNode("n1")->status, "Ready")->status, "Unknown");
}

// A ClusterApi whose Lease reads fail while down (as when the API server is unreachable): SetDown(true)
// ends every open lease watch with kError, and while down a list answers kUnavailable and a watch ends at
// once. Everything else goes to `inner`.
class LeaseReadsCanFail final : public ClusterApi, public LeaseClient {
 public:
  explicit LeaseReadsCanFail(ClusterApi* inner, Executor* executor) : inner_(inner), executor_(executor) {}

  void SetDown(bool down) {
    down_ = down;
    if (!down) return;
    for (const std::shared_ptr<Open>& w : open_) {
      if (std::exchange(w->ended, true)) continue;
      EndSoon(w->on_event);
    }
    open_.clear();
  }

  ResourceClient<Node>& nodes() override { return inner_->nodes(); }
  LeaseClient& leases() override { return *this; }
  void BindPod(const std::string& ns, Binding binding, Callback<Status> done) override {
    inner_->BindPod(ns, std::move(binding), std::move(done));
  }

  void List(const std::string& ns, const ListOptions& opts,
            Callback<Result<ObjectList<Lease>>> done) override {
    if (!down_) return inner_->leases().List(ns, opts, std::move(done));
    executor_->Post([done = std::move(done)] { done(Status(Code::kUnavailable, "lease reads are down")); });
  }
  std::unique_ptr<ApiWatch> Watch(const std::string& ns, const ListOptions& opts, const std::string& rv,
                                  std::function<void(const ApiWatchEvent<Lease>&)> on_event) override {
    auto w = std::make_shared<Open>();
    w->on_event = std::move(on_event);
    if (down_) {
      w->ended = true;
      EndSoon(w->on_event);
      return std::make_unique<ApiWatch>();
    }
    open_.push_back(w);
    return inner_->leases().Watch(ns, opts, rv, [w](const ApiWatchEvent<Lease>& ev) {
      if (!w->ended) w->on_event(ev);
    });
  }
  void Get(const std::string& ns, const std::string& name, Callback<Result<LeasePtr>> done) override {
    inner_->leases().Get(ns, name, std::move(done));
  }
  void Create(const std::string& ns, Lease lease, Callback<Result<LeasePtr>> done) override {
    inner_->leases().Create(ns, std::move(lease), std::move(done));
  }
  void Update(Lease lease, Callback<Result<LeasePtr>> done) override {
    inner_->leases().Update(std::move(lease), std::move(done));
  }
  void Delete(const std::string& ns, const std::string& name, const DeleteOptions& opts,
              Callback<Result<LeasePtr>> done) override {
    inner_->leases().Delete(ns, name, opts, std::move(done));
  }

 private:
  struct Open {
    bool ended = false;
    std::function<void(const ApiWatchEvent<Lease>&)> on_event;
  };
  void EndSoon(std::function<void(const ApiWatchEvent<Lease>&)> on_event) {
    executor_->Post([on_event = std::move(on_event)] {
      ApiWatchEvent<Lease> ev;
      ev.type = ApiWatchEvent<Lease>::Type::kError;
      ev.error = Status(Code::kUnavailable, "lease reads are down");
      on_event(ev);
    });
  }

  ClusterApi* const inner_;
  Executor* const executor_;
  bool down_ = false;
  std::vector<std::shared_ptr<Open>> open_;
};

// The controller watches the Leases. While that watch is down it cannot see renewals, so it judges no
// node (a node renewing its lease all along must not be marked Unknown); once the watch is back it
// sees the renewals again, and a node that stops renewing is Unknown after the grace period.
TEST(NodeLifecycleControllerTest, NoNodeIsJudgedWhileTheLeaseWatchIsDown) {
  ClusterTestWorld w;
  NullTraceSink trace;
  ASSERT_TRUE(w.CreateNode(ClusterTestWorld::MakeNode("n1", w.loop().Now())));
  LeaseRenewer lease(&w, "n1");
  ASSERT_TRUE(lease.created());
  LeaseReadsCanFail cluster(&w.api(), &w.loop());
  NodeLifecycleOptions lo;
  lo.grace_period = std::chrono::seconds(40);
  NodeLifecycleController nlc(lo, &w.api(), &cluster, &w.loop(), &w.loop(), &trace);
  nlc.Start();
  lease.Start();
  w.loop().RunFor(std::chrono::minutes(1));
  ASSERT_TRUE(IsNodeReady(*w.GetNode("n1")));

  cluster.SetDown(true);
  w.loop().RunFor(std::chrono::minutes(3));
  EXPECT_TRUE(IsNodeReady(*w.GetNode("n1"))) << "judged without the renewals";
  EXPECT_EQ(nlc.counters().marked_unknown, 0u);

  cluster.SetDown(false);
  w.loop().RunFor(std::chrono::minutes(1));
  EXPECT_TRUE(IsNodeReady(*w.GetNode("n1"))) << "the renewals are seen again";
  lease.renewing = false;
  const TimePoint t0 = w.loop().Now();
  ASSERT_TRUE(w.RunUntil([&] { return !IsNodeReady(*w.GetNode("n1")); }, std::chrono::minutes(2)));
  EXPECT_GT(w.loop().Now() - t0, std::chrono::seconds(30)) << "not before the grace period";
}

TEST(PodGcTest, DeletesTerminatedBeyondThresholdAndPodsOfMissingNodes) {
  ClusterTestWorld w;
  NullTraceSink trace;
  ASSERT_TRUE(w.CreateNode(ClusterTestWorld::MakeNode("n1", w.loop().Now())));
  for (int i = 0; i < 5; ++i) {
    Pod p = ClusterTestWorld::MakePod("done-" + std::to_string(i));
    p.spec.node_name = "n1";
    PodPtr created = w.CreatePod(p);
    Pod failed = *created;
    failed.status.phase = phase::kFailed;
    ASSERT_TRUE(w.registry().pods().UpdateStatus(failed).ok());
    w.loop().RunFor(std::chrono::seconds(1));  // distinct creation times
  }
  Pod lost = ClusterTestWorld::MakePod("lost");
  lost.spec.node_name = "gone-node";
  ASSERT_TRUE(w.CreatePod(lost));
  Pod running = ClusterTestWorld::MakePod("running");
  running.spec.node_name = "n1";
  ASSERT_TRUE(w.CreatePod(running));
  PodGcOptions o;
  o.terminated_threshold = 2;
  o.period = std::chrono::seconds(5);
  PodGc gc(o, &w.api(), &w.api(), &w.loop(), &w.loop(), &trace);
  gc.Start();
  w.loop().RunFor(std::chrono::seconds(12));
  std::vector<std::string> left;
  for (const PodPtr& p : w.Pods()) left.push_back(p->metadata.name);
  EXPECT_EQ(left, (std::vector<std::string>{"done-3", "done-4", "running"})) << "oldest terminated go first";
  EXPECT_EQ(gc.counters().terminated_deleted, 3u);
  EXPECT_EQ(gc.counters().orphans_deleted, 1u);
}

// kube-controller-manager: a --terminated-pod-gc-threshold <= 0 turns the terminated-pod collection off.
TEST(PodGcTest, ThresholdZeroKeepsTerminatedPods) {
  ClusterTestWorld w;
  NullTraceSink trace;
  ASSERT_TRUE(w.CreateNode(ClusterTestWorld::MakeNode("n1", w.loop().Now())));
  for (int i = 0; i < 3; ++i) {
    Pod p = ClusterTestWorld::MakePod("done-" + std::to_string(i));
    p.spec.node_name = "n1";
    Pod failed = *w.CreatePod(p);
    failed.status.phase = phase::kFailed;
    ASSERT_TRUE(w.registry().pods().UpdateStatus(failed).ok());
  }
  PodGcOptions o;
  o.terminated_threshold = 0;
  o.period = std::chrono::seconds(5);
  PodGc gc(o, &w.api(), &w.api(), &w.loop(), &w.loop(), &trace);
  gc.Start();
  w.loop().RunFor(std::chrono::seconds(12));
  EXPECT_EQ(w.Pods().size(), 3u);
  EXPECT_EQ(gc.counters().terminated_deleted, 0u);
}

}  // namespace
}  // namespace rcsim
