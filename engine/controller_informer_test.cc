#include "engine/controller_informer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/codec.h"
#include "engine/mock_ports.h"
#include "engine/rng.h"
#include "fakes/faulty_api_client.h"
#include "fakes/inprocess_api_client.h"
#include "fakes/mem_store.h"
#include "fakes/sim_loop.h"
#include "registry/registry.h"

namespace rcsim {
namespace {

using ::testing::_;

ControllerPtr MakeRc(const std::string& name, int replicas) {
  auto rc = std::make_shared<ReplicationController>();
  rc->metadata.name = name;
  rc->metadata.namespace_ = "default";
  rc->metadata.uid = "uid-" + name;
  rc->spec.replicas = replicas;
  rc->spec.selector = {{"app", name}};
  return rc;
}

KeyValue Kv(const std::string& name, Value value, int64_t mod_revision) {
  KeyValue kv;
  kv.key = "/registry/controllers/default/" + name;
  kv.value = std::move(value);
  kv.mod_revision = mod_revision;
  kv.create_revision = mod_revision;
  kv.version = 1;
  return kv;
}

RangeResponse ListAt(int64_t revision, std::vector<KeyValue> kvs) {
  RangeResponse r;
  r.revision = revision;
  r.count = static_cast<int64_t>(kvs.size());
  r.kvs = std::move(kvs);
  return r;
}

WatchResponse Events(std::vector<WatchEvent> events) {
  WatchResponse r;
  r.events = std::move(events);
  return r;
}

WatchEvent Put(KeyValue kv) { return WatchEvent{WatchEvent::Type::kPut, std::move(kv), std::nullopt}; }
WatchEvent Del(const std::string& name, int64_t revision) {
  KeyValue kv;
  kv.key = "/registry/controllers/default/" + name;
  kv.mod_revision = revision;
  return WatchEvent{WatchEvent::Type::kDelete, kv, std::nullopt};
}

class ControllerInformerTest : public ::testing::Test {
 protected:
  ControllerInformerTest() {
    ON_CALL(store_, StartWatch(_, _)).WillByDefault([this](const WatchRequest& req, WatchCallback cb) {
      watch_starts_.push_back(req.start_revision);
      watch_cb_ = std::move(cb);
      return std::make_unique<NoopWatch>();
    });
  }

  std::unique_ptr<ControllerInformer> NewInformer(const ControllerInformer::Options& options = {}) {
    ControllerInformer::Handlers h;
    h.on_add = [this](const ControllerPtr& rc) { log_.push_back("add " + rc->metadata.name); };
    h.on_update = [this](const ControllerPtr&, const ControllerPtr& rc) {
      log_.push_back("update " + rc->metadata.name + " " + std::to_string(rc->spec.replicas));
    };
    h.on_delete = [this](const ControllerPtr& rc) { log_.push_back("delete " + rc->metadata.name); };
    return std::make_unique<ControllerInformer>(options, &store_, &loop_, &logger_, &metrics_, h);
  }

  void Deliver(const WatchResponse& resp) {
    watch_cb_(resp);
    loop_.RunUntilIdle();
  }

