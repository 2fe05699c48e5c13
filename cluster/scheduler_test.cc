#include "cluster/scheduler.h"

#include <gtest/gtest.h>

#include "cluster/cluster_test_world.h"

namespace rcsim {
namespace {

class SchedulerTest : public ::testing::Test {
 protected:
  void StartScheduler() {
    scheduler_ = std::make_unique<Scheduler>(SchedulerOptions{}, &w_.api(), &w_.api(), &w_.loop(), &w_.loop(),
                                             &trace_);
    scheduler_->Start();
  }
  std::map<std::string, int> PerNode() {
    std::map<std::string, int> out;
    for (const PodPtr& p : w_.Pods()) ++out[p->spec.node_name];
    return out;
  }
  ClusterTestWorld w_;
  NullTraceSink trace_;
  std::unique_ptr<Scheduler> scheduler_;
};

TEST_F(SchedulerTest, SpreadsPodsLeastLoadedFirstOverReadyNodes) {
  const TimePoint now = w_.loop().Now();
  ASSERT_TRUE(w_.CreateNode(ClusterTestWorld::MakeNode("n1", now)));
  ASSERT_TRUE(w_.CreateNode(ClusterTestWorld::MakeNode("n2", now)));
  Node down = ClusterTestWorld::MakeNode("n3", now);
  down.status.conditions[0].status = "Unknown";
  ASSERT_TRUE(w_.CreateNode(down));
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(w_.CreatePod(ClusterTestWorld::MakePod("p" + std::to_string(i))));
  StartScheduler();
  ASSERT_TRUE(w_.RunUntil([&] { return PerNode()[""] == 0; }, std::chrono::seconds(10)));
  auto per = PerNode();
  EXPECT_EQ(per["n1"], 3);
  EXPECT_EQ(per["n2"], 3);
  EXPECT_EQ(per.count("n3"), 0u) << "a node that is not Ready gets nothing";
  PodPtr p = w_.GetPod("p0");
  bool scheduled = false;
  for (const PodCondition& c : p->status.conditions)
    scheduled |= c.type == "PodScheduled" && c.status == "True";
  EXPECT_TRUE(scheduled);
}

TEST_F(SchedulerTest, CapacityTaintsAndUnschedulableAreHonoured) {
  const TimePoint now = w_.loop().Now();
  ASSERT_TRUE(w_.CreateNode(ClusterTestWorld::MakeNode("small", now, 2)));
  Node tainted = ClusterTestWorld::MakeNode("tainted", now);
  tainted.spec.taints.push_back({kTaintUnreachable, "", "NoExecute", now});
  ASSERT_TRUE(w_.CreateNode(tainted));
  Node cordoned = ClusterTestWorld::MakeNode("cordoned", now);
  cordoned.spec.unschedulable = true;
  ASSERT_TRUE(w_.CreateNode(cordoned));
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(w_.CreatePod(ClusterTestWorld::MakePod("p" + std::to_string(i))));
  StartScheduler();
  w_.loop().RunFor(std::chrono::seconds(5));
  auto per = PerNode();
  EXPECT_EQ(per["small"], 2);
  EXPECT_EQ(per[""], 1);
  EXPECT_EQ(scheduler_->unschedulable_pods(), 1u);
  // The pod that fits nowhere says so.
  PodPtr waiting;
  for (const PodPtr& p : w_.Pods()) {
    if (p->spec.node_name.empty()) waiting = p;
  }
  ASSERT_TRUE(waiting);
  bool unschedulable = false;
  for (const PodCondition& c : waiting->status.conditions) {
    unschedulable |= c.type == "PodScheduled" && c.status == "False" && c.reason == "Unschedulable";
  }
  EXPECT_TRUE(unschedulable);
  EXPECT_EQ(waiting->status.phase, phase::kPending);

  // Capacity appears: the waiting pod is retried.
  ASSERT_TRUE(w_.CreateNode(ClusterTestWorld::MakeNode("new", now)));
  ASSERT_TRUE(w_.RunUntil([&] { return PerNode()["new"] == 1; }, std::chrono::seconds(5)));
  EXPECT_EQ(scheduler_->unschedulable_pods(), 0u);
}

TEST_F(SchedulerTest, APodLeavingAFullNodeMakesRoom) {
  const TimePoint now = w_.loop().Now();
  ASSERT_TRUE(w_.CreateNode(ClusterTestWorld::MakeNode("one", now, 1)));
  ASSERT_TRUE(w_.CreatePod(ClusterTestWorld::MakePod("a")));
  ASSERT_TRUE(w_.CreatePod(ClusterTestWorld::MakePod("b")));
  StartScheduler();
  w_.loop().RunFor(std::chrono::seconds(2));
  ASSERT_EQ(PerNode()["one"], 1);
  const std::string bound = w_.GetPod("a")->spec.node_name.empty() ? "b" : "a";
  DeleteOptions now_opts;
  now_opts.grace_period_seconds = 0;
  ASSERT_TRUE(w_.registry().pods().Delete("default", bound, now_opts).ok());
  ASSERT_TRUE(
      w_.RunUntil([&] { return PerNode()["one"] == 1 && PerNode()[""] == 0; }, std::chrono::seconds(5)));
}

}  // namespace
}  // namespace rcsim
