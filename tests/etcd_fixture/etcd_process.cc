#include "tests/etcd_fixture/etcd_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>
#include <thread>
#include <vector>

namespace rcsim {

std::vector<int> PickFreePorts(int n) {
  std::vector<int> fds;
  std::vector<int> ports;
  for (int i = 0; i < n; ++i) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) break;
    fds.push_back(fd);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof(addr);
    if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      break;
    }
    ports.push_back(ntohs(addr.sin_port));
  }
  for (int fd : fds) close(fd);
  if (static_cast<int>(ports.size()) != n) return {};
  return ports;
}

namespace {

using SteadyClock = std::chrono::steady_clock;
constexpr auto kPollInterval = std::chrono::milliseconds(50);

// errno's message (std::strerror is not thread-safe).
std::string ErrnoText() { return std::error_code(errno, std::generic_category()).message(); }

// One HTTP/1.0 GET of `path` against 127.0.0.1:port (1 s timeouts); the whole response, or "".
std::string HttpGet(int port, const char* path) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return "";
  timeval tv{};
  tv.tv_sec = 1;
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  std::string response;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
    const std::string request = std::string("GET ") + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
    if (send(fd, request.data(), request.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(request.size())) {
      char buf[4096];
      ssize_t n;
      while ((n = recv(fd, buf, sizeof(buf), 0)) > 0) response.append(buf, static_cast<size_t>(n));
    }
  }
  close(fd);
  return response;
}

// True when etcd answers {"health":"true"}.
bool HealthOk(int port) { return HttpGet(port, "/health").find("\"health\":\"true\"") != std::string::npos; }

// The state letter of /proc/<pid>/stat ('R', 'S', 'T' for stopped, ...), or 0 if it cannot be read.
char ProcessState(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t paren = stat.rfind(')');  // the command name may hold spaces and parentheses
  return paren == std::string::npos || paren + 2 >= stat.size() ? '\0' : stat[paren + 2];
}

}  // namespace

int PickFreeLoopbackPort() {
  std::vector<int> ports = PickFreePorts(1);
  return ports.empty() ? 0 : ports[0];
}

EtcdProcess::EtcdProcess(EtcdProcessOptions options) : options_(std::move(options)) {}

Result<std::unique_ptr<EtcdProcess>> EtcdProcess::Prepare(const EtcdProcessOptions& options, int client_port,
                                                          int peer_port) {
  std::unique_ptr<EtcdProcess> p(new EtcdProcess(options));
  std::string tmpl = (std::filesystem::temp_directory_path() / "rcsim-etcd-XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr) {
    return Status(Code::kInternal, std::string("mkdtemp: ") + ErrnoText());
  }
  p->temp_dir_ = tmpl;
  p->data_dir_ = tmpl + "/data";
  p->log_path_ = tmpl + "/etcd.log";
  p->client_port_ = client_port;
  p->peer_port_ = peer_port;
  return p;
}

namespace {

// Ports are picked here and bound by etcd later; in between another process may take one (another
// test's server, or a connection's source port). etcd then exits saying so, and we try new ports.
constexpr int kPortAttempts = 5;

bool LostPortRace(const Status& s) { return s.message().find("address already in use") != std::string::npos; }

}  // namespace

Result<std::unique_ptr<EtcdProcess>> EtcdProcess::Start(const EtcdProcessOptions& options) {
  for (int attempt = 1;; ++attempt) {
    std::vector<int> ports = options.pick_ports(2);
    if (ports.empty()) return Status(Code::kInternal, "no free loopback port");
    Result<std::unique_ptr<EtcdProcess>> p = Prepare(options, ports[0], ports[1]);
    if (!p.ok()) return p;
    Status s = (*p)->Launch();
    if (s.ok()) s = (*p)->WaitHealthy();
    if (s.ok()) return p;
    if (attempt == kPortAttempts || !LostPortRace(s)) return s;
  }
}

Result<std::vector<std::unique_ptr<EtcdProcess>>> EtcdProcess::StartCluster(
    int members, const EtcdProcessOptions& options) {
  for (int attempt = 1;; ++attempt) {
    Result<std::vector<std::unique_ptr<EtcdProcess>>> cluster = TryStartCluster(members, options);
    if (cluster.ok() || attempt == kPortAttempts || !LostPortRace(cluster.status())) return cluster;
  }
}

Result<std::vector<std::unique_ptr<EtcdProcess>>> EtcdProcess::TryStartCluster(
    int members, const EtcdProcessOptions& options) {
  std::vector<int> ports = options.pick_ports(2 * members);
  if (ports.empty()) return Status(Code::kInternal, "no free loopback port");
  std::string initial_cluster;
  for (std::size_t i = 0; i < static_cast<std::size_t>(members); ++i) {
    if (i > 0) initial_cluster += ",";
    initial_cluster += "m" + std::to_string(i) + "=http://127.0.0.1:" + std::to_string(ports[2 * i + 1]);
  }
  std::vector<std::unique_ptr<EtcdProcess>> out;
  for (std::size_t i = 0; i < static_cast<std::size_t>(members); ++i) {
    Result<std::unique_ptr<EtcdProcess>> p = Prepare(options, ports[2 * i], ports[2 * i + 1]);
    if (!p.ok()) return p.status();
    (*p)->name_ = "m" + std::to_string(i);
    (*p)->initial_cluster_ = initial_cluster;
    if (Status s = (*p)->Launch(); !s.ok()) return s;
    out.push_back(std::move(p).value());
  }
  // A member is healthy only once a leader is elected, which needs a quorum started: wait for all at
  // once, failing as soon as one member exits (the others would wait for it in vain).
  const auto deadline = SteadyClock::now() + options.start_timeout;
  while (true) {
    bool all_healthy = true;
    for (auto& member : out) {
      int wstatus = 0;
      if (member->pid_ > 0 && waitpid(member->pid_, &wstatus, WNOHANG) == member->pid_) {
        member->pid_ = -1;
        return Status(Code::kUnavailable, "etcd member " + member->name_ +
                                              " exited during start-up; log tail:\n" + member->LogTail());
      }
      all_healthy = all_healthy && HealthOk(member->client_port_);
    }
    if (all_healthy) return out;
    if (SteadyClock::now() >= deadline) {
      return Status(Code::kUnavailable, "etcd cluster not healthy after " +
                                            FormatDuration(options.start_timeout) + "; m0's log tail:\n" +
                                            out.front()->LogTail());
    }
    std::this_thread::sleep_for(kPollInterval);
  }
}

