#include "backends/process/process_runtime.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <signal.h>
#include <spawn.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <utility>

#include "engine/mutex.h"

namespace rcsim {
namespace {

// strerror's text, thread-safely (GNU strerror_r).
std::string ErrnoText(int e) {
  char buf[128];
  return strerror_r(e, buf, sizeof buf);
}

namespace fs = std::filesystem;
using SteadyClock = std::chrono::steady_clock;

constexpr int kUnknownExitCode = 255;  // the process is gone and nothing recorded how it ended

int PidfdOpen(pid_t pid) { return static_cast<int>(syscall(SYS_pidfd_open, pid, 0)); }

// ---- Async-signal-safe helpers, used between fork and exec ----

void WriteAll(int fd, const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    p += w;
    n -= static_cast<size_t>(w);
  }
}

// Reads up to n bytes (fewer only at EOF); returns how many.
size_t ReadFull(int fd, void* data, size_t n) {
  char* p = static_cast<char*>(data);
  size_t got = 0;
  while (got < n) {
    const ssize_t r = read(fd, p + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<size_t>(r);
  }
  return got;
}

size_t FormatInt(int v, char* out) {  // v >= 0
  char tmp[16];
  size_t n = 0;
  do {
    tmp[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v > 0 && n < sizeof tmp);
  for (size_t i = 0; i < n; ++i) out[i] = tmp[n - 1 - i];
  out[n] = '\n';
  return n + 1;
}

// The shim: waits for the container and records how it ended. Never returns.
[[noreturn]] void RunShim(pid_t child, int pid_pipe, const char* exit_tmp, const char* exit_path) {
  struct sigaction ign {};
  ign.sa_handler = SIG_IGN;
  for (int s : {SIGHUP, SIGINT, SIGTERM, SIGQUIT, SIGPIPE}) sigaction(s, &ign, nullptr);
  if (child < 0) _exit(126);  // the parent reads EOF instead of a pid
  setpgid(child, child);      // also done by the child; whichever runs first
  WriteAll(pid_pipe, &child, sizeof child);
  syscall(SYS_close_range, 0U, ~0U, 0U);  // hold nothing of the agent's (sockets, ports, pipes)
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) _exit(125);
  }
  const int code = WIFEXITED(status)     ? WEXITSTATUS(status)
                   : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
                                         : 255;
  char buf[24];
  const size_t n = FormatInt(code, buf);
  const int fd = open(exit_tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd >= 0) {
    WriteAll(fd, buf, n);
    fsync(fd);
    close(fd);
    rename(exit_tmp, exit_path);
  }
  _exit(0);
}

// The container, after the second fork. Never returns.
[[noreturn]] void RunContainer(int in_fd, int out_fd, int err_fd, int err_pipe, const char* work_dir,
                               const char* exe, char* const* argv, char* const* envp) {
  setpgid(0, 0);
  dup2(in_fd, 0);
  dup2(out_fd, 1);
  dup2(err_fd, 2);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int s = 1; s < NSIG; ++s) sigaction(s, &dfl, nullptr);  // the agent ignores SIGPIPE: undo that
  sigset_t none;
  sigemptyset(&none);
  // The agent blocks SIGTERM/SIGINT for sigwait: undo that. The forked child has one thread.
  sigprocmask(SIG_SETMASK, &none, nullptr);  // NOLINT(concurrency-mt-unsafe)
  syscall(SYS_close_range, 3U, ~0U, static_cast<unsigned>(CLOSE_RANGE_CLOEXEC));
  int e = 0;
  if (chdir(work_dir) != 0) {
    e = errno;
  } else {
    execve(exe, argv, envp);
    e = errno;
  }
  WriteAll(err_pipe, &e, sizeof e);
  _exit(127);
}

std::optional<std::string> FindExecutable(const std::string& name, const std::string& path,
                                          const std::string& work_dir) {
  auto executable = [](const std::string& p) {
    struct stat st {};
    return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(p.c_str(), X_OK) == 0;
  };
  if (name.find('/') != std::string::npos) {
    std::string p = name[0] == '/' ? name : work_dir + "/" + name;
    if (executable(p)) return p;
    return std::nullopt;
  }
  std::stringstream dirs(path);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    std::string p = dir + "/" + name;
    if (executable(p)) return p;
  }
  return std::nullopt;
}

