// SimCluster: the rest of the simulated cluster around the replication manager, made of the shared
// components of cluster/ (the same code production runs) over simulated runtimes:
//   Scheduler, GarbageCollector, NodeLifecycleController, PodGc, and per node a NodeAgent over a
//   SimRuntime (fakes/sim_runtime.h). The agents' "pods on my node" watches are served by the
//   registry's pod watch cache, indexed by node as kube-apiserver's serves kubelets.
// Everything talks to the API only through the given client (the world's unfaulted in-process one).
//
// World actions (the scenario's events) act on what is really simulated, never on the API objects:
// - KillPod: the pod's containers exit (137); its agent restarts them per restartPolicy, with the
//   kubelet's crash-loop backoff.
// - FailNode: the node dies with its agent (no heartbeats, its in-memory state lost) and its
//   runtime; the node lifecycle controller marks it unreachable after node_monitor_grace_period and
//   evicts its pods after pod_eviction_timeout; the pod GC removes what no agent will finish.
//   RecoverNode: the node reboots: the runtime comes back empty and a fresh agent starts, which
//   re-lists the pods bound to it and starts their containers again (or finishes their deletion).
// - StopAgent / StartAgent: the agent alone stops (containers keep running) and restarts.
// - CrashLoop: the pod's containers exit 1 right after each start, until turned off.
// - SetReady: the pod's containers pass or fail their runtime's readiness check (restarts included)
//   until set again; its agent writes the Ready condition through pods/status, as the kubelet does
//   with its readiness probe's results.
// - SetNodeCapacity: the node's agent reports another status.capacity.pods (the scheduler honours it
//   for new bindings; pods already there stay).
//
// Deterministic: all randomness from the given Rng (container start latencies); ordered containers.
// Thread-safety: none; everything runs on the simulation's Executor.
#ifndef RCSIM_FAKES_SIM_CLUSTER_H_
#define RCSIM_FAKES_SIM_CLUSTER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cluster/garbage_collector.h"
#include "cluster/node_agent.h"
#include "cluster/node_lifecycle_controller.h"
#include "cluster/pod_gc.h"
#include "cluster/scheduler.h"
#include "cluster/shared_caches.h"
#include "engine/api_client.h"
#include "engine/cluster_api.h"
#include "engine/executor.h"
#include "engine/rng.h"
#include "engine/time.h"
#include "engine/trace.h"
#include "fakes/sim_runtime.h"

namespace rcsim {

struct SimClusterOptions {
  int nodes = 10;  // named node-0 .. node-(nodes-1)
  int64_t max_pods = 110;
  SimRuntimeOptions runtime;
  Duration heartbeat_interval = std::chrono::seconds(10);
  NodeLifecycleOptions node_lifecycle;
  PodGcOptions pod_gc;
  GarbageCollectorOptions garbage_collector;
  SchedulerOptions scheduler;
};

struct SimClusterCounters {
  uint64_t kills = 0;          // containers made to exit by KillPod
  uint64_t node_failures = 0;  // FailNode on a running node
  uint64_t agent_stops = 0;    // StopAgent on a running agent
};

class SimCluster {
 public:
  // None of the pointers is owned; all must outlive the cluster. Everything starts at construction.
  SimCluster(SimClusterOptions options, ApiClient* api, ClusterApi* cluster, Clock* clock, Executor* executor,
             Rng* rng, TraceSink* trace);
  ~SimCluster();
  SimCluster(const SimCluster&) = delete;
  SimCluster& operator=(const SimCluster&) = delete;

  // The containers of the pod (as the caller last saw it: its node and uid) exit with 137. Returns
  // how many did (0: not running yet, its node failed, or an unknown node).
  int KillPod(const Pod& pod);
  // kNotFound for an unknown node. Failing a failed node, or recovering a healthy one, is a no-op.
  Status FailNode(const std::string& node);
  Status RecoverNode(const std::string& node);
  Status StopAgent(const std::string& node);
  Status StartAgent(const std::string& node);
  void CrashLoop(const Pod& pod, bool on);
  // Returns how many of the pod's running containers changed readiness (0: none running yet, its
  // node failed, or an unknown node; the setting holds for the containers it starts later).
  int SetReady(const Pod& pod, bool ready);
  // The node's capacity (status.capacity.pods) becomes `pods`, as a kubelet reconfigured with
  // --max-pods reports: a running agent writes it at once, a stopped one when it starts, a failed
  // node's fresh agent when it reboots. kNotFound for an unknown node.
  Status SetNodeCapacity(const std::string& node, int64_t pods);

  std::vector<std::string> node_names() const;
  // The node's agent runs and its runtime is alive.
  bool node_ready(const std::string& node) const;
  int64_t restarts() const;  // container restarts by every agent
  const SimClusterCounters& counters() const { return counters_; }
  const Scheduler& scheduler() const { return *scheduler_; }
  const GarbageCollector& garbage_collector() const { return *gc_; }
  const NodeLifecycleController& node_lifecycle() const { return *node_lifecycle_; }
  const PodGc& pod_gc() const { return *pod_gc_; }

 private:
  struct SimNode {
    NodeAgentOptions options;
    std::unique_ptr<SimRuntime> runtime;
    std::unique_ptr<NodeAgent> agent;  // null while the node is down
  };
  void StartNewAgent(SimNode& n);
  SimNode* Find(const std::string& node);
  const SimNode* Find(const std::string& node) const;
  void Trace(const std::string& event);

  Clock* const clock_;
  Executor* const executor_;
  TraceSink* const trace_;
  SimClusterCounters counters_;
  int64_t retired_restarts_ = 0;  // of agents that died with their node
  ApiClient* const api_;
  ClusterApi* const cluster_;
  std::unique_ptr<Scheduler> scheduler_;
  std::unique_ptr<SharedCaches> caches_;  // the GC's, the node lifecycle controller's and the pod GC's
  std::unique_ptr<GarbageCollector> gc_;
  std::unique_ptr<NodeLifecycleController> node_lifecycle_;
  std::unique_ptr<PodGc> pod_gc_;
  std::map<std::string, SimNode> nodes_;
};

}  // namespace rcsim

#endif  // RCSIM_FAKES_SIM_CLUSTER_H_
