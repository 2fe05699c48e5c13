#include "engine/types.h"

#include <nlohmann/json.hpp>

namespace rcsim {

UnknownFields::UnknownFields(nlohmann::json fields) {
  if (fields.is_object() && !fields.empty()) {
    fields_ = std::make_shared<const nlohmann::json>(std::move(fields));
  }
}

bool UnknownFields::operator==(const UnknownFields& other) const {
  if (fields_ == other.fields_) return true;
  if (fields_ == nullptr || other.fields_ == nullptr) return false;
  return *fields_ == *other.fields_;
}

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