std::optional<int> ReadExitCode(const std::string& path) {
  std::ifstream in(path);
  int code = 0;
  if (in >> code) return code;
  return std::nullopt;
}

// Pod names, namespaces and uids are DNS labels / uuids in the API; anything else is replaced so a
// path component can never escape its folder.
std::string SafeComponent(const std::string& s) {
  std::string out = s;
  for (char& ch : out) {
    const bool ok = std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '.' || ch == '_';
    if (!ok) ch = '_';
  }
  if (out.empty() || out == "." || out == "..") out = "_" + out;
  return out;
}

// <root>/pods/<ns>_<name>_<uid>/<container>: the container's logs and working directory (work/).
fs::path ContainerDir(const std::string& root_dir, const ContainerConfig& config) {
  return fs::path(root_dir) / "pods" /
         (SafeComponent(config.pod_namespace) + "_" + SafeComponent(config.pod_name) + "_" +
          SafeComponent(config.pod_uid)) /
         SafeComponent(config.container_name);
}

// The container's environment (KEY=VALUE): ours, then the spec's, replacing any of the same name (the
// image sets none here).
std::vector<std::string> ContainerEnvironment(const ContainerConfig& config, const std::string& path,
                                              const std::string& work_dir) {
  std::vector<std::string> env = {"PATH=" + path,
                                  "HOME=" + work_dir,
                                  "HOSTNAME=" + config.pod_name,
                                  "POD_NAME=" + config.pod_name,
                                  "POD_NAMESPACE=" + config.pod_namespace,
                                  "POD_UID=" + config.pod_uid,
                                  "CONTAINER_NAME=" + config.container_name};
  for (const auto& [name, value] : config.env) {
    const std::string prefix = name + "=";
    std::erase_if(env, [&](const std::string& e) { return e.rfind(prefix, 0) == 0; });
    env.push_back(prefix + value);
  }
  return env;
}

}  // namespace

namespace {
// Field `want` (3 = state, 4 = ppid, 22 = starttime) of /proc/<pid>/stat; nullopt for a zombie.
std::optional<uint64_t> StatField(pid_t pid, int want) {
  if (pid <= 0) return std::nullopt;
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  const size_t close = line.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(line.substr(close + 1));
  std::string field;
  // Fields after the command: state (3), ppid (4), ... starttime (22).
  for (int i = 3; i <= want; ++i) {
    if (!(rest >> field)) return std::nullopt;
    if (i == 3 && field == "Z") return std::nullopt;
  }
  try {
    return std::stoull(field);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}
}  // namespace

std::optional<uint64_t> ProcessRuntime::ProcessStartTime(pid_t pid) { return StatField(pid, 22); }

ProcessRuntime::ProcessRuntime(ProcessRuntimeOptions options) : options_(std::move(options)) {}

Result<std::unique_ptr<ProcessRuntime>> ProcessRuntime::Open(ProcessRuntimeOptions options) {
  if (options.root_dir.empty()) return Status(Code::kInvalid, "process runtime: no root dir");
  if (options.executor == nullptr) return Status(Code::kInvalid, "process runtime: no executor");
  std::unique_ptr<ProcessRuntime> rt(new ProcessRuntime(std::move(options)));
  if (Status s = rt->Init(); !s.ok()) return s;
  return rt;
}

Status ProcessRuntime::Init() {
  std::error_code ec;
  fs::create_directories(fs::path(options_.root_dir) / "containers", ec);
  if (ec)
    return Status(Code::kInvalid, "cannot create " + options_.root_dir + "/containers: " + ec.message());
  fs::create_directories(fs::path(options_.root_dir) / "pods", ec);
  if (ec) return Status(Code::kInvalid, "cannot create " + options_.root_dir + "/pods: " + ec.message());
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (epoll_fd_ < 0 || wake_fd_ < 0)
    return Status(Code::kInternal, std::string("epoll: ") + ErrnoText(errno));
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = wake_fd_;
  epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev);
  std::random_device rd;
  char prefix[16];
  std::snprintf(prefix, sizeof prefix, "%08x", rd());
  id_prefix_ = prefix;
  std::vector<std::string> states;
  for (const fs::directory_entry& e :
       fs::directory_iterator(fs::path(options_.root_dir) / "containers", ec)) {
    if (e.path().extension() == ".json") states.push_back(e.path().string());
  }
  std::sort(states.begin(), states.end());
  for (const std::string& s : states) Adopt(s);
  monitor_ = std::thread([this] { MonitorLoop(); });
  return Status::Ok();
}

