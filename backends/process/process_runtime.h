// ProcessRuntime: the node agent's Runtime port (cluster/runtime.h) over real processes on this host.
//
// Each container is a child process: argv = command + args (no image entrypoint: the `image` is
// recorded in the container's state file but never pulled or unpacked, so a container with neither
// command nor args fails to start). The executable is looked up in PATH when it has no '/'. The
// process gets its own process group, stdin from /dev/null, stdout and stderr appended to log files,
// the working directory <root>/pods/<ns>_<name>_<uid>/<container>/work (kept across restarts) and a
// small environment: PATH, HOME (the working directory), HOSTNAME (the pod name), POD_NAME,
// POD_NAMESPACE, POD_UID, CONTAINER_NAME, then the spec's `env` as ContainerConfig::env resolves it
// (replacing any of those of the same name).
//
// Layout under root_dir:
//   containers/<id>.json   state: pod, container, pid and /proc start time of the process and its shim
//   containers/<id>.exit   the exit code, written by the shim when the process ends
//   pods/<ns>_<name>_<uid>/<container>/<id>.stdout.log, <id>.stderr.log, work/
//
// A small shim process (a fork of the agent, running only async-signal-safe code) sits between the
// agent and each container, in its own session: it waits for the container and writes its exit code
// (the code, or 128 + signal) to <id>.exit, so the code survives an agent restart. Stop sends SIGTERM to
// the container's process group and SIGKILL after the grace period (at once for grace 0); after the
// process exits, what is left of its group is killed.
//
// Re-adoption: Open() reads containers/*.json. A container whose process is still alive with the
// recorded start time (/proc/<pid>/stat field 22, so a recycled pid is never adopted) is adopted: the
// next Start for the same pod uid and container name claims it (`done` gets its id, nothing new
// runs). An adopted container that exited while no agent ran reports nothing and is forgotten (the
// next Start runs it again). StopUnclaimed stops adopted containers that nobody claimed and whose pod
// is not among those the caller still runs here (evicted or deleted while the agent was down).
//
// Readiness: a container whose config has a readiness_probe is not ready until the probe first
// succeeds; the monitor thread runs the probe's command (looked up as the container's executable) as a
// child in a process group of its own, with the container's environment and working directory and
// /dev/null for stdin, stdout and stderr, first initial_delay after the start (at once for a claimed
// adopted container: its delay is long over), then every period from the previous run's start (a run
// still going is not overlapped). A run past its timeout is killed (its group) and is a failure. Every
// change of readiness goes to the readiness listener; none after the container's exit is seen. A
// container without a probe is always ready.
//
// The destructor leaves every container running (an agent restart).
//
// Thread-safety: thread-safe. Exits are seen on an internal monitor thread (pidfds in epoll);
// probes run on it too; every callback (Start's and Stop's `done`, the exit and readiness listeners) is
// posted to the executor.
#ifndef RCSIM_BACKENDS_PROCESS_PROCESS_RUNTIME_H_
#define RCSIM_BACKENDS_PROCESS_PROCESS_RUNTIME_H_

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cluster/runtime.h"
#include "engine/executor.h"
#include "engine/mutex.h"
#include "engine/status.h"
#include "engine/time.h"

namespace rcsim {

struct ProcessRuntimeOptions {
  std::string root_dir;          // created if missing
  Executor* executor = nullptr;  // not owned; where callbacks run; must outlive the runtime
  std::string path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";  // containers' PATH
};

// What a test or an operator can see of one container.
struct ProcessInfo {
  std::string id;
  std::string pod_namespace;
  std::string pod_name;
  std::string pod_uid;
  std::string container_name;
  pid_t pid = 0;
  bool adopted = false;  // started by an earlier agent on this root dir
  bool claimed = false;  // handed to the agent by Start (always true for those this runtime started)
  std::string stdout_path;
  std::string stderr_path;
};

class ProcessRuntime final : public Runtime {
 public:
  // Creates the directories, adopts what a previous agent left running, starts the monitor thread.
  static Result<std::unique_ptr<ProcessRuntime>> Open(ProcessRuntimeOptions options);
  ~ProcessRuntime() override;
  ProcessRuntime(const ProcessRuntime&) = delete;
  ProcessRuntime& operator=(const ProcessRuntime&) = delete;

