#include "registry/registry.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "engine/codec.h"
#include "fakes/mem_store.h"
#include "fakes/sim_loop.h"

namespace rcsim {
namespace {

// Next() returns 0 for the first `zeros` calls, then 1 forever.
class ScriptedRng final : public Rng {
 public:
  explicit ScriptedRng(int zeros) : zeros_(zeros) {}
  uint64_t Next() override { return calls_++ < zeros_ ? 0 : 1; }

 private:
  int zeros_;
  int calls_ = 0;
};

Pod MakePod(const std::string& name, Labels labels = {{"app", "web"}}) {
  Pod pod;
  pod.metadata.name = name;
  pod.metadata.labels = std::move(labels);
  pod.spec.containers.push_back(Container{"main", "nginx", {}, {}});
  return pod;
}

ReplicationController MakeController(const std::string& name, int32_t replicas) {
  ReplicationController rc;
  rc.metadata.name = name;
  rc.spec.replicas = replicas;
  rc.spec.selector = {{"app", name}};
  PodTemplateSpec t;
  t.metadata.labels = {{"app", name}};
  t.spec.containers.push_back(Container{"main", "nginx", {}, {}});
  rc.spec.template_ = t;
  return rc;
}

struct Recorded {
  ApiWatchEvent<Pod>::Type type;
  PodPtr object;
  Code error;
};

class RegistryTest : public ::testing::Test {
 protected:
  RegistryTest() : store_(&loop_, &loop_), rng_(7), registry_(&store_, &loop_, &rng_) {}

  std::unique_ptr<RegistryWatch> WatchPods(const std::string& ns, const ListOptions& opts,
                                           const std::string& rv, std::vector<Recorded>* out) {
    auto w = registry_.pods().Watch(ns, opts, rv, [out](const ApiWatchEvent<Pod>& ev) {
      out->push_back({ev.type, ev.object, ev.error.code()});
    });
    EXPECT_TRUE(w.ok()) << w.status().ToString();
    return w.ok() ? std::move(*w) : nullptr;
  }

