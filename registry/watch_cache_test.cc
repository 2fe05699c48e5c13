#include "registry/watch_cache.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fakes/mem_store.h"
#include "fakes/sim_loop.h"

namespace rcsim {
namespace {

using Type = ApiWatchEvent<Pod>::Type;

Pod MakePod(const std::string& name, Labels labels = {{"app", "web"}}) {
  Pod pod;
  pod.metadata.name = name;
  pod.metadata.labels = std::move(labels);
  pod.spec.containers.push_back(Container{"main", "nginx", {}, {}});
  return pod;
}

struct Seen {
  Type type;
  std::string name;
  std::string rv;
  Code error;
};

// Counts the store watches started through it.
class CountingStore final : public Store {
 public:
  explicit CountingStore(Store* inner) : inner_(inner) {}
  Result<RangeResponse> Range(const RangeRequest& r) override { return inner_->Range(r); }
  Result<PutResponse> Put(const PutRequest& r) override { return inner_->Put(r); }
  Result<DeleteResponse> DeleteRange(const DeleteRequest& r) override { return inner_->DeleteRange(r); }
  Result<TxnResponse> Txn(const TxnRequest& r) override { return inner_->Txn(r); }
  Result<int64_t> Compact(int64_t revision) override { return inner_->Compact(revision); }
  std::unique_ptr<Watch> StartWatch(const WatchRequest& r, WatchCallback cb) override {
    ++watches;
    return inner_->StartWatch(r, std::move(cb));
  }
  Result<LeaseGrantResponse> LeaseGrant(int64_t ttl, int64_t id) override {
    return inner_->LeaseGrant(ttl, id);
  }
  Status LeaseRevoke(int64_t id) override { return inner_->LeaseRevoke(id); }
  Result<int64_t> LeaseKeepAlive(int64_t id) override { return inner_->LeaseKeepAlive(id); }
  int watches = 0;

 private:
  Store* inner_;
};

class WatchCacheTest : public ::testing::Test {
 protected:
  WatchCacheTest()
      : mem_(&loop_, &loop_),
        store_(&mem_),
        rng_(7),
        registry_(&store_, &loop_, &rng_),
        cache_(&registry_.pods(), &store_, PodPrefix(""), /*capacity=*/8) {}

  std::unique_ptr<RegistryWatch> Watch(const std::string& ns, const std::string& rv, std::vector<Seen>* out,
                                       const ListOptions& opts = {}) {
    auto w = cache_.Watch(ns, opts, rv, [out](const ApiWatchEvent<Pod>& ev) {
      out->push_back({ev.type, ev.object ? ev.object->metadata.name : "",
                      ev.object ? ev.object->metadata.resource_version : "", ev.error.code()});
    });
    EXPECT_TRUE(w.ok()) << w.status().ToString();
    return w.ok() ? std::move(*w) : nullptr;
  }
  std::string Create(const std::string& ns, Pod pod) {
    auto r = registry_.pods().Create(ns, std::move(pod));
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    loop_.RunUntilIdle();
    return r.ok() ? (*r)->metadata.resource_version : "";
  }

  SimLoop loop_;
  MemStore mem_;
  CountingStore store_;
  Mt19937Rng rng_;
  Registry registry_;
  WatchCache<Pod> cache_;
};

// Issue 8: 1,000 HTTP watches meant 1,000 store watches (one etcd stream and thread each).
TEST_F(WatchCacheTest, OneStoreWatchServesEveryClientWatch) {
  std::vector<std::vector<Seen>> seen(1000);
  std::vector<std::unique_ptr<RegistryWatch>> watches;
  for (std::size_t i = 0; i < seen.size(); ++i) watches.push_back(Watch(i % 2 ? "a" : "b", "", &seen[i]));
  EXPECT_EQ(store_.watches, 1);
  EXPECT_EQ(cache_.client_watches(), 1000u);
  Create("a", MakePod("p"));
  for (std::size_t i = 0; i < seen.size(); ++i) {
    ASSERT_EQ(seen[i].size(), i % 2 ? 1u : 0u) << i;
    if (i % 2) {
      EXPECT_EQ(seen[i][0].type, Type::kAdded);
    }
  }
  watches.clear();
  EXPECT_EQ(cache_.client_watches(), 0u);
  EXPECT_EQ(cache_.store_watches_started(), 1);
}

TEST_F(WatchCacheTest, InitialListResumeSelectorsAndDeletes) {
  Create("ns", MakePod("old"));
  std::vector<Seen> all;
  auto w = Watch("ns", "", &all);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].name, "old");
  const std::string rv1 = Create("ns", MakePod("new"));
  ListOptions web;
  web.label_selector = *LabelSelector::Parse("app=web");
  std::vector<Seen> resumed;
  auto r = Watch("ns", all[0].rv, &resumed, web);
  ASSERT_EQ(resumed.size(), 1u) << "the change after old's revision, from the buffer";
  EXPECT_EQ(resumed[0].name, "new");
  EXPECT_EQ(resumed[0].rv, rv1);

