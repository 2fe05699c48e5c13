#include "cluster/object_cache.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cluster/cluster_test_world.h"

namespace rcsim {
namespace {

// The cache is searched both by its "namespace/name" key and by the (namespace, name) pair without
// building the key; the two must find the same object, and a watch event must land on the entry a
// list made (one entry per object, never a second one under a differently hashed key).
TEST(ObjectCacheTest, GetByNamespaceAndNameFindsWhatTheKeyFinds) {
  ClusterTestWorld w;
  ASSERT_TRUE(w.CreatePod(ClusterTestWorld::MakePod("a"), "default"));
  ASSERT_TRUE(w.CreatePod(ClusterTestWorld::MakePod("a"), "other"));
  ASSERT_TRUE(w.CreatePod(ClusterTestWorld::MakePod("default"), "a"));  // "a/default", not "default/a"
  std::vector<std::string> deleted;
  ObjectCache<Pod>::Handlers h;
  h.on_delete = [&](const PodPtr& p) { deleted.push_back(ObjectCache<Pod>::KeyOf(*p)); };
  ObjectCache<Pod> pods(&w.api().pods(), &w.loop(), "", ListOptions{}, std::move(h));
  pods.Start();
  ASSERT_TRUE(w.RunUntil([&] { return pods.synced(); }, std::chrono::seconds(5)));
  ASSERT_EQ(pods.size(), 3u);
  for (const auto& [ns, name] :
       std::vector<std::pair<std::string, std::string>>{{"default", "a"}, {"other", "a"}, {"a", "default"}}) {
    PodPtr by_parts = pods.Get(ns, name);
    ASSERT_TRUE(by_parts) << ns << "/" << name;
    EXPECT_EQ(by_parts->metadata.namespace_, ns);
    EXPECT_EQ(by_parts->metadata.name, name);
    EXPECT_EQ(by_parts, pods.Get(ns + "/" + name));
  }
  EXPECT_FALSE(pods.Get("default", "b"));
  EXPECT_FALSE(pods.Get("defaul", "t/a")) << "the split point is part of the key";

  // A later event replaces the listed entry in place.
  ASSERT_TRUE(w.CreatePod(ClusterTestWorld::MakePod("b"), "default"));
  DeleteOptions force;
  force.grace_period_seconds = 0;
  ASSERT_TRUE(w.registry().pods().Delete("other", "a", force).ok());
  ASSERT_TRUE(w.RunUntil([&] { return pods.Get("default", "b") && !pods.Get("other", "a"); },
                         std::chrono::seconds(5)));
  EXPECT_EQ(pods.size(), 3u);
  EXPECT_EQ(deleted, std::vector<std::string>{"other/a"});
}

TEST(ObjectCacheTest, ClusterScopedObjectsAreFoundByNameAlone) {
  ClusterTestWorld w;
  ASSERT_TRUE(w.CreateNode(ClusterTestWorld::MakeNode("n1", w.loop().Now())));
  ObjectCache<Node> nodes(&w.api().nodes(), &w.loop(), "", ListOptions{}, ObjectCache<Node>::Handlers{});
  nodes.Start();
  ASSERT_TRUE(w.RunUntil([&] { return nodes.synced(); }, std::chrono::seconds(5)));
  NodePtr n1 = nodes.Get("", "n1");
  ASSERT_TRUE(n1);
  EXPECT_EQ(n1, nodes.Get("n1"));
  EXPECT_FALSE(nodes.Get("/n1"));
}

}  // namespace
}  // namespace rcsim
