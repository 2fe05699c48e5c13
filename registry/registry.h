// The API server's logic over a Store: keys, resource versions, optimistic concurrency, validation,
// generateName, selectors, paging and watch translation for pods and replication controllers.
// Shared by the in-process client (fakes/inprocess_api_client.h) and the HTTP server.
//
// Layout in the store (as Kubernetes):
//   /registry/pods/<namespace>/<name>         a Pod
//   /registry/controllers/<namespace>/<name>  a ReplicationController
// Values are typed (Value(PodPtr)); values holding only bytes (a real etcd) are decoded with
// engine/codec.h. The stored object never carries metadata.resourceVersion: it is the key's
// mod_revision, set on every object the registry returns.
//
// Semantics follow the Kubernetes API server:
// - Create assigns uid, creationTimestamp, generation (1 for controllers), expands generateName and
//   fails with kAlreadyExists if the name is taken. Status given at creation is discarded.
// - Update has PUT semantics. A non-empty stale metadata.resourceVersion gives kConflict; an empty one
//   is unconditional. uid, creationTimestamp, name, namespace, generateName, deletionTimestamp and
//   .status are kept from storage. A controller's generation is bumped when its spec changes. A pod's
//   spec is immutable except spec.nodeName may be set once (binding) and container images may change.
//   An update that changes nothing writes nothing and returns the stored object.
// - UpdateStatus writes only .status, with the same concurrency rule.
// - Delete honours uid / resourceVersion preconditions (kConflict). As kube-apiserver: a pod bound to
//   a node and not terminated is deleted gracefully (deletionTimestamp = now + grace and
//   deletionGracePeriodSeconds = grace are set; a later Delete may only shorten the grace); grace 0,
//   an unbound or terminated pod, and every other kind go at once unless they have finalizers.
//   propagationPolicy sets the `orphan` / `foregroundDeletion` finalizers (default: Orphan for
//   replication controllers, Background otherwise). An object with finalizers stays with
//   deletionTimestamp set; the update that removes its last finalizer (grace period 0) deletes it.
//   Returns the object as deleted, or as now stored when it stays.
// - List and Watch filter by label selector and by field selector (ListOptions.fields); a field the
//   resource does not support gives kBadRequest. Pods: metadata.name, metadata.namespace,
//   spec.nodeName, spec.restartPolicy, status.phase, status.podIP; controllers: metadata.name,
//   metadata.namespace, status.replicas; nodes: metadata.name, spec.unschedulable.
// - Watch: see ResourceRegistry::Watch.
//
// Thread-safety: every method may be called from any thread concurrently. Watch callbacks run on the
// store's watch thread (or inline inside Watch() for the initial ADDED events), in order, never
// concurrently for one watch.
#ifndef RCSIM_REGISTRY_REGISTRY_H_
#define RCSIM_REGISTRY_REGISTRY_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/api_client.h"
#include "engine/mutex.h"
#include "engine/node_types.h"
#include "engine/rng.h"
#include "engine/status.h"
#include "engine/store.h"
#include "engine/time.h"
#include "engine/types.h"

namespace rcsim {

// A live registry watch; destroying it stops the watch (no callback runs after the destructor returns).
class RegistryWatch {
 public:
  virtual ~RegistryWatch() = default;
};

// Receives one line per notable event the registry handles without failing the request (a stored
// value that does not decode and was skipped). Called from any thread, concurrently.
using RegistryLog = std::function<void(std::string_view line)>;

// Shared by the registries of one Registry: the clock and the guarded Rng.
class RegistryContext {
 public:
  RegistryContext(Store* store, Clock* clock, Rng* rng) : store_(store), clock_(clock), rng_(rng) {}

  // A stored value under `key` did not decode (`why`) and was left out of a list or a watch: counted
  // in malformed_values() and logged. kube-apiserver likewise reports and skips such objects.
  void ReportMalformed(const std::string& key, const Status& why);
  uint64_t malformed_values() const { return malformed_values_.load(std::memory_order_relaxed); }
  // Set before the registry is used concurrently (the apiserver sets it at start-up).
  void set_log(RegistryLog log) { log_ = std::move(log); }

  Store* store() const { return store_; }
  TimePoint Now() const { return clock_->Now(); }
  // "8-4-4-4-12" lowercase hex, version-4 shaped.
  std::string NewUid();
  // `n` characters from Kubernetes' generateName alphabet "bcdfghjklmnpqrstvwxz2456789".
  std::string RandomSuffix(int n);