  // A relabel out of the selector is DELETED for the filtered watch, MODIFIED for the other.
  auto got = registry_.pods().Get("ns", "new");
  ASSERT_TRUE(got.ok());
  Pod relabeled = **got;
  relabeled.metadata.labels = {{"app", "db"}};
  ASSERT_TRUE(registry_.pods().Update(relabeled).ok());
  ASSERT_TRUE(registry_.pods().Delete("ns", "old", {}).ok());
  loop_.RunUntilIdle();
  ASSERT_EQ(resumed.size(), 3u);
  EXPECT_EQ(resumed[1].type, Type::kDeleted);
  EXPECT_EQ(resumed[1].name, "new");
  EXPECT_EQ(resumed[2].type, Type::kDeleted);
  EXPECT_EQ(resumed[2].name, "old");
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[2].type, Type::kModified);

  auto list = cache_.List("ns", {});
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->items.size(), 1u);
  EXPECT_EQ(list->items[0]->metadata.name, "new");
  std::vector<Seen> zero;
  auto z = Watch("ns", "0", &zero);
  ASSERT_EQ(zero.size(), 1u);
  EXPECT_EQ(zero[0].name, "new");
  EXPECT_EQ(store_.watches, 1);
}

// Node agents' watches (fieldSelector spec.nodeName=<node>) were each a store watch (an etcd stream
// per agent) because the cache filtered by labels and name only. It now serves every field selector,
// with the registry watch's semantics, and offers a pod's changes only to its node's agents.
TEST_F(WatchCacheTest, FieldSelectorsAreServedAndNodeAgentsAreIndexedByNode) {
  std::vector<std::vector<Seen>> agents(100);
  std::vector<std::unique_ptr<RegistryWatch>> watches;
  for (std::size_t i = 0; i < agents.size(); ++i) {
    ListOptions mine;
    mine.fields.push_back({"spec.nodeName", true, "node-" + std::to_string(i)});
    watches.push_back(Watch("", "", &agents[i], mine));
  }
  ListOptions running;
  running.fields.push_back({"status.phase", true, "Running"});
  std::vector<Seen> run;
  auto rw = Watch("", "", &run, running);
  ListOptions unbound;  // the scheduler's: an equality on the indexed field, but with another field
  unbound.fields.push_back({"spec.nodeName", true, ""});
  unbound.fields.push_back({"status.phase", false, "Succeeded"});
  std::vector<Seen> pending;
  auto pw = Watch("", "", &pending, unbound);
  EXPECT_EQ(store_.watches, 1);
  EXPECT_EQ(cache_.client_watches(), 102u);

  Pod bound = MakePod("a");
  bound.spec.node_name = "node-3";
  Create("ns", bound);
  Create("ns", MakePod("b"));
  Binding b;
  b.metadata.name = "b";
  b.target_name = "node-7";
  ASSERT_TRUE(registry_.BindPod("ns", b).ok());
  loop_.RunUntilIdle();
  for (std::size_t i = 0; i < agents.size(); ++i) {
    if (i != 3 && i != 7) {
      EXPECT_TRUE(agents[i].empty()) << i;
    }
  }
  ASSERT_EQ(agents[3].size(), 1u);
  EXPECT_EQ(agents[3][0].type, Type::kAdded);
  EXPECT_EQ(agents[3][0].name, "a");
  ASSERT_EQ(agents[7].size(), 1u) << "bound: it starts matching";
  EXPECT_EQ(agents[7][0].type, Type::kAdded);
  EXPECT_EQ(agents[7][0].name, "b");
  ASSERT_EQ(pending.size(), 2u) << "b created unbound, then bound away";
  EXPECT_EQ(pending[0].type, Type::kAdded);
  EXPECT_EQ(pending[1].type, Type::kDeleted);
  EXPECT_EQ(pending[1].name, "b");
  EXPECT_TRUE(run.empty());

  // status.phase: Running starts matching, Succeeded stops.
  auto got = registry_.pods().Get("ns", "b");
  ASSERT_TRUE(got.ok());
  Pod status = **got;
  status.status.phase = "Running";
  ASSERT_TRUE(registry_.pods().UpdateStatus(status).ok());
  loop_.RunUntilIdle();
  ASSERT_EQ(run.size(), 1u);
  EXPECT_EQ(run[0].type, Type::kAdded);
  ASSERT_EQ(agents[7].size(), 2u);
  EXPECT_EQ(agents[7][1].type, Type::kModified);
  got = registry_.pods().Get("ns", "b");
  ASSERT_TRUE(got.ok());
  status = **got;
  status.status.phase = "Succeeded";
  ASSERT_TRUE(registry_.pods().UpdateStatus(status).ok());
  ASSERT_TRUE(registry_.pods().Delete("ns", "a", {}).ok());
  loop_.RunUntilIdle();
  ASSERT_EQ(run.size(), 2u);
  EXPECT_EQ(run[1].type, Type::kDeleted);
  ASSERT_EQ(agents[3].size(), 2u);
  EXPECT_EQ(agents[3][1].type, Type::kModified) << "a bound pod's delete is graceful: deletionTimestamp";

  // A list from the cache filters alike; a resumed watch replays the buffer through the same filter.
  ListOptions on7;
  on7.fields.push_back({"spec.nodeName", true, "node-7"});
  auto list = cache_.List("", on7);
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->items.size(), 1u);
  EXPECT_EQ(list->items[0]->metadata.name, "b");
  std::vector<Seen> resumed;
  auto r = Watch("", agents[7][0].rv, &resumed, on7);
  ASSERT_EQ(resumed.size(), 2u);
  EXPECT_EQ(resumed[0].type, Type::kModified);
  EXPECT_EQ(resumed[1].type, Type::kModified);

  // The registry's refusal of a field pods do not have.
  ListOptions bad;
  bad.fields.push_back({"spec.hostname", true, "x"});
  auto refused = cache_.Watch("", bad, "", [](const ApiWatchEvent<Pod>&) {});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), Code::kBadRequest);
  EXPECT_EQ(cache_.List("", bad).status().code(), Code::kBadRequest);
  watches.clear();
  rw.reset();
  pw.reset();
  r.reset();
  EXPECT_EQ(cache_.client_watches(), 0u);
  EXPECT_EQ(store_.watches, 1);
}