  SimLoop loop_;
  MemStore store_;
  Mt19937Rng rng_;
  Registry registry_;
};

TEST_F(RegistryTest, CreateStoresTypedObjectStampedWithItsRevision) {
  auto created = registry_.pods().Create("ns", MakePod("p"));
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  const Pod& p = **created;
  EXPECT_EQ(p.metadata.resource_version, std::to_string(store_.revision()));
  EXPECT_EQ(p.metadata.creation_timestamp, SimLoop::Epoch());
  EXPECT_EQ(p.metadata.uid.size(), 36u);
  EXPECT_EQ(p.metadata.uid.str()[14], '4');
  EXPECT_EQ(p.metadata.generation, 0);

  auto kv = store_.Get(PodKey("ns", "p"));
  ASSERT_TRUE(kv.ok() && kv->has_value());
  ASSERT_NE((*kv)->value.pod(), nullptr) << "the simulated path stores typed values";
  EXPECT_EQ((*kv)->value.pod()->metadata.resource_version, std::to_string((*kv)->mod_revision));
  EXPECT_EQ((*kv)->value.bytes().find("resourceVersion"), std::string::npos) << "bytes hold no version";
  EXPECT_EQ((*kv)->value.pod()->metadata.uid, p.metadata.uid);
}

TEST_F(RegistryTest, CreateDiscardsStatusAndRejectsNamespaceMismatch) {
  Pod pod = MakePod("p");
  pod.status.phase = phase::kRunning;
  auto created = registry_.pods().Create("ns", pod);
  ASSERT_TRUE(created.ok());
  EXPECT_EQ((*created)->status.phase, phase::kPending);

  Pod other = MakePod("q");
  other.metadata.namespace_ = "elsewhere";
  EXPECT_EQ(registry_.pods().Create("ns", other).status().code(), Code::kBadRequest);
}

TEST_F(RegistryTest, GenerateNameRetriesOnCollision) {
  // Each create draws 2 values for the uid and 5 per name attempt. With 14 zeros the first two
  // creates both draw "web-bbbbb"; the second retries and gets "web-ccccc".
  ScriptedRng rng(14);
  Registry registry(&store_, &loop_, &rng);
  Pod pod = MakePod("");
  pod.metadata.generate_name = "web-";
  auto a = registry.pods().Create("ns", pod);
  auto b = registry.pods().Create("ns", pod);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ((*a)->metadata.name, "web-bbbbb");
  EXPECT_EQ((*b)->metadata.name, "web-ccccc");
  EXPECT_EQ((*b)->metadata.generate_name, "web-");
}

TEST_F(RegistryTest, GenerateNameGivesUpAfterRepeatedCollisions) {
  ScriptedRng rng(1 << 30);  // always the same name
  Registry registry(&store_, &loop_, &rng);
  Pod pod = MakePod("");
  pod.metadata.generate_name = "web-";
  ASSERT_TRUE(registry.pods().Create("ns", pod).ok());
  EXPECT_EQ(registry.pods().Create("ns", pod).status().code(), Code::kAlreadyExists);
}

TEST_F(RegistryTest, ReadersAndWatchersShareOneCopyPerWrite) {
  std::vector<Recorded> w1, w2;
  auto a = WatchPods("ns", {}, "", &w1);
  auto b = WatchPods("", {}, "", &w2);
  auto created = registry_.pods().Create("ns", MakePod("p"));
  ASSERT_TRUE(created.ok());
  auto got = registry_.pods().Get("ns", "p");
  ASSERT_TRUE(got.ok());
  loop_.RunUntilIdle();
  ASSERT_EQ(w1.size(), 1u);
  ASSERT_EQ(w2.size(), 1u);
  EXPECT_EQ(got->get(), created->get());
  EXPECT_EQ(w1[0].object.get(), created->get());
  EXPECT_EQ(w2[0].object.get(), created->get());
}

// Nodes are stored as bytes: a write is decoded at most once, however many read and watch it (the
// registry's (key, revision) cache serves the rest), as kube-apiserver's watch cache decodes once.
TEST_F(RegistryTest, BytesStoredNodesAreSharedNotDecodedPerReaderAndWatcher) {
  Node node;
  node.metadata.name = "n1";
  node.status.capacity = {{"pods", "110"}};
  NodeCondition ready;
  ready.type = "Ready";
  ready.status = "True";
  ready.last_heartbeat_time = SimLoop::Epoch();
  node.status.conditions.push_back(ready);
  ASSERT_TRUE(registry_.nodes().Create("", node).ok());
  std::vector<NodePtr> seen1, seen2;
  auto watch = [&](std::vector<NodePtr>* out) {
    auto w = registry_.nodes().Watch("", {}, std::to_string(store_.revision()),
                                     [out](const ApiWatchEvent<Node>& ev) { out->push_back(ev.object); });
    EXPECT_TRUE(w.ok());
    return w.ok() ? std::move(*w) : nullptr;
  };
  auto a = watch(&seen1);
  auto b = watch(&seen2);
  node.status.conditions[0].last_heartbeat_time = SimLoop::Epoch() + std::chrono::seconds(10);
  auto beat = registry_.nodes().UpdateStatus(node);
  ASSERT_TRUE(beat.ok()) << beat.status().ToString();
  auto kv = store_.Get(NodeKey("n1"));
  ASSERT_TRUE(kv.ok() && kv->has_value());
  EXPECT_EQ((*kv)->value.pod(), nullptr) << "nodes are stored as bytes";
  auto got = registry_.nodes().Get("", "n1");
  ASSERT_TRUE(got.ok());
  loop_.RunUntilIdle();
  ASSERT_EQ(seen1.size(), 1u);
  ASSERT_EQ(seen2.size(), 1u);
  EXPECT_EQ(got->get(), beat->get());
  EXPECT_EQ(seen1[0].get(), beat->get());
  EXPECT_EQ(seen2[0].get(), beat->get());
  EXPECT_EQ(seen1[0]->status.conditions[0].last_heartbeat_time, SimLoop::Epoch() + std::chrono::seconds(10));
}

// The in-memory etcd stamps the registry's fresh object with its revision as it stores it: the object
// written, read, listed and watched is that one object, carrying its resourceVersion, with no copy
// per reader; the stored bytes still hold no resourceVersion; an unchanged update writes nothing.
TEST_F(RegistryTest, TypedObjectsAreStoredStampedAndServedWithoutACopy) {
  std::vector<Recorded> seen;
  auto w = WatchPods("ns", {}, std::to_string(store_.revision()), &seen);
  auto created = registry_.pods().Create("ns", MakePod("p"));
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  auto kv = store_.Get(PodKey("ns", "p"));
  ASSERT_TRUE(kv.ok() && kv->has_value());
  EXPECT_EQ((*created)->metadata.resource_version, std::to_string((*kv)->mod_revision));
  EXPECT_EQ((*kv)->value.pod().get(), created->get()) << "the store holds the object it returned";
  EXPECT_EQ(DecodePod((*kv)->value.bytes())->metadata.resource_version, "") << "stored bytes hold no version";
  auto got = registry_.pods().Get("ns", "p");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->get(), created->get());
  auto list = registry_.pods().List("ns", {});
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->items.size(), 1u);
  EXPECT_EQ(list->items[0].get(), created->get());
  loop_.RunUntilIdle();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].object.get(), created->get());

  // Unchanged: no write, the stored version answers. Changed: a new object at the next revision.
  const int64_t before = store_.revision();
  auto same = registry_.pods().Update(**created);
  ASSERT_TRUE(same.ok()) << same.status().ToString();
  EXPECT_EQ(store_.revision(), before);
  EXPECT_EQ(same->get(), created->get());
  Pod relabeled = **created;
  relabeled.metadata.labels["tier"] = "front";
  auto updated = registry_.pods().Update(relabeled);
  ASSERT_TRUE(updated.ok()) << updated.status().ToString();
  EXPECT_EQ((*updated)->metadata.resource_version, std::to_string(before + 1));
  EXPECT_EQ((*created)->metadata.resource_version, std::to_string(before)) << "the old version is untouched";

  // A delete's watch event carries the deleting revision: that one is a stamped copy.
  DeleteOptions now;
  now.grace_period_seconds = 0;
  ASSERT_TRUE(registry_.pods().Delete("ns", "p", now).ok());
  loop_.RunUntilIdle();
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.back().type, ApiWatchEvent<Pod>::Type::kDeleted);
  EXPECT_EQ(seen.back().object->metadata.resource_version, std::to_string(store_.revision()));
  EXPECT_EQ((*updated)->metadata.resource_version, std::to_string(before + 1));
}

