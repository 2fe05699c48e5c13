// core/v1 Event: what a controller records about an object (kubectl describe and kubectl get events
// show them), with its JSON encoding in the wire shape. Only the fields a recorder sets are modelled;
// the API server stores events it is sent as JSON, whatever they hold (registry/event_registry.h).
#ifndef RCSIM_ENGINE_EVENT_H_
#define RCSIM_ENGINE_EVENT_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "engine/time.h"
#include "engine/types.h"

namespace rcsim {

// core/v1 ObjectReference: the object an event is about.
struct ObjectReference {
  std::string kind;
  std::string namespace_;
  std::string name;
  std::string uid;
  std::string api_version = "v1";
  std::string resource_version;
  bool operator==(const ObjectReference&) const = default;
};

namespace event_type {
inline constexpr const char* kNormal = "Normal";
inline constexpr const char* kWarning = "Warning";
}  // namespace event_type

struct Event {
  ObjectMeta metadata;  // name and namespace (the involved object's)
  ObjectReference involved_object;
  std::string reason;   // "SuccessfulCreate", "FailedCreate", ...
  std::string message;  // for people: "Created pod: web-x7k2p"
  std::string type = event_type::kNormal;
  std::string source_component;  // also reportingComponent
  std::optional<TimePoint> first_timestamp;
  std::optional<TimePoint> last_timestamp;
  int32_t count = 1;
  bool operator==(const Event&) const = default;
};

// The reference an event about `rc` carries.
ObjectReference ReferenceTo(const ReplicationController& rc);

// The Event as the API serves it (kind, apiVersion, metadata, involvedObject, reason, message, type,
// source, reportingComponent, firstTimestamp, lastTimestamp, count).
nlohmann::json EventToJson(const Event& ev);

}  // namespace rcsim

#endif  // RCSIM_ENGINE_EVENT_H_