TEST_F(WatchCacheTest, AResourceVersionOlderThanTheBufferIsGone) {
  const std::string first = Create("ns", MakePod("p0"));
  std::vector<Seen> keep;
  auto w = Watch("", "", &keep);
  for (int i = 1; i <= 12; ++i) Create("ns", MakePod("p" + std::to_string(i)));  // capacity 8
  std::vector<Seen> old;
  auto o = Watch("ns", first, &old);
  ASSERT_EQ(old.size(), 1u);
  EXPECT_EQ(old[0].type, Type::kError);
  EXPECT_EQ(old[0].error, Code::kGone);
  EXPECT_EQ(cache_.client_watches(), 1u);
  EXPECT_FALSE(cache_.Watch("ns", {}, "abc", [](const ApiWatchEvent<Pod>&) {}).ok());
}

TEST_F(WatchCacheTest, ACompactedResourceVersionIsGoneEvenIfBuffered) {
  std::vector<Seen> keep;
  auto w = Watch("", "", &keep);
  const std::string first = Create("ns", MakePod("a"));
  Create("ns", MakePod("b"));
  Create("ns", MakePod("c"));
  ASSERT_TRUE(mem_.Compact(mem_.revision()).ok());
  std::vector<Seen> old;
  auto o = Watch("ns", first, &old);
  ASSERT_EQ(old.size(), 1u);
  EXPECT_EQ(old[0].error, Code::kGone);
}

