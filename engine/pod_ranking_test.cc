#include "engine/pod_ranking.h"

#include <gtest/gtest.h>

#include "fakes/sim_loop.h"

namespace rcsim {
namespace {

TimePoint T(int seconds) { return SimLoop::Epoch() + std::chrono::seconds(seconds); }

PodPtr MakePod(const std::string& name, const std::string& node, const char* phase, bool ready,
               int ready_since = 0, int restarts = 0, int created = 0) {
  auto p = std::make_shared<Pod>();
  p->metadata.name = name;
  p->metadata.namespace_ = "ns";
  p->metadata.creation_timestamp = T(created);
  p->spec.node_name = node;
  p->status.phase = phase;
  p->status.conditions.push_back(PodCondition{"Ready", ready ? "True" : "False", T(ready_since), "", ""});
  ContainerStatus cs;
  cs.name = "c";
  cs.ready = ready;
  cs.restart_count = restarts;
  p->status.container_statuses.push_back(std::move(cs));
  return p;
}

std::vector<std::string> Order(std::vector<PodPtr> pods) {
  SortForDeletion(pods);
  std::vector<std::string> names;
  names.reserve(pods.size());
  for (const auto& p : pods) names.push_back(p->metadata.name);
  return names;
}

TEST(PodRankingTest, UnscheduledBeforeScheduled) {
  EXPECT_EQ(
      Order({MakePod("sched", "n1", phase::kPending, false), MakePod("unsched", "", phase::kPending, false)}),
      (std::vector<std::string>{"unsched", "sched"}));
}

TEST(PodRankingTest, PendingBeforeUnknownBeforeRunning) {
  EXPECT_EQ(Order({MakePod("run", "n1", phase::kRunning, false), MakePod("unk", "n2", phase::kUnknown, false),
                   MakePod("pend", "n3", phase::kPending, false)}),
            (std::vector<std::string>{"pend", "unk", "run"}));
}

TEST(PodRankingTest, NotReadyBeforeReady) {
  EXPECT_EQ(Order({MakePod("ready", "n1", phase::kRunning, true),
                   MakePod("notready", "n2", phase::kRunning, false)}),
            (std::vector<std::string>{"notready", "ready"}));
}

TEST(PodRankingTest, CrowdedNodeFirst) {
  EXPECT_EQ(Order({MakePod("alone", "n1", phase::kRunning, true, 5),
                   MakePod("crowd1", "n2", phase::kRunning, true, 5),
                   MakePod("crowd2", "n2", phase::kRunning, true, 5)}),
            (std::vector<std::string>{"crowd1", "crowd2", "alone"}));
}

TEST(PodRankingTest, RecentlyReadyBeforeLongReady) {
  EXPECT_EQ(Order({MakePod("old", "n1", phase::kRunning, true, 10),
                   MakePod("recent", "n2", phase::kRunning, true, 50)}),
            (std::vector<std::string>{"recent", "old"}));
}

TEST(PodRankingTest, MoreRestartsFirst) {
  EXPECT_EQ(Order({MakePod("calm", "n1", phase::kRunning, true, 10, 0),
                   MakePod("flappy", "n2", phase::kRunning, true, 10, 7)}),
            (std::vector<std::string>{"flappy", "calm"}));
}

TEST(PodRankingTest, NewerCreationFirstThenName) {
  EXPECT_EQ(Order({MakePod("b", "n1", phase::kRunning, true, 10, 0, 1),
                   MakePod("a", "n2", phase::kRunning, true, 10, 0, 1),
                   MakePod("new", "n3", phase::kRunning, true, 10, 0, 9)}),
            (std::vector<std::string>{"new", "a", "b"}));
}

TEST(PodRankingTest, EarlierCriteriaDominateLaterOnes) {
  // A pending pod with no restarts goes before a running one with many restarts.
  EXPECT_EQ(Order({MakePod("running", "n1", phase::kRunning, true, 10, 100),
                   MakePod("pending", "n2", phase::kPending, false)}),
            (std::vector<std::string>{"pending", "running"}));
}

// The first k of a partial ranking are exactly the first k of the full sort, in the same order, and
// agree with PodDeletionOrder, for every k.
TEST(PodRankingTest, FirstKAreTheFullSortsFirstK) {
  std::vector<PodPtr> pods;
  const char* phases[] = {phase::kPending, phase::kRunning, phase::kUnknown};
  for (int i = 0; i < 60; ++i) {
    const std::string node = i % 7 == 0 ? "" : "n" + std::to_string(i % 5);
    pods.push_back(
        MakePod("p" + std::to_string((i * 37) % 60), node, phases[i % 3], i % 4 != 0, i % 6, i % 3, i % 9));
  }
  std::vector<PodPtr> full = pods;
  SortForDeletion(full);
  PodDeletionOrder order(pods);
  for (std::size_t i = 1; i < full.size(); ++i) EXPECT_TRUE(order(full[i - 1], full[i])) << i;
  for (std::size_t k = 0; k <= pods.size() + 1; ++k) {
    std::vector<PodPtr> part = pods;
    SortForDeletion(part, k);
    ASSERT_EQ(part.size(), pods.size());
    for (std::size_t i = 0; i < std::min(k, pods.size()); ++i) EXPECT_EQ(part[i], full[i]) << k << " " << i;
  }
}

}  // namespace
}  // namespace rcsim
