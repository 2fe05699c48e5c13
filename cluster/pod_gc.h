// PodGC: deletes pods nobody else will, as kube-controller-manager's pod garbage collector.
//
// Every period:
// - terminated pods (Succeeded/Failed) beyond terminated_threshold are deleted, oldest
//   (creationTimestamp, then key) first;
// - pods bound to a node that does not exist (the API says NotFound) are deleted with grace 0;
// - pods being deleted whose grace period is over and whose node is not Ready (no agent will finish
//   them) are deleted with grace 0. (kube-controller-manager does this only for nodes tainted
//   out-of-service; rcsim does it for unreachable nodes so that evicted pods go away.)
//
// Thread-safety: none; everything runs on the Executor's thread (see cluster/object_cache.h).
#ifndef RCSIM_CLUSTER_POD_GC_H_
#define RCSIM_CLUSTER_POD_GC_H_

#include <cstdint>
#include <memory>
#include <set>
#include <string>

#include "cluster/object_cache.h"
#include "cluster/shared_caches.h"
#include "engine/api_client.h"
#include "engine/cluster_api.h"
#include "engine/executor.h"
#include "engine/node_types.h"
#include "engine/time.h"
#include "engine/trace.h"

namespace rcsim {

struct PodGcOptions {
  Duration period = std::chrono::seconds(20);
  int64_t terminated_threshold = 12500;  // --terminated-pod-gc-threshold; <= 0: keep them all
};

struct PodGcCounters {
  uint64_t terminated_deleted = 0;
  uint64_t orphans_deleted = 0;
  uint64_t terminating_deleted = 0;
};

class PodGc {
 public:
  // `caches` (not owned, outlives the pod GC) are the process's shared caches; null: it makes its own.
  PodGc(PodGcOptions options, ApiClient* api, ClusterApi* cluster, Clock* clock, Executor* executor,
        TraceSink* trace, SharedCaches* caches = nullptr);
  ~PodGc();
  PodGc(const PodGc&) = delete;
  PodGc& operator=(const PodGc&) = delete;

  void Start();
  const PodGcCounters& counters() const { return counters_; }

 private:
  void Pass();
  void ForceDelete(const PodPtr& pod, uint64_t* counter, const char* why);
  void Trace(const std::string& event);

  const PodGcOptions options_;
  ApiClient* const api_;
  ClusterApi* const cluster_;
  Clock* const clock_;
  Executor* const executor_;
  TraceSink* const trace_;

  std::set<std::string> in_flight_;  // pod uids
  PodGcCounters counters_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  std::unique_ptr<SharedCaches> own_caches_;  // when given none
  SharedCaches* caches_ = nullptr;
  ObjectCache<Node>* nodes_ = nullptr;
  ObjectCache<Pod>* pods_ = nullptr;
};

}  // namespace rcsim

#endif  // RCSIM_CLUSTER_POD_GC_H_
