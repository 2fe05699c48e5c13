#include "cluster/garbage_collector.h"

#include <gtest/gtest.h>

#include "cluster/cluster_test_world.h"
#include "registry/lease_registry.h"

namespace rcsim {
namespace {

// The API with a pod watch that lags `lag` behind (controllers unchanged): two watch streams of a real
// API server are not ordered with each other.
class LaggingPodWatchApi final : public ApiClient {
 public:
  LaggingPodWatchApi(ApiClient* inner, Executor* executor, Duration lag)
      : inner_(inner), pods_(&inner->pods(), executor, lag) {}
  ResourceClient<Pod>& pods() override { return pods_; }
  ResourceClient<ReplicationController>& controllers() override { return inner_->controllers(); }

 private:
  class Pods final : public ForwardingResourceClient<Pod> {
   public:
    Pods(ResourceClient<Pod>* inner, Executor* executor, Duration lag)
        : ForwardingResourceClient(inner), executor_(executor), lag_(lag) {}
    std::unique_ptr<ApiWatch> Watch(const std::string& ns, const ListOptions& opts, const std::string& rv,
                                    std::function<void(const ApiWatchEvent<Pod>&)> on_event) override {
      auto open = std::make_shared<bool>(true);
      auto handler = std::make_shared<std::function<void(const ApiWatchEvent<Pod>&)>>(std::move(on_event));
      auto watch = inner()->Watch(ns, opts, rv, [this, open, handler](const ApiWatchEvent<Pod>& e) {
        executor_->Schedule(lag_, [open, handler, e] {
          if (*open) (*handler)(e);
        });
      });
      return std::make_unique<Handle>(std::move(watch), std::move(open));
    }

   private:
    class Handle final : public ApiWatch {
     public:
      Handle(std::unique_ptr<ApiWatch> inner, std::shared_ptr<bool> open)
          : inner_(std::move(inner)), open_(std::move(open)) {}
      ~Handle() override { *open_ = false; }

     private:
      std::unique_ptr<ApiWatch> inner_;
      std::shared_ptr<bool> open_;
    };
    Executor* const executor_;
    const Duration lag_;
  };

  ApiClient* const inner_;
  Pods pods_;
};

class GarbageCollectorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ReplicationController rc;
    rc.metadata.name = "web";
    rc.spec.replicas = 2;
    rc.spec.selector = {{"app", "web"}};
    PodTemplateSpec t;
    t.metadata.labels = {{"app", "web"}};
    t.spec.containers.push_back(ClusterTestWorld::MakePod("x").spec.containers[0]);
    rc.spec.template_ = t;
    auto created = w_.registry().controllers().Create("default", rc);
    ASSERT_TRUE(created.ok());
    rc_ = *created;
  }
  PodPtr Dependent(const std::string& name, bool bound, bool block = true) {
    Pod p = ClusterTestWorld::MakePod(name);
    OwnerReference ref;
    ref.name = rc_->metadata.name;
    ref.uid = rc_->metadata.uid;
    ref.block_owner_deletion = block;
    p.metadata.owner_references.push_back(ref);
    if (bound) p.spec.node_name = "n1";
    return w_.CreatePod(p);
  }
  void StartGc(ApiClient* api = nullptr) {
    gc_ = std::make_unique<GarbageCollector>(GarbageCollectorOptions{}, api ? api : &w_.api(), &w_.api(),
                                             &w_.loop(), &trace_);
    gc_->Start();
  }
  bool RcGone() { return !w_.registry().controllers().Get("default", "web").ok(); }
  void DeleteRc(const char* policy) {
    DeleteOptions o;
    o.propagation_policy = policy;
    ASSERT_TRUE(w_.registry().controllers().Delete("default", "web", o).ok());
  }

  ClusterTestWorld w_;
  NullTraceSink trace_;
  ControllerPtr rc_;
  std::unique_ptr<GarbageCollector> gc_;
};

TEST_F(GarbageCollectorTest, BackgroundDeletesTheDependentsAfterTheOwner) {
  ASSERT_TRUE(Dependent("a", false));
  ASSERT_TRUE(Dependent("b", false));
  Pod unrelated = ClusterTestWorld::MakePod("c");
  ASSERT_TRUE(w_.CreatePod(unrelated));
  StartGc();
  w_.loop().RunFor(std::chrono::seconds(1));
  EXPECT_EQ(w_.Pods().size(), 3u) << "nothing to collect while the owner exists";
  DeleteRc("Background");
  EXPECT_TRUE(RcGone());
  ASSERT_TRUE(w_.RunUntil([&] { return w_.Pods().size() == 1; }, std::chrono::seconds(5)));
  EXPECT_EQ(w_.Pods()[0]->metadata.name, "c");
  EXPECT_EQ(gc_->counters().owner_lookups, 1u) << "one lookup per absent owner, not per dependent";
}

