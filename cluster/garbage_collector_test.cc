#include "cluster/garbage_collector.h"

#include <gtest/gtest.h>

#include "cluster/cluster_test_world.h"

namespace rcsim {
namespace {

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
  void StartGc() {
    gc_ = std::make_unique<GarbageCollector>(GarbageCollectorOptions{}, &w_.api(), &w_.loop(), &trace_);
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

}  // namespace
}  // namespace rcsim