std::string EtcdProcess::Endpoints(const std::vector<std::unique_ptr<EtcdProcess>>& members) {
  std::string out;
  for (const auto& m : members) {
    if (!out.empty()) out += ",";
    out += m->endpoint();
  }
  return out;
}

bool EtcdProcess::Healthy() const { return pid_ > 0 && !paused_ && HealthOk(client_port_); }

bool EtcdProcess::IsLeader() const {
  if (pid_ <= 0 || paused_) return false;
  const std::string metrics = HttpGet(client_port_, "/metrics");
  return metrics.find("\netcd_server_is_leader 1") != std::string::npos;
}

EtcdProcess::~EtcdProcess() {
  Stop();
  if (!temp_dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(temp_dir_, ec);
  }
}

std::string EtcdProcess::endpoint() const { return "http://127.0.0.1:" + std::to_string(client_port_); }

Status EtcdProcess::Launch() {
  const std::string client_url = endpoint();
  const std::string peer_url = "http://127.0.0.1:" + std::to_string(peer_port_);
  std::vector<std::string> args = {
      options_.binary,
      "--name=" + name_,
      "--data-dir=" + data_dir_,
      "--listen-client-urls=" + client_url,
      "--advertise-client-urls=" + client_url,
      "--listen-peer-urls=" + peer_url,
      "--initial-advertise-peer-urls=" + peer_url,
      "--initial-cluster=" + (initial_cluster_.empty() ? name_ + "=" + peer_url : initial_cluster_),
      "--initial-cluster-state=new",
  };
  args.insert(args.end(), options_.extra_args.begin(), options_.extra_args.end());
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  int log_fd = open(log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) return Status(Code::kInternal, "open " + log_path_ + ": " + ErrnoText());
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    close(log_fd);
    return Status(Code::kInternal, std::string("fork: ") + ErrnoText());
  }
  if (pid == 0) {
    // Child: only async-signal-safe calls until execv.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, STDIN_FILENO);
    dup2(log_fd, STDOUT_FILENO);
    dup2(log_fd, STDERR_FILENO);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(log_fd);
  pid_ = pid;
  return Status::Ok();
}

Status EtcdProcess::WaitHealthy() {
  const auto deadline = SteadyClock::now() + options_.start_timeout;
  while (true) {
    int wstatus = 0;
    if (pid_ > 0 && waitpid(pid_, &wstatus, WNOHANG) == pid_) {
      pid_ = -1;
      return Status(Code::kUnavailable, "etcd exited during start-up; log tail:\n" + LogTail());
    }
    if (HealthOk(client_port_)) return Status::Ok();
    if (SteadyClock::now() >= deadline) {
      Stop();
      return Status(Code::kUnavailable, "etcd not healthy after " + FormatDuration(options_.start_timeout) +
                                            "; log tail:\n" + LogTail());
    }
    std::this_thread::sleep_for(kPollInterval);
  }
}

void EtcdProcess::Pause() {
  if (pid_ <= 0 || paused_) return;
  kill(pid_, SIGSTOP);
  paused_ = true;
  // kill() only queues the signal; wait until the kernel reports the process stopped, so the caller's
  // next request surely meets a frozen server.
  const auto deadline = SteadyClock::now() + std::chrono::seconds(5);
  while (ProcessState(pid_) != 'T' && SteadyClock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

void EtcdProcess::Resume() {
  if (pid_ <= 0 || !paused_) return;
  kill(pid_, SIGCONT);
  paused_ = false;
}

void EtcdProcess::Kill() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
  paused_ = false;
}

void EtcdProcess::Stop() {
  if (pid_ <= 0) return;
  Resume();  // a stopped process does not act on SIGTERM until it is continued
  kill(pid_, SIGTERM);
  const auto deadline = SteadyClock::now() + options_.stop_timeout;
  while (true) {
    int wstatus = 0;
    pid_t r = waitpid(pid_, &wstatus, WNOHANG);
    if (r == pid_ || (r < 0 && errno == ECHILD)) break;
    if (SteadyClock::now() >= deadline) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &wstatus, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  pid_ = -1;
}

Status EtcdProcess::Restart() {
  Stop();
  // The same ports, as the member's clients and peers know them. They were free a moment ago, but a
  // connection may have taken one as its source port: try again until the deadline while one is in use.
  const auto deadline = SteadyClock::now() + options_.start_timeout;
  while (true) {
    if (Status s = Launch(); !s.ok()) return s;
    Status healthy = WaitHealthy();
    if (healthy.ok() || SteadyClock::now() >= deadline || !LostPortRace(healthy)) return healthy;
    std::this_thread::sleep_for(kPollInterval);
  }
}

std::string EtcdProcess::LogTail() const {
  std::ifstream in(log_path_);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string all = ss.str();
  constexpr size_t kTail = 4000;
  return all.size() > kTail ? all.substr(all.size() - kTail) : all;
}

}  // namespace rcsim
