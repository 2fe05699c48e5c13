// Watches over objects stored as JSON under a key prefix (namespaces, events), as kube-apiserver's
// watch serves them: every change after a revision, as ADDED / MODIFIED / DELETED events whose object
// carries its resourceVersion (a deleted object's last stored state), and, when the store ends the
// watch, an ERROR event with a Status (410 Expired after a compaction) before the end. A value that
// does not decode is skipped (lists skip and report it).
//
// Thread-safety: the callbacks run on the store's watch thread, in order, never concurrently.
#ifndef RCSIM_REGISTRY_JSON_WATCH_H_
#define RCSIM_REGISTRY_JSON_WATCH_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/store.h"
#include "registry/registry.h"

namespace rcsim {

// `obj` with metadata.resourceVersion = revision.
nlohmann::json WithVersion(nlohmann::json obj, int64_t revision);

// Called per change with the key, the event type (preset: ADDED for a key's creation, MODIFIED, DELETED;
// may be changed) and the object; false skips the change.
using JsonWatchFilter =
    std::function<bool(const std::string& key, std::string* type, nlohmann::json* object)>;

// Watches `prefix` from after `after_revision`.
std::unique_ptr<RegistryWatch> StartJsonWatch(Store* store, const std::string& prefix, int64_t after_revision,
                                              JsonWatchFilter filter,
                                              std::function<void(const nlohmann::json& event)> on_event,
                                              std::function<void()> on_end);

}  // namespace rcsim

#endif  // RCSIM_REGISTRY_JSON_WATCH_H_
