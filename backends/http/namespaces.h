// core/v1 Namespaces for the HTTP API server, stored as JSON under /registry/namespaces/<name>, and the
// NamespaceLifecycle admission rule: objects may be created only in a namespace that exists.
//
// "default", "kube-system", "kube-public" and "kube-node-lease" exist implicitly (kube-apiserver
// creates them at start): they are listed and served even when never stored, and cannot be deleted.
// Deleting a namespace deletes every pod and replication controller in it, then the namespace (at once:
// there is no Terminating phase to wait through).
//
// Thread-safety: every method may be called from any thread (state lives in the store).
#ifndef RCSIM_BACKENDS_HTTP_NAMESPACES_H_
#define RCSIM_BACKENDS_HTTP_NAMESPACES_H_

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/status.h"
#include "registry/registry.h"

namespace rcsim {

class Namespaces {
 public:
  explicit Namespaces(Registry* registry) : registry_(registry) {}

  Result<nlohmann::json> Get(const std::string& name);
  // A NamespaceList, by name, with the implicit namespaces; label selector applied.
  Result<nlohmann::json> List(const LabelSelector& selector);
  // dry_run: validated, checked for a name clash and answered, never stored.
  Result<nlohmann::json> Create(const nlohmann::json& body, bool dry_run = false);
  // opts: the uid and resourceVersion preconditions (409 if unmet) and dry_run (checked, answered as
  // Terminating, nothing deleted); grace period and propagation do not apply.
  Result<nlohmann::json> Delete(const std::string& name, const DeleteOptions& opts = {});
  // Replaces the metadata of namespace `name` with `body`'s (labels, annotations, finalizers,
  // ownerReferences), as kube-apiserver's namespace update strategy: spec and status stay as stored,
  // name, uid and creationTimestamp are immutable (422 if changed), the label
  // kubernetes.io/metadata.name is kept. A resourceVersion in `body` that is not the stored one is
  // kConflict. An implicit namespace never stored is stored by its first update. dry_run: answered,
  // not stored.
  Result<nlohmann::json> Update(const std::string& name, const nlohmann::json& body, bool dry_run = false);
  // A watch of the namespaces matching `selector` (and named `name`, if set): from resource_version
  // "" or "0", an ADDED for each listed (the implicit ones too) first; then ADDED, MODIFIED and DELETED
  // (the last state) from the store's watch. `on_event` gets {"type", "object"} (serially, from the
  // store's thread); a compacted revision is one ERROR event (410 Gone), then `on_end`. kBadRequest for
  // a malformed resource_version. Destroying the watch stops it.
  Result<std::unique_ptr<RegistryWatch>> Watch(const std::string& resource_version,
                                               const LabelSelector& selector, const std::string& name,
                                               std::function<void(const nlohmann::json& event)> on_event,
                                               std::function<void()> on_end);
  // kNotFound ('namespaces "x" not found') unless `name` exists.
  Status CheckExists(const std::string& name);

 private:
  Registry* const registry_;
};

bool IsImplicitNamespace(const std::string& name);

}  // namespace rcsim

#endif  // RCSIM_BACKENDS_HTTP_NAMESPACES_H_