TEST_F(GarbageCollectorTest, OrphanRemovesTheReferencesThenTheOwner) {
  ASSERT_TRUE(Dependent("a", true));
  ASSERT_TRUE(Dependent("b", false));
  StartGc();
  DeleteRc("");  // no policy: a replication controller orphans
  ASSERT_FALSE(RcGone());
  ASSERT_TRUE(w_.RunUntil([&] { return RcGone(); }, std::chrono::seconds(5)));
  ASSERT_EQ(w_.Pods().size(), 2u);
  for (const PodPtr& p : w_.Pods()) {
    EXPECT_TRUE(p->metadata.owner_references.empty()) << p->metadata.name;
    EXPECT_FALSE(p->metadata.deletion_timestamp.has_value());
  }
}

TEST_F(GarbageCollectorTest, ForegroundWaitsForBlockingDependents) {
  ASSERT_TRUE(Dependent("a", true));                   // bound: its deletion is graceful
  ASSERT_TRUE(Dependent("b", true, /*block=*/false));  // does not block its owner
  StartGc();
  DeleteRc("Foreground");
  ASSERT_TRUE(w_.RunUntil(
      [&] {
        PodPtr a = w_.GetPod("a"), b = w_.GetPod("b");
        return a && a->metadata.deletion_timestamp && b && b->metadata.deletion_timestamp;
      },
      std::chrono::seconds(5)));
  w_.loop().RunFor(std::chrono::seconds(5));
  EXPECT_FALSE(RcGone()) << "a terminating blocking dependent holds its owner";
  // The node agent finishes "a".
  DeleteOptions force;
  force.grace_period_seconds = 0;
  ASSERT_TRUE(w_.registry().pods().Delete("default", "a", force).ok());
  ASSERT_TRUE(w_.RunUntil([&] { return RcGone(); }, std::chrono::seconds(5)));
  EXPECT_TRUE(w_.GetPod("b")) << "non-blocking dependents are not waited for";
}

TEST_F(GarbageCollectorTest, DependentsOfAnOwnerThatNeverExistedAreCollected) {
  Pod p = ClusterTestWorld::MakePod("stray");
  OwnerReference ref;
  ref.name = "ghost";
  ref.uid = "00000000-0000-4000-8000-000000000000";
  p.metadata.owner_references.push_back(ref);
  ASSERT_TRUE(w_.CreatePod(p));
  // Same name as a live owner but another uid: also absent.
  Pod q = ClusterTestWorld::MakePod("stale");
  OwnerReference stale;
  stale.name = "web";
  stale.uid = "11111111-0000-4000-8000-000000000000";
  q.metadata.owner_references.push_back(stale);
  ASSERT_TRUE(w_.CreatePod(q));
  ASSERT_TRUE(Dependent("kept", false));
  StartGc();
  ASSERT_TRUE(w_.RunUntil([&] { return w_.Pods().size() == 1; }, std::chrono::seconds(5)));
  EXPECT_EQ(w_.Pods()[0]->metadata.name, "kept");
}

// Regression: the GC's pod watch lagged behind its controller watch (found end to end through the
// API server: `delete rc` with no policy deleted the pods it should have orphaned). The owner's
// orphan finalizer went while the cache showed no dependent yet, and the dependents, arriving
// later with an ownerReference to an absent owner, were collected.
TEST_F(GarbageCollectorTest, OrphanWithALaggingPodWatchKeepsEveryDependent) {
  LaggingPodWatchApi lagging(&w_.api(), &w_.loop(), std::chrono::seconds(2));
  StartGc(&lagging);
  w_.loop().RunFor(std::chrono::seconds(1));
  ASSERT_TRUE(Dependent("a", false));
  ASSERT_TRUE(Dependent("b", true));
  DeleteRc("");
  ASSERT_TRUE(w_.RunUntil([&] { return RcGone(); }, std::chrono::seconds(10)));
  w_.loop().RunFor(std::chrono::seconds(10));
  ASSERT_EQ(w_.Pods().size(), 2u);
  for (const PodPtr& p : w_.Pods()) {
    EXPECT_TRUE(p->metadata.owner_references.empty()) << p->metadata.name;
    EXPECT_FALSE(p->metadata.deletion_timestamp.has_value()) << p->metadata.name;
  }
}

