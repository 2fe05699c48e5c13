#include "tests/api_http_contract/apiserver_process.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <system_error>
#include <thread>
#include <vector>

#include "backends/httpclient/http_api_client.h"
#include "tests/etcd_fixture/etcd_process.h"

namespace rcsim {
namespace {

using SteadyClock = std::chrono::steady_clock;
constexpr auto kPollInterval = std::chrono::milliseconds(20);

// errno's message (std::strerror is not thread-safe).
std::string ErrnoText() { return std::error_code(errno, std::generic_category()).message(); }

// One GET through `client`, waited for synchronously (bounded by the client's request timeout).
Result<HttpReply> GetSync(HttpApiClient& client, const std::string& target) {
  std::mutex mu;
  std::condition_variable cv;
  std::optional<Result<HttpReply>> reply;
  client.Send("GET", target, "", [&](Result<HttpReply> r) {
    std::lock_guard<std::mutex> lock(mu);
    reply.emplace(std::move(r));
    cv.notify_all();
  });
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [&] { return reply.has_value(); });
  return std::move(*reply);
}

}  // namespace

Result<std::unique_ptr<ApiServerProcess>> ApiServerProcess::Start(ApiServerProcessOptions options) {
  std::unique_ptr<ApiServerProcess> p(new ApiServerProcess(std::move(options)));
  std::string tmpl = (std::filesystem::temp_directory_path() / "rcsim-apiserver-XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr) {
    return Status(Code::kInternal, std::string("mkdtemp: ") + ErrnoText());
  }
  p->temp_dir_ = tmpl;
  p->log_path_ = tmpl + "/apiserver.log";
  // --port 0: the server binds a port the kernel chooses and says which. A port picked here and bound
  // there could be taken in between (by another test's server, or as a connection's source port).
  if (Status s = p->Launch(); !s.ok()) return s;
  if (Status s = p->WaitReady(); !s.ok()) return s;
  return p;
}

Status ApiServerProcess::WaitListening(std::size_t log_offset) {
  const std::string needle = "listening on 127.0.0.1:";
  const auto deadline = SteadyClock::now() + options_.start_timeout;
  while (true) {
    std::ifstream in(log_path_);
    in.seekg(static_cast<std::streamoff>(log_offset));
    for (std::string line; std::getline(in, line);) {
      const size_t at = line.find(needle);
      if (at == std::string::npos) continue;
      const int port = std::atoi(line.c_str() + at + needle.size());
      if (port <= 0 || port > 65535) return Status(Code::kInternal, "apiserver said: " + line);
      port_ = port;
      return Status::Ok();
    }
    int wstatus = 0;
    if (waitpid(pid_, &wstatus, WNOHANG) == pid_) {
      pid_ = -1;
      return Status(Code::kUnavailable, "apiserver exited during start-up; log tail:\n" + LogTail());
    }
    if (SteadyClock::now() >= deadline) {
      Stop();
      return Status(Code::kUnavailable, "apiserver did not say where it listens within " +
                                            FormatDuration(options_.start_timeout) + "; log tail:\n" +
                                            LogTail());
    }
    std::this_thread::sleep_for(kPollInterval);
  }
}

Status ApiServerProcess::Launch() {
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(log_path_, ec);
  launch_log_offset_ = ec ? 0 : static_cast<std::size_t>(size);
  std::vector<std::string> args = {options_.binary, "--etcd_servers=" + options_.etcd_servers,
                                   "--address",     "127.0.0.1",
                                   "--port",        std::to_string(port_)};
  if (!options_.bearer_token.empty()) {
    const std::string token_path = temp_dir_ + "/token";
    std::ofstream(token_path) << options_.bearer_token << "\n";
    args.emplace_back("--token-file");
    args.push_back(token_path);
  }
  if (!options_.certs_dir.empty()) {
    for (const auto& [flag, file] :
         {std::pair{"--tls-cert-file=", "server.crt"}, std::pair{"--tls-private-key-file=", "server.key"},
          std::pair{"--client-ca-file=", "ca.crt"}, std::pair{"--token-auth-file=", "tokens.csv"}}) {
      args.push_back(flag + options_.certs_dir + "/" + file);
    }
  }
  args.insert(args.end(), options_.extra_args.begin(), options_.extra_args.end());
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  int log_fd = open(log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) return Status(Code::kInternal, "open " + log_path_ + ": " + ErrnoText());
  const pid_t parent = getpid();
  const pid_t pid = fork();
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

Status ApiServerProcess::WaitReady() {
  if (port_ == 0) {
    if (Status s = WaitListening(launch_log_offset_); !s.ok()) return s;
  }
  HttpApiClientOptions o;
  o.base_url = url();
  o.bearer_token = options_.bearer_token;
  if (!options_.certs_dir.empty()) {
    o.tls.ca_file = options_.certs_dir + "/ca.crt";
    std::ifstream(options_.certs_dir + "/token") >> o.bearer_token;  // GET /version needs a token
  }
  o.request_timeout = std::chrono::seconds(2);
  o.connect_timeout = std::chrono::seconds(1);
  auto client = HttpApiClient::Create(o);
  if (!client.ok()) return client.status();
  const auto deadline = SteadyClock::now() + options_.start_timeout;
  std::string last = "no attempt";
  while (true) {
    int wstatus = 0;
    if (waitpid(pid_, &wstatus, WNOHANG) == pid_) {
      pid_ = -1;
      return Status(Code::kUnavailable, "apiserver exited during start-up; log tail:\n" + LogTail());
    }
    Result<HttpReply> reply = GetSync(**client, "/version");
    if (reply.ok() && reply->status == 200) return Status::Ok();
    last = reply.ok() ? "HTTP " + std::to_string(reply->status) : reply.status().ToString();
    if (SteadyClock::now() >= deadline) {
      Stop();
      return Status(Code::kUnavailable, "apiserver not ready after " +
                                            FormatDuration(options_.start_timeout) + " (" + last +
                                            "); log tail:\n" + LogTail());
    }
    std::this_thread::sleep_for(kPollInterval);
  }
}

void ApiServerProcess::Stop() {
  if (pid_ <= 0) return;
  kill(pid_, SIGTERM);
  const auto deadline = SteadyClock::now() + options_.stop_timeout;
  while (true) {
    int wstatus = 0;
    const pid_t r = waitpid(pid_, &wstatus, WNOHANG);
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

void ApiServerProcess::Kill() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

Status ApiServerProcess::Restart() {
  Stop();
  // The same port, so that clients find the server again. It was free a moment ago, but a connection
  // may have taken it as its source port: try again until the deadline while it is in use.
  const auto deadline = SteadyClock::now() + options_.start_timeout;
  while (true) {
    if (Status s = Launch(); !s.ok()) return s;
    Status ready = WaitReady();
    if (ready.ok() || SteadyClock::now() >= deadline ||
        ready.message().find("Address already in use") == std::string::npos) {
      return ready;
    }
    std::this_thread::sleep_for(kPollInterval);
  }
}

ApiServerProcess::~ApiServerProcess() {
  Stop();
  if (!temp_dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(temp_dir_, ec);
  }
}

std::string ApiServerProcess::url() const {
  return (options_.certs_dir.empty() ? "http://127.0.0.1:" : "https://127.0.0.1:") + std::to_string(port_);
}

std::string ApiServerProcess::LogTail() const {
  std::ifstream in(log_path_);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string all = ss.str();
  constexpr size_t kTail = 4000;
  return all.size() > kTail ? all.substr(all.size() - kTail) : all;
}

}  // namespace rcsim
