// SimNodes: the simulated kubelets and scheduler of the world. Talks to the API only through the given
// ApiClient (its own, unfaulted in-process client), like the real components.
//
// - Scheduler: watches every pod; a pod that is active, has no spec.nodeName and is not already being
//   bound is bound (Update setting spec.nodeName) to the ready node with the fewest bound active pods,
//   ties broken by node name (string order). Pods seen while no node is ready stay Pending and are
//   bound when a node recovers, in key order.
// - Kubelet: after a start latency drawn uniform in [pod_start_min, pod_start_max] from the bind, a
//   bound pod gets (UpdateStatus) phase Running, a Ready=True condition with lastTransitionTime,
//   ready container statuses and startTime.
// - KillPod sets phase Failed and Ready=False; FailNode fails every pod bound to the node and marks it
//   not ready (no new bindings) until RecoverNode.
// - Pod GC: every gc_interval, deletes pods that have been terminated (as seen by this component) for at
//   least pod_gc_threshold (uid precondition).
// - Conflicts (kConflict) are handled by re-reading the pod and retrying if the action still applies;
//   kNotFound ends the action. A watch that ends (kError, e.g. kGone after compaction) is re-listed and
//   re-watched.
// Every world action is recorded in the trace (actor "nodes"): bind, start, kill, node-fail,
// node-recover, gc.
//
// Deterministic: all state is in ordered containers; randomness only from the given Rng.
// Thread-safety: none; everything runs on the Executor's (simulation) thread, including the client's
// callbacks. Callbacks pending at destruction are dropped.
#ifndef RCSIM_FAKES_SIM_NODES_H_
#define RCSIM_FAKES_SIM_NODES_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/api_client.h"
#include "engine/executor.h"
#include "engine/rng.h"
#include "engine/time.h"
#include "engine/trace.h"

namespace rcsim {

struct SimNodesOptions {
  int nodes = 10;  // named node-0 .. node-(nodes-1)
  Duration pod_start_min = std::chrono::milliseconds(500);
  Duration pod_start_max = std::chrono::seconds(2);
  Duration pod_gc_threshold = std::chrono::seconds(60);
  Duration gc_interval = std::chrono::seconds(10);
  // Delay before an action that hit an error other than conflict/not-found is retried.
  Duration retry_delay = std::chrono::milliseconds(100);
};

struct SimNodesCounters {
  uint64_t binds = 0;
  uint64_t starts = 0;
  uint64_t kills = 0;
  uint64_t gc_deletes = 0;
  uint64_t conflicts = 0;
  uint64_t relists = 0;
};

class SimNodes {
 public:
  // None of the pointers is owned; all must outlive this object. Starts watching at construction.
  SimNodes(SimNodesOptions options, ApiClient* api, Clock* clock, Executor* executor, Rng* rng,
           TraceSink* trace);
  ~SimNodes();
  SimNodes(const SimNodes&) = delete;
  SimNodes& operator=(const SimNodes&) = delete;

  // Asynchronous; `done` (optional) gets the outcome (kNotFound if the pod does not exist, OK if it is
  // already terminated).
  void KillPod(const std::string& ns, const std::string& name,
               std::function<void(Status)> done = nullptr);
  // kNotFound for an unknown node name. FailNode on a failed node and RecoverNode on a ready node are
  // no-ops.
  Status FailNode(const std::string& node);
  Status RecoverNode(const std::string& node);

  std::vector<std::string> node_names() const;
  bool node_ready(const std::string& node) const;
  // Active pods bound to the node, as this component last saw them.
  int node_load(const std::string& node) const;
  // Pods waiting for a ready node.
  int unschedulable_pods() const;
  const SimNodesCounters& counters() const;

  class Core;

 private:
  std::shared_ptr<Core> core_;
};

}  // namespace rcsim

#endif  // RCSIM_FAKES_SIM_NODES_H_
