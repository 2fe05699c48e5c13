#include "fakes/node_pod_index.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cluster/cluster_test_world.h"

namespace rcsim {
namespace {

ListOptions OnNode(const std::string& node) {
  ListOptions o;
  o.fields.push_back({"spec.nodeName", true, node});
  return o;
}

std::string Describe(const ApiWatchEvent<Pod>& e) {
  const char* t = e.type == ApiWatchEvent<Pod>::Type::kAdded      ? "ADDED"
                  : e.type == ApiWatchEvent<Pod>::Type::kModified ? "MODIFIED"
                  : e.type == ApiWatchEvent<Pod>::Type::kDeleted  ? "DELETED"
                                                                  : "OTHER";
  return std::string(t) + " " + (e.object ? e.object->metadata.name : "");
}

class NodePodIndexTest : public ::testing::Test {
 protected:
  NodePodIndexTest() : index_(&w_.api(), &w_.api(), &w_.loop()) {}

  Result<ObjectList<Pod>> List(const std::string& node) {
    std::optional<Result<ObjectList<Pod>>> out;
    index_.client().pods().List("", OnNode(node), [&](Result<ObjectList<Pod>> r) { out = std::move(r); });
    w_.RunUntil([&] { return out.has_value(); }, std::chrono::seconds(1));
    return out.value_or(Status(Code::kTimeout, "no answer"));
  }
  void Bind(const std::string& name, const std::string& node) {
    Binding b;
    b.metadata.name = name;
    b.target_name = node;
    ASSERT_TRUE(w_.registry().BindPod("default", b).ok());
  }

  ClusterTestWorld w_;
  NodePodIndex index_;
};

TEST_F(NodePodIndexTest, ListsAndWatchesTheBoundPodsOfOneNode) {
  ASSERT_TRUE(w_.CreatePod(ClusterTestWorld::MakePod("a")));
  ASSERT_TRUE(w_.CreatePod(ClusterTestWorld::MakePod("b")));
  Bind("a", "n1");
  // The index lists what its watch has applied (see the header): let it see the bind first.
  ASSERT_TRUE(w_.RunUntil([&] { return index_.pods_on("n1") == 1u; }, std::chrono::seconds(1)));
  auto listed = List("n1");
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->items.size(), 1u);
  EXPECT_EQ(listed->items[0]->metadata.name, "a");
  EXPECT_TRUE(List("n2")->items.empty());

  std::vector<std::string> n1, n2;
  auto w1 = index_.client().pods().Watch("", OnNode("n1"), listed->resource_version,
                                         [&](const ApiWatchEvent<Pod>& e) { n1.push_back(Describe(e)); });
  auto w2 = index_.client().pods().Watch("", OnNode("n2"), listed->resource_version,
                                         [&](const ApiWatchEvent<Pod>& e) { n2.push_back(Describe(e)); });
  Bind("b", "n2");  // b becomes n2's: ADDED there, nothing on n1
  Pod a = *w_.GetPod("a");
  a.status.phase = phase::kRunning;
  ASSERT_TRUE(w_.registry().pods().UpdateStatus(a).ok());
  DeleteOptions now;
  now.grace_period_seconds = 0;
  ASSERT_TRUE(w_.registry().pods().Delete("default", "a", now).ok());
  w_.loop().RunFor(std::chrono::seconds(1));
  EXPECT_EQ(n1, (std::vector<std::string>{"MODIFIED a", "DELETED a"}));
  EXPECT_EQ(n2, (std::vector<std::string>{"ADDED b"}));
  EXPECT_EQ(index_.pods_on("n1"), 0u);
  EXPECT_EQ(index_.pods_on("n2"), 1u);
}

// A list right after a write may not show it yet (the index's watch has not delivered it), but a
// watch from that list's revision does: list + watch together miss nothing.
TEST_F(NodePodIndexTest, AListRightAfterABindMayLagButItsWatchDeliversTheBind) {
  ASSERT_TRUE(w_.CreatePod(ClusterTestWorld::MakePod("a")));
  w_.loop().RunFor(std::chrono::seconds(1));
  Bind("a", "n1");
  auto listed = List("n1");
  ASSERT_TRUE(listed.ok());
  std::vector<std::string> seen;
  for (const PodPtr& p : listed->items) seen.push_back("LISTED " + p->metadata.name);
  auto w = index_.client().pods().Watch("", OnNode("n1"), listed->resource_version,
                                        [&](const ApiWatchEvent<Pod>& e) { seen.push_back(Describe(e)); });
  w_.loop().RunFor(std::chrono::seconds(1));
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_TRUE(seen[0] == "LISTED a" || seen[0] == "ADDED a") << seen[0];
}

// A watch from a revision the index has applied since is given what happened on its node after it.
TEST_F(NodePodIndexTest, AWatchFromAnEarlierRevisionReplaysItsNodesEvents) {
  ASSERT_TRUE(w_.CreatePod(ClusterTestWorld::MakePod("a")));
  w_.loop().RunFor(std::chrono::seconds(1));
  auto listed = List("n1");
  ASSERT_TRUE(listed.ok());
  Bind("a", "n1");
  w_.loop().RunFor(std::chrono::seconds(1));  // the index has seen the bind
  std::vector<std::string> seen;
  auto w = index_.client().pods().Watch("", OnNode("n1"), listed->resource_version,
                                        [&](const ApiWatchEvent<Pod>& e) { seen.push_back(Describe(e)); });
  w_.loop().RunFor(std::chrono::seconds(1));
  EXPECT_EQ(seen, (std::vector<std::string>{"ADDED a"}));
}

// The index keeps the last `log_limit` node events: a watch from before them is Gone (it re-lists).
TEST_F(NodePodIndexTest, AWatchFromBeforeTheKeptEventsIsGone) {
  NodePodIndex small(&w_.api(), &w_.api(), &w_.loop(), /*log_limit=*/1);
  ASSERT_TRUE(w_.CreatePod(ClusterTestWorld::MakePod("a")));
  ASSERT_TRUE(w_.CreatePod(ClusterTestWorld::MakePod("b")));
  w_.loop().RunFor(std::chrono::seconds(1));
  const std::string before = std::to_string(w_.store().revision());
  Bind("a", "n1");
  Bind("b", "n1");
  w_.loop().RunFor(std::chrono::seconds(1));
  std::vector<std::string> seen;
  auto w = small.client().pods().Watch("", OnNode("n1"), before, [&](const ApiWatchEvent<Pod>& e) {
    seen.push_back(e.type == ApiWatchEvent<Pod>::Type::kError ? "ERROR" : Describe(e));
  });
  w_.loop().RunFor(std::chrono::seconds(1));
  EXPECT_EQ(seen, (std::vector<std::string>{"ERROR"}));
}

// Anything but "pods on node X" goes to the wrapped client unchanged.
TEST_F(NodePodIndexTest, OtherRequestsPassThrough) {
  ASSERT_TRUE(w_.CreatePod(ClusterTestWorld::MakePod("a")));
  ListOptions by_label;
  by_label.label_selector = LabelSelector::FromMap({{"app", "web"}});
  std::optional<Result<ObjectList<Pod>>> out;
  index_.client().pods().List("default", by_label, [&](Result<ObjectList<Pod>> r) { out = std::move(r); });
  ASSERT_TRUE(w_.RunUntil([&] { return out.has_value(); }, std::chrono::seconds(1)));
  ASSERT_TRUE(out->ok());
  EXPECT_EQ((*out)->items.size(), 1u) << "an unbound pod, listed by the registry";
}

}  // namespace
}  // namespace rcsim
