#include "engine/event.h"

#include "engine/codec.h"

namespace rcsim {

ObjectReference ReferenceTo(const ReplicationController& rc) {
  ObjectReference ref;
  ref.kind = "ReplicationController";
  ref.namespace_ = rc.metadata.namespace_;
  ref.name = rc.metadata.name;
  ref.uid = rc.metadata.uid;
  ref.resource_version = rc.metadata.resource_version;
  return ref;
}

nlohmann::json EventToJson(const Event& ev) {
  nlohmann::json involved = {{"kind", ev.involved_object.kind},
                             {"namespace", ev.involved_object.namespace_},
                             {"name", ev.involved_object.name},
                             {"apiVersion", ev.involved_object.api_version}};
  if (!ev.involved_object.uid.empty()) involved["uid"] = ev.involved_object.uid;
  if (!ev.involved_object.resource_version.empty()) {
    involved["resourceVersion"] = ev.involved_object.resource_version;
  }
  nlohmann::json j = {{"kind", "Event"},
                      {"apiVersion", "v1"},
                      {"metadata", ObjectMetaToJson(ev.metadata)},
                      {"involvedObject", std::move(involved)},
                      {"reason", ev.reason},
                      {"message", ev.message},
                      {"type", ev.type},
                      {"count", ev.count},
                      {"source", {{"component", ev.source_component}}},
                      {"reportingComponent", ev.source_component},
                      {"reportingInstance", ""}};
  if (ev.first_timestamp) j["firstTimestamp"] = FormatRfc3339(*ev.first_timestamp);
  if (ev.last_timestamp) j["lastTimestamp"] = FormatRfc3339(*ev.last_timestamp);
  return j;
}

}  // namespace rcsim
