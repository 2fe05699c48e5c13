// The real mode of the harness (rcsim run --real): one scenario against real processes.
//
// RunScenarioReal starts a RealStack (etcd, apiserver, FaultProxy, controller-manager with the
// scenario's manager options as flags), HollowNodes that start the pods the manager creates (after
// cluster.pod_start_latency), and a watch of every pod and replication controller on the API server
// that feeds a RealMonitor with wall-clock times. It creates the scenario's controllers at time 0
// and fires each event at its `at` on the wall clock (ties in file order):
//   scale / update_controller / create_controller / delete_controller / delete_pods / label_pods
//     through the API (direct, never through the proxy);
//   restart_manager: SIGKILL of the controller-manager, a new one started after `down`;
//   partition_manager / api_faults / watch_faults (drop, delay) / stale_reads: through the proxy;
//   watch_faults.compact: an etcd compaction at its current revision.
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

struct RealRunOptions {
  std::string etcd_binary = "/usr/bin/etcd";
  std::string apiserver_binary;
  std::string controller_manager_binary;
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

std::vector<std::string> RealModeProblems(const Scenario& scenario, bool existing_cluster);

// The controller-manager flags for the scenario's manager options.
std::vector<std::string> ManagerFlags(const ManagerConfig& manager);

RunResult RunScenarioReal(const Scenario& scenario, uint64_t seed, const RealRunOptions& options);

}  // namespace rcsim

#endif  // RCSIM_HARNESS_REAL_REAL_RUNNER_H_
