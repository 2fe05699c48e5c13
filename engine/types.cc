#include "engine/types.h"

namespace rcsim {

const OwnerReference* ObjectMeta::ControllerRef() const {
  for (const auto& ref : owner_references) {
    if (ref.controller) return &ref;
  }
  return nullptr;
}

bool IsTerminated(const Pod& pod) {
  return pod.status.phase == phase::kSucceeded || pod.status.phase == phase::kFailed;
}

bool IsActive(const Pod& pod) { return !IsTerminated(pod) && !pod.metadata.deletion_timestamp; }

static const PodCondition* ReadyCondition(const Pod& pod) {
  for (const auto& c : pod.status.conditions) {
    if (c.type == "Ready") return &c;
  }
  return nullptr;
}

bool IsReady(const Pod& pod) {
  const PodCondition* c = ReadyCondition(pod);
  return c != nullptr && c->status == "True";
}

bool IsAvailable(const Pod& pod, int32_t min_ready_seconds, TimePoint now) {
  const PodCondition* c = ReadyCondition(pod);
  if (c == nullptr || c->status != "True") return false;
  if (min_ready_seconds <= 0) return true;
  if (!c->last_transition_time) return false;
  return *c->last_transition_time + std::chrono::seconds(min_ready_seconds) <= now;
}

bool IsRunningAndReady(const Pod& pod) { return pod.status.phase == phase::kRunning && IsReady(pod); }

std::string KeyOf(const ObjectMeta& meta) { return meta.namespace_ + "/" + meta.name; }

}  // namespace rcsim
