// Bounded resources of apps/apiserver (a real process over a real etcd), measured from /proc:
// 500 idle connections, 1,000 watch streams (most of them slow clients that never read while pods
// carrying 8 KiB annotations stream past) keep its memory and threads bounded, health checks are
// answered throughout, and what it cannot take is refused with 429 (a watch beyond --max-watches, a
// connection beyond --max-connections) rather than falling over; request bodies beyond
// --max-body-bytes get 413 and headers over 64 KiB get 431. Figures (RSS, threads, latencies) printed.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/api_http_contract/apiserver_process.h"
#include "tests/etcd_fixture/etcd_process.h"
#include "tests/faults/fault_fixture.h"

#if !defined(RCSIM_APISERVER_BINARY)
#error "the apiserver binary must be given"
#endif

namespace rcsim::faults {
namespace {

constexpr int kIdle = 500;
constexpr int kWatches = 1000;
constexpr int kMaxConnections = 1600;

// A value of /proc/<pid>/status ("VmRSS", "Threads"), as a number (kB for sizes), or -1.
long ProcStatus(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::stol(line.substr(field.size() + 1));
  }
  return -1;
}

// A plain socket to 127.0.0.1:port (blocking connect), with a small receive buffer when `slow`, so
// a client that never reads pushes back on the server quickly. -1 on failure.
int Connect(int port, bool slow = false) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (slow) {
    int size = 4096;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

bool SendAll(int fd, const std::string& data) {
  size_t off = 0;
  while (off < data.size()) {
    const ssize_t n = send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

// Reads until the response's status line and headers are in (or `timeout_ms` passes); "" if none.
std::string ReadHead(int fd, int timeout_ms) {
  std::string got;
  const auto until = SteadyClock::now() + std::chrono::milliseconds(timeout_ms);
  while (got.find("\r\n\r\n") == std::string::npos) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(until - SteadyClock::now()).count();
    if (left <= 0) break;
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left)) <= 0) break;
    char buf[4096];
    const ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    got.append(buf, static_cast<size_t>(n));
  }
  return got;
}

int StatusOf(const std::string& head) {
  if (head.rfind("HTTP/1.1 ", 0) != 0 || head.size() < 12) return 0;
  return std::stoi(head.substr(9, 3));
}

class Sockets {
 public:
  ~Sockets() {
    for (int fd : fds_) close(fd);
  }
  void Add(int fd) { fds_.push_back(fd); }
  size_t size() const { return fds_.size(); }
  void CloseAll() {
    for (int fd : fds_) close(fd);
    fds_.clear();
  }

 private:
  std::vector<int> fds_;
};

