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

// node_capacity: the agents report the new capacity (at once, or when a stopped agent starts again);
// pods already bound stay, a pod that fits nowhere waits as Unschedulable and binds once capacity grows.
TEST_F(SimClusterTest, NodeCapacityLimitsNewBindingsAndWaitingPodsBindWhenItGrows) {
  Start();
  for (const char* name : {"a", "b", "c", "d"}) ASSERT_TRUE(w_.CreatePod(ClusterTestWorld::MakePod(name)));
  ASSERT_TRUE(w_.RunUntil([&] { return Running("a") && Running("b") && Running("c") && Running("d"); },
                          std::chrono::seconds(10)));
  ASSERT_TRUE(cluster_->StopAgent("node-1").ok());
  ASSERT_TRUE(cluster_->SetNodeCapacity("node-0", 1).ok());
  ASSERT_TRUE(cluster_->SetNodeCapacity("node-1", 1).ok());
  EXPECT_EQ(cluster_->SetNodeCapacity("node-9", 1).code(), Code::kNotFound);
  auto capacity = [&](const std::string& node) { return NodePodCapacity(*w_.GetNode(node)); };
  ASSERT_TRUE(w_.RunUntil([&] { return capacity("node-0") == 1; }, std::chrono::seconds(1)));
  EXPECT_EQ(w_.GetNode("node-0")->status.allocatable.at("pods"), "1");
  w_.loop().RunFor(std::chrono::seconds(1));
  EXPECT_EQ(capacity("node-1"), 110) << "a stopped agent reports nothing";
  ASSERT_TRUE(cluster_->StartAgent("node-1").ok());
  ASSERT_TRUE(w_.RunUntil([&] { return capacity("node-1") == 1; }, std::chrono::seconds(1)));

  ASSERT_TRUE(w_.CreatePod(ClusterTestWorld::MakePod("e")));
  w_.loop().RunFor(std::chrono::seconds(5));
  for (const char* name : {"a", "b", "c", "d"}) EXPECT_TRUE(Running(name)) << name << " stays where it runs";
  EXPECT_EQ(w_.GetPod("e")->spec.node_name, "");
  EXPECT_EQ(cluster_->scheduler().unschedulable_pods(), 1u);

  ASSERT_TRUE(cluster_->SetNodeCapacity("node-1", 3).ok());
  ASSERT_TRUE(w_.RunUntil([&] { return Running("e"); }, std::chrono::seconds(5)));
  EXPECT_EQ(w_.GetPod("e")->spec.node_name, "node-1");
  EXPECT_EQ(cluster_->scheduler().unschedulable_pods(), 0u);
}

}  // namespace
}  // namespace rcsim