TEST_F(RegistryTest, UpdateKeepsImmutableFieldsAndStatus) {
  auto created = registry_.pods().Create("ns", MakePod("p"));
  ASSERT_TRUE(created.ok());
  Pod running = **created;
  running.status.phase = phase::kRunning;
  auto st = registry_.pods().UpdateStatus(running);
  ASSERT_TRUE(st.ok()) << st.status().ToString();

  // Issue 8: changing uid or creationTimestamp is refused (422 naming them), not silently undone.
  Pod forged = **st;
  forged.metadata.uid = "forged";
  forged.metadata.creation_timestamp = SimLoop::Epoch() + 1h;
  auto refused = registry_.pods().Update(forged);
  ASSERT_EQ(refused.status().code(), Code::kInvalid);
  EXPECT_NE(refused.status().message().find("metadata.uid"), std::string::npos);
  EXPECT_NE(refused.status().message().find("metadata.creationTimestamp"), std::string::npos);
  EXPECT_EQ((*registry_.pods().Get("ns", "p"))->metadata.resource_version, (*st)->metadata.resource_version);

  // Left empty, they are filled in from storage.
  Pod next = **st;
  next.metadata.uid.clear();
  next.metadata.creation_timestamp.reset();
  next.metadata.labels["x"] = "y";
  next.status.phase = phase::kFailed;
  auto up = registry_.pods().Update(next);
  ASSERT_TRUE(up.ok()) << up.status().ToString();
  EXPECT_EQ((*up)->metadata.uid, (*created)->metadata.uid);
  EXPECT_EQ((*up)->metadata.creation_timestamp, SimLoop::Epoch());
  EXPECT_EQ((*up)->metadata.labels.at("x"), "y");
  EXPECT_EQ((*up)->status.phase, phase::kRunning);
}

