// GarbageCollector: ownerReference-based cascading deletion, as kube-controller-manager's, for the
// owners rcsim serves (replication controllers) and their dependents (pods).
//
// - Background: a dependent none of whose owners exists any more (an owner is absent when the API
//   says NotFound for its name or the object there has another uid) is deleted (uid precondition).
//   A dependent with some owners absent and some present loses the absent ownerReferences.
//   Owner kinds other than ReplicationController are assumed present.
// - Orphan: an owner with deletionTimestamp and the `orphan` finalizer has its ownerReference
//   removed from every dependent, then the finalizer removed (the registry then deletes it).
// - Foreground: an owner with deletionTimestamp and the `foregroundDeletion` finalizer has its
//   dependents deleted; once no dependent with blockOwnerDeletion=true is left (a pod still
//   terminating gracefully counts), the finalizer is removed.
// A cached dependent may be stale: deletes carry uid and resourceVersion preconditions, and an
// owner's finalizer goes only after a live list of its pods agrees with the cache.
// - Node-owned Leases (the node agents' heartbeats in kube-node-lease, owned by their Node as the
//   kubelet sets it): a Lease every ownerReference of which names a Node that no longer exists (NotFound,
//   or another uid there) is deleted (uid and resourceVersion preconditions). Leases have no watch:
//   they are listed when a Node is deleted, after each node list and on every resync. Only with a
//   ClusterApi.
// Work runs in passes posted to the executor after changes, and in a periodic resync
// (`resync_period`) that retries what failed. Absent owners are remembered by uid (uids are never
// reused), so a cascade costs one lookup per owner, not per dependent.
//
// Thread-safety: none; everything runs on the Executor's thread (see cluster/object_cache.h).
#ifndef RCSIM_CLUSTER_GARBAGE_COLLECTOR_H_
#define RCSIM_CLUSTER_GARBAGE_COLLECTOR_H_

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "cluster/object_cache.h"
#include "cluster/shared_caches.h"
#include "engine/api_client.h"
#include "engine/cluster_api.h"
#include "engine/executor.h"
#include "engine/time.h"
#include "engine/trace.h"

namespace rcsim {

struct GarbageCollectorOptions {
  Duration resync_period = std::chrono::seconds(30);
};

struct GarbageCollectorCounters {
  uint64_t dependents_deleted = 0;
  uint64_t references_removed = 0;
  uint64_t finalizers_removed = 0;
  uint64_t owner_lookups = 0;
  uint64_t leases_deleted = 0;
};

class GarbageCollector {
 public:
  // `cluster` may be null: then Leases are not collected. `caches` (not owned, outlives the collector)
  // are the process's shared caches; null: the collector makes its own.
  GarbageCollector(GarbageCollectorOptions options, ApiClient* api, ClusterApi* cluster, Executor* executor,
                   TraceSink* trace, SharedCaches* caches = nullptr);
  ~GarbageCollector();
  GarbageCollector(const GarbageCollector&) = delete;
  GarbageCollector& operator=(const GarbageCollector&) = delete;

  void Start();
  const GarbageCollectorCounters& counters() const { return counters_; }

 private:
  enum class Owner { kUnknown, kPresent, kAbsent };

  void OnController(const ControllerPtr& rc);
  void OnControllerGone(const ControllerPtr& rc);
  void OnPod(const PodPtr& old_pod, const PodPtr& pod);
  void OnPodGone(const PodPtr& pod);
  void IndexPod(const PodPtr& pod, bool add);
  void Post();
  void Pass();
  void Resync();
  void ProcessOwner(const std::string& uid);
  void ProcessDependent(const std::string& key);
  Owner OwnerState(const std::string& ns, const OwnerReference& ref);
  bool HasOwnerNotPresent(const Pod& pod);  // what ProcessDependent would act on (or look up)
  void LookUpOwner(const std::string& ns, const OwnerReference& ref);
  void RemoveReferences(const PodPtr& pod, const std::set<std::string>& uids);
  // Removes the finalizer once a live list (not only the cache, whose pod watch may lag behind the
  // controller watch) shows no dependent left (Orphan) or none blocking (Foreground).
  void RemoveFinalizerIfNoDependents(const ControllerPtr& rc, const char* finalizer);
  void RemoveFinalizer(const ControllerPtr& rc, const char* finalizer);
  void DeleteDependent(const PodPtr& pod);
  // The cached pod `key` is newer than `resource_version` (a write from that version conflicted).
  bool CacheMovedOn(const std::string& key, const std::string& resource_version) const;
  void Trace(const std::string& event);
  // Lists the node Leases and deletes those whose Node owners are all gone (one pass at a time; a
  // pass asked for meanwhile runs after it).
  void CollectLeases();
  void CollectLease(const LeasePtr& lease);
  void DeleteLease(const LeasePtr& lease);

  const GarbageCollectorOptions options_;
  ApiClient* const api_;
  ClusterApi* const cluster_;
  Executor* const executor_;
  TraceSink* const trace_;

  std::map<std::string, std::string> rc_by_uid_;             // uid -> key
  std::map<std::string, std::set<std::string>> dependents_;  // owner uid -> pod keys
  std::set<std::string> absent_;                             // owner uids known gone
  std::set<std::string> looking_up_;                         // owner uids being looked up
  std::set<std::string> dirty_owners_;                       // owner uids
  std::set<std::string> dirty_pods_;                         // pod keys
  std::set<std::string> in_flight_;                          // object keys with a write in flight
  bool posted_ = false;
  bool leases_listing_ = false;  // a lease list in flight
  bool leases_again_ = false;    // another lease pass asked for while one was in flight
  GarbageCollectorCounters counters_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  std::unique_ptr<SharedCaches> own_caches_;  // when given none
  SharedCaches* caches_ = nullptr;
  ObjectCache<ReplicationController>* rcs_ = nullptr;
  ObjectCache<Pod>* pods_ = nullptr;
  ObjectCache<Node>* nodes_ = nullptr;  // with a ClusterApi
};

}  // namespace rcsim

#endif  // RCSIM_CLUSTER_GARBAGE_COLLECTOR_H_
