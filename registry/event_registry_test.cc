#include "registry/event_registry.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fakes/mem_store.h"
#include "fakes/sim_loop.h"

namespace rcsim {
namespace {

using json = nlohmann::json;

json MakeEvent(const std::string& name, const std::string& object, const std::string& reason) {
  return {{"metadata", {{"name", name}}},
          {"involvedObject", {{"kind", "ReplicationController"}, {"name", object}, {"namespace", "ns"}}},
          {"reason", reason},
          {"message", "m"},
          {"type", "Normal"},
          {"count", 1}};
}

// An event as the replication manager's recorder makes one.
Event RecordedEvent(const std::string& name) {
  Event ev;
  ev.metadata.name = name;
  ev.metadata.namespace_ = "ns";
  ev.involved_object.kind = "ReplicationController";
  ev.involved_object.name = "web";
  ev.reason = "SuccessfulCreate";
  ev.message = "Created pod: web-1";
  return ev;
}

class EventRegistryTest : public ::testing::Test {
 protected:
  EventRegistryTest()
      : store_(&loop_, &loop_), rng_(7), registry_(&store_, &loop_, &rng_), events_(&registry_.context()) {}

  SimLoop loop_;
  MemStore store_;
  Mt19937Rng rng_;
  Registry registry_;
  EventRegistry events_;
};

TEST_F(EventRegistryTest, CreateGetUpdateListDelete) {
  auto created = events_.Create("ns", MakeEvent("web.1", "web", "SuccessfulCreate"));
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ((*created)["kind"], "Event");
  EXPECT_FALSE((*created)["metadata"]["uid"].get<std::string>().empty());
  EXPECT_EQ(events_.Create("ns", MakeEvent("web.1", "web", "x")).status().code(), Code::kAlreadyExists);
  ASSERT_TRUE(events_.Create("ns", MakeEvent("db.1", "db", "SuccessfulDelete")).ok());
  ASSERT_TRUE(events_.Create("other", MakeEvent("web.2", "web", "SuccessfulCreate")).ok());

  json repeat = *created;
  repeat["count"] = 2;
  auto updated = events_.Update("ns", "web.1", repeat);
  ASSERT_TRUE(updated.ok()) << updated.status().ToString();
  EXPECT_EQ((*updated)["count"], 2);
  EXPECT_EQ((*updated)["metadata"]["uid"], (*created)["metadata"]["uid"]);
  // The resourceVersion it was read at is stale now.
  EXPECT_EQ(events_.Update("ns", "web.1", repeat).status().code(), Code::kConflict);
  EXPECT_EQ(events_.Update("ns", "gone", MakeEvent("gone", "web", "x")).status().code(), Code::kNotFound);

  auto fields = ParseEventFieldSelector("involvedObject.name=web,involvedObject.kind==ReplicationController");
  ASSERT_TRUE(fields.ok());
  auto web = events_.List("ns", *fields, LabelSelector());
  ASSERT_TRUE(web.ok());
  ASSERT_EQ((*web)["items"].size(), 1u);
  EXPECT_EQ((*web)["items"][0]["metadata"]["name"], "web.1");
  EXPECT_EQ((*web)["items"][0]["count"], 2);
  auto all = events_.List("", {}, LabelSelector());
  ASSERT_TRUE(all.ok());
  EXPECT_EQ((*all)["items"].size(), 3u);

  auto deleted = events_.Delete("ns", "web.1");
  ASSERT_TRUE(deleted.ok());
  EXPECT_EQ(events_.Get("ns", "web.1").status().code(), Code::kNotFound);
  EXPECT_EQ(events_.Delete("ns", "web.1").status().code(), Code::kNotFound);
}

// kubectl get events -w: the events listed, then each change of those the selectors match.
TEST_F(EventRegistryTest, AWatchListsThenFollowsTheMatchingEvents) {
  ASSERT_TRUE(events_.Create("ns", MakeEvent("web.1", "web", "SuccessfulCreate")).ok());
  ASSERT_TRUE(events_.Create("ns", MakeEvent("db.1", "db", "SuccessfulCreate")).ok());
  auto fields = ParseEventFieldSelector("involvedObject.name=web");
  ASSERT_TRUE(fields.ok());
  std::vector<json> seen;
  bool ended = false;
  auto w = events_.Watch(
      "ns", "", *fields, LabelSelector(), [&](const json& ev) { seen.push_back(ev); }, [&] { ended = true; });
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0]["type"], "ADDED");
  EXPECT_EQ(seen[0]["object"]["metadata"]["name"], "web.1");
  ASSERT_TRUE(events_.Create("ns", MakeEvent("web.2", "web", "SuccessfulDelete")).ok());
  ASSERT_TRUE(events_.Create("ns", MakeEvent("db.2", "db", "SuccessfulDelete")).ok());  // not matched
  ASSERT_TRUE(events_.Create("other", MakeEvent("web.3", "web", "x")).ok());            // other namespace
  json repeat = *events_.Get("ns", "web.1");
  repeat["count"] = 2;
  ASSERT_TRUE(events_.Update("ns", "web.1", repeat).ok());
  ASSERT_TRUE(events_.Delete("ns", "web.2").ok());
  loop_.RunUntilIdle();
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen[1]["type"], "ADDED");
  EXPECT_EQ(seen[1]["object"]["metadata"]["name"], "web.2");
  EXPECT_EQ(seen[2]["type"], "MODIFIED");
  EXPECT_EQ(seen[2]["object"]["count"], 2);
  EXPECT_EQ(seen[3]["type"], "DELETED");
  EXPECT_EQ(seen[3]["object"]["metadata"]["name"], "web.2");
  EXPECT_FALSE(ended);
  // From a resourceVersion: only what came after it; a malformed one is refused.
  std::vector<json> later;
  const std::string rv = seen[2]["object"]["metadata"]["resourceVersion"];
  auto from = events_.Watch(
      "ns", rv, {}, LabelSelector(), [&](const json& ev) { later.push_back(ev); }, [] {});
  ASSERT_TRUE(from.ok());
  loop_.RunUntilIdle();
  ASSERT_EQ(later.size(), 1u);
  EXPECT_EQ(later[0]["type"], "DELETED");
  EXPECT_EQ(events_
                .Watch(
                    "ns", "abc", {}, LabelSelector(), [](const json&) {}, [] {})
                .status()
                .code(),
            Code::kBadRequest);
}

