#include "cluster/object_cache.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cluster/cluster_test_world.h"
#include "cluster/shared_caches.h"

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

// The cache holds each object under the key read from the object itself: a new version replaces the old
// one in place (the handler gets both; one entry; found by key and by parts), and a delete removes it.
TEST(ObjectCacheTest, ANewVersionReplacesTheEntryUnderTheSameKey) {
  ClusterTestWorld w;
  ASSERT_TRUE(w.CreatePod(ClusterTestWorld::MakePod("a"), "default"));
  std::vector<std::pair<PodPtr, PodPtr>> upserts;
  ObjectCache<Pod>::Handlers h;
  h.on_upsert = [&](const PodPtr& old_pod, const PodPtr& pod) { upserts.emplace_back(old_pod, pod); };
  ObjectCache<Pod> pods(&w.api().pods(), &w.loop(), "", ListOptions{}, std::move(h));
  pods.Start();
  ASSERT_TRUE(w.RunUntil([&] { return pods.synced(); }, std::chrono::seconds(5)));
  const PodPtr first = pods.Get("default", "a");
  ASSERT_TRUE(first);

  Pod next = *first;
  next.status.phase = "Running";
  ASSERT_TRUE(w.registry().pods().UpdateStatus(next).ok());
  ASSERT_TRUE(w.RunUntil([&] { return pods.Get("default", "a") != first; }, std::chrono::seconds(5)));
  const PodPtr second = pods.Get("default", "a");
  EXPECT_EQ(second->status.phase, "Running");
  EXPECT_EQ(pods.Get("default/a"), second);
  EXPECT_EQ(pods.size(), 1u);
  ASSERT_EQ(upserts.size(), 2u);
  EXPECT_EQ(upserts[1].first, first);
  EXPECT_EQ(upserts[1].second, second);
  ASSERT_EQ(pods.objects().size(), 1u);
  EXPECT_EQ(pods.objects()[0].first, "default/a");
  EXPECT_EQ(pods.objects()[0].second, second);

  DeleteOptions force;
  force.grace_period_seconds = 0;
  ASSERT_TRUE(w.registry().pods().Delete("default", "a", force).ok());
  ASSERT_TRUE(w.RunUntil([&] { return pods.size() == 0; }, std::chrono::seconds(5)));
  EXPECT_FALSE(pods.Get("default/a"));
}

// objects(pred) gives exactly the matching objects, in key order, whatever order the hash map holds.
TEST(ObjectCacheTest, SelectedObjectsComeInKeyOrder) {
  ClusterTestWorld w;
  std::vector<std::string> want;
  for (int i = 0; i < 50; ++i) {
    const std::string name = "p" + std::to_string((i * 37) % 50);
    ASSERT_TRUE(w.CreatePod(ClusterTestWorld::MakePod(name), i % 2 ? "ns-b" : "ns-a"));
  }
  ObjectCache<Pod> pods(&w.api().pods(), &w.loop(), "", ListOptions{}, ObjectCache<Pod>::Handlers{});
  pods.Start();
  ASSERT_TRUE(w.RunUntil([&] { return pods.synced(); }, std::chrono::seconds(5)));
  std::vector<std::string> all, odd;
  for (const auto& [key, pod] : pods.objects()) {
    all.push_back(key);
    if (pod->metadata.name.back() % 2 == 1) odd.push_back(key);
  }
  ASSERT_EQ(all.size(), 50u);
  ASSERT_TRUE(std::is_sorted(all.begin(), all.end()));
  std::vector<std::string> got;
  for (const auto& [key, pod] : pods.objects([](const Pod& p) { return p.metadata.name.back() % 2 == 1; })) {
    EXPECT_EQ(key, ObjectCache<Pod>::KeyOf(*pod));
    got.push_back(key);
  }
  EXPECT_EQ(got, odd);
  EXPECT_TRUE(pods.objects([](const Pod& p) { return p.metadata.name == "absent"; }).empty());
}

// Consumers sharing one cache (SharedCaches): each one's handlers see every event, in the order they were
// added; Start from each consumer lists once.
TEST(ObjectCacheTest, SharedCacheCallsEveryConsumersHandlersInOrderAndListsOnce) {
  ClusterTestWorld w;
  ASSERT_TRUE(w.CreatePod(ClusterTestWorld::MakePod("a"), "default"));
  SharedCaches caches(&w.api(), nullptr, &w.loop());
  std::vector<std::string> seen;
  for (const std::string consumer : {"first", "second"}) {
    ObjectCache<Pod>::Handlers h;
    h.on_upsert = [&seen, consumer](const PodPtr&, const PodPtr& p) {
      seen.push_back(consumer + " upsert " + p->metadata.name);
    };
    h.on_delete = [&seen, consumer](const PodPtr& p) {
      seen.push_back(consumer + " delete " + p->metadata.name);
    };
    h.on_synced = [&seen, consumer] { seen.push_back(consumer + " synced"); };
    caches.pods().AddHandlers(std::move(h));
  }
  caches.Start();
  caches.pods().Start();  // a second consumer's Start: no second list
  ASSERT_TRUE(w.RunUntil([&] { return caches.pods().synced(); }, std::chrono::seconds(5)));
  ASSERT_TRUE(w.CreatePod(ClusterTestWorld::MakePod("b"), "default"));
  DeleteOptions force;
  force.grace_period_seconds = 0;
  ASSERT_TRUE(w.registry().pods().Delete("default", "a", force).ok());
  ASSERT_TRUE(w.RunUntil([&] { return seen.size() >= 8; }, std::chrono::seconds(5)));
  w.RunUntil([] { return false; }, std::chrono::seconds(2));  // nothing more arrives
  EXPECT_EQ(seen, (std::vector<std::string>{"first upsert a", "second upsert a", "first synced",
                                            "second synced", "first upsert b", "second upsert b",
                                            "first delete a", "second delete a"}));
  EXPECT_EQ(caches.pods().relists(), 0u);
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
