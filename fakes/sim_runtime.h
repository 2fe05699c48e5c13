// SimRuntime: the simulated container runtime behind a NodeAgent (cluster/runtime.h).
//
// - Start: the container runs after a start latency drawn uniform in [start_min, start_max].
// - A container runs until Kill (exit 137), Exit (any code), Stop (SIGTERM: exits with 143 after
//   term_latency, or 137 when that exceeds the grace period), or, while crash looping is on for its
//   pod (CrashLoop), `crash_after` after each start with exit code 1.
// - Readiness is the pod's (SetReady): a container of a pod set not ready fails its readiness check
//   from then on, restarts included, until the pod is set ready again; each change is reported to the
//   readiness listener for the pod's running containers (none while the runtime is failed).
// - Fail() makes the runtime dead (a failed node): nothing starts, nothing exits, nothing is
//   reported, until Recover() (containers that ran before are then gone: each reports an exit 137).
// Deterministic: randomness only from the given Rng; all state in ordered containers.
// Thread-safety: none; runs on the simulation's Executor.
#ifndef RCSIM_FAKES_SIM_RUNTIME_H_
#define RCSIM_FAKES_SIM_RUNTIME_H_

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cluster/runtime.h"
#include "engine/executor.h"
#include "engine/rng.h"
#include "engine/time.h"

namespace rcsim {

struct SimRuntimeOptions {
  Duration start_min = std::chrono::milliseconds(500);
  Duration start_max = std::chrono::seconds(2);
  Duration term_latency = std::chrono::milliseconds(100);
  Duration crash_after = std::chrono::seconds(1);
};

class SimRuntime final : public Runtime {
 public:
  // Neither pointer is owned; both must outlive the runtime. `prefix` makes ids unique per node.
  SimRuntime(SimRuntimeOptions options, Executor* executor, Rng* rng, std::string prefix);
  ~SimRuntime() override;

  void SetExitListener(ExitListener listener) override;
  void Start(const ContainerConfig& config, Callback<Result<std::string>> done) override;
  void Stop(const std::string& id, Duration grace, Callback<Status> done) override;
  void SetReadinessListener(ReadinessListener listener) override;
  bool Ready(const std::string& id) const override;

  // Makes every running container of the pod exit with `exit_code`; returns how many did.
  int Exit(const std::string& pod_uid, int exit_code);
  // Crash looping on/off for a pod: each start is followed by an exit 1 after crash_after.
  void CrashLoop(const std::string& pod_uid, bool on);
  // The pod's containers pass (true) or fail their readiness check from now on; returns how many
  // running containers changed readiness (each reported to the readiness listener).
  int SetReady(const std::string& pod_uid, bool ready);
  void Fail();
  void Recover();
  bool failed() const { return failed_; }
  // Running containers.
  std::size_t running() const { return running_.size(); }

 private:
  struct Running {
    std::string pod_uid;
    TimerId crash_timer = 0;
    bool stopping = false;
  };
  void ExitNow(const std::string& id, int code);

  const SimRuntimeOptions options_;
  Executor* const executor_;
  Rng* const rng_;
  const std::string prefix_;
  ExitListener listener_;
  ReadinessListener readiness_listener_;
  uint64_t next_id_ = 0;
  bool failed_ = false;
  uint64_t epoch_ = 0;                      // bumped by Fail: timers of an older epoch do nothing
  std::map<std::string, Running> running_;  // by id
  std::set<std::string> crash_looping_;     // pod uids
  std::set<std::string> not_ready_;         // pod uids
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace rcsim

#endif  // RCSIM_FAKES_SIM_RUNTIME_H_