ProcessRuntime::~ProcessRuntime() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  Wake();
  if (monitor_.joinable()) monitor_.join();
  for (auto& [id, c] : running_) EndProbe(c);
  for (auto& [fd, id] : by_fd_) close(fd);
  if (wake_fd_ >= 0) close(wake_fd_);
  if (epoll_fd_ >= 0) close(epoll_fd_);
}

std::string ProcessRuntime::StatePath(const std::string& id) const {
  return options_.root_dir + "/containers/" + id + ".json";
}
std::string ProcessRuntime::ExitPath(const std::string& id) const {
  return options_.root_dir + "/containers/" + id + ".exit";
}

std::string ProcessRuntime::NewId() {
  MutexLock lock(mu_);
  return id_prefix_ + "-" + std::to_string(++next_id_);
}

void ProcessRuntime::Wake() {
  const uint64_t one = 1;
  if (wake_fd_ >= 0) WriteAll(wake_fd_, &one, sizeof one);
}

void ProcessRuntime::Adopt(const std::string& state_path) {
  nlohmann::json j;
  try {
    std::ifstream in(state_path);
    j = nlohmann::json::parse(in);
  } catch (const std::exception&) {  // a torn or foreign file: nothing to adopt
    std::remove(state_path.c_str());
    return;
  }
  Container c;
  c.info.id = j.value("id", "");
  c.info.pod_namespace = j.value("pod_namespace", "");
  c.info.pod_name = j.value("pod_name", "");
  c.info.pod_uid = j.value("pod_uid", "");
  c.info.container_name = j.value("container_name", "");
  c.info.pid = j.value("pid", 0);
  c.info.stdout_path = j.value("stdout", "");
  c.info.stderr_path = j.value("stderr", "");
  c.info.adopted = true;
  c.image = j.value("image", "");
  c.start_ticks = j.value("start_ticks", uint64_t{0});
  c.shim_pid = j.value("shim_pid", 0);
  c.shim_start_ticks = j.value("shim_start_ticks", uint64_t{0});
  const std::string exit_path = ExitPath(c.info.id);
  auto forget = [&] {
    std::remove(state_path.c_str());
    std::remove(exit_path.c_str());
  };
  if (c.info.id.empty() || state_path != StatePath(c.info.id) || fs::exists(exit_path)) {
    forget();  // exited while no agent ran: the next Start runs it again
    return;
  }
  const std::optional<uint64_t> ticks = ProcessStartTime(c.info.pid);
  if (!ticks || *ticks != c.start_ticks || c.start_ticks == 0) {
    forget();  // gone (and its shim with it), or the pid now belongs to another process
    return;
  }
  const std::optional<uint64_t> shim_ticks = ProcessStartTime(c.shim_pid);
  if (shim_ticks && *shim_ticks == c.shim_start_ticks) {
    c.pidfd = PidfdOpen(c.shim_pid);
    c.watching_shim = true;
    // Still this process's child (a runtime reopened in the same process): reap it when it ends.
    c.own_shim = StatField(c.shim_pid, 4).value_or(0) == static_cast<uint64_t>(getpid());
  }
  if (c.pidfd < 0) {
    c.pidfd = PidfdOpen(c.info.pid);
    c.watching_shim = false;
  }
  if (c.pidfd < 0) {
    forget();
    return;
  }
  // Check again now that the pidfd pins the pid: it may have been recycled in between.
  const pid_t pinned = c.watching_shim ? c.shim_pid : c.info.pid;
  const uint64_t expected = c.watching_shim ? c.shim_start_ticks : c.start_ticks;
  if (ProcessStartTime(pinned).value_or(0) != expected) {
    close(c.pidfd);
    forget();
    return;
  }
  MutexLock lock(mu_);
  const std::string id = c.info.id;
  Container& stored = running_.emplace(id, std::move(c)).first->second;
  Watch(id, stored);
}

void ProcessRuntime::Watch(const std::string& id, Container& c) {
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = c.pidfd;
  epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, c.pidfd, &ev);
  by_fd_[c.pidfd] = id;
}

void ProcessRuntime::SetExitListener(ExitListener listener) {
  MutexLock lock(mu_);
  listener_ = std::move(listener);
}

