#include "engine/event_recorder.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fakes/sim_loop.h"

namespace rcsim {
namespace {

struct Written {
  Event ev;
  bool update;
};

class RecordingSink final : public EventSink {
 public:
  void Write(const Event& ev, bool update) override { writes.push_back({ev, update}); }
  std::vector<Written> writes;
};

ObjectReference Rc(const std::string& name) {
  ObjectReference ref;
  ref.kind = "ReplicationController";
  ref.namespace_ = "default";
  ref.name = name;
  ref.uid = "uid-" + name;
  return ref;
}

TEST(EventRecorderTest, WritesAnEventAboutTheObject) {
  SimLoop loop;
  RecordingSink sink;
  EventRecorder recorder({}, &loop, &sink);
  recorder.Record(Rc("web"), event_type::kNormal, "SuccessfulCreate", "Created pod: web-a");
  ASSERT_EQ(sink.writes.size(), 1u);
  const Event& ev = sink.writes[0].ev;
  EXPECT_FALSE(sink.writes[0].update);
  EXPECT_TRUE(ev.metadata.name.starts_with("web.")) << ev.metadata.name;
  EXPECT_EQ(ev.metadata.namespace_, "default");
  EXPECT_EQ(ev.involved_object, Rc("web"));
  EXPECT_EQ(ev.reason, "SuccessfulCreate");
  EXPECT_EQ(ev.message, "Created pod: web-a");
  EXPECT_EQ(ev.type, "Normal");
  EXPECT_EQ(ev.source_component, "replication-controller");
  EXPECT_EQ(ev.count, 1);
  EXPECT_EQ(ev.first_timestamp, loop.Now());
  const nlohmann::json j = EventToJson(ev);
  EXPECT_EQ(j["kind"], "Event");
  EXPECT_EQ(j["involvedObject"]["name"], "web");
  EXPECT_EQ(j["involvedObject"]["uid"], "uid-web");
  EXPECT_EQ(j["source"]["component"], "replication-controller");
  EXPECT_EQ(j["count"], 1);
}

TEST(EventRecorderTest, ARepeatUpdatesTheEventInsteadOfCreatingAnother) {
  SimLoop loop;
  RecordingSink sink;
  EventRecorder recorder({}, &loop, &sink);
  recorder.Record(Rc("web"), event_type::kWarning, "FailedCreate", "Error creating: quota");
  loop.RunFor(std::chrono::seconds(3));
  recorder.Record(Rc("web"), event_type::kWarning, "FailedCreate", "Error creating: quota");
  ASSERT_EQ(sink.writes.size(), 2u);
  EXPECT_TRUE(sink.writes[1].update);
  EXPECT_EQ(sink.writes[1].ev.metadata.name, sink.writes[0].ev.metadata.name);
  EXPECT_EQ(sink.writes[1].ev.count, 2);
  EXPECT_EQ(sink.writes[1].ev.first_timestamp, sink.writes[0].ev.first_timestamp);
  EXPECT_EQ(*sink.writes[1].ev.last_timestamp - *sink.writes[0].ev.last_timestamp, std::chrono::seconds(3));
  // Another object, or another reason, is another event.
  recorder.Record(Rc("db"), event_type::kWarning, "FailedCreate", "Error creating: quota");
  recorder.Record(Rc("web"), event_type::kNormal, "SuccessfulCreate", "Created pod: web-b");
  ASSERT_EQ(sink.writes.size(), 4u);
  EXPECT_FALSE(sink.writes[2].update);
  EXPECT_FALSE(sink.writes[3].update);
  EXPECT_NE(sink.writes[2].ev.metadata.name, sink.writes[3].ev.metadata.name);
}

// As client-go's aggregator: past 10 distinct messages of one reason, one combined event counts them.
TEST(EventRecorderTest, SimilarEventsAreCombinedIntoOne) {
  SimLoop loop;
  RecordingSink sink;
  EventRecorder recorder({}, &loop, &sink);
  for (int i = 0; i < 20; ++i) {
    recorder.Record(Rc("web"), event_type::kNormal, "SuccessfulCreate",
                    "Created pod: web-" + std::to_string(i));
  }
  ASSERT_EQ(sink.writes.size(), 20u);
  int creates = 0;
  for (const Written& w : sink.writes) creates += w.update ? 0 : 1;
  EXPECT_EQ(creates, 10);  // 9 distinct, then the combined one
  const Event& last = sink.writes.back().ev;
  EXPECT_EQ(last.message, "(combined from similar events): Created pod: web-19");
  EXPECT_EQ(last.count, 11);
}

// A busy controller writes a bounded number of events: 25 at once, then one per 5 minutes.
TEST(EventRecorderTest, TheSpamFilterBoundsWritesPerObject) {
  SimLoop loop;
  RecordingSink sink;
  EventRecorder recorder({}, &loop, &sink);
  for (int i = 0; i < 1000; ++i) {
    recorder.Record(Rc("web"), event_type::kNormal, "SuccessfulDelete",
                    "Deleted pod: web-" + std::to_string(i));
  }
  EXPECT_EQ(sink.writes.size(), 25u);
  EXPECT_EQ(recorder.dropped(), 975u);
  recorder.Record(Rc("other"), event_type::kNormal, "SuccessfulDelete", "Deleted pod: other-1");
  EXPECT_EQ(sink.writes.size(), 26u) << "another object has its own bucket";
  loop.RunFor(std::chrono::minutes(5));
  recorder.Record(Rc("web"), event_type::kNormal, "SuccessfulDelete", "Deleted pod: web-x");
  recorder.Record(Rc("web"), event_type::kNormal, "SuccessfulDelete", "Deleted pod: web-y");
  EXPECT_EQ(sink.writes.size(), 27u);
  EXPECT_EQ(recorder.recorded(), 1003u);
}

TEST(EventRecorderTest, NamesAreUniqueAtOneInstant) {
  SimLoop loop;
  RecordingSink sink;
  EventRecorder recorder({}, &loop, &sink);
  recorder.Record(Rc("web"), event_type::kNormal, "A", "a");
  recorder.Record(Rc("web"), event_type::kNormal, "B", "b");
  ASSERT_EQ(sink.writes.size(), 2u);
  EXPECT_NE(sink.writes[0].ev.metadata.name, sink.writes[1].ev.metadata.name);
}

}  // namespace
}  // namespace rcsim