// Updates whose resourceVersion the registry remembers skip the read; the store's compare must still
// turn a stale version into kConflict, a deleted object into kNotFound, and a stale no-op or invalid
// update into kConflict (the version is checked before anything else).
TEST_F(RegistryTest, RememberedResourceVersionsAreStillChecked) {
  auto created = registry_.pods().Create("ns", MakePod("p"));
  ASSERT_TRUE(created.ok());
  Pod running = **created;
  running.status.phase = phase::kRunning;
  ASSERT_TRUE(registry_.pods().UpdateStatus(running).ok());

  Pod stale = **created;
  stale.metadata.labels["x"] = "y";
  EXPECT_EQ(registry_.pods().Update(stale).status().code(), Code::kConflict);
  EXPECT_EQ(registry_.pods().Update(**created).status().code(), Code::kConflict);
  Pod invalid = **created;
  invalid.spec.containers.clear();
  EXPECT_EQ(registry_.pods().Update(invalid).status().code(), Code::kConflict);
  EXPECT_EQ(registry_.pods().UpdateStatus(running).status().code(), Code::kConflict);

  auto current = registry_.pods().Get("ns", "p");
  ASSERT_TRUE(current.ok());
  EXPECT_EQ((*current)->status.phase, phase::kRunning);
  auto deleted = registry_.pods().Delete("ns", "p", {});
  ASSERT_TRUE(deleted.ok());
  EXPECT_EQ((*deleted)->metadata.resource_version, (*current)->metadata.resource_version);
  Pod gone = **current;
  gone.metadata.labels["x"] = "y";
  EXPECT_EQ(registry_.pods().Update(gone).status().code(), Code::kNotFound);
  EXPECT_EQ(registry_.pods().Delete("ns", "p", {}).status().code(), Code::kNotFound);
}

TEST_F(RegistryTest, UnchangedUpdateWritesNothing) {
  auto created = registry_.controllers().Create("ns", MakeController("web", 1));
  ASSERT_TRUE(created.ok());
  const int64_t before = store_.revision();
  auto same = registry_.controllers().Update(**created);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(store_.revision(), before);
  EXPECT_EQ((*same)->metadata.resource_version, (*created)->metadata.resource_version);
  EXPECT_EQ((*same)->metadata.generation, 1);
}

TEST_F(RegistryTest, UnconditionalUpdatesFromManyThreadsLoseNothing) {
  ASSERT_TRUE(registry_.controllers().Create("ns", MakeController("web", 0)).ok());
  constexpr int kThreads = 4;
  constexpr int kEach = 50;
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([this] {
      for (int i = 0; i < kEach; ++i) {
        auto r = registry_.controllers().GuaranteedUpdate(
            "ns", "web", "",
            [](const ReplicationController& stored) -> Result<std::shared_ptr<ReplicationController>> {
              auto next = std::make_shared<ReplicationController>(stored);
              ++next->spec.replicas;
              return next;
            });
        EXPECT_TRUE(r.ok()) << r.status().ToString();
      }
    });
  }
  for (auto& t : threads) t.join();
  auto got = registry_.controllers().Get("ns", "web");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ((*got)->spec.replicas, kThreads * kEach);
  EXPECT_EQ((*got)->metadata.generation, 1 + kThreads * kEach) << "every spec change bumps it";
}