Status ProcessRuntime::WriteState(const Container& c) const {
  nlohmann::json j = {{"id", c.info.id},
                      {"pod_namespace", c.info.pod_namespace},
                      {"pod_name", c.info.pod_name},
                      {"pod_uid", c.info.pod_uid},
                      {"container_name", c.info.container_name},
                      {"image", c.image},
                      {"argv", c.argv},
                      {"pid", c.info.pid},
                      {"start_ticks", c.start_ticks},
                      {"shim_pid", c.shim_pid},
                      {"shim_start_ticks", c.shim_start_ticks},
                      {"stdout", c.info.stdout_path},
                      {"stderr", c.info.stderr_path}};
  const std::string path = StatePath(c.info.id);
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << j.dump() << "\n";
    out.flush();
    if (!out) return Status(Code::kInternal, "cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return Status(Code::kInternal, "cannot rename " + tmp + ": " + ErrnoText(errno));
  }
  return Status::Ok();
}

Status ProcessRuntime::Spawn(const ContainerConfig& config, Container* c, std::string* error) {
  c->argv = config.command;
  c->argv.insert(c->argv.end(), config.args.begin(), config.args.end());
  if (c->argv.empty()) {
    *error = "container " + config.container_name +
             " has neither command nor args (images are not pulled, so there is no entrypoint)";
    return Status(Code::kInvalid, *error);
  }
  const fs::path pod_dir = ContainerDir(options_.root_dir, config);
  const std::string work_dir = (pod_dir / "work").string();
  std::error_code ec;
  fs::create_directories(work_dir, ec);
  if (ec) return Status(Code::kInternal, "cannot create " + work_dir + ": " + ec.message());
  const std::optional<std::string> exe = FindExecutable(c->argv[0], options_.path, work_dir);
  if (!exe) {
    return Status(Code::kNotFound, "container " + config.container_name + ": executable \"" + c->argv[0] +
                                       "\" not found in PATH " + options_.path);
  }
  c->info.stdout_path = (pod_dir / (c->info.id + ".stdout.log")).string();
  c->info.stderr_path = (pod_dir / (c->info.id + ".stderr.log")).string();
  std::vector<std::string> env = ContainerEnvironment(config, options_.path, work_dir);
  std::vector<char*> argv_c, env_c;
  for (std::string& a : c->argv) argv_c.push_back(a.data());
  argv_c.push_back(nullptr);
  for (std::string& e : env) env_c.push_back(e.data());
  env_c.push_back(nullptr);
  const std::string exit_path = ExitPath(c->info.id);
  const std::string exit_tmp = exit_path + ".tmp";

  const int in_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  const int out_fd = open(c->info.stdout_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  const int err_fd = open(c->info.stderr_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  int pid_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
  const bool pipes_ok = pipe2(pid_pipe, O_CLOEXEC) == 0 && pipe2(err_pipe, O_CLOEXEC) == 0;
  auto close_all = [&] {
    for (int fd : {in_fd, out_fd, err_fd, pid_pipe[0], pid_pipe[1], err_pipe[0], err_pipe[1]}) {
      if (fd >= 0) close(fd);
    }
  };
  if (in_fd < 0 || out_fd < 0 || err_fd < 0 || !pipes_ok) {
    const std::string why = ErrnoText(errno);
    close_all();
    return Status(Code::kInternal, "cannot open the log files or pipes of " + c->info.id + ": " + why);
  }
  const pid_t shim = fork();
  if (shim < 0) {
    const std::string why = ErrnoText(errno);
    close_all();
    return Status(Code::kUnavailable, "fork: " + why);
  }
  if (shim == 0) {
    setsid();
    const pid_t child = fork();
    if (child == 0) {
      RunContainer(in_fd, out_fd, err_fd, err_pipe[1], work_dir.c_str(), exe->c_str(), argv_c.data(),
                   env_c.data());
    }
    RunShim(child, pid_pipe[1], exit_tmp.c_str(), exit_path.c_str());
  }
  // The agent: only the read ends stay open here.
  for (int* fd : {&pid_pipe[1], &err_pipe[1]}) {
    close(*fd);
    *fd = -1;
  }
  const int shim_fd = PidfdOpen(shim);  // the shim is an unreaped child: this cannot race a recycle
  pid_t child = 0;
  const size_t got_pid = ReadFull(pid_pipe[0], &child, sizeof child);
  int exec_errno = 0;
  const size_t got_errno = ReadFull(err_pipe[0], &exec_errno, sizeof exec_errno);
  close_all();
  if (got_pid != sizeof child || child <= 0 || got_errno == sizeof exec_errno || shim_fd < 0) {
    if (shim_fd >= 0) close(shim_fd);
    int status = 0;
    while (waitpid(shim, &status, 0) < 0 && errno == EINTR) {
    }
    std::remove(exit_path.c_str());
    std::remove(exit_tmp.c_str());
    if (got_errno == sizeof exec_errno) {
      return Status(Code::kInvalid,
                    "container " + config.container_name + ": exec " + *exe + ": " + ErrnoText(exec_errno));
    }
    return Status(Code::kInternal, "container " + config.container_name + ": the shim did not start it");
  }
  c->info.pid = child;
  c->start_ticks = ProcessStartTime(child).value_or(0);  // 0 if it is already gone: never adopted
  c->shim_pid = shim;
  c->shim_start_ticks = ProcessStartTime(shim).value_or(0);
  c->own_shim = true;
  c->pidfd = shim_fd;
  c->watching_shim = true;
  c->env = env;
  c->work_dir = work_dir;
  if (Status s = WriteState(*c); !s.ok()) *error = s.message();  // runs, but will not be re-adopted
  return Status::Ok();
}

bool ProcessRuntime::Adoptable(const std::string& pod_uid, const std::string& container_name) const {
  MutexLock lock(mu_);
  for (const auto& [id, c] : running_) {
    if (c.info.adopted && !c.info.claimed && c.info.pod_uid == pod_uid &&
        c.info.container_name == container_name)
      return true;
  }
  return false;
}

void ProcessRuntime::Start(const ContainerConfig& config, Callback<Result<std::string>> done) {
  {
    MutexLock lock(mu_);
    for (auto& [id, c] : running_) {
      if (c.info.adopted && !c.info.claimed && c.info.pod_uid == config.pod_uid &&
          c.info.container_name == config.container_name) {
        c.info.claimed = true;
        c.work_dir = (ContainerDir(options_.root_dir, config) / "work").string();
        c.env = ContainerEnvironment(config, options_.path, c.work_dir);
        SetProbe(config, c, SteadyClock::now());  // its initial delay is long over
        options_.executor->Post([done = std::move(done), id = id] { done(id); });
        Wake();
        return;
      }
    }
  }
  Container c;
  c.info.id = NewId();
  c.info.pod_namespace = config.pod_namespace;
  c.info.pod_name = config.pod_name;
  c.info.pod_uid = config.pod_uid;
  c.info.container_name = config.container_name;
  c.info.claimed = true;
  c.image = config.image;
  std::string warning;
  Status s = Spawn(config, &c, &warning);
  if (!s.ok()) {
    options_.executor->Post([done = std::move(done), s] { done(s); });
    return;
  }
  SetProbe(config, c,
           SteadyClock::now() +
               std::chrono::duration_cast<SteadyClock::duration>(
                   config.readiness_probe ? config.readiness_probe->initial_delay : Duration::zero()));
  MutexLock lock(mu_);
  const std::string id = c.info.id;
  Container& stored = running_.emplace(id, std::move(c)).first->second;
  // Posted before the monitor (which needs mu_) can report an exit of this container.
  options_.executor->Post([done = std::move(done), id] { done(id); });
  Watch(id, stored);
  Wake();  // the monitor's next wake-up may be the first probe
}

void ProcessRuntime::SetProbe(const ContainerConfig& config, Container& c, SteadyClock::time_point first) {
  c.probe = config.readiness_probe;
  c.ready = !c.probe;
  c.successes = c.failures = 0;
  c.probe_at = first;
}

void ProcessRuntime::SetReadinessListener(ReadinessListener listener) {
  MutexLock lock(mu_);
  readiness_listener_ = std::move(listener);
}

bool ProcessRuntime::Ready(const std::string& id) const {
  MutexLock lock(mu_);
  auto it = running_.find(id);
  return it != running_.end() && it->second.ready;
}

void ProcessRuntime::StartProbe(const std::string& id, Container& c) {
  c.probe_started = SteadyClock::now();
  c.probe_deadline = c.probe_started + std::chrono::duration_cast<SteadyClock::duration>(c.probe->timeout);
  c.probe_timed_out = false;
  std::optional<std::string> exe;
  if (!c.probe->command.empty()) exe = FindExecutable(c.probe->command[0], options_.path, c.work_dir);
  pid_t pid = 0;
  if (exe) {
    std::vector<std::string> argv = c.probe->command;
    std::vector<std::string> env = c.env;
    std::vector<char*> argv_c, env_c;
    for (std::string& a : argv) argv_c.push_back(a.data());
    argv_c.push_back(nullptr);
    for (std::string& e : env) env_c.push_back(e.data());
    env_c.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    posix_spawn_file_actions_addchdir_np(&actions, c.work_dir.c_str());
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attr, &none);    // the agent blocks SIGTERM/SIGINT for sigwait
    posix_spawnattr_setsigdefault(&attr, &all);  // and ignores SIGPIPE
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
    if (posix_spawn(&pid, exe->c_str(), &actions, &attr, argv_c.data(), env_c.data()) != 0) pid = 0;
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&actions);
  }
  const int fd = pid > 0 ? PidfdOpen(pid) : -1;  // an unreaped child: no recycle race
  if (fd < 0) {
    if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
    // Not found or not run: a failure, as the kubelet's exec of a missing command.
    c.probe_pid = 0;
    c.probe_timed_out = true;
    OnProbeResult(id, c, false);
    return;
  }
  c.probe_pid = pid;
  c.probe_fd = fd;
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = fd;
  epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev);
  probe_by_fd_[fd] = id;
}