// Http.WatchSeesALabelChangeOutOfTheSelectorAsDeleted failed once: a client listed at L and asked to
// watch from L, but its request reached the server after pods were written, and the cache started then
// (its first use) at a later revision R. Changes in (L, R] were never in the buffer, so the watch got
// Gone at once instead of ADDED / DELETED / ADDED. Such a watch is served by a store watch of its own.
TEST_F(WatchCacheTest, AWatchFromAListMadeBeforeTheCacheStartedSeesEveryChange) {
  auto list = registry_.pods().List("ns", {});
  ASSERT_TRUE(list.ok());
  const std::string listed = list->resource_version;
  Create("ns", MakePod("other", {{"app", "db"}}));
  Create("ns", MakePod("p"));
  auto got = registry_.pods().Get("ns", "p");
  ASSERT_TRUE(got.ok());
  Pod out = **got;
  out.metadata.labels = {{"app", "db"}};
  auto moved = registry_.pods().Update(out);
  ASSERT_TRUE(moved.ok());
  loop_.RunUntilIdle();

  ListOptions web;
  web.label_selector = *LabelSelector::Parse("app=web");
  std::vector<Seen> seen;
  auto w = Watch("ns", listed, &seen, web);  // the cache starts here, after every write above
  Pod back = **moved;
  back.metadata.labels = {{"app", "web"}};
  ASSERT_TRUE(registry_.pods().Update(back).ok());
  loop_.RunUntilIdle();
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0].type, Type::kAdded);
  EXPECT_EQ(seen[1].type, Type::kDeleted);
  EXPECT_EQ(seen[2].type, Type::kAdded);
  for (const Seen& e : seen) EXPECT_EQ(e.name, "p");

  // A client that listed after the cache started shares its store watch.
  const int before = store_.watches;
  std::vector<Seen> later;
  auto l = Watch("ns", seen[2].rv, &later);
  EXPECT_EQ(store_.watches, before);
  Create("ns", MakePod("q"));
  ASSERT_EQ(later.size(), 1u);
  EXPECT_EQ(later[0].name, "q");
}

// The registry's own caches, started before any client lists (as SimWorld and the apiserver start
// them): a watch from a list made before the first watch, after other writes moved the revision on,
// shares the cache's store watch instead of getting one of its own as above.
TEST_F(WatchCacheTest, TheRegistrysCachesStartedFirstServeAWatchFromAnEarlierList) {
  ASSERT_TRUE(registry_.StartWatchCaches().ok());
  const int started = store_.watches;
  EXPECT_EQ(started, 2);  // pods and controllers
  auto list = registry_.pods().List("ns", {});
  ASSERT_TRUE(list.ok());
  Create("other", MakePod("elsewhere"));
  Create("ns", MakePod("p"));

  std::vector<Seen> seen;
  auto w = registry_.pod_cache().Watch("ns", {}, list->resource_version, [&](const ApiWatchEvent<Pod>& ev) {
    seen.push_back({ev.type, ev.object ? ev.object->metadata.name : "", "", ev.error.code()});
  });
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  Create("ns", MakePod("q"));
  EXPECT_EQ(store_.watches, started);  // no store watch of its own
  EXPECT_EQ(registry_.pod_cache().store_watches_started(), 1);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].name, "p");
  EXPECT_EQ(seen[1].name, "q");
  for (const Seen& e : seen) EXPECT_EQ(e.type, Type::kAdded);
}

// As the registry's watch (c89a227): a value that does not decode is left out of the cache and of
// "0" lists, and an object that turns unreadable is DELETED for the watches that saw it.
TEST_F(WatchCacheTest, MalformedValuesAreSkippedAndAnObjectTurningUnreadableIsDeleted) {
  auto put_raw = [&](const std::string& key, const std::string& bytes) {
    PutRequest put;
    put.key = key;
    put.value = Value(bytes);
    ASSERT_TRUE(store_.Put(put).ok());
    loop_.RunUntilIdle();
  };
  Create("ns", MakePod("a"));
  put_raw(PodKey("ns", "bad"), "{not json");
  std::vector<Seen> seen;
  auto w = Watch("ns", "", &seen);  // starts the cache over the bad value
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].name, "a");
  EXPECT_GE(registry_.malformed_values(), 1u);
  put_raw(PodKey("ns", "a"), "{also not json");
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[1].type, Type::kDeleted);
  EXPECT_EQ(seen[1].name, "a");
  auto list = cache_.List("ns", {});
  ASSERT_TRUE(list.ok());
  EXPECT_TRUE(list->items.empty());
  Create("ns", MakePod("b"));
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[2].name, "b");
}

// As the registry's watch (c89a227): a resourceVersion newer than the store's is returned Gone.
TEST_F(WatchCacheTest, AResourceVersionNewerThanTheStoreIsGone) {
  Create("ns", MakePod("a"));
  auto w = cache_.Watch("ns", {}, std::to_string(mem_.revision() + 1), [](const ApiWatchEvent<Pod>&) {});
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().code(), Code::kGone);
  std::vector<Seen> now;
  auto current = Watch("ns", std::to_string(mem_.revision()), &now);
  Create("ns", MakePod("b"));
  ASSERT_EQ(now.size(), 1u);
  EXPECT_EQ(now[0].name, "b");
}

}  // namespace
}  // namespace rcsim
