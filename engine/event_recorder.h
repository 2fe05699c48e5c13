// EventRecorder: records core/v1 Events about objects (the replication manager's SuccessfulCreate,
// SuccessfulDelete, FailedCreate, FailedDelete) and writes them to an EventSink, correlated as
// client-go's EventCorrelator so that a busy controller writes a bounded number of events:
//   1. spam filter: a token bucket per involved object (`burst` events, then one per `refill`);
//      an event without a token is dropped (counted in dropped());
//   2. aggregation: once `similar_threshold` events of one object, type and reason with distinct
//      messages were seen within `similar_window`, further ones become one event whose message is
//      "(combined from similar events): <latest message>";
//   3. deduplication: an event equal to an earlier one (same object, type, reason and message, or the
//      aggregate) updates that event (count + 1, lastTimestamp) instead of creating another.
// Names are "<object name>.<hex nanoseconds>", unique per recorder, as client-go names them; no Rng
// is drawn, so recording events shifts no other component's random stream.
//
// Thread-safety: none. Call from one thread (the replication manager calls it on its executor).
#ifndef RCSIM_ENGINE_EVENT_RECORDER_H_
#define RCSIM_ENGINE_EVENT_RECORDER_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include "engine/event.h"
#include "engine/time.h"

namespace rcsim {

// Where recorded events go (the API's events resource). Fire-and-forget, as client-go's broadcaster:
// a write that fails is dropped, never retried by the recorder; it must not block.
class EventSink {
 public:
  virtual ~EventSink() = default;
  // Creates `ev` (a name not used before), or with `update` replaces the event of that name (a
  // repeat: count, lastTimestamp and message changed). An update whose event is gone may create it.
  virtual void Write(const Event& ev, bool update) = 0;
};

struct EventRecorderOptions {
  std::string component = "replication-controller";  // source.component and reportingComponent
  int burst = 25;                                    // spam filter: events per object at once
  Duration refill = std::chrono::minutes(5);         // then one more per refill
  int similar_threshold = 10;                        // distinct messages before aggregating
  Duration similar_window = std::chrono::minutes(10);
  std::size_t max_tracked = 4096;  // objects and events remembered; past it the memory is cleared
};

class EventRecorder {
 public:
  // Neither pointer is owned; both must outlive the recorder.
  EventRecorder(EventRecorderOptions options, const Clock* clock, EventSink* sink);

  // Records one event about `object`; `type` is event_type::kNormal or kWarning.
  void Record(const ObjectReference& object, std::string_view type, std::string_view reason,
              std::string message);

  uint64_t recorded() const { return recorded_; }  // Record calls
  uint64_t written() const { return written_; }    // sink writes (creates and updates)
  uint64_t dropped() const { return dropped_; }    // refused by the spam filter

 private:
  struct Bucket {
    double tokens = 0;
    TimePoint last;
  };
  struct Similar {
    TimePoint first;
    std::set<std::string> messages;
  };

  bool TakeToken(const std::string& object_key, TimePoint now);
  std::string NewName(const std::string& object_name, TimePoint now);

  const EventRecorderOptions options_;
  const Clock* const clock_;
  EventSink* const sink_;
  std::map<std::string, Bucket> buckets_;   // by object
  std::map<std::string, Similar> similar_;  // by object, type and reason
  std::map<std::string, Event> seen_;       // by object, type, reason and message (or aggregate)
  int64_t last_name_nanos_ = 0;
  uint64_t recorded_ = 0;
  uint64_t written_ = 0;
  uint64_t dropped_ = 0;
};

}  // namespace rcsim

#endif  // RCSIM_ENGINE_EVENT_RECORDER_H_