 private:
  Store* const store_;
  Clock* const clock_;
  Mutex rng_mu_;
  Rng* const rng_ PT_GUARDED_BY(rng_mu_);
  std::atomic<uint64_t> malformed_values_{0};
  RegistryLog log_;  // written only before concurrent use
};

// One resource type; T is Pod, ReplicationController or Node (explicitly instantiated in
// registry.cc). Nodes are cluster-scoped: their namespace argument is ignored (pass "").
template <typename T>
class ResourceRegistry {
 public:
  using Ptr = std::shared_ptr<const T>;
  using EventCallback = std::function<void(const ApiWatchEvent<T>&)>;

  explicit ResourceRegistry(RegistryContext* ctx);
  ResourceRegistry(const ResourceRegistry&) = delete;
  ResourceRegistry& operator=(const ResourceRegistry&) = delete;

  Result<Ptr> Get(const std::string& ns, const std::string& name);
  // ns "" lists all namespaces. Items are in key order (namespace, then name); resource_version is
  // the store revision the list (and every page of a continued list) was read at. A continue token
  // whose revision has been compacted, or is newer than the store's (forged), gives kGone. A stored
  // value that does not decode is left out (reported through ReportMalformed), never fatal.
  Result<ObjectList<T>> List(const std::string& ns, const ListOptions& opts);
  Result<Ptr> Create(const std::string& ns, T object);
  // dry_run (?dryRun=All): every check and rule of the update applies and the result is what it
  // would store, at the stored resourceVersion; nothing is written.
  Result<Ptr> Update(T object, bool dry_run = false);
  Result<Ptr> UpdateStatus(T object, bool dry_run = false);
  // Delete sets deletionTimestamp (and the finalizers of opts.propagation_policy); the object goes
  // from the store once its grace period is 0 and no finalizer is left, and the result is then the
  // last state, else the object as now stored.
  Result<Ptr> Delete(const std::string& ns, const std::string& name, const DeleteOptions& opts);
  // ResourceClient::PatchOwnerReferences: a GuaranteedUpdate of the ownerReferences alone, whatever
  // the stored resourceVersion; a different uid is kInvalid (metadata.uid is immutable), an empty one
  // kBadRequest. Changing nothing writes nothing (the stored object is returned).
  Result<Ptr> PatchOwnerReferences(const std::string& ns, const std::string& name,
                                   const OwnerReferencePatch& patch);
  // Delete, also telling whether the deleted value was undecodable. Such a value is still deleted
  // (that is how an operator gets rid of it): `object` then holds only the name, namespace and
  // resourceVersion (of the deleted revision), and `decode_error` says why it did not decode (Delete
  // returns that minimal object). A uid precondition cannot be checked on it: kConflict.
  struct DeleteOutcome {
    Ptr object;
    Status decode_error;  // non-OK: the stored value did not decode
  };
  Result<DeleteOutcome> DeleteReporting(const std::string& ns, const std::string& name,
                                        const DeleteOptions& opts);

  // Watches objects of namespace `ns` ("" = all) matching `opts` (label selector and metadata.name;
  // limit/continue are ignored) after `resource_version`. "" or "0": first one ADDED per current
  // object (delivered inline, before Watch returns), then every change after that list's revision.
  // A change that makes an object stop matching is DELETED (the last matching state), one that
  // makes it start matching is ADDED. If `resource_version` has been compacted the callback gets one
  // kError event with kGone and the watch ends; any store error likewise ends it with one kError.
  // A resource_version newer than the store's revision (a forged or restored one) is kGone too,
  // returned: the client must re-list. A stored value that does not decode is skipped (reported
  // through ReportMalformed); if the object matched before, its last good state is DELETED.
  // Errors in the arguments (malformed resource_version) are returned, not delivered.
  // on_event runs with the watch's delivery lock held: it must not destroy this watch (hand the
  // event to an executor instead, as InProcessApiClient does). Watches must not outlive the registry.
  Result<std::unique_ptr<RegistryWatch>> Watch(const std::string& ns, const ListOptions& opts,
                                               const std::string& resource_version, EventCallback on_event);

  // Whether `obj` is one a list or watch with `opts` returns: its metadata.name, label selector and
  // field selectors (limit, continue and resourceVersion aside).
  static bool Matches(const T& obj, const ListOptions& opts);
  // kBadRequest naming the first field selector term of `opts` the resource does not support.
  static Status CheckFieldSelector(const ListOptions& opts);
  // The value of a field selectors may name (a pod's spec.nodeName, status.phase, ...); nullopt for
  // a field the resource does not support.
  static std::optional<std::string> Field(const T& obj, std::string_view field);