TEST_F(RegistryTest, GuaranteedUpdateAppliesTheUpdateRules) {
  auto created = registry_.controllers().Create("ns", MakeController("web", 1));
  ASSERT_TRUE(created.ok());
  auto bad = registry_.controllers().GuaranteedUpdate(
      "ns", "web", "",
      [](const ReplicationController& stored) -> Result<std::shared_ptr<ReplicationController>> {
        auto next = std::make_shared<ReplicationController>(stored);
        next->spec.replicas = -1;
        next->metadata.uid = "forged";
        return next;
      });
  EXPECT_EQ(bad.status().code(), Code::kInvalid);
  auto relabel = registry_.controllers().GuaranteedUpdate(
      "ns", "web", "",
      [](const ReplicationController& stored) -> Result<std::shared_ptr<ReplicationController>> {
        auto next = std::make_shared<ReplicationController>(stored);
        next->metadata.uid.clear();  // empty: kept from storage (a different one is kInvalid)
        next->metadata.labels["x"] = "y";
        return next;
      });
  ASSERT_TRUE(relabel.ok()) << relabel.status().ToString();
  EXPECT_EQ((*relabel)->metadata.uid, (*created)->metadata.uid);
  EXPECT_EQ((*relabel)->metadata.generation, 1);
}

TEST_F(RegistryTest, DeleteWithStaleResourceVersionPreconditionIsConflict) {
  auto created = registry_.pods().Create("ns", MakePod("p"));
  ASSERT_TRUE(created.ok());
  Pod next = **created;
  next.metadata.labels["v"] = "2";
  auto up = registry_.pods().Update(next);
  ASSERT_TRUE(up.ok());
  DeleteOptions stale;
  stale.precondition_resource_version = (*created)->metadata.resource_version;
  EXPECT_EQ(registry_.pods().Delete("ns", "p", stale).status().code(), Code::kConflict);
  DeleteOptions current;
  current.precondition_resource_version = (*up)->metadata.resource_version;
  auto deleted = registry_.pods().Delete("ns", "p", current);
  ASSERT_TRUE(deleted.ok());
  EXPECT_EQ((*deleted)->metadata.resource_version, (*up)->metadata.resource_version);
}

TEST_F(RegistryTest, ListAllNamespacesInKeyOrder) {
  ASSERT_TRUE(registry_.pods().Create("b", MakePod("x")).ok());
  ASSERT_TRUE(registry_.pods().Create("a", MakePod("y")).ok());
  ASSERT_TRUE(registry_.pods().Create("a", MakePod("x")).ok());
  auto all = registry_.pods().List("", {});
  ASSERT_TRUE(all.ok());
  std::vector<std::string> keys;
  for (const auto& p : all->items) keys.push_back(KeyOf(p->metadata));
  EXPECT_EQ(keys, (std::vector<std::string>{"a/x", "a/y", "b/x"}));
  EXPECT_EQ(all->resource_version, std::to_string(store_.revision()));

  ListOptions by_name;
  by_name.field_name = "x";
  auto named = registry_.pods().List("", by_name);
  ASSERT_TRUE(named.ok());
  EXPECT_EQ(named->items.size(), 2u);
}

