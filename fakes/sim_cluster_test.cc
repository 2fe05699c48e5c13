#include "fakes/sim_cluster.h"

#include <gtest/gtest.h>

#include "cluster/cluster_test_world.h"

namespace rcsim {
namespace {

class SimClusterTest : public ::testing::Test {
 protected:
  void Start() {
    SimClusterOptions o;
    o.nodes = 2;
    o.node_lifecycle.grace_period = std::chrono::seconds(10);
    o.node_lifecycle.eviction_timeout = std::chrono::seconds(10);
    o.pod_gc.period = std::chrono::seconds(5);
    cluster_ =
        std::make_unique<SimCluster>(o, &w_.api(), &w_.api(), &w_.loop(), &w_.loop(), &w_.rng(), &trace_);
  }
  bool Running(const std::string& name) {
    PodPtr p = w_.GetPod(name);
    return p && p->status.phase == phase::kRunning && IsReady(*p);
  }

  ClusterTestWorld w_;
  NullTraceSink trace_;
  std::unique_ptr<SimCluster> cluster_;
};

TEST_F(SimClusterTest, PodsAreBoundAndRunAndAKilledContainerRestartsInPlace) {
  Start();
  ASSERT_TRUE(w_.CreatePod(ClusterTestWorld::MakePod("a")));
  ASSERT_TRUE(w_.CreatePod(ClusterTestWorld::MakePod("b")));
  ASSERT_TRUE(w_.RunUntil([&] { return Running("a") && Running("b"); }, std::chrono::seconds(10)));
  EXPECT_NE(w_.GetPod("a")->spec.node_name, w_.GetPod("b")->spec.node_name) << "least loaded first";
  EXPECT_EQ(cluster_->KillPod(*w_.GetPod("a")), 1);
  ASSERT_TRUE(w_.RunUntil([&] { return !Running("a"); }, std::chrono::seconds(1)));
  ASSERT_TRUE(w_.RunUntil([&] { return Running("a"); }, std::chrono::seconds(10)));
  EXPECT_EQ(w_.GetPod("a")->status.container_statuses[0].restart_count, 1);
  EXPECT_EQ(cluster_->restarts(), 1);
}

// A failed node is noticed by the node lifecycle controller, not by fiat: its pods are evicted
// after the grace period and the eviction timeout; the pod GC removes them (no agent will).
TEST_F(SimClusterTest, AFailedNodesPodsAreEvictedByTheNodeLifecycleController) {
  Start();
  ASSERT_TRUE(w_.CreatePod(ClusterTestWorld::MakePod("a")));
  ASSERT_TRUE(w_.RunUntil([&] { return Running("a"); }, std::chrono::seconds(10)));
  const std::string node = w_.GetPod("a")->spec.node_name;
  const TimePoint failed_at = w_.loop().Now();
  ASSERT_TRUE(cluster_->FailNode(node).ok());
  EXPECT_FALSE(cluster_->node_ready(node));
  ASSERT_TRUE(w_.RunUntil([&] { return w_.GetPod("a")->metadata.deletion_timestamp.has_value(); },
                          std::chrono::minutes(1)));
  EXPECT_GE(w_.loop().Now() - failed_at, std::chrono::seconds(10)) << "not before the grace period";
  // The registry has the deletionTimestamp before the controller's delete reply is back.
  ASSERT_TRUE(w_.RunUntil([&] { return cluster_->node_lifecycle().counters().evictions == 1u; },
                          std::chrono::seconds(1)));
  ASSERT_TRUE(w_.RunUntil([&] { return !w_.GetPod("a"); }, std::chrono::minutes(2)));
  EXPECT_EQ(cluster_->FailNode("node-9").code(), Code::kNotFound);
  ASSERT_TRUE(cluster_->RecoverNode(node).ok());
  EXPECT_TRUE(cluster_->node_ready(node));
}

}  // namespace
}  // namespace rcsim
