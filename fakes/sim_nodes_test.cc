#include "fakes/sim_nodes.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "fakes/faulty_api_client.h"
#include "fakes/inprocess_api_client.h"
#include "fakes/mem_store.h"
#include "fakes/sim_loop.h"
#include "fakes/trace_recorder.h"
#include "registry/registry.h"

namespace rcsim {
namespace {

Pod MakePod(const std::string& name) {
  Pod pod;
  pod.metadata.name = name;
  pod.metadata.namespace_ = "default";
  pod.metadata.labels = {{"app", "web"}};
  Container c;
  c.name = "main";
  c.image = "nginx";
  pod.spec.containers.push_back(c);
  return pod;
}

class SimNodesTest : public ::testing::Test {
 protected:
  explicit SimNodesTest(int nodes = 3) : registry_rng_(7), nodes_rng_(11), trace_(&loop_, true) {
    options_.nodes = nodes;
  }

  void Start() {
    nodes_ = std::make_unique<SimNodes>(options_, &api_, &loop_, &loop_, &nodes_rng_, &trace_);
    loop_.RunFor(std::chrono::milliseconds(1));
  }

  void CreatePod(const std::string& name) {
    auto r = registry_.pods().Create("default", MakePod(name));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
  PodPtr GetPod(const std::string& name) {
    auto r = registry_.pods().Get("default", name);
    return r.ok() ? r.value() : nullptr;
  }
  std::map<std::string, int> PodsPerNode() {
    std::map<std::string, int> per_node;
    auto list = registry_.pods().List("default", ListOptions{});
    EXPECT_TRUE(list.ok());
    for (const PodPtr& p : list->items) ++per_node[p->spec.node_name];
    return per_node;
  }

  SimLoop loop_;
  MemStore store_{&loop_, &loop_};
  Mt19937Rng registry_rng_;
  Registry registry_{&store_, &loop_, &registry_rng_};
  InProcessApiClient api_{&registry_, &loop_};
  Mt19937Rng nodes_rng_;
  TraceRecorder trace_;
  SimNodesOptions options_;
  std::unique_ptr<SimNodes> nodes_;
};

TEST_F(SimNodesTest, BindsToLeastLoadedNodesAndStartsAfterTheStartLatency) {
  options_.pod_start_min = std::chrono::seconds(1);
  options_.pod_start_max = std::chrono::seconds(2);
  Start();
  for (int i = 0; i < 6; ++i) CreatePod("p" + std::to_string(i));
  loop_.RunFor(std::chrono::milliseconds(500));
  EXPECT_EQ(PodsPerNode(), (std::map<std::string, int>{{"node-0", 2}, {"node-1", 2}, {"node-2", 2}}));
  // Bound, but not started before the minimum start latency.
  EXPECT_EQ(GetPod("p0")->status.phase, phase::kPending);
  loop_.RunFor(std::chrono::seconds(2));
  for (int i = 0; i < 6; ++i) {
    PodPtr pod = GetPod("p" + std::to_string(i));
    ASSERT_TRUE(pod);
    EXPECT_EQ(pod->status.phase, phase::kRunning);
    EXPECT_TRUE(IsReady(*pod));
    ASSERT_EQ(pod->status.container_statuses.size(), 1u);
    EXPECT_TRUE(pod->status.container_statuses[0].ready);
    EXPECT_TRUE(pod->status.start_time.has_value());
    ASSERT_FALSE(pod->status.conditions.empty());
    EXPECT_TRUE(pod->status.conditions[0].last_transition_time.has_value());
  }
  EXPECT_EQ(nodes_->counters().binds, 6u);
  EXPECT_EQ(nodes_->counters().starts, 6u);
  EXPECT_EQ(nodes_->node_load("node-0"), 2);
}

TEST_F(SimNodesTest, TiesGoToTheFirstNodeByName) {
  Start();
  CreatePod("only");
  loop_.RunFor(std::chrono::milliseconds(10));
  EXPECT_EQ(GetPod("only")->spec.node_name, "node-0");
}

TEST_F(SimNodesTest, KillPodFailsItAndGcDeletesItAfterTheThreshold) {
  options_.pod_gc_threshold = std::chrono::seconds(30);
  options_.gc_interval = std::chrono::seconds(5);
  Start();
  CreatePod("a");
  loop_.RunFor(std::chrono::seconds(3));
  ASSERT_EQ(GetPod("a")->status.phase, phase::kRunning);
  std::optional<Status> killed;
  nodes_->KillPod("default", "a", [&](Status s) { killed = s; });
  loop_.RunFor(std::chrono::milliseconds(10));
  ASSERT_TRUE(killed.has_value());
  EXPECT_TRUE(killed->ok());
  PodPtr pod = GetPod("a");
  EXPECT_EQ(pod->status.phase, phase::kFailed);
  EXPECT_FALSE(IsReady(*pod));
  EXPECT_EQ(nodes_->node_load(pod->spec.node_name), 0);
  loop_.RunFor(std::chrono::seconds(20));
  EXPECT_TRUE(GetPod("a"));  // younger than the threshold
  loop_.RunFor(std::chrono::seconds(20));
  EXPECT_FALSE(GetPod("a"));
  EXPECT_EQ(nodes_->counters().gc_deletes, 1u);
}

TEST_F(SimNodesTest, KillOfAMissingPodIsNotFound) {
  Start();
  std::optional<Status> killed;
  nodes_->KillPod("default", "ghost", [&](Status s) { killed = s; });
  loop_.RunFor(std::chrono::milliseconds(10));
  ASSERT_TRUE(killed.has_value());
  EXPECT_EQ(killed->code(), Code::kNotFound);
}

TEST_F(SimNodesTest, FailNodeFailsItsPodsAndStopsBindingThere) {
  Start();
  for (int i = 0; i < 3; ++i) CreatePod("p" + std::to_string(i));
  loop_.RunFor(std::chrono::seconds(3));
  ASSERT_TRUE(nodes_->FailNode("node-1").ok());
  EXPECT_EQ(nodes_->FailNode("node-9").code(), Code::kNotFound);
  loop_.RunFor(std::chrono::milliseconds(10));
  for (int i = 0; i < 3; ++i) {
    PodPtr pod = GetPod("p" + std::to_string(i));
    EXPECT_EQ(pod->status.phase, pod->spec.node_name == "node-1" ? phase::kFailed : phase::kRunning);
  }
  // node-1 is now the least loaded but not ready.
  CreatePod("late");
  loop_.RunFor(std::chrono::milliseconds(10));
  EXPECT_NE(GetPod("late")->spec.node_name, "node-1");
  EXPECT_FALSE(nodes_->node_ready("node-1"));
}

TEST_F(SimNodesTest, PodsWaitWhileEveryNodeIsDownAndAreBoundOnRecovery) {
  Start();
  for (const std::string& n : nodes_->node_names()) ASSERT_TRUE(nodes_->FailNode(n).ok());
  CreatePod("waiting");
  loop_.RunFor(std::chrono::seconds(5));
  EXPECT_EQ(GetPod("waiting")->spec.node_name, "");
  EXPECT_EQ(GetPod("waiting")->status.phase, phase::kPending);
  EXPECT_EQ(nodes_->unschedulable_pods(), 1);
  ASSERT_TRUE(nodes_->RecoverNode("node-2").ok());
  loop_.RunFor(std::chrono::seconds(3));
  EXPECT_EQ(GetPod("waiting")->spec.node_name, "node-2");
  EXPECT_EQ(GetPod("waiting")->status.phase, phase::kRunning);
  EXPECT_EQ(nodes_->unschedulable_pods(), 0);
}

TEST_F(SimNodesTest, ConflictingWriterIsHandledByRereading) {
  Start();
  CreatePod("c");
  // A label change races the bind: the bind's resourceVersion is stale, the scheduler re-reads.
  PodPtr pod = GetPod("c");
  Pod relabeled = *pod;
  relabeled.metadata.labels["tier"] = "front";
  ASSERT_TRUE(registry_.pods().Update(relabeled).ok());
  loop_.RunFor(std::chrono::seconds(3));
  EXPECT_FALSE(GetPod("c")->spec.node_name.empty());
  EXPECT_EQ(GetPod("c")->status.phase, phase::kRunning);
}

TEST(SimNodesWatchTest, RelistsAndRewatchesWhenTheWatchEnds) {
  SimLoop loop;
  MemStore store(&loop, &loop);
  Mt19937Rng registry_rng(1);
  Registry registry(&store, &loop, &registry_rng);
  InProcessApiClient inner(&registry, &loop);
  Mt19937Rng fault_rng(2);
  FaultyApiClient api(&inner, &loop, &loop, &fault_rng);
  Mt19937Rng rng(3);
  TraceRecorder trace(&loop);
  SimNodes nodes(SimNodesOptions{}, &api, &loop, &loop, &rng, &trace);
  ASSERT_TRUE(registry.pods().Create("default", MakePod("before")).ok());
  loop.RunFor(std::chrono::seconds(3));
  api.DropWatches();
  // Deleted and created while the watch is down: the re-list must see both.
  ASSERT_TRUE(registry.pods().Delete("default", "before", DeleteOptions{}).ok());
  ASSERT_TRUE(registry.pods().Create("default", MakePod("after")).ok());
  loop.RunFor(std::chrono::seconds(3));
  EXPECT_EQ(nodes.counters().relists, 1u);
  auto after = registry.pods().Get("default", "after");
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after.value()->status.phase, phase::kRunning);
  int total_load = 0;
  for (const std::string& n : nodes.node_names()) total_load += nodes.node_load(n);
  EXPECT_EQ(total_load, 1);  // "before" no longer counted
}

TEST(SimNodesDeterminismTest, SameSeedSameTrace) {
  auto run = [](uint64_t seed) {
    SimLoop loop;
    MemStore store(&loop, &loop);
    Mt19937Rng registry_rng(1);
    Registry registry(&store, &loop, &registry_rng);
    InProcessApiClient api(&registry, &loop);
    Mt19937Rng rng(seed);
    TraceRecorder trace(&loop);
    SimNodes nodes(SimNodesOptions{}, &api, &loop, &loop, &rng, &trace);
    for (int i = 0; i < 40; ++i) {
      EXPECT_TRUE(registry.pods().Create("default", MakePod("p" + std::to_string(i))).ok());
    }
    loop.RunFor(std::chrono::seconds(5));
    nodes.KillPod("default", "p3");
    EXPECT_TRUE(nodes.FailNode("node-4").ok());
    loop.RunFor(std::chrono::seconds(120));
    return trace.digest();
  };
  EXPECT_EQ(run(5), run(5));
  EXPECT_NE(run(5), run(6));
}

}  // namespace
}  // namespace rcsim