TEST_F(RegistryTest, FilteredPagesSkipNonMatchingKeys) {
  for (int i = 0; i < 600; ++i) {
    const std::string name = "p" + std::to_string(1000 + i);
    ASSERT_TRUE(registry_.pods().Create("ns", MakePod(name, {{"odd", i % 2 ? "y" : "n"}})).ok());
  }
  ListOptions opts;
  opts.label_selector = LabelSelector::FromMap({{"odd", "y"}});
  opts.limit = 100;
  int total = 0;
  int pages = 0;
  while (true) {
    auto page = registry_.pods().List("ns", opts);
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    ++pages;
    for (const auto& p : page->items) EXPECT_EQ(p->metadata.labels.at("odd"), "y");
    total += static_cast<int>(page->items.size());
    if (page->continue_token.empty()) break;
    opts.continue_token = page->continue_token;
  }
  EXPECT_EQ(total, 300);
  EXPECT_EQ(pages, 3);
}

TEST_F(RegistryTest, BadOrCompactedContinueTokens) {
  for (const char* n : {"a", "b", "c"}) ASSERT_TRUE(registry_.pods().Create("ns", MakePod(n)).ok());
  ListOptions opts;
  opts.continue_token = "not base64!";
  EXPECT_EQ(registry_.pods().List("ns", opts).status().code(), Code::kBadRequest);
  opts.continue_token = "";
  opts.limit = -1;
  EXPECT_EQ(registry_.pods().List("ns", opts).status().code(), Code::kBadRequest);

  opts.limit = 1;
  auto first = registry_.pods().List("ns", opts);
  ASSERT_TRUE(first.ok());
  ASSERT_FALSE(first->continue_token.empty());
  ASSERT_TRUE(registry_.pods().Create("ns", MakePod("d")).ok());
  ASSERT_TRUE(store_.Compact(store_.revision()).ok());
  opts.continue_token = first->continue_token;
  EXPECT_EQ(registry_.pods().List("ns", opts).status().code(), Code::kGone);
}

// resourceVersionMatch=Exact: the state at that revision, by name too, with its pages at it; the
// argument errors and a compacted or future revision answered as kube-apiserver does.
TEST_F(RegistryTest, ExactResourceVersionListsTheStateAtThatRevision) {
  ASSERT_TRUE(registry_.pods().Create("ns", MakePod("a")).ok());
  ASSERT_TRUE(registry_.pods().Create("ns", MakePod("b")).ok());
  const int64_t then = store_.revision();
  ASSERT_TRUE(registry_.pods().Create("ns", MakePod("c")).ok());
  ASSERT_TRUE(registry_.pods().Delete("ns", "a", DeleteOptions{}).ok());
  auto names = [](const ObjectList<Pod>& l) {
    std::string out;
    for (const PodPtr& p : l.items) out += p->metadata.name;
    return out;
  };
  ListOptions opts;
  opts.resource_version = std::to_string(then);
  opts.resource_version_match = ResourceVersionMatch::kExact;
  auto at = registry_.pods().List("ns", opts);
  ASSERT_TRUE(at.ok()) << at.status().ToString();
  EXPECT_EQ(names(*at), "ab");
  EXPECT_EQ(at->resource_version, std::to_string(then));
  opts.limit = 1;
  at = registry_.pods().List("ns", opts);
  ASSERT_TRUE(at.ok());
  EXPECT_EQ(names(*at), "a");
  ListOptions next;
  next.limit = 1;
  next.continue_token = at->continue_token;
  at = registry_.pods().List("ns", next);
  ASSERT_TRUE(at.ok());
  EXPECT_EQ(names(*at), "b");
  opts.limit = 0;
  opts.field_name = "c";
  at = registry_.pods().List("ns", opts);
  ASSERT_TRUE(at.ok());
  EXPECT_EQ(names(*at), "");
  EXPECT_EQ(at->resource_version, std::to_string(then));
  opts.field_name.clear();
  // The default (NotOlderThan) serves the latest.
  opts.resource_version_match = ResourceVersionMatch::kNotOlderThan;
  EXPECT_EQ(names(*registry_.pods().List("ns", opts)), "bc");

  opts.resource_version_match = ResourceVersionMatch::kExact;
  opts.resource_version = "0";
  EXPECT_EQ(registry_.pods().List("ns", opts).status().code(), Code::kBadRequest);
  opts.resource_version = "";
  EXPECT_EQ(registry_.pods().List("ns", opts).status().code(), Code::kBadRequest);
  opts.resource_version = std::to_string(then);
  opts.continue_token = next.continue_token;
  EXPECT_EQ(registry_.pods().List("ns", opts).status().code(), Code::kBadRequest);
  opts.continue_token.clear();
  opts.resource_version = std::to_string(store_.revision() + 10);
  EXPECT_EQ(registry_.pods().List("ns", opts).status().code(), Code::kGone);
  ASSERT_TRUE(store_.Compact(store_.revision()).ok());
  opts.resource_version = std::to_string(then);
  EXPECT_EQ(registry_.pods().List("ns", opts).status().code(), Code::kGone);
}