  SimLoop loop_;
  ::testing::NiceMock<MockStore> store_;
  NullLogger logger_;
  ManagerMetrics metrics_;
  std::vector<int64_t> watch_starts_;
  WatchCallback watch_cb_;
  std::vector<std::string> log_;
};

TEST_F(ControllerInformerTest, ListsThenWatchesFromListRevisionPlusOne) {
  EXPECT_CALL(store_, Range(_)).WillOnce([](const RangeRequest& req) {
    EXPECT_EQ(req.key, "/registry/controllers/");
    EXPECT_EQ(req.range_end, PrefixEnd("/registry/controllers/"));
    return ListAt(10,
                  {Kv("a", Value(MakeRc("a", 3)), 4), Kv("b", Value(EncodeController(*MakeRc("b", 2))), 7)});
  });
  auto informer = NewInformer();
  informer->Start();
  EXPECT_FALSE(informer->HasSynced());
  loop_.RunUntilIdle();
  ASSERT_TRUE(informer->HasSynced());
  EXPECT_EQ(watch_starts_, std::vector<int64_t>{11});
  ASSERT_NE(informer->Get("default/a"), nullptr);
  EXPECT_EQ(informer->Get("default/a")->metadata.resource_version, "4");
  EXPECT_EQ(informer->Get("default/b")->metadata.resource_version, "7");
  EXPECT_EQ(informer->Get("default/b")->spec.replicas, 2);
  EXPECT_EQ(informer->Keys(), (std::vector<std::string>{"default/a", "default/b"}));
  EXPECT_EQ(informer->InNamespace("default").size(), 2u);
  EXPECT_TRUE(informer->InNamespace("other").empty());

  Deliver(Events({Put(Kv("a", Value(MakeRc("a", 5)), 12))}));
  EXPECT_EQ(informer->Get("default/a")->spec.replicas, 5);
  EXPECT_EQ(log_, (std::vector<std::string>{"add a", "add b", "update a 5"}));
}

TEST_F(ControllerInformerTest, MalformedValueIsSkippedWithMetric) {
  EXPECT_CALL(store_, Range(_)).WillOnce([](const RangeRequest&) {
    return ListAt(10, {Kv("bad", Value("{not json"), 3), Kv("good", Value(MakeRc("good", 1)), 4)});
  });
  auto informer = NewInformer();
  informer->Start();
  loop_.RunUntilIdle();
  EXPECT_TRUE(informer->HasSynced());
  EXPECT_EQ(informer->size(), 1u);
  EXPECT_EQ(metrics_.malformed_objects, 1u);
  Deliver(Events({Put(Kv("worse", Value("[1,2,3]"), 11))}));
  Deliver(Events({Put(Kv("good", Value(MakeRc("good", 9)), 12))}));
  EXPECT_EQ(metrics_.malformed_objects, 2u);
  EXPECT_EQ(informer->Get("default/good")->spec.replicas, 9);  // the watch loop kept going
}

TEST_F(ControllerInformerTest, RelistsAndRewatchesOnCompaction) {
  EXPECT_CALL(store_, Range(_))
      .WillOnce([](const RangeRequest&) { return ListAt(10, {Kv("a", Value(MakeRc("a", 1)), 4)}); })
      .WillOnce([](const RangeRequest&) { return ListAt(30, {Kv("b", Value(MakeRc("b", 1)), 25)}); });
  auto informer = NewInformer();
  informer->Start();
  loop_.RunUntilIdle();
  WatchResponse compacted;
  compacted.canceled = true;
  compacted.compact_revision = 20;
  Deliver(compacted);
  EXPECT_EQ(watch_starts_, (std::vector<int64_t>{11, 31}));
  EXPECT_EQ(metrics_.relists, 1u);
  EXPECT_EQ(informer->Get("default/a"), nullptr);  // deleted while we were not watching
  EXPECT_NE(informer->Get("default/b"), nullptr);
  EXPECT_EQ(log_, (std::vector<std::string>{"add a", "add b", "delete a"}));
}

TEST_F(ControllerInformerTest, ListFailureRetriesWithBackoff) {
  int calls = 0;
  std::vector<TimePoint> at;
  EXPECT_CALL(store_, Range(_)).WillRepeatedly([&](const RangeRequest&) -> Result<RangeResponse> {
    at.push_back(loop_.Now());
    if (++calls <= 3) return Status(Code::kUnavailable, "etcd down");
    return ListAt(10, {});
  });
  auto informer = NewInformer();
  informer->Start();
  loop_.RunUntilIdle();
  EXPECT_TRUE(informer->HasSynced());
  ASSERT_EQ(at.size(), 4u);
  EXPECT_EQ(at[1] - at[0], std::chrono::milliseconds(100));
  EXPECT_EQ(at[2] - at[1], std::chrono::milliseconds(200));
  EXPECT_EQ(at[3] - at[2], std::chrono::milliseconds(400));
}

// 2014 flaw: a periodic re-list could overwrite a newer object delivered by the watch.
TEST_F(ControllerInformerTest, StaleResyncDoesNotOverwriteNewerWatchEvent) {
  EXPECT_CALL(store_, Range(_))
      .WillOnce([](const RangeRequest&) { return ListAt(10, {Kv("a", Value(MakeRc("a", 3)), 5)}); })
      // A stale read (e.g. a lagging member) served at revision 8.
      .WillOnce([](const RangeRequest&) { return ListAt(8, {Kv("a", Value(MakeRc("a", 3)), 5)}); });
  auto informer = NewInformer();
  informer->Start();
  loop_.RunUntilIdle();
  Deliver(Events({Put(Kv("a", Value(MakeRc("a", 5)), 12))}));
  WatchResponse ended;
  ended.canceled = true;
  ended.status = Status(Code::kUnavailable, "stream reset");
  Deliver(ended);
  loop_.RunFor(std::chrono::seconds(1));
  EXPECT_EQ(metrics_.relists, 1u);
  ASSERT_NE(informer->Get("default/a"), nullptr);
  EXPECT_EQ(informer->Get("default/a")->spec.replicas, 5);
  EXPECT_EQ(informer->Get("default/a")->metadata.resource_version, "12");
}

// 2014 flaw: a DELETE event (empty value) crashed the controller watch loop.
TEST_F(ControllerInformerTest, DeletedControllerDoesNotCrashWatchLoop) {
  EXPECT_CALL(store_, Range(_))
      .WillOnce([](const RangeRequest&) { return ListAt(10, {Kv("a", Value(MakeRc("a", 3)), 5)}); })
      .WillOnce([](const RangeRequest&) { return ListAt(11, {Kv("a", Value(MakeRc("a", 3)), 5)}); });
  auto informer = NewInformer();
  informer->Start();
  loop_.RunUntilIdle();
  Deliver(Events({Del("a", 12)}));
  Deliver(Events({Del("never-seen", 13)}));
  EXPECT_EQ(informer->Get("default/a"), nullptr);
  Deliver(Events({Put(Kv("b", Value(MakeRc("b", 1)), 14))}));
  EXPECT_NE(informer->Get("default/b"), nullptr);
  // A stale re-list from before the delete does not resurrect it.
  WatchResponse ended;
  ended.canceled = true;
  ended.status = Status(Code::kUnavailable, "stream reset");
  Deliver(ended);
  loop_.RunFor(std::chrono::seconds(1));
  EXPECT_EQ(informer->Get("default/a"), nullptr);
  EXPECT_NE(informer->Get("default/b"), nullptr);
  EXPECT_EQ(log_, (std::vector<std::string>{"add a", "delete a", "add b"}));
}

// Engine bug 1 (informer side): a controller recreated under the same name, whose delete the watch
// missed, must reach the manager as a delete plus an add, so nothing of the old one is inherited.
TEST_F(ControllerInformerTest, RecreatedControllerInheritsOldExpectations) {
  EXPECT_CALL(store_, Range(_)).WillOnce([](const RangeRequest&) {
    return ListAt(10, {Kv("a", Value(MakeRc("a", 3)), 5)});
  });
  auto informer = NewInformer();
  informer->Start();
  loop_.RunUntilIdle();
  auto successor = std::make_shared<ReplicationController>(*MakeRc("a", 2));
  successor->metadata.uid = "uid-a-2";
  Deliver(Events({Put(Kv("a", Value(ControllerPtr(successor)), 14))}));
  EXPECT_EQ(informer->Get("default/a")->metadata.uid, "uid-a-2");
  EXPECT_EQ(log_, (std::vector<std::string>{"add a", "delete a", "add a"}));
}

// Engine bug 6: the re-list backoff reset only when a watch event arrived, so on a quiet cluster a
// short blip long after an outage waited out the outage's last (longest) delay.
TEST_F(ControllerInformerTest, InformerRelistBackoffNeverDecays) {
  std::vector<TimePoint> at;
  int calls = 0;
  EXPECT_CALL(store_, Range(_)).WillRepeatedly([&](const RangeRequest&) -> Result<RangeResponse> {
    at.push_back(loop_.Now());
    if (++calls <= 8) return Status(Code::kUnavailable, "etcd down");  // an outage: 100ms .. 12.8s
    return ListAt(10, {});
  });
  ControllerInformer::Options options;
  options.clock = &loop_;
  options.max_backoff = std::chrono::seconds(5);
  auto informer = NewInformer(options);
  informer->Start();
  loop_.RunFor(std::chrono::minutes(1));
  ASSERT_TRUE(informer->HasSynced());
  ASSERT_EQ(at.size(), 9u);
  EXPECT_EQ(at[8] - at[7], std::chrono::seconds(5));  // capped at max_backoff
  // Ten quiet minutes later (no watch event), one blip: back to the minimum delay.
  loop_.RunFor(std::chrono::minutes(10));
  WatchResponse ended;
  ended.canceled = true;
  ended.status = Status(Code::kUnavailable, "stream reset");
  TimePoint blip = loop_.Now();
  watch_cb_(ended);
  loop_.RunFor(std::chrono::seconds(1));
  ASSERT_EQ(at.size(), 10u);
  EXPECT_EQ(at[9] - blip, std::chrono::milliseconds(100));
}

TEST_F(ControllerInformerTest, NoCallbackAfterStop) {
  EXPECT_CALL(store_, Range(_)).WillOnce([](const RangeRequest&) { return ListAt(10, {}); });
  auto informer = NewInformer();
  informer->Start();
  loop_.RunUntilIdle();
  watch_cb_(Events({Put(Kv("a", Value(MakeRc("a", 1)), 11))}));  // queued on the loop
  informer->Stop();
  loop_.RunUntilIdle();
  EXPECT_TRUE(log_.empty());
  informer.reset();
  watch_cb_(Events({Put(Kv("b", Value(MakeRc("b", 1)), 12))}));
  loop_.RunUntilIdle();
  EXPECT_TRUE(log_.empty());
}

// The API source (the default mode of the controller-manager): list and watch through the ApiClient,
// over the in-process API and the in-memory etcd; a dropped watch re-lists, and changes made while it
// was down are seen, deletions included.
TEST(ControllerInformerApiTest, ListsAndWatchesThroughTheApiAndRecoversFromADroppedWatch) {
  SimLoop loop;
  MemStore store(&loop, &loop);
  Mt19937Rng rng(1);
  Registry registry(&store, &loop, &rng);
  InProcessApiClient inner(&registry, &loop);
  FaultyApiClient api(&inner, &store, &loop, &loop, &rng);
  NullLogger logger;
  ManagerMetrics metrics;
  std::vector<std::string> events;
  ControllerInformer informer(
      ControllerInformer::Options{}, nullptr, &api, &loop, &logger, &metrics,
      ControllerInformer::Handlers{
          [&](const ControllerPtr& rc) { events.push_back("add " + rc->metadata.name); },
          [&](const ControllerPtr&, const ControllerPtr& rc) {
            events.push_back("update " + rc->metadata.name);
          },
          [&](const ControllerPtr& rc) { events.push_back("delete " + rc->metadata.name); }, nullptr});
  auto create = [&](const std::string& name, int replicas) {
    ReplicationController rc = *MakeRc(name, replicas);
    rc.metadata.uid.clear();
    PodTemplateSpec t;
    t.metadata.labels = rc.spec.selector;
    t.spec.containers.push_back(Container{"c", "nginx", {}, {}});
    rc.spec.template_ = t;
    ASSERT_TRUE(registry.controllers().Create("default", rc).ok());
  };
  create("a", 1);
  informer.Start();
  loop.RunFor(std::chrono::seconds(1));
  ASSERT_TRUE(informer.HasSynced());
  ASSERT_NE(informer.Get("default/a"), nullptr);
  EXPECT_EQ(informer.Get("default/a")->metadata.resource_version,
            (*registry.controllers().Get("default", "a"))->metadata.resource_version);

  create("b", 2);
  loop.RunFor(std::chrono::seconds(1));
  ASSERT_NE(informer.Get("default/b"), nullptr);

  api.SetPartitioned(true);  // ends the watch; the re-lists fail until the partition heals
  DeleteOptions background;  // no policy would orphan: the controller would stay, finalizing
  background.propagation_policy = "Background";
  ASSERT_TRUE(registry.controllers().Delete("default", "a", background).ok());
  create("c", 3);
  loop.RunFor(std::chrono::seconds(3));
  EXPECT_NE(informer.Get("default/a"), nullptr) << "the informer cannot have seen the deletion yet";
  api.SetPartitioned(false);
  loop.RunFor(std::chrono::seconds(60));
  EXPECT_EQ(informer.Get("default/a"), nullptr);
  ASSERT_NE(informer.Get("default/c"), nullptr);
  EXPECT_EQ(informer.Get("default/c")->spec.replicas, 3);
  EXPECT_GE(metrics.relists, 1);
  // A re-list applies what it lists first, then drops what it no longer holds.
  EXPECT_EQ(events, (std::vector<std::string>{"add a", "add b", "add c", "delete a"}));
  informer.Stop();
}

}  // namespace
}  // namespace rcsim
