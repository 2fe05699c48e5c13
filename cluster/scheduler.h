// Scheduler: binds unscheduled pods to nodes through pods/binding, as kube-scheduler does for the
// cases rcsim models.
//
// - A pod is schedulable when it is active (not terminated, no deletionTimestamp) and has no
//   spec.nodeName. It goes to a node that is Ready, not spec.unschedulable, has no NoSchedule or
//   NoExecute taint, and has room: fewer occupying pods (bound, active) plus binds in flight than
//   status.capacity.pods (default 110). Among those the least loaded wins, ties by node name.
//   (nodeSelector and tolerations are not modelled by the typed PodSpec yet; see README.)
// - A pod that fits nowhere stays Pending with condition PodScheduled=False, reason Unschedulable
//   (written once per pod), and is retried when a node is added or changes, or a pod leaves a node.
// - A bind that fails with kConflict (bound meanwhile, being deleted) is dropped: the watch shows
//   the pod's new state. Other errors are retried after `retry_delay`.
// Pods are scheduled in key order of their arrival (a FIFO of keys), one bind per pod in flight.
//
// Thread-safety: none; everything runs on the Executor's thread (see cluster/object_cache.h).
#ifndef RCSIM_CLUSTER_SCHEDULER_H_
#define RCSIM_CLUSTER_SCHEDULER_H_

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>

#include "cluster/object_cache.h"
#include "engine/api_client.h"
#include "engine/cluster_api.h"
#include "engine/executor.h"
#include "engine/node_types.h"
#include "engine/time.h"
#include "engine/trace.h"

namespace rcsim {

struct SchedulerOptions {
  Duration retry_delay = std::chrono::milliseconds(500);
  int64_t default_pod_capacity = 110;
};

struct SchedulerCounters {
  uint64_t binds = 0;
  uint64_t bind_conflicts = 0;
  uint64_t unschedulable = 0;  // PodScheduled=False writes
};

class Scheduler {
 public:
  // None of the pointers is owned; all must outlive the scheduler. Start() begins watching.
  Scheduler(SchedulerOptions options, ApiClient* api, ClusterApi* cluster, Clock* clock, Executor* executor,
            TraceSink* trace);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  void Start();

  // Active pods bound (or being bound) to the node, as the scheduler counts them.
  int64_t node_load(const std::string& node) const;
  // Pods waiting for a node that fits.
  std::size_t unschedulable_pods() const { return unschedulable_.size(); }
  const SchedulerCounters& counters() const { return counters_; }

 private:
  void OnPod(const PodPtr& old_pod, const PodPtr& pod);
  void OnPodDelete(const PodPtr& pod);
  void OnNode();
  void Enqueue(const std::string& key);
  void SchedulePump();
  void Pump();
  void TrySchedule(const std::string& key);
  std::string PickNode() const;
  void MarkUnschedulable(const PodPtr& pod);
  void Account(const PodPtr& pod, int delta);
  // Gives back the reservation of a bind that succeeded before the watch showed it.
  void Land(const std::string& key);
  void Trace(const std::string& event);

  const SchedulerOptions options_;
  ApiClient* const api_;
  ClusterApi* const cluster_;
  Clock* const clock_;
  Executor* const executor_;
  TraceSink* const trace_;

  // Per node name: what PickNode needs, kept current as nodes and pods change, and the nodes with
  // room ordered by (load + reserved, name), so that PickNode, which runs per pod, is O(1) and a
  // change of one node's load O(log nodes).
  struct NodeSlot {
    int64_t load = 0;      // occupying pods (from the cache)
    int64_t reserved = 0;  // binds in flight, and binds done but not yet seen bound
    bool exists = false;   // in the node cache
    bool schedulable = false;
    int64_t capacity = 0;
    bool Fits() const;  // exists, schedulable, and load + reserved < capacity
  };
  struct ByLoadThenName {
    bool operator()(const std::pair<int64_t, const std::string*>& a,
                    const std::pair<int64_t, const std::string*>& b) const {
      return a.first != b.first ? a.first < b.first : *a.second < *b.second;
    }
  };
  void RefreshNode(const std::string& name, const NodePtr& node);
  // Applies `change` to the node's slot (created if absent) and keeps fitting_ in step.
  template <typename F>
  void ChangeSlot(const std::string& name, F change);
  std::map<std::string, NodeSlot> slots_;  // never erased: fitting_ points at its keys
  std::set<std::pair<int64_t, const std::string*>, ByLoadThenName> fitting_;
  std::map<std::string, std::string> binding_;  // pod key -> node of the bind in flight
  std::map<std::string, std::string> landing_;  // pod key -> node bound, not yet seen bound
  std::deque<std::string> queue_;
  std::set<std::string> queued_;
  std::set<std::string> unschedulable_;
  std::set<std::string> marked_;  // pod uids given PodScheduled=False
  bool pump_posted_ = false;
  SchedulerCounters counters_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  std::unique_ptr<ObjectCache<Node>> nodes_;
  std::unique_ptr<ObjectCache<Pod>> pods_;
};

}  // namespace rcsim

#endif  // RCSIM_CLUSTER_SCHEDULER_H_
