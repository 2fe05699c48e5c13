// ChildProcess: one program the real mode of the harness runs (etcd, the apiserver, the
// controller-manager), with its stdout and stderr appended to a log file.
//
// The child runs in a process group of its own (so a terminal's SIGINT reaches rcsim, which stops its
// children in order, and not the children first) and gets PR_SET_PDEATHSIG(SIGKILL): if rcsim dies
// without stopping it, the kernel kills it. Linux ties that signal to the *thread* that forked, so
// spawn from a thread that outlives the child (rcsim's main thread).
//
// Thread-safety: not thread-safe; one owner thread.
#ifndef RCSIM_HARNESS_REAL_CHILD_PROCESS_H_
#define RCSIM_HARNESS_REAL_CHILD_PROCESS_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "engine/status.h"
#include "engine/time.h"

namespace rcsim {

class ChildProcess {
 public:
  ChildProcess() = default;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();  // Kill()

  // Starts argv[0] with argv; stdout and stderr appended to `log_path`. Fails if one already runs.
  Status Spawn(const std::vector<std::string>& argv, const std::string& log_path);
  // Starts again with the last argv and log.
  Status Respawn();
  // SIGTERM, then SIGKILL after `grace`; reaps. Idempotent.
  void Terminate(Duration grace = std::chrono::seconds(5));
  // SIGKILL and reap (a crash). Idempotent.
  void Kill();
  // True while the child runs (reaps it if it exited on its own).
  bool Running();
  pid_t pid() const { return pid_; }
  const std::string& log_path() const { return log_path_; }
  // The last `bytes` of the log.
  std::string LogTail(std::size_t bytes = 3000) const;

 private:
  std::vector<std::string> argv_;
  std::string log_path_;
  pid_t pid_ = -1;
};

}  // namespace rcsim

#endif  // RCSIM_HARNESS_REAL_CHILD_PROCESS_H_
