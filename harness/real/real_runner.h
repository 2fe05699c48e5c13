// The real mode of the harness (rcsim run --real): one scenario against real processes.
//
// RunScenarioReal starts a RealStack (etcd, apiserver, FaultProxy, controller-manager with the
// scenario's manager options as flags, the cluster controllers, one node agent per cluster.nodes, at
// most kMaxNodeAgents) whose agents run the pods as processes (a container with neither command nor
// args runs `sleep 3600`, the default template's command) — or, with hollow_nodes, HollowNodes that
// write the status of the pods the manager creates (after cluster.pod_start_latency) and run nothing
// — and a watch of every pod and replication controller on the API server that feeds a RealMonitor
// with wall-clock times. It creates the scenario's controllers at time 0 and fires each event at its
// `at` on the wall clock (ties in file order):
//   scale / update_controller / create_controller / delete_controller / delete_pods / label_pods
//     through the API (direct, never through the proxy);
//   restart_manager: SIGKILL of the controller-manager, a new one started after `down`;
//   kill_pods: SIGKILL of the chosen pods' container processes (their agents restart them per
//     restartPolicy; the pods stay);
//   fail_node: SIGKILL of the node's agent and its containers (for `for`: SIGSTOP, SIGCONT after),
//     the node lifecycle controller evicting its pods after its grace period;
//   partition_manager / api_faults / watch_faults (drop, delay) / stale_reads: through the proxy;
//   watch_faults.compact: an etcd compaction at its current revision;
//   restart_etcd: SIGKILL of that etcd member, restarted on its data after `down`;
//   kill_etcd_leader: SIGKILL of the member that leads (several members), restarted after `down`.
// The run ends by the simulation's rule (settle time, then a quiet period; or `duration`), on the wall
// clock; then the same expectations are judged from what the watch saw (api_calls: the manager's
// calls through the proxy). With `kubeconfig`, no process is started: the run uses that cluster (its
// own manager and kubelets) and only events that need no process control are allowed.
//
// RealModeProblems lists what a scenario asks that real mode cannot do, each as
// "<file>: <JSON pointer>: <why>"; rcsim refuses such scenarios before anything runs (exit 2).
//
// Thread-safety: call from the main thread (the children's PR_SET_PDEATHSIG is tied to it).
#ifndef RCSIM_HARNESS_REAL_REAL_RUNNER_H_
#define RCSIM_HARNESS_REAL_REAL_RUNNER_H_

#include <functional>
#include <string>
#include <vector>

#include "harness/run_result.h"
#include "harness/scenario.h"

namespace rcsim {

// Node agents real mode starts at most (each is a process; each pod two more: its container, its shim).
inline constexpr int kMaxNodeAgents = 16;

struct RealRunOptions {
  std::string etcd_binary = "/usr/bin/etcd";
  std::string apiserver_binary;
  std::string controller_manager_binary;
  std::string node_agent_binary;
  // Hollow nodes instead of node agents: pods get a Running status and run nothing (any number of
  // nodes and pods; kill_pods and fail_node are refused).
  bool hollow_nodes = false;
  int etcd_members = 1;    // --etcd-members: 1, 3 or 5
  std::string kubeconfig;  // non-empty: an existing cluster, nothing started
  std::string context;
  double wall_timeout_seconds = 0;  // > 0: stop and fail a run past this
  // Polled often; true stops the run at once (it fails with "interrupted"), everything is stopped.
  std::function<bool()> interrupted;
  // Non-empty: a failed run's process logs (etcd, apiserver, controller-manager) are copied to
  // <logs_dir>/<scenario>.logs/ before the stack's directory is removed (rcsim: the --report DIR).
  std::string logs_dir;
  // Progress lines (the stack's processes and ports, ...); may be empty.
  std::function<void(const std::string&)> log;
};

std::vector<std::string> RealModeProblems(const Scenario& scenario, bool existing_cluster,
                                          bool hollow_nodes = false, int etcd_members = 1);

// The controller-manager flags for the scenario's manager options.
std::vector<std::string> ManagerFlags(const ManagerConfig& manager);

RunResult RunScenarioReal(const Scenario& scenario, uint64_t seed, const RealRunOptions& options);

}  // namespace rcsim

#endif  // RCSIM_HARNESS_REAL_REAL_RUNNER_H_
