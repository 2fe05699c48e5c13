#include "engine/event_recorder.h"

#include <algorithm>
#include <cstdio>
#include <utility>

namespace rcsim {
namespace {

constexpr const char* kCombined = "(combined from similar events): ";

std::string ObjectKey(const ObjectReference& o) {
  return o.kind + "/" + o.namespace_ + "/" + o.name + "/" + o.uid;
}

int64_t UnixNanos(TimePoint t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

}  // namespace

EventRecorder::EventRecorder(EventRecorderOptions options, const Clock* clock, EventSink* sink)
    : options_(std::move(options)), clock_(clock), sink_(sink) {}

bool EventRecorder::TakeToken(const std::string& object_key, TimePoint now) {
  auto [it, inserted] = buckets_.try_emplace(object_key);
  Bucket& b = it->second;
  if (inserted) {
    b.tokens = options_.burst;
  } else if (options_.refill > Duration::zero() && now > b.last) {
    const double refilled =
        std::chrono::duration<double>(now - b.last) / std::chrono::duration<double>(options_.refill);
    b.tokens = std::min<double>(options_.burst, b.tokens + refilled);
  }
  b.last = now;
  if (b.tokens < 1) return false;
  b.tokens -= 1;
  return true;
}

std::string EventRecorder::NewName(const std::string& object_name, TimePoint now) {
  last_name_nanos_ = std::max(UnixNanos(now), last_name_nanos_ + 1);
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%llx", static_cast<unsigned long long>(last_name_nanos_));
  return object_name + "." + hex;
}

void EventRecorder::Record(const ObjectReference& object, std::string_view type, std::string_view reason,
                           std::string message) {
  ++recorded_;
  const TimePoint now = clock_->Now();
  if (buckets_.size() > options_.max_tracked) buckets_.clear();
  if (similar_.size() > options_.max_tracked) similar_.clear();
  if (seen_.size() > options_.max_tracked) seen_.clear();
  const std::string object_key = ObjectKey(object);
  if (!TakeToken(object_key, now)) {
    ++dropped_;
    return;
  }
  const std::string similar_key = object_key + "/" + std::string(type) + "/" + std::string(reason);
  Similar& sim = similar_[similar_key];
  if (sim.messages.empty() || now - sim.first > options_.similar_window) {
    sim.first = now;
    sim.messages.clear();
  }
  sim.messages.insert(message);
  std::string dedup_key;
  if (static_cast<int>(sim.messages.size()) >= options_.similar_threshold) {
    message = kCombined + message;
    dedup_key = similar_key;  // every aggregated event updates one object
  } else {
    dedup_key = similar_key + "/" + message;
  }
  auto it = seen_.find(dedup_key);
  if (it != seen_.end()) {
    Event& ev = it->second;
    ev.count += 1;
    ev.last_timestamp = now;
    ev.message = std::move(message);
    ev.involved_object.resource_version = object.resource_version;
    ++written_;
    sink_->Write(ev, /*update=*/true);
    return;
  }
  Event ev;
  ev.metadata.name = NewName(object.name, now);
  ev.metadata.namespace_ = object.namespace_;
  ev.involved_object = object;
  ev.reason = std::string(reason);
  ev.message = std::move(message);
  ev.type = std::string(type);
  ev.source_component = options_.component;
  ev.first_timestamp = now;
  ev.last_timestamp = now;
  ev.count = 1;
  ++written_;
  sink_->Write(ev, /*update=*/false);
  seen_.emplace(std::move(dedup_key), std::move(ev));
}

}  // namespace rcsim
