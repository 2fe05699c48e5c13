#include "tests/api_http_contract/controller_manager_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace rcsim {
namespace {

// The rest of the line after `marker` in `log`, or "".
std::string AfterMarker(const std::string& log, const std::string& marker) {
  const size_t at = log.find(marker);
  if (at == std::string::npos) return "";
  const size_t end = log.find('\n', at);
  if (end == std::string::npos) return "";
  return log.substr(at + marker.size(), end - at - marker.size());
}

}  // namespace

ControllerManagerProcess::ControllerManagerProcess(const std::string& binary,
                                                   const std::vector<std::string>& flags) {
  static std::atomic<int> next{0};
  log_path_ = (std::filesystem::temp_directory_path() /
               ("rcsim-cm-" + std::to_string(getpid()) + "-" + std::to_string(next++) + ".log"))
                  .string();
  std::vector<std::string> args = {binary};
  args.insert(args.end(), flags.begin(), flags.end());
  if (std::none_of(flags.begin(), flags.end(),
                   [](const std::string& f) { return f.starts_with("--port"); })) {
    args.emplace_back("--port=0");
  }
  if (std::none_of(flags.begin(), flags.end(),
                   [](const std::string& f) { return f.starts_with("--secure-port"); })) {
    args.emplace_back("--secure-port=-1");
  }
  // No client-side rate limit unless the test sets one: the tests measure the manager under faults,
  // not kube-controller-manager's default 20 requests per second.
  if (std::none_of(flags.begin(), flags.end(),
                   [](const std::string& f) { return f.starts_with("--kube-api-qps"); })) {
    args.emplace_back("--kube-api-qps=-1");
  }
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int log_fd = open(log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const pid_t parent = getpid();
  pid_ = fork();
  if (pid_ == 0) {
    // Child: only async-signal-safe calls until execv.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    if (log_fd >= 0) {
      dup2(log_fd, STDOUT_FILENO);
      dup2(log_fd, STDERR_FILENO);
    }
    execv(argv[0], argv.data());
    _exit(127);
  }
  if (log_fd >= 0) close(log_fd);
}

ControllerManagerProcess::~ControllerManagerProcess() {
  Kill();
  std::error_code ec;
  std::filesystem::remove(log_path_, ec);
}

int ControllerManagerProcess::Terminate() {
  if (pid_ <= 0) return -1;
  kill(pid_, SIGTERM);
  return WaitExit();
}

int ControllerManagerProcess::WaitExit() {
  if (pid_ <= 0) return -1;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    int wstatus = 0;
    if (waitpid(pid_, &wstatus, WNOHANG) == pid_) {
      pid_ = -1;
      return WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return -1;
}

void ControllerManagerProcess::Kill() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

std::string ControllerManagerProcess::StatusUrl() const { return AfterMarker(Log(), "/metrics on "); }

std::string ControllerManagerProcess::Identity() const {
  return AfterMarker(Log(), "leader election on as ");
}

std::string ControllerManagerProcess::Log() const {
  std::ifstream in(log_path_);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace rcsim