// The same lag under Foreground: the owner may go only after its blocking dependents.
TEST_F(GarbageCollectorTest, ForegroundWithALaggingPodWatchDeletesTheDependentsFirst) {
  LaggingPodWatchApi lagging(&w_.api(), &w_.loop(), std::chrono::seconds(2));
  StartGc(&lagging);
  w_.loop().RunFor(std::chrono::seconds(1));
  ASSERT_TRUE(Dependent("a", false));
  ASSERT_TRUE(Dependent("b", false));
  DeleteRc("Foreground");
  bool pods_left_when_owner_went = false;
  ASSERT_TRUE(w_.RunUntil(
      [&] {
        if (!RcGone()) return false;
        pods_left_when_owner_went = !w_.Pods().empty();
        return true;
      },
      std::chrono::seconds(10)));
  EXPECT_FALSE(pods_left_when_owner_went);
  EXPECT_TRUE(w_.Pods().empty());
}

// A cached dependent can be stale: its ownerReference to the absent owner already removed. The
// delete's resourceVersion precondition refuses it, and the newer version is kept.
TEST_F(GarbageCollectorTest, AStaleCachedDependentIsNotDeleted) {
  LaggingPodWatchApi lagging(&w_.api(), &w_.loop(), std::chrono::seconds(2));
  ASSERT_TRUE(Dependent("a", false));
  StartGc(&lagging);
  w_.loop().RunFor(std::chrono::seconds(5));  // the cache holds "a" with its ownerReference
  Pod released = *w_.GetPod("a");
  released.metadata.owner_references.clear();
  ASSERT_TRUE(w_.registry().pods().Update(released).ok());
  DeleteRc("Background");
  w_.loop().RunFor(std::chrono::seconds(10));
  ASSERT_TRUE(w_.GetPod("a")) << "the stale cached version with the ownerReference was acted on";
}

// The ownerReference a node agent puts on its Lease.
OwnerReference NodeRef(const Node& node) {
  OwnerReference ref;
  ref.api_version = "v1";
  ref.kind = "Node";
  ref.name = node.metadata.name;
  ref.uid = node.metadata.uid;
  ref.controller = false;
  ref.block_owner_deletion = false;
  return ref;
}

// Node heartbeat Leases are owned by their Node: a deleted Node's Lease is deleted; the Lease of a
// Node that exists, and a Lease with no ownerReference, are kept.
TEST_F(GarbageCollectorTest, ADeletedNodesLeaseIsDeleted) {
  NodePtr n1 = w_.CreateNode(ClusterTestWorld::MakeNode("n1", w_.loop().Now()));
  NodePtr n2 = w_.CreateNode(ClusterTestWorld::MakeNode("n2", w_.loop().Now()));
  ASSERT_TRUE(n1 && n2);
  LeaseRegistry leases(&w_.registry().context());
  auto create_lease = [&](const std::string& name, const NodePtr& owner) {
    Lease l;
    l.metadata.name = name;
    if (owner) l.metadata.owner_references.push_back(NodeRef(*owner));
    ASSERT_TRUE(leases.Create(kNodeLeaseNamespace, l).ok());
  };
  create_lease("n1", n1);
  create_lease("n2", n2);
  create_lease("n3", nullptr);
  auto has = [&](const char* name) { return leases.Get(kNodeLeaseNamespace, name).ok(); };
  StartGc();
  w_.loop().RunFor(std::chrono::seconds(40));  // past a resync
  EXPECT_TRUE(has("n1") && has("n2") && has("n3"));

  ASSERT_TRUE(w_.registry().nodes().Delete("", "n1", {}).ok());
  ASSERT_TRUE(w_.RunUntil([&] { return !has("n1"); }, std::chrono::seconds(5)));
  w_.loop().RunFor(std::chrono::seconds(40));
  EXPECT_TRUE(has("n2"));
  EXPECT_TRUE(has("n3"));
  EXPECT_EQ(gc_->counters().leases_deleted, 1u);
}

// A Node deleted while the GC was not running (and registered again under another uid): the Lease
// that still names the old uid is collected at the first node list; the new Node is not touched.
TEST_F(GarbageCollectorTest, ALeaseOwnedByAnEarlierNodeOfTheSameNameIsDeleted) {
  NodePtr old_node = w_.CreateNode(ClusterTestWorld::MakeNode("n1", w_.loop().Now()));
  ASSERT_TRUE(old_node);
  LeaseRegistry leases(&w_.registry().context());
  Lease l;
  l.metadata.name = "n1";
  l.metadata.owner_references.push_back(NodeRef(*old_node));
  ASSERT_TRUE(leases.Create(kNodeLeaseNamespace, l).ok());
  ASSERT_TRUE(w_.registry().nodes().Delete("", "n1", {}).ok());
  ASSERT_TRUE(w_.CreateNode(ClusterTestWorld::MakeNode("n1", w_.loop().Now())));
  StartGc();
  ASSERT_TRUE(
      w_.RunUntil([&] { return !leases.Get(kNodeLeaseNamespace, "n1").ok(); }, std::chrono::seconds(5)));
  EXPECT_TRUE(w_.GetNode("n1"));
}

}  // namespace
}  // namespace rcsim
