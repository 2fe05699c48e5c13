#include "harness/real/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <system_error>
#include <thread>

namespace rcsim {

ChildProcess::~ChildProcess() { Kill(); }

Status ChildProcess::Spawn(const std::vector<std::string>& argv, const std::string& log_path) {
  if (pid_ > 0) return Status(Code::kInternal, "already running: " + argv_.front());
  if (argv.empty()) return Status(Code::kInvalid, "no program");
  argv_ = argv;
  log_path_ = log_path;
  return Respawn();
}

Status ChildProcess::Respawn() {
  if (pid_ > 0) return Status(Code::kInternal, "already running: " + argv_.front());
  std::vector<std::string> args = argv_;
  std::vector<char*> raw;
  raw.reserve(args.size() + 1);
  for (std::string& a : args) raw.push_back(a.data());
  raw.push_back(nullptr);
  const int log_fd = open(log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0)
    return Status(Code::kInternal,
                  "open " + log_path_ + ": " + std::error_code(errno, std::generic_category()).message());
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    close(log_fd);
    return Status(Code::kInternal, "fork: " + std::error_code(errno, std::generic_category()).message());
  }
  if (pid == 0) {
    // Child: only async-signal-safe calls until execv.
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    const int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, STDIN_FILENO);
    dup2(log_fd, STDOUT_FILENO);
    dup2(log_fd, STDERR_FILENO);
    execv(raw[0], raw.data());
    _exit(127);
  }
  close(log_fd);
  pid_ = pid;
  return Status::Ok();
}

bool ChildProcess::Running() {
  if (pid_ <= 0) return false;
  int wstatus = 0;
  const pid_t r = waitpid(pid_, &wstatus, WNOHANG);
  if (r == pid_ || (r < 0 && errno == ECHILD)) {
    pid_ = -1;
    return false;
  }
  return true;
}

void ChildProcess::Terminate(Duration grace) {
  if (pid_ <= 0) return;
  kill(pid_, SIGCONT);  // a stopped process acts on SIGTERM only once continued
  kill(pid_, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (true) {
    int wstatus = 0;
    const pid_t r = waitpid(pid_, &wstatus, WNOHANG);
    if (r == pid_ || (r < 0 && errno == ECHILD)) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &wstatus, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  pid_ = -1;
}

void ChildProcess::Kill() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

std::string ChildProcess::LogTail(std::size_t bytes) const {
  std::ifstream in(log_path_);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string all = ss.str();
  return all.size() > bytes ? all.substr(all.size() - bytes) : all;
}

}  // namespace rcsim