  void SetExitListener(ExitListener listener) override;
  void Start(const ContainerConfig& config, Callback<Result<std::string>> done) override;
  void Stop(const std::string& id, Duration grace, Callback<Status> done) override;
  void SetReadinessListener(ReadinessListener listener) override;
  // A running container passes its readiness probe (or has none); false for an id not running.
  bool Ready(const std::string& id) const override;
  bool Adoptable(const std::string& pod_uid, const std::string& container_name) const override;

  // Stops (with `grace`) every adopted container that no Start claimed and whose pod uid is not in
  // `keep_pod_uids`; returns how many it stopped.
  int StopUnclaimed(const std::set<std::string>& keep_pod_uids, Duration grace);
  // Running containers (those whose exit has not been seen).
  std::vector<ProcessInfo> Running() const;
  std::size_t unclaimed_count() const;

  // /proc/<pid>/stat's start time (clock ticks since boot), or nullopt if no such process (or a zombie).
  static std::optional<uint64_t> ProcessStartTime(pid_t pid);

 private:
  struct Container {
    ProcessInfo info;
    std::string image;
    std::vector<std::string> argv;
    uint64_t start_ticks = 0;
    pid_t shim_pid = 0;
    uint64_t shim_start_ticks = 0;
    bool own_shim = false;  // the shim is this process's child: reap it
    int pidfd = -1;         // of the shim, or of the process when its shim is gone
    bool watching_shim = true;
    std::optional<std::chrono::steady_clock::time_point> kill_at;  // SIGKILL due (guarded by mu_)
    std::vector<Callback<Status>> stop_waiters;
    // The readiness probe and its state (guarded by mu_). Without a probe the container is ready.
    std::optional<ExecProbe> probe;
    std::vector<std::string> env;  // the container's (KEY=VALUE), for its probe
    std::string work_dir;
    bool ready = true;
    int successes = 0, failures = 0;                 // in a row
    std::chrono::steady_clock::time_point probe_at;  // the next run, when none runs
    pid_t probe_pid = 0;                             // > 0 while a run goes on
    int probe_fd = -1;                               // its pidfd
    std::chrono::steady_clock::time_point probe_started, probe_deadline;
    bool probe_timed_out = false;
  };

  explicit ProcessRuntime(ProcessRuntimeOptions options);
  Status Init();
  void Adopt(const std::string& state_path);
  Status Spawn(const ContainerConfig& config, Container* c, std::string* error);
  Status WriteState(const Container& c) const;
  void Watch(const std::string& id, Container& c) REQUIRES(mu_);
  void SetProbe(const ContainerConfig& config, Container& c, std::chrono::steady_clock::time_point first);
  void StartProbe(const std::string& id, Container& c) REQUIRES(mu_);
  void OnProbeDone(int fd) REQUIRES(mu_);
  void OnProbeResult(const std::string& id, Container& c, bool success) REQUIRES(mu_);
  void EndProbe(Container& c) REQUIRES(mu_);  // kills and reaps a run going on
  void OnPidfdReady(int fd) REQUIRES(mu_);
  void Finish(const std::string& id, int exit_code, bool seen_live) REQUIRES(mu_);
  void MonitorLoop();
  void Wake();
  std::string StatePath(const std::string& id) const;
  std::string ExitPath(const std::string& id) const;
  std::string NewId();

  const ProcessRuntimeOptions options_;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  mutable Mutex mu_;
  ExitListener listener_ GUARDED_BY(mu_);
  std::map<std::string, Container> running_ GUARDED_BY(mu_);  // by id
  std::map<int, std::string> by_fd_ GUARDED_BY(mu_);          // pidfd -> id
  std::map<int, std::string> probe_by_fd_ GUARDED_BY(mu_);    // a probe run's pidfd -> its container's id
  ReadinessListener readiness_listener_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  uint64_t next_id_ GUARDED_BY(mu_) = 0;
  std::string id_prefix_;
  std::thread monitor_;
};

}  // namespace rcsim

#endif  // RCSIM_BACKENDS_PROCESS_PROCESS_RUNTIME_H_
