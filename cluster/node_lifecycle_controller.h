// NodeLifecycleController: notices nodes that stopped heartbeating, as kube-controller-manager's.
//
// - A node's heartbeat is the newer of its Lease's renewTime (kube-node-lease/<node>) and its Ready
//   condition's lastHeartbeatTime. The controller remembers, on its own clock, when it last saw
//   either move forward (as kube does, so clock skew between node and controller does not matter); a
//   node gets the grace period from when the controller started. Leases are watched (a list+watch
//   cache of kube-node-lease, as kube's lease informer), so a renewal is seen as it lands; while that
//   watch is down (from its end until the re-list after it) nothing is judged, since a renewal may
//   have been missed.
// - Every monitor_period: a node whose heartbeat has not changed for longer than grace_period gets
//   Ready=Unknown (reason NodeStatusUnknown) and the node.kubernetes.io/unreachable NoExecute taint,
//   and every pod on it is marked Ready=False. Once a node has been Unknown for eviction_timeout
//   (measured from Ready's lastTransitionTime), its pods are deleted (gracefully: the pod GC finishes
//   what no agent will).
// - A node whose heartbeat moves again (its agent writes Ready=True) loses the taint.
//
// Thread-safety: none; everything runs on the Executor's thread (see cluster/object_cache.h).
#ifndef RCSIM_CLUSTER_NODE_LIFECYCLE_CONTROLLER_H_
#define RCSIM_CLUSTER_NODE_LIFECYCLE_CONTROLLER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "cluster/object_cache.h"
#include "cluster/shared_caches.h"
#include "engine/api_client.h"
#include "engine/cluster_api.h"
#include "engine/executor.h"
#include "engine/lease.h"
#include "engine/node_types.h"
#include "engine/time.h"
#include "engine/trace.h"

namespace rcsim {

struct NodeLifecycleOptions {
  Duration monitor_period = std::chrono::seconds(5);
  Duration grace_period = std::chrono::seconds(40);       // --node-monitor-grace-period
  Duration eviction_timeout = std::chrono::seconds(300);  // --pod-eviction-timeout
};

struct NodeLifecycleCounters {
  uint64_t marked_unknown = 0;
  uint64_t pods_marked_not_ready = 0;
  uint64_t evictions = 0;
  uint64_t taints_removed = 0;
};

class NodeLifecycleController {
 public:
  // `caches` (not owned, outlives the controller) are the process's shared caches; null: it makes its own.
  NodeLifecycleController(NodeLifecycleOptions options, ApiClient* api, ClusterApi* cluster, Clock* clock,
                          Executor* executor, TraceSink* trace, SharedCaches* caches = nullptr);
  ~NodeLifecycleController();
  NodeLifecycleController(const NodeLifecycleController&) = delete;
  NodeLifecycleController& operator=(const NodeLifecycleController&) = delete;

  void Start();
  const NodeLifecycleCounters& counters() const { return counters_; }

 private:
  struct Probe {
    std::optional<TimePoint> heartbeat;    // Ready's lastHeartbeatTime, last value seen
    std::optional<TimePoint> lease_renew;  // the lease's renewTime, newest seen
    TimePoint seen{};                      // controller time either last moved
  };

  void OnNode(const NodePtr& node);
  void OnLease(const Lease& lease);
  // Judges every node, when the caches allow.
  void Monitor();
  void Judge();
  void MarkUnknown(const NodePtr& node);
  void MarkPodsNotReady(const std::string& node);
  void Evict(const std::string& node);
  void SetTaint(const NodePtr& node, bool present);
  void Trace(const std::string& event);

  const NodeLifecycleOptions options_;
  ApiClient* const api_;
  ClusterApi* const cluster_;
  Clock* const clock_;
  Executor* const executor_;
  TraceSink* const trace_;

  TimePoint started_{};
  std::map<std::string, Probe> probes_;  // by node name
  std::set<std::string> in_flight_;      // node and pod keys with a write in flight
  std::set<std::string> evicted_;        // pod uids deleted by eviction
  NodeLifecycleCounters counters_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  std::unique_ptr<SharedCaches> own_caches_;  // when given none
  SharedCaches* caches_ = nullptr;
  ObjectCache<Node>* nodes_ = nullptr;
  ObjectCache<Pod>* pods_ = nullptr;
  ObjectCache<Lease>* leases_ = nullptr;
};

}  // namespace rcsim

#endif  // RCSIM_CLUSTER_NODE_LIFECYCLE_CONTROLLER_H_