  // The object of a stored value without resourceVersion: the typed object shared, or bytes decoded
  // (kInternal if they do not decode).
  Result<Ptr> Stored(const Value& value, const std::string& key);
  // Stored for a kv: the object this registry wrote, read or delivered at (kv.key, kv.mod_revision)
  // when still cached, so a kind stored as bytes (nodes) is decoded once per write, not once per read
  // and per watcher (as kube-apiserver's watch cache decodes once).
  Result<Ptr> StoredAt(const KeyValue& kv);
  // `stored` with resourceVersion = revision. With `cache`, the copy is shared through a bounded
  // cache keyed by (key, revision), so one write is copied once, not once per reader or watcher;
  // only pass cache=true when `stored` is the object the key held at `revision` (or was deleted at).
  // The cache holds at most cache_budget() bytes of objects (ApproxObjectBytes) per resource.
  Ptr WithRevision(const std::string& key, const Ptr& stored, int64_t revision, bool cache);
  // The object of a stored kv with resourceVersion = its mod_revision.
  Result<Ptr> FromKv(const KeyValue& kv);
  RegistryContext* context() const { return ctx_; }
  // What the result cache holds now (ApproxObjectBytes), for tests and memory accounting.
  std::size_t cached_bytes();
  // How many slots the result cache has now (16, doubling with use up to 4,096), for tests.
  std::size_t cache_slots();
  // The result cache's byte budget (kDefaultCacheBudget, 64 MiB: unbounded, 400 cached 1 MB pods once
  // left the apiserver at 805 MB with no pod stored); an object over a sixteenth of it is not cached.
  // Lowering it evicts down to the new budget. Tests set a small one to reach the bound with small objects.
  static constexpr std::size_t kDefaultCacheBudget = std::size_t{64} << 20;
  std::size_t cache_budget();
  void set_cache_budget(std::size_t bytes);

  // Read-modify-write of one key, as Kubernetes' GuaranteedUpdate. `mutate` builds the new object
  // from the stored one (which has no resourceVersion) or fails; it may be called again after a
  // race. The update rules then apply to its result as to Update's: uid, creationTimestamp,
  // generateName and deletion fields are restored from storage, a controller's generation is bumped
  // if its spec changed (a selector left empty is defaulted), a pod's spec may only change as
  // ValidatePodUpdate allows, and the whole object (status included) is validated. A result equal to
  // the stored object writes nothing. `expected_rv` is the caller's resourceVersion: when set and
  // stale, kConflict; when empty, a race re-reads and retries. dry_run: as Update's.
  Result<Ptr> GuaranteedUpdate(const std::string& ns, const std::string& name, const std::string& expected_rv,
                               const std::function<Result<std::shared_ptr<T>>(const T& stored)>& mutate,
                               bool dry_run = false);

 private:
  // One write seen by this registry: what `key` held at `revision` (deleted at, for a DELETE event).
  struct CacheSlot {
    std::string key;
    int64_t revision = 0;   // 0: empty slot
    Ptr stored;             // without resourceVersion
    Ptr object;             // `stored` with resourceVersion = revision
    std::size_t bytes = 0;  // ApproxObjectBytes of both, counted in cache_bytes_
  };
  std::size_t SlotIndex(std::string_view key, int64_t revision) const REQUIRES(cache_mu_);
  // Frees slots in slot order (a clock hand) until `incoming` more bytes fit in the budget.
  void EvictOverBudget(std::size_t incoming) REQUIRES(cache_mu_);
  // What deleting `kv` removed: its object, or a minimal one (name and namespace from the key) and
  // the decode error when its value does not decode.
  DeleteOutcome DeletedOutcome(const KeyValue& kv, int64_t revision);
  // The stored object `key` held at `revision`, if still cached.
  Ptr CachedStored(const std::string& key, int64_t revision);
  enum class Attempt {
    kDone,        // the result stands
    kRaced,       // the key was written since `revision` (the result is a conflict)
    kUnverified,  // the result relied on `revision` being current, which was not checked
  };
  // One GuaranteedUpdate attempt: `mutate` on `stored` (what `key` held at `revision`, known to be
  // current when `verified`), the update rules, then a Txn conditional on that revision.
  Result<Ptr> TryUpdate(const std::string& key, const std::string& name, const Ptr& stored, int64_t revision,
                        bool verified,
                        const std::function<Result<std::shared_ptr<T>>(const T& stored)>& mutate,
                        Attempt* attempt, bool dry_run = false);

