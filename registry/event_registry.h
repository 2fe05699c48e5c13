// The API server's logic for core/v1 Events over a Store, beside registry.h's pods and controllers.
//
// Layout: /registry/events/<namespace>/<name>, the Event as JSON bytes without resourceVersion (the
// key's mod_revision is the resourceVersion of every object returned), kept verbatim: an event
// carries whatever fields its client sent. Create assigns uid and creationTimestamp (kAlreadyExists
// if the name is taken); Update replaces the event (PUT; a non-empty stale resourceVersion is
// kConflict), keeping uid and creationTimestamp; List filters by the field selectors kubectl
// describe sends (involvedObject.kind/namespace/name/uid, reason, type, ...) and labels. A stored value
// that does not decode is left out of lists (reported through RegistryContext::ReportMalformed).
//
// RegistryEventSink writes an EventRecorder's events here directly: the simulation's manager records
// events into the same registry the in-process API serves, bypassing the faulted API client (events
// are best effort and are not API calls the scenarios budget). It writes them typed (Write): the
// stored value is the Event, whose JSON bytes (the same bytes Create would store) are encoded only if
// something reads them.
//
// Thread-safety: every method may be called from any thread (state lives in the store).
#ifndef RCSIM_REGISTRY_EVENT_REGISTRY_H_
#define RCSIM_REGISTRY_EVENT_REGISTRY_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "engine/event_recorder.h"
#include "engine/labels.h"
#include "engine/status.h"
#include "registry/registry.h"

namespace rcsim {

class EventRegistry {
 public:
  // Not owned; must outlive the registry.
  explicit EventRegistry(RegistryContext* ctx) : ctx_(ctx) {}

  Result<nlohmann::json> Create(const std::string& ns, nlohmann::json event);
  Result<nlohmann::json> Get(const std::string& ns, const std::string& name);
  Result<nlohmann::json> Update(const std::string& ns, const std::string& name, nlohmann::json event);
  // An EventRecorder's event, typed (RegistryEventSink): Create (update false) or Update of
  // ev.metadata's namespace and name, with the outcome and the stored bytes Create and Update give
  // EventToJson(ev), and no JSON built, parsed or encoded on the way (the stored value is the typed
  // event; its bytes are encoded when first read).
  Status Write(Event ev, bool update);
  // An EventList; ns "" lists every namespace. `fields` maps a selector field to the value it must
  // have (ParseEventFieldSelector).
  Result<nlohmann::json> List(const std::string& ns, const std::map<std::string, std::string>& fields,
                              const LabelSelector& labels);
  Result<nlohmann::json> Delete(const std::string& ns, const std::string& name);
  // Watches the events of `ns` ("" = all) that match `fields` and `labels`: from resource_version
  // ("" or "0": the current ones as ADDED first), as json_watch.h's watches (kubectl get events -w).
  // kBadRequest for a malformed resourceVersion.
  Result<std::unique_ptr<RegistryWatch>> Watch(const std::string& ns, const std::string& resource_version,
                                               const std::map<std::string, std::string>& fields,
                                               const LabelSelector& labels,
                                               std::function<void(const nlohmann::json& event)> on_event,
                                               std::function<void()> on_end);

 private:
  RegistryContext* const ctx_;
};

// "involvedObject.name=web,involvedObject.namespace=default" ("==" too); kBadRequest for another
// field or operator.
Result<std::map<std::string, std::string>> ParseEventFieldSelector(std::string_view selector);

std::string EventPrefix(std::string_view ns);  // "/registry/events/" for ns ""

class RegistryEventSink final : public EventSink {
 public:
  explicit RegistryEventSink(EventRegistry* events) : events_(events) {}
  void Write(const Event& ev, bool update) override;
  uint64_t failed() const { return failed_; }

 private:
  EventRegistry* const events_;
  uint64_t failed_ = 0;  // writes the registry refused (dropped, as events are best effort)
};

}  // namespace rcsim

#endif  // RCSIM_REGISTRY_EVENT_REGISTRY_H_