void ProcessRuntime::EndProbe(Container& c) {
  if (c.probe_pid <= 0) return;
  kill(-c.probe_pid, SIGKILL);
  int status = 0;
  while (waitpid(c.probe_pid, &status, 0) < 0 && errno == EINTR) {
  }
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, c.probe_fd, nullptr);
  close(c.probe_fd);
  probe_by_fd_.erase(c.probe_fd);
  c.probe_pid = 0;
  c.probe_fd = -1;
}

void ProcessRuntime::OnProbeDone(int fd) {
  auto where = probe_by_fd_.find(fd);
  if (where == probe_by_fd_.end()) return;
  const std::string id = where->second;
  auto it = running_.find(id);
  if (it == running_.end() || it->second.probe_fd != fd) {  // cannot happen: EndProbe forgets the fd
    probe_by_fd_.erase(where);
    return;
  }
  Container& c = it->second;
  int status = 0;
  while (waitpid(c.probe_pid, &status, 0) < 0 && errno == EINTR) {
  }
  kill(-c.probe_pid, SIGKILL);  // whatever the probe left behind in its group
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
  close(fd);
  probe_by_fd_.erase(where);
  c.probe_pid = 0;
  c.probe_fd = -1;
  OnProbeResult(id, c, !c.probe_timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

void ProcessRuntime::OnProbeResult(const std::string& id, Container& c, bool success) {
  const bool was = c.ready;
  if (success) {
    c.failures = 0;
    if (++c.successes >= c.probe->success_threshold) c.ready = true;
  } else {
    c.successes = 0;
    if (++c.failures >= c.probe->failure_threshold) c.ready = false;
  }
  c.probe_at = std::max(SteadyClock::now(),
                        c.probe_started + std::chrono::duration_cast<SteadyClock::duration>(c.probe->period));
  if (c.ready != was && c.info.claimed && readiness_listener_) {
    options_.executor->Post([listener = readiness_listener_, id, ready = c.ready] { listener(id, ready); });
  }
}

void ProcessRuntime::Stop(const std::string& id, Duration grace, Callback<Status> done) {
  MutexLock lock(mu_);
  auto it = running_.find(id);
  if (it == running_.end()) {
    options_.executor->Post([done = std::move(done)] { done(Status::Ok()); });
    return;
  }
  Container& c = it->second;
  c.stop_waiters.push_back(std::move(done));
  const auto now = SteadyClock::now();
  const auto kill_at =
      now + std::chrono::duration_cast<SteadyClock::duration>(std::max(grace, Duration::zero()));
  if (grace <= Duration::zero()) {
    kill(-c.info.pid, SIGKILL);
    c.kill_at.reset();
    return;
  }
  if (!c.kill_at) kill(-c.info.pid, SIGTERM);
  if (!c.kill_at || kill_at < *c.kill_at) c.kill_at = kill_at;
  Wake();
}

int ProcessRuntime::StopUnclaimed(const std::set<std::string>& keep_pod_uids, Duration grace) {
  std::vector<std::string> ids;
  {
    MutexLock lock(mu_);
    for (const auto& [id, c] : running_) {
      if (c.info.adopted && !c.info.claimed && keep_pod_uids.count(c.info.pod_uid) == 0) ids.push_back(id);
    }
  }
  for (const std::string& id : ids) Stop(id, grace, [](const Status&) {});
  return static_cast<int>(ids.size());
}

std::vector<ProcessInfo> ProcessRuntime::Running() const {
  MutexLock lock(mu_);
  std::vector<ProcessInfo> out;
  for (const auto& [id, c] : running_) out.push_back(c.info);
  return out;
}

std::size_t ProcessRuntime::unclaimed_count() const {
  MutexLock lock(mu_);
  std::size_t n = 0;
  for (const auto& [id, c] : running_) n += c.info.adopted && !c.info.claimed ? 1 : 0;
  return n;
}

void ProcessRuntime::OnPidfdReady(int fd) {
  auto where = by_fd_.find(fd);
  if (where == by_fd_.end()) return;
  const std::string id = where->second;
  by_fd_.erase(where);
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
  close(fd);
  auto it = running_.find(id);
  if (it == running_.end()) return;
  Container& c = it->second;
  if (c.own_shim) {
    int status = 0;
    while (waitpid(c.shim_pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  c.pidfd = -1;
  // Watching the shim: it wrote the code before it exited. Watching the process (its shim died): the
  // code is lost unless a shim wrote it just in time.
  const int code = ReadExitCode(ExitPath(id)).value_or(kUnknownExitCode);
  Finish(id, code, true);
}

void ProcessRuntime::Finish(const std::string& id, int exit_code, bool seen_live) {
  auto it = running_.find(id);
  if (it == running_.end()) return;
  Container& c = it->second;
  // Whatever the container left behind in its group goes with it (the kubelet kills the whole cgroup).
  if (seen_live) kill(-c.info.pid, SIGKILL);
  EndProbe(c);  // no readiness change after the exit
  std::remove(StatePath(id).c_str());
  std::remove(ExitPath(id).c_str());
  if (c.info.claimed && listener_) {
    options_.executor->Post([listener = listener_, id, exit_code] { listener(id, exit_code); });
  }
  for (Callback<Status>& w : c.stop_waiters) {
    options_.executor->Post([w = std::move(w)] { w(Status::Ok()); });
  }
  running_.erase(it);
}

void ProcessRuntime::MonitorLoop() {
  for (;;) {
    int timeout_ms = -1;
    {
      MutexLock lock(mu_);
      if (stopping_) return;
      const auto now = SteadyClock::now();
      auto until = [&](SteadyClock::time_point t) {
        const auto left = std::chrono::ceil<std::chrono::milliseconds>(t - now).count();
        const int ms = static_cast<int>(std::clamp<int64_t>(left, 0, 60'000));
        timeout_ms = timeout_ms < 0 ? ms : std::min(timeout_ms, ms);
      };
      for (const auto& [id, c] : running_) {
        if (c.kill_at) until(*c.kill_at);
        if (c.probe && c.info.claimed) until(c.probe_pid > 0 ? c.probe_deadline : c.probe_at);
      }
    }
    epoll_event events[32];
    const int n = epoll_wait(epoll_fd_, events, 32, timeout_ms);
    MutexLock lock(mu_);
    if (stopping_) return;
    for (int i = 0; i < n; ++i) {
      if (events[i].data.fd == wake_fd_) {
        uint64_t v = 0;
        while (read(wake_fd_, &v, sizeof v) > 0) {
        }
        continue;
      }
      if (probe_by_fd_.count(events[i].data.fd) > 0) {
        OnProbeDone(events[i].data.fd);
      } else {
        OnPidfdReady(events[i].data.fd);
      }
    }
    const auto now = SteadyClock::now();
    for (auto& [id, c] : running_) {
      if (c.kill_at && *c.kill_at <= now) {
        kill(-c.info.pid, SIGKILL);
        c.kill_at.reset();
      }
      if (!c.probe || !c.info.claimed) continue;
      if (c.probe_pid > 0 && !c.probe_timed_out && c.probe_deadline <= now) {
        kill(-c.probe_pid, SIGKILL);  // its pidfd fires: a failure
        c.probe_timed_out = true;
      } else if (c.probe_pid <= 0 && c.probe_at <= now) {
        StartProbe(id, c);
      }
    }
  }
}

}  // namespace rcsim