  RegistryContext* const ctx_;

  Mutex cache_mu_;
  // Direct-mapped by (key, revision). It starts at 16 slots and doubles (emptied) at each collision
  // with a live entry, up to 4,096; from then on a collision evicts, and so does the byte budget (in
  // slot order from cache_hand_).
  std::vector<CacheSlot> cache_ GUARDED_BY(cache_mu_);
  std::size_t cache_bytes_ GUARDED_BY(cache_mu_) = 0;
  std::size_t cache_hand_ GUARDED_BY(cache_mu_) = 0;
  std::size_t cache_budget_ GUARDED_BY(cache_mu_) = kDefaultCacheBudget;
};

template <typename T>
class WatchCache;  // registry/watch_cache.h

class Registry {
 public:
  // None of the pointers is owned; all must outlive the Registry.
  Registry(Store* store, Clock* clock, Rng* rng);
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  ResourceRegistry<Pod>& pods() { return pods_; }
  ResourceRegistry<ReplicationController>& controllers() { return controllers_; }
  // Where skipped malformed values are logged (none by default); set before concurrent use.
  void set_log(RegistryLog log) { ctx_.set_log(std::move(log)); }
  // Stored values skipped by lists and watches because they did not decode, since start.
  uint64_t malformed_values() const { return ctx_.malformed_values(); }
  // The store, clock and uid source, for resources served beside pods and controllers (namespaces).
  RegistryContext& context() { return ctx_; }
  ResourceRegistry<Node>& nodes() { return nodes_; }

  // The watch caches of pods and controllers (registry/watch_cache.h): one store watch per resource,
  // fanned out to every client watch of both worlds (the HTTP server's and the in-process client's),
  // and lists with resourceVersion=0. Nodes are watched through the registry (few, rarely written).
  WatchCache<Pod>& pod_cache() { return *pod_cache_; }
  WatchCache<ReplicationController>& controller_cache() { return *controller_cache_; }
  // Starts both caches now rather than on first use, as kube-apiserver does at startup, so that a
  // client that listed before the first watch is served by them too. A failure (the store is down)
  // is returned; the caches then start on first use.
  Status StartWatchCaches();

  // The pods/binding subresource: sets spec.nodeName of an unbound pod and PodScheduled=True.
  // kConflict if the pod is bound already, being deleted, or binding.metadata.uid (when set) differs;
  // kInvalid for a malformed binding; kNotFound if the pod does not exist.
  Result<PodPtr> BindPod(const std::string& ns, const Binding& binding);

  // The /scale subresource of a controller. status_selector is FormatSelectorMap(spec.selector).
  Result<Scale> GetScale(const std::string& ns, const std::string& name);
  // Sets spec.replicas (bumping generation if it changed); scale.metadata.resourceVersion, when set,
  // must be current (kConflict otherwise). dry_run: checked and answered as a real one, not stored.
  Result<Scale> UpdateScale(const std::string& ns, const std::string& name, const Scale& scale,
                            bool dry_run = false);

 private:
  RegistryContext ctx_;
  ResourceRegistry<Pod> pods_;
  ResourceRegistry<ReplicationController> controllers_;
  ResourceRegistry<Node> nodes_;
  // After the registries they serve: destroyed first.
  std::unique_ptr<WatchCache<Pod>> pod_cache_;
  std::unique_ptr<WatchCache<ReplicationController>> controller_cache_;
};

// Store keys: "/registry/pods/" + ns + "/" + name, and the prefixes ("/registry/pods/" for ns "").
std::string PodKey(std::string_view ns, std::string_view name);
std::string ControllerKey(std::string_view ns, std::string_view name);
std::string PodPrefix(std::string_view ns);
std::string ControllerPrefix(std::string_view ns);
// Nodes: "/registry/minions/" + name (as Kubernetes).
std::string NodeKey(std::string_view name);
std::string NodePrefix();

// A resourceVersion (a decimal revision >= 0); kBadRequest if malformed.
Result<int64_t> ParseResourceVersion(std::string_view rv);

}  // namespace rcsim

#endif  // RCSIM_REGISTRY_REGISTRY_H_