TEST(ResourceBoundsTest, IdleConnectionsWatchFloodAndSlowClientsStayBoundedAndAreRefusedWith429) {
  auto etcd = EtcdProcess::Start();
  ASSERT_TRUE(etcd.ok()) << etcd.status().ToString();
  ApiServerProcessOptions options;
  options.binary = RCSIM_APISERVER_BINARY;
  options.etcd_servers = (*etcd)->endpoint();
  options.extra_args = {"--max-connections=" + std::to_string(kMaxConnections),
                        "--max-watches=" + std::to_string(kWatches), "--max-body-bytes=1048576"};
  auto api = ApiServerProcess::Start(options);
  ASSERT_TRUE(api.ok()) << api.status().ToString();
  const pid_t pid = (*api)->pid();
  const int port = (*api)->port();
  auto client = TestClient((*api)->url());
  ASSERT_NE(client, nullptr);
  Status ns = CreateNamespace(*client, "flood");
  ASSERT_TRUE(ns.ok()) << ns.ToString();
  long peak_rss = 0, peak_threads = 0;
  auto sample = [&] {
    peak_rss = std::max(peak_rss, ProcStatus(pid, "VmRSS"));
    peak_threads = std::max(peak_threads, ProcStatus(pid, "Threads"));
  };
  const long rss_start = ProcStatus(pid, "VmRSS");
  const long threads_start = ProcStatus(pid, "Threads");
  double worst_health_ms = 0;
  auto health = [&]() -> bool {
    const auto start = SteadyClock::now();
    Result<HttpReply> r = SendSync(*client, "GET", "/healthz");
    worst_health_ms = std::max(worst_health_ms, MillisSince(start));
    sample();
    return r.ok() && r->status == 200;
  };
  ASSERT_TRUE(health());  // also opens the test client's pooled connection

  // 500 idle connections: connected, nothing sent.
  Sockets idle;
  for (int i = 0; i < kIdle; ++i) {
    const int fd = Connect(port);
    ASSERT_GE(fd, 0) << "idle connection " << i;
    idle.Add(fd);
  }
  EXPECT_TRUE(health()) << "health with " << kIdle << " idle connections";

  // 1,000 watch streams: 900 slow clients that never read after the headers, 100 that keep reading.
  Sockets slow;
  std::vector<int> readers;
  const std::string watch_request =
      "GET /api/v1/namespaces/flood/pods?watch=true HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  for (int i = 0; i < kWatches; ++i) {
    const bool reader = i % 10 == 0;
    const int fd = Connect(port, /*slow=*/!reader);
    ASSERT_GE(fd, 0) << "watch " << i;
    ASSERT_TRUE(SendAll(fd, watch_request));
    const std::string head = ReadHead(fd, 30000);
    ASSERT_EQ(StatusOf(head), 200) << "watch " << i << ": " << head;
    slow.Add(fd);
    if (reader) readers.push_back(fd);
    if (i % 100 == 0) sample();
  }
  EXPECT_TRUE(health()) << "health with " << kWatches << " watches";
  const long threads_with_watches = ProcStatus(pid, "Threads");

  // The 1,001st watch is refused with 429, and the server stays healthy.
  {
    const int fd = Connect(port);
    ASSERT_GE(fd, 0);
    ASSERT_TRUE(SendAll(fd, watch_request));
    const std::string head = ReadHead(fd, 30000);
    EXPECT_EQ(StatusOf(head), 429) << head;
    EXPECT_NE(head.find("Retry-After"), std::string::npos) << head;
    close(fd);
  }

  // Events every watcher must be sent: 300 pods with 8 KiB annotations (~2.5 MB per watcher, 2.5 GB
  // over all of them if nothing were bounded), while the readers drain theirs.
  const std::string big(8 << 10, 'x');
  std::atomic<bool> stop_readers{false};
  std::atomic<int64_t> read_bytes{0};
  std::atomic<int> readers_done{0};    // read every event
  std::atomic<int> readers_closed{0};  // closed by the server (it closes watchers past its buffer caps)
  const int64_t volume = 300LL * (8 << 10);
  std::thread drain([&] {
    std::vector<pollfd> fds;
    fds.reserve(readers.size());
    for (int fd : readers) fds.push_back({fd, POLLIN, 0});
    std::vector<int64_t> got(fds.size(), 0);
    char buf[65536];
    while (!stop_readers) {
      if (poll(fds.data(), fds.size(), 50) <= 0) continue;
      for (size_t i = 0; i < fds.size(); ++i) {
        pollfd& p = fds[i];
        if (p.fd < 0 || p.revents == 0) continue;
        const ssize_t n = recv(p.fd, buf, sizeof(buf), MSG_DONTWAIT);
        if (n > 0) {
          read_bytes += n;
          got[i] += n;
          if (got[i] >= volume && got[i] - n < volume) ++readers_done;
        } else if (n == 0 || (p.revents & (POLLHUP | POLLERR))) {
          if (got[i] < volume) ++readers_closed;
          p.fd = -1;  // the socket itself is closed with the others
        }
      }
    }
  });
  int created = 0;
  for (int i = 0; i < 300; ++i) {
    nlohmann::json pod = nlohmann::json::parse(PodJson("big-" + std::to_string(i), "flood"));
    pod["metadata"]["annotations"] = {{"filler", big}};
    Result<HttpReply> r = SendSync(*client, "POST", "/api/v1/namespaces/flood/pods", pod.dump());
    if (r.ok() && r->status == 201) ++created;
    if (i % 20 == 0) {
      sample();
      EXPECT_TRUE(health()) << "health while streaming, pod " << i;
    }
  }
  EXPECT_EQ(created, 300);
  // Each reader either gets every event or is closed by the server when the slow watchers have
  // filled the total watch buffer (a closed watcher re-lists, as with kube-apiserver); none hangs.
  const int n_readers = static_cast<int>(readers.size());
  EXPECT_TRUE(PollUntil(std::chrono::seconds(60),
                        [&] {
                          sample();
                          return readers_done.load() + readers_closed.load() == n_readers;
                        }))
      << readers_done.load() << " done, " << readers_closed.load() << " closed of " << n_readers;
  EXPECT_GT(readers_done.load(), 0) << "no watch client got its events";
  stop_readers = true;
  drain.join();
  sample();
  EXPECT_TRUE(health());

  // More connections than --max-connections (slow watchers the server closed freed some): open them
  // until one is refused; it is answered 429 (and closed), and the server stays healthy.
  Sockets extra;
  int refused = 0, accepted = 0;
  for (int i = 0; i < kMaxConnections && refused == 0; ++i) {
    const int fd = Connect(port);
    if (fd < 0) continue;
    extra.Add(fd);
    if (!SendAll(fd, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")) continue;
    const std::string head = ReadHead(fd, 10000);
    if (StatusOf(head) == 429) ++refused;
    if (StatusOf(head) == 200) ++accepted;
  }
  sample();
  EXPECT_GT(refused, 0) << "nothing refused beyond " << kMaxConnections << " connections (" << accepted
                        << " accepted)";
  extra.CloseAll();
  EXPECT_TRUE(PollUntil(std::chrono::seconds(30), [&] { return health(); }));

  // Request size limits: a 2 MiB body gets 413, 100 KiB of headers gets 431.
  {
    nlohmann::json pod = nlohmann::json::parse(PodJson("huge", "flood"));
    pod["metadata"]["annotations"] = {{"filler", std::string(2 << 20, 'y')}};
    Result<HttpReply> r = SendSync(*client, "POST", "/api/v1/namespaces/flood/pods", pod.dump());
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->status, 413) << r->body.substr(0, 300);
  }
  {
    const int fd = Connect(port);
    ASSERT_GE(fd, 0);
    const std::string request =
        "GET /api/v1/pods HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Filler: " + std::string(100 << 10, 'z') +
        "\r\n\r\n";
    SendAll(fd, request);
    EXPECT_EQ(StatusOf(ReadHead(fd, 10000)), 431);
    close(fd);
  }

  // Everything let go: the server is healthy and gives back its threads.
  slow.CloseAll();
  idle.CloseAll();
  EXPECT_TRUE(PollUntil(std::chrono::seconds(30), [&] { return health(); }));
  const long rss_end = ProcStatus(pid, "VmRSS");
  const long threads_end = ProcStatus(pid, "Threads");
  std::printf(
      "FIGURES resource bounds: RSS %ld kB at start, peak %ld kB, %ld kB after; threads %ld at start, %ld "
      "with %d watches, peak %ld, %ld after; worst /healthz %.0f ms; connection refused with 429 after %d "
      "more were accepted; readers got %lld bytes, %d of %d readers got every event, %d were closed\n",
      rss_start, peak_rss, rss_end, threads_start, threads_with_watches, kWatches, peak_threads, threads_end,
      worst_health_ms, accepted, static_cast<long long>(read_bytes.load()), readers_done.load(),
      static_cast<int>(readers.size()), readers_closed.load());
  RecordProperty("peak_rss_kb", static_cast<int>(peak_rss));
  RecordProperty("peak_threads", static_cast<int>(peak_threads));
  // Bounded: no thread per connection or watch (the registry's watch cache serves every API watch
  // from one etcd watch per resource). The start counts the --worker-threads pool (64 by default).
  EXPECT_LT(peak_threads, threads_start + 16);
  EXPECT_LT(threads_end, threads_start + 16) << "threads given back";
  EXPECT_LT(peak_rss, 1024L << 10) << "kB";
  EXPECT_LT(worst_health_ms, 5000);
}

}  // namespace
}  // namespace rcsim::faults