TEST_F(EventRegistryTest, BadInputIsRefusedAndNothingIsStored) {
  EXPECT_EQ(events_.Create("ns", json::array()).status().code(), Code::kBadRequest);
  json no_object = MakeEvent("e", "web", "r");
  no_object.erase("involvedObject");
  EXPECT_EQ(events_.Create("ns", no_object).status().code(), Code::kInvalid);
  EXPECT_EQ(events_.Create("ns", MakeEvent("Not_A_Name", "web", "r")).status().code(), Code::kInvalid);
  json wrong_ns = MakeEvent("e", "web", "r");
  wrong_ns["metadata"]["namespace"] = "other";
  EXPECT_EQ(events_.Create("ns", wrong_ns).status().code(), Code::kBadRequest);
  auto all = events_.List("", {}, LabelSelector());
  ASSERT_TRUE(all.ok());
  EXPECT_TRUE((*all)["items"].empty());

  EXPECT_FALSE(ParseEventFieldSelector("spec.nodeName=x").ok());
  EXPECT_FALSE(ParseEventFieldSelector("reason!=x").ok());
  EXPECT_FALSE(ParseEventFieldSelector("reason").ok());
  EXPECT_TRUE(ParseEventFieldSelector("").ok());
}

TEST_F(EventRegistryTest, TheSinkCreatesThenUpdatesAndRecreatesAnEventThatWasDeleted) {
  RegistryEventSink sink(&events_);
  Event ev = RecordedEvent("web.abc");
  sink.Write(ev, /*update=*/false);
  ev.count = 2;
  sink.Write(ev, /*update=*/true);
  auto got = events_.Get("ns", "web.abc");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ((*got)["count"], 2);
  ASSERT_TRUE(events_.Delete("ns", "web.abc").ok());
  ev.count = 3;
  sink.Write(ev, /*update=*/true);
  got = events_.Get("ns", "web.abc");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ((*got)["count"], 3);
  EXPECT_EQ(sink.failed(), 0u);
}

