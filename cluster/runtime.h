// The Runtime port of the node agent: what runs a pod's containers. The simulated runtime
// (fakes/sim_runtime.h) models start latency, exits and crash loops; the process runtime
// (backends/process/) runs each container as a child process in its own process group.
//
// Contract:
// - Start runs one container; `done` gets its id once it is running, or an error (the container
//   did not start). An id is never reused.
// - Every exit of a started container, whether on its own or because of Stop, is reported once to
//   the exit listener with the exit code (128 + signal for a signalled process; 137 after a kill).
// - Stop asks the container to terminate (SIGTERM), and kills it if it has not exited after `grace`;
//   `done` runs once it has exited (or at once for an id that is not running).
// - Callbacks (done, the exit listener) run on the agent's Executor thread, never inline.
// - Readiness (what a readiness probe reports; the kubelet's prober results): Ready(id) says whether a
//   running container passes its readiness check now, and every later change is reported once to the
//   readiness listener. A runtime without readiness checks keeps the defaults: a running container
//   is always ready (as a container without a readinessProbe) and nothing is ever reported. A runtime
//   that runs ContainerConfig::readiness_probe keeps a container with one not ready until the probe
//   first succeeds (the kubelet's prober).
#ifndef RCSIM_CLUSTER_RUNTIME_H_
#define RCSIM_CLUSTER_RUNTIME_H_

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/api_client.h"
#include "engine/status.h"
#include "engine/time.h"

namespace rcsim {

// An exec readinessProbe, as the kubelet runs it: `command` in the container's environment and working
// directory, first `initial_delay` after the start, then every `period`; exit code 0 is a success, any
// other code, a failure to run it or no exit within `timeout` a failure. Ready after
// `success_threshold` successes in a row, not ready after `failure_threshold` failures in a row.
struct ExecProbe {
  std::vector<std::string> command;
  Duration initial_delay{0};
  Duration period{std::chrono::seconds(10)};
  Duration timeout{std::chrono::seconds(1)};
  int success_threshold = 1;
  int failure_threshold = 3;
  bool operator==(const ExecProbe&) const = default;
};

struct ContainerConfig {
  std::string pod_namespace;
  std::string pod_name;
  std::string pod_uid;
  std::string container_name;
  std::string image;  // recorded, never pulled
  std::vector<std::string> command;
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;  // the spec's env, resolved (container_env.h)
  std::optional<ExecProbe> readiness_probe;              // the spec's readinessProbe.exec, if any
};

class Runtime {
 public:
  using ExitListener = std::function<void(const std::string& id, int exit_code)>;
  using ReadinessListener = std::function<void(const std::string& id, bool ready)>;
  virtual ~Runtime() = default;
  virtual void SetExitListener(ExitListener listener) = 0;
  virtual void Start(const ContainerConfig& config, Callback<Result<std::string>> done) = 0;
  virtual void Stop(const std::string& id, Duration grace, Callback<Status> done) = 0;
  virtual void SetReadinessListener(ReadinessListener /*listener*/) {}
  virtual bool Ready(const std::string& /*id*/) const { return true; }
  // True if a Start for this pod uid and container name would claim a container already running (one
  // an earlier agent started on this node, still alive: a kubelet restart). A runtime that cannot
  // outlive its agent never has one.
  virtual bool Adoptable(const std::string& /*pod_uid*/, const std::string& /*container_name*/) const {
    return false;
  }
};

}  // namespace rcsim

#endif  // RCSIM_CLUSTER_RUNTIME_H_