TEST_F(RegistryTest, BytesValuesFromARealEtcdAreDecoded) {
  Pod pod = MakePod("raw");
  pod.metadata.namespace_ = "ns";
  pod.metadata.uid = "11111111-1111-4111-8111-111111111111";
  std::vector<Recorded> events;
  auto w = WatchPods("ns", {}, "0", &events);
  PutRequest put;
  put.key = PodKey("ns", "raw");
  put.value = Value(EncodePod(pod));
  ASSERT_TRUE(store_.Put(put).ok());

  auto got = registry_.pods().Get("ns", "raw");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ((*got)->metadata.uid, pod.metadata.uid);
  EXPECT_EQ((*got)->metadata.resource_version, std::to_string(store_.revision()));

  Pod next = **got;
  next.metadata.labels["v"] = "2";
  auto up = registry_.pods().Update(next);
  ASSERT_TRUE(up.ok()) << up.status().ToString();
  loop_.RunUntilIdle();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].type, ApiWatchEvent<Pod>::Type::kAdded);
  EXPECT_EQ(events[0].object->metadata.uid, pod.metadata.uid);
  EXPECT_EQ(events[1].type, ApiWatchEvent<Pod>::Type::kModified);
}

// A GET of the object is an internal error; lists and watches skip it (registry_robustness_test.cc).
TEST_F(RegistryTest, UndecodableBytesAreInternalErrorsOnGetAndSkippedByLists) {
  PutRequest put;
  put.key = PodKey("ns", "junk");
  put.value = Value("{not json");
  ASSERT_TRUE(store_.Put(put).ok());
  EXPECT_EQ(registry_.pods().Get("ns", "junk").status().code(), Code::kInternal);
  auto list = registry_.pods().List("ns", {});
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  EXPECT_TRUE(list->items.empty());
  std::vector<Recorded> events;
  auto w = WatchPods("ns", {}, "", &events);
  EXPECT_TRUE(events.empty());
  EXPECT_EQ(registry_.malformed_values(), 2u);
}

TEST_F(RegistryTest, WatchInitialEventsComeBeforeLaterChanges) {
  ASSERT_TRUE(registry_.pods().Create("ns", MakePod("a")).ok());
  std::vector<Recorded> events;
  auto w = WatchPods("ns", {}, "", &events);
  ASSERT_EQ(events.size(), 1u) << "initial ADDED events are delivered inside Watch()";
  ASSERT_TRUE(registry_.pods().Create("ns", MakePod("b")).ok());
  ASSERT_TRUE(registry_.pods().Delete("ns", "a", {}).ok());
  loop_.RunUntilIdle();
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[1].object->metadata.name, "b");
  EXPECT_EQ(events[2].type, ApiWatchEvent<Pod>::Type::kDeleted);
  EXPECT_EQ(events[2].object->metadata.name, "a");
  EXPECT_EQ(events[2].object->metadata.resource_version, std::to_string(store_.revision()))
      << "a DELETED event carries the deleting revision";
}

