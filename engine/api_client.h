// The ApiClient port: the Kubernetes-style API the manager talks to (pods and replication
// controllers). Implemented in-process over the shared registry (fakes/inprocess_api_client.h) and over
// HTTP (backends/http_api_client.h); one contract suite (tests/contract/api_contract.h) runs against both.
//
// Contract:
// - Every call is asynchronous: `done` runs exactly once, never inline inside the call, possibly on
//   another thread. Callers that need a single thread (the engine) hop back to their Executor.
// - Code::kTimeout means the outcome is unknown: the write may or may not have been applied.
// - Objects returned carry metadata.resourceVersion (the store revision of their last write).
// - Update fails with kConflict when metadata.resourceVersion is set and stale; an empty
//   resourceVersion means "unconditional". UpdateStatus writes only .status (and bumps nothing else).
// - Watch delivers ADDED/MODIFIED/DELETED for objects matching the selector, starting after
//   resource_version ("" or "0": start with ADDED for every current object, then changes). An object
//   whose labels stop matching is delivered as DELETED, one that starts matching as ADDED. If the
//   version was compacted, the watch delivers one kError event with Code::kGone and ends; the caller
//   re-lists. kError with other codes also ends the watch.
#ifndef RCSIM_ENGINE_API_CLIENT_H_
#define RCSIM_ENGINE_API_CLIENT_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/labels.h"
#include "engine/status.h"
#include "engine/types.h"

namespace rcsim {

template <typename T>
using Callback = std::function<void(T)>;

// The API verbs, for fault injection, metrics and call budgets.
enum class Verb { kGet, kList, kWatch, kCreate, kUpdate, kPatch, kDelete };
const char* VerbName(Verb verb);  // "get", "list", ...

// One term of a fieldSelector: `field` = value (or != when !equal). engine/field_selector.h parses and
// formats them; the registry says which fields each resource supports (kBadRequest otherwise).
struct FieldRequirement {
  std::string field;  // "spec.nodeName", "status.phase", "metadata.namespace", "metadata.name"
  bool equal = true;  // false: !=
  std::string value;
  bool operator==(const FieldRequirement&) const = default;
};

// How a list's resource_version is read (resourceVersionMatch). kNotOlderThan (the default) serves the
// latest state, whatever resource_version says; kExact serves the state at exactly resource_version (a
// revision, not "" or "0", and not with a continue token: kBadRequest), kGone if it was compacted.
enum class ResourceVersionMatch { kNotOlderThan, kExact };

struct ListOptions {
  LabelSelector label_selector;
  std::string field_name;                // fieldSelector metadata.name=<field_name>; empty: any
  std::vector<FieldRequirement> fields;  // further fieldSelector terms; all must hold
  int64_t limit = 0;                     // 0: no limit
  std::string continue_token;
  std::string resource_version;  // lists only (a watch takes its own); see ResourceVersionMatch
  ResourceVersionMatch resource_version_match = ResourceVersionMatch::kNotOlderThan;
};

template <typename T>
struct ObjectList {
  std::string resource_version;                 // the store revision the list was served at
  std::vector<std::shared_ptr<const T>> items;  // sorted by namespace, then name
  std::string continue_token;                   // non-empty when `limit` cut the list
};

template <typename T>
struct ApiWatchEvent {
  enum class Type { kAdded, kModified, kDeleted, kBookmark, kError };
  Type type = Type::kAdded;
  std::shared_ptr<const T> object;  // the new object; for kDeleted, the last state
  Status error;                     // for kError
};

class ApiWatch {
 public:
  virtual ~ApiWatch() = default;  // stops the watch; no callback runs after the destructor returns
};

// Deletion follows kube-apiserver: a pod bound to a node is deleted gracefully (deletionTimestamp and
// deletionGracePeriodSeconds are set; its node agent finishes the deletion with grace 0); an unbound or
// terminated pod, and every other kind, goes at once unless it has finalizers, in which case it stays
// with deletionTimestamp set until the last finalizer is removed by an update.
struct DeleteOptions {
  DeleteOptions() = default;
  // The preconditions only (what DeleteOptions{uid, rv} meant before the other fields existed).
  DeleteOptions(std::string uid, std::string resource_version)
      : precondition_uid(std::move(uid)), precondition_resource_version(std::move(resource_version)) {}

