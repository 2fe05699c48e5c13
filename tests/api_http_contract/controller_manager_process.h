// A real apps/controller-manager process, for end-to-end and fault tests.
//
// The constructor launches `binary flags...` (plus --port=0 unless a --port flag is given, so several
// managers can run at once, --secure-port=-1 unless that flag is given: no HTTPS on the default 10257,
// and --kube-api-qps=-1 unless that flag is given: no client rate limit) with
// stdout/stderr in a temp log; it does not wait for anything (poll Log() or StatusUrl()). Kill() is a crash
// (SIGKILL); the destructor kills a process still running and removes the log. The child gets
// PR_SET_PDEATHSIG(SIGKILL), tied to the starting thread: start it from the test's main thread.
//
// Thread-safety: not thread-safe; use one ControllerManagerProcess from one thread.
#ifndef RCSIM_TESTS_API_HTTP_CONTRACT_CONTROLLER_MANAGER_PROCESS_H_
#define RCSIM_TESTS_API_HTTP_CONTRACT_CONTROLLER_MANAGER_PROCESS_H_

#include <sys/types.h>

#include <string>
#include <vector>

namespace rcsim {

class ControllerManagerProcess {
 public:
  ControllerManagerProcess(const std::string& binary, const std::vector<std::string>& flags);
  ControllerManagerProcess(const ControllerManagerProcess&) = delete;
  ControllerManagerProcess& operator=(const ControllerManagerProcess&) = delete;
  ~ControllerManagerProcess();

  // SIGTERM and wait (bounded); the exit status, or -1 if it had to be killed.
  int Terminate();
  // Waits (up to 20 s) for the process to exit on its own; its exit status, or -1.
  int WaitExit();
  // SIGKILL (a crash); reaps the process. Idempotent.
  void Kill();
  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }

  // The base URL of /healthz, /readyz, /metrics once the manager printed it (the plain-HTTP one when it
  // serves both), or "".
  std::string StatusUrl() const;
  // The leader-election identity the manager printed, or "".
  std::string Identity() const;
  std::string Log() const;

 private:
  std::string log_path_;
  pid_t pid_ = -1;
};

}  // namespace rcsim

#endif  // RCSIM_TESTS_API_HTTP_CONTRACT_CONTROLLER_MANAGER_PROCESS_H_