TEST_F(RegistryTest, WatchByNameAndNamespaceIsolation) {
  std::vector<Recorded> events;
  ListOptions opts;
  opts.field_name = "p";
  auto w = WatchPods("ns", opts, "", &events);
  ASSERT_TRUE(registry_.pods().Create("ns", MakePod("q")).ok());
  ASSERT_TRUE(registry_.pods().Create("ns2", MakePod("p")).ok());
  ASSERT_TRUE(registry_.pods().Create("ns", MakePod("p")).ok());
  loop_.RunUntilIdle();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(KeyOf(events[0].object->metadata), "ns/p");

  std::vector<Recorded> ns_events;
  auto w2 = WatchPods("n", {}, "", &ns_events);  // "n" must not see "ns"
  ASSERT_TRUE(registry_.pods().Create("ns", MakePod("r")).ok());
  loop_.RunUntilIdle();
  EXPECT_TRUE(ns_events.empty());
}

TEST_F(RegistryTest, WatchArgumentErrorsAreReturned) {
  auto w = registry_.pods().Watch("ns", {}, "12abc", [](const ApiWatchEvent<Pod>&) {});
  EXPECT_EQ(w.status().code(), Code::kBadRequest);
}

TEST_F(RegistryTest, DestroyedWatchGetsNoMoreEvents) {
  std::vector<Recorded> events;
  auto w = WatchPods("ns", {}, "", &events);
  ASSERT_TRUE(registry_.pods().Create("ns", MakePod("a")).ok());
  w.reset();
  loop_.RunUntilIdle();
  EXPECT_TRUE(events.empty());
}

TEST_F(RegistryTest, ScaleSubresource) {
  auto created = registry_.controllers().Create("ns", MakeController("web", 2));
  ASSERT_TRUE(created.ok());
  auto scale = registry_.GetScale("ns", "web");
  ASSERT_TRUE(scale.ok());
  EXPECT_EQ(scale->spec_replicas, 2);
  EXPECT_EQ(scale->status_selector, "app=web");
  EXPECT_EQ(scale->metadata.resource_version, (*created)->metadata.resource_version);

  Scale up = *scale;
  up.spec_replicas = 5;
  auto scaled = registry_.UpdateScale("ns", "web", up);
  ASSERT_TRUE(scaled.ok()) << scaled.status().ToString();
  EXPECT_EQ(scaled->spec_replicas, 5);
  auto rc = registry_.controllers().Get("ns", "web");
  ASSERT_TRUE(rc.ok());
  EXPECT_EQ((*rc)->spec.replicas, 5);
  EXPECT_EQ((*rc)->metadata.generation, 2);

  EXPECT_EQ(registry_.UpdateScale("ns", "web", up).status().code(), Code::kConflict)
      << "the resourceVersion of the first scale is stale now";
  Scale negative;
  negative.spec_replicas = -1;
  auto bad = registry_.UpdateScale("ns", "web", negative);
  EXPECT_EQ(bad.status().code(), Code::kInvalid);
  EXPECT_EQ(bad.status().message(),
            "Scale.autoscaling \"web\" is invalid: spec.replicas: Invalid value: -1: must be "
            "greater than or equal to 0");
  EXPECT_EQ(registry_.GetScale("ns", "missing").status().code(), Code::kNotFound);
}

TEST_F(RegistryTest, ControllerStatusIsValidated) {
  auto created = registry_.controllers().Create("ns", MakeController("web", 2));
  ASSERT_TRUE(created.ok());
  ReplicationController rc = **created;
  rc.status.replicas = 1;
  rc.status.ready_replicas = 2;
  EXPECT_EQ(registry_.controllers().UpdateStatus(rc).status().code(), Code::kInvalid);
}

TEST_F(RegistryTest, NotFoundMessagesNameTheResource) {
  EXPECT_EQ(registry_.pods().Get("ns", "x").status().message(), "pods \"x\" not found");
  EXPECT_EQ(registry_.controllers().Get("ns", "x").status().message(),
            "replicationcontrollers \"x\" not found");
}

}  // namespace
}  // namespace rcsim