  std::string precondition_uid;  // if set, delete only if the object still has this uid
  std::string precondition_resource_version;
  // Pods only: nullopt takes spec.terminationGracePeriodSeconds (default 30); 0 deletes at once.
  std::optional<int64_t> grace_period_seconds;
  // "" (the resource's default: Orphan for replication controllers, Background otherwise),
  // "Orphan" (adds the `orphan` finalizer), "Background", "Foreground" (adds `foregroundDeletion`).
  std::string propagation_policy;
  // dryRun=All: checked (existence, preconditions) and answered with the object as the deletion would
  // leave it, but nothing is written.
  bool dry_run = false;
};

// One resource type (namespace "" in List/Watch means all namespaces).
// A change of metadata.ownerReferences alone, as a controller adopts or releases an object: applied to
// the object as stored now, whatever its resourceVersion (no conflict with a writer of other
// fields), if it still has `uid`. Over HTTP it is the strategic merge patch upstream's controllers
// send: {"metadata":{"ownerReferences":[<add>],"uid":<uid>}}, and a {"$patch":"delete","uid":...}
// entry to remove. Adding a reference replaces the one with the same uid (adding twice is one
// reference); removing a reference that is not there changes nothing. A different uid (the object
// was replaced) or a second controller reference is kInvalid (422), as kube-apiserver answers.
struct OwnerReferencePatch {
  std::string uid;                    // the object's uid; required
  std::optional<OwnerReference> add;  // set: add (or replace) this reference
  std::string remove_uid;             // non-empty: remove the reference to this owner
};

// What a list+watch cache (cluster/object_cache.h) needs of a resource: the reads. Every
// ResourceClient is one, and so is the LeaseClient (engine/cluster_api.h).
template <typename T>
class ListWatchClient {
 public:
  virtual ~ListWatchClient() = default;
  virtual void List(const std::string& ns, const ListOptions& opts, Callback<Result<ObjectList<T>>> done) = 0;
  // Events after `resource_version` (or, when it is "" or "0", an ADDED event per object listed
  // first); a kError event (kGone after a compaction) ends the watch.
  virtual std::unique_ptr<ApiWatch> Watch(const std::string& ns, const ListOptions& opts,
                                          const std::string& resource_version,
                                          std::function<void(const ApiWatchEvent<T>&)> on_event) = 0;
};

template <typename T>
class ResourceClient : public ListWatchClient<T> {
 public:
  using Ptr = std::shared_ptr<const T>;

  virtual void Get(const std::string& ns, const std::string& name, Callback<Result<Ptr>> done) = 0;
  virtual void Create(const std::string& ns, T object, Callback<Result<Ptr>> done) = 0;
  virtual void Update(T object, Callback<Result<Ptr>> done) = 0;
  virtual void UpdateStatus(T object, Callback<Result<Ptr>> done) = 0;
  virtual void Delete(const std::string& ns, const std::string& name, const DeleteOptions& opts,
                      Callback<Result<Ptr>> done) = 0;
  // Counted as a kPatch call.
  virtual void PatchOwnerReferences(const std::string& ns, const std::string& name,
                                    const OwnerReferencePatch& patch, Callback<Result<Ptr>> done) = 0;
};

// A ResourceClient that passes every call to `inner`: the base of wrappers that change a few
// calls (an index serving some lists and watches, a lagging watch) and forward the rest.
template <typename T>
class ForwardingResourceClient : public ResourceClient<T> {
 public:
  using Ptr = typename ResourceClient<T>::Ptr;
  explicit ForwardingResourceClient(ResourceClient<T>* inner) : inner_(inner) {}

  void Get(const std::string& ns, const std::string& name, Callback<Result<Ptr>> done) override {
    inner_->Get(ns, name, std::move(done));
  }
  void List(const std::string& ns, const ListOptions& opts, Callback<Result<ObjectList<T>>> done) override {
    inner_->List(ns, opts, std::move(done));
  }
  void Create(const std::string& ns, T object, Callback<Result<Ptr>> done) override {
    inner_->Create(ns, std::move(object), std::move(done));
  }
  void Update(T object, Callback<Result<Ptr>> done) override {
    inner_->Update(std::move(object), std::move(done));
  }
  void UpdateStatus(T object, Callback<Result<Ptr>> done) override {
    inner_->UpdateStatus(std::move(object), std::move(done));
  }
  void Delete(const std::string& ns, const std::string& name, const DeleteOptions& opts,
              Callback<Result<Ptr>> done) override {
    inner_->Delete(ns, name, opts, std::move(done));
  }
  void PatchOwnerReferences(const std::string& ns, const std::string& name, const OwnerReferencePatch& patch,
                            Callback<Result<Ptr>> done) override {
    inner_->PatchOwnerReferences(ns, name, patch, std::move(done));
  }
  std::unique_ptr<ApiWatch> Watch(const std::string& ns, const ListOptions& opts,
                                  const std::string& resource_version,
                                  std::function<void(const ApiWatchEvent<T>&)> on_event) override {
    return inner_->Watch(ns, opts, resource_version, std::move(on_event));
  }

 protected:
  ResourceClient<T>* inner() const { return inner_; }

 private:
  ResourceClient<T>* const inner_;
};

class ApiClient {
 public:
  virtual ~ApiClient() = default;
  virtual ResourceClient<Pod>& pods() = 0;
  virtual ResourceClient<ReplicationController>& controllers() = 0;
};

}  // namespace rcsim

#endif  // RCSIM_ENGINE_API_CLIENT_H_