// Two registries over two stores with the same seed: one written the typed way, one through JSON.
struct Twin {
  Twin() : store(&loop, &loop), rng(7), registry(&store, &loop, &rng), events(&registry.context()) {}
  SimLoop loop;
  MemStore store;
  Mt19937Rng rng;
  Registry registry;
  EventRegistry events;
  std::string Stored(const std::string& key) {
    auto got = store.Get(key);
    return got.ok() && got->has_value() ? (*got)->value.bytes() : "";
  }
};

TEST(EventRegistryTypedWrite, StoresTheBytesTheJsonCreateAndUpdateStoreAndServesThemAlike) {
  Event ev = RecordedEvent("web.17a");
  ev.involved_object.uid = "u-1";
  ev.first_timestamp = ev.last_timestamp = SimLoop::Epoch();
  Twin typed;
  Twin viajson;
  typed.loop.RunFor(std::chrono::milliseconds(1500));
  viajson.loop.RunFor(std::chrono::milliseconds(1500));
  const std::string key = EventPrefix("ns") + "web.17a";

  ASSERT_TRUE(typed.events.Write(ev, /*update=*/false).ok());
  ASSERT_TRUE(viajson.events.Create("ns", EventToJson(ev)).ok());
  auto stored = typed.store.Get(key);
  ASSERT_TRUE(stored.ok() && stored->has_value());
  ASSERT_NE((*stored)->value.event(), nullptr);  // kept typed
  EXPECT_EQ(typed.Stored(key), viajson.Stored(key));
  EXPECT_EQ(typed.events.Write(ev, /*update=*/false).code(), Code::kAlreadyExists);

  ev.count = 2;
  ev.last_timestamp = SimLoop::Epoch() + std::chrono::seconds(3);
  ASSERT_TRUE(typed.events.Write(ev, /*update=*/true).ok());
  ASSERT_TRUE(viajson.events.Update("ns", "web.17a", EventToJson(ev)).ok());
  EXPECT_EQ(typed.Stored(key), viajson.Stored(key));
  auto a = typed.events.Get("ns", "web.17a");
  auto b = viajson.events.Get("ns", "web.17a");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, *b);
  EXPECT_EQ((*a)["count"], 2);
  EXPECT_FALSE((*a)["metadata"]["uid"].get<std::string>().empty());

  // A client's JSON update of a typed event, and a typed update of an event a client created.
  json edited = *a;
  edited["message"] = "edited";
  ASSERT_TRUE(typed.events.Update("ns", "web.17a", edited).ok());
  ev.count = 3;
  ASSERT_TRUE(typed.events.Write(ev, /*update=*/true).ok());
  auto c = typed.events.Get("ns", "web.17a");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ((*c)["count"], 3);
  EXPECT_EQ((*c)["metadata"]["uid"], (*a)["metadata"]["uid"]);
  EXPECT_EQ((*c)["metadata"]["creationTimestamp"], (*a)["metadata"]["creationTimestamp"]);

  // Refused as the JSON methods refuse, nothing stored.
  Event bad = ev;
  bad.metadata.name = "Not_A_Name";
  EXPECT_EQ(typed.events.Write(bad, /*update=*/false).code(), Code::kInvalid);
  EXPECT_EQ(typed.Stored(EventPrefix("ns") + "Not_A_Name"), "");
  bad = ev;
  bad.involved_object.name.clear();
  EXPECT_EQ(typed.events.Write(bad, /*update=*/true).code(), Code::kInvalid);
  bad = ev;
  bad.metadata.name = "absent";
  EXPECT_EQ(typed.events.Write(bad, /*update=*/true).code(), Code::kNotFound);
}

}  // namespace
}  // namespace rcsim
