#include "backends/faultproxy/fault_proxy.h"

#include <sys/socket.h>

#include <algorithm>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cstdint>
#include <deque>
#include <limits>
#include <list>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "engine/mutex.h"

namespace rcsim {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;
using SteadyClock = std::chrono::steady_clock;

namespace {

constexpr std::size_t kMaxHeaderBytes = 1 << 20;
constexpr std::size_t kMaxBodyBytes = 64 << 20;
// Not boost::none: Boost 1.74's parser compares a Content-Length against the optional and fails with
// body_limit when it is disengaged.
constexpr uint64_t kNoBodyLimit = std::numeric_limits<uint64_t>::max();
constexpr int kVerbs = 7;

std::string_view AsStd(beast::string_view s) { return {s.data(), s.size()}; }

// The query parameter `key` of a target, or "" (no decoding: the values we look at are plain).
std::string QueryParam(std::string_view target, std::string_view key) {
  std::size_t q = target.find('?');
  if (q == std::string_view::npos) return "";
  std::string_view query = target.substr(q + 1);
  while (!query.empty()) {
    std::size_t amp = query.find('&');
    std::string_view kv = query.substr(0, amp);
    std::size_t eq = kv.find('=');
    if (kv.substr(0, eq) == key) return eq == std::string_view::npos ? "" : std::string(kv.substr(eq + 1));
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return "";
}

std::string StatusBody(int code, const std::string& reason, const std::string& message) {
  nlohmann::json j = {{"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", nlohmann::json::object()},
                      {"status", "Failure"}, {"message", message}, {"reason", reason},
                      {"code", code}};
  return j.dump();
}

}  // namespace

std::string ExactListTarget(std::string_view target, const std::string& rv) {
  const std::size_t q = target.find('?');
  std::string out(target.substr(0, q));
  char sep = '?';
  std::string_view query = q == std::string_view::npos ? std::string_view() : target.substr(q + 1);
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view kv = query.substr(0, amp);
    const std::string_view key = kv.substr(0, kv.find('='));
    if (!kv.empty() && key != "resourceVersion" && key != "resourceVersionMatch") {
      out += sep;
      out += kv;
      sep = '&';
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return out + sep + "resourceVersion=" + rv + "&resourceVersionMatch=Exact";
}

ProxiedCall ClassifyCall(std::string_view method, std::string_view target) {
  ProxiedCall c;
  std::string_view path = target.substr(0, target.find('?'));
  // Path segments after /api/v1 or /apis/<group>/<version>.
  std::vector<std::string_view> seg;
  while (!path.empty()) {
    if (path.front() == '/') {
      path.remove_prefix(1);
      continue;
    }
    std::size_t slash = path.find('/');
    seg.push_back(path.substr(0, slash));
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash);
  }
  std::size_t i = 0;
  if (seg.size() >= 2 && seg[0] == "api") {
    i = 2;
  } else if (seg.size() >= 3 && seg[0] == "apis") {
    i = 3;
  } else {
    i = seg.size();
  }
  bool legacy_watch = false;
  if (i < seg.size() && seg[i] == "watch") {  // /api/v1/watch/... (deprecated form)
    legacy_watch = true;
    ++i;
  }
  if (i + 1 < seg.size() && seg[i] == "namespaces" && i + 2 < seg.size()) i += 2;
  std::string_view resource = i < seg.size() ? seg[i] : std::string_view();
  const bool named = i + 1 < seg.size();
  c.faultable =
      seg.size() >= 2 && seg[0] == "api" && (resource == "pods" || resource == "replicationcontrollers");
  const std::string watch = QueryParam(target, "watch");
  c.watch = method == "GET" && (legacy_watch || watch == "true" || watch == "1");
  if (method == "GET") {
    c.verb = c.watch ? Verb::kWatch : named ? Verb::kGet : Verb::kList;
  } else if (method == "POST") {
    c.verb = Verb::kCreate;
  } else if (method == "PUT") {
    c.verb = Verb::kUpdate;
  } else if (method == "PATCH") {
    c.verb = Verb::kPatch;
  } else if (method == "DELETE") {
    c.verb = Verb::kDelete;
  } else {
    c.faultable = false;
  }
  return c;
}

struct FaultProxy::Impl {
  struct VerbFaults {
    double error_rate = 0;
    int error_code = 503;
    std::string reason = "ServiceUnavailable";
    std::string message;
    SteadyClock::time_point error_until{};
    double timeout_rate = 0;
    SteadyClock::time_point timeout_until{};
    Duration latency_min{0}, latency_max{0};
    SteadyClock::time_point latency_until{};
  };
  // One client connection (and its upstream), cut from other threads by shutting both sockets down.
  // Its fields but `thread` are guarded by Impl::mu (the analysis cannot name the enclosing object's
  // mutex from a nested struct, so they are not annotated).
  struct Conn {
    int client_fd = -1;    // guarded by Impl::mu; -1 once closed
    int upstream_fd = -1;  // guarded by Impl::mu
    bool watch = false;    // guarded by Impl::mu
    bool cut = false;      // guarded by Impl::mu
    bool done = false;     // guarded by Impl::mu: the thread has finished
    std::thread thread;
  };
  // What one request is to get, decided when it arrives.
  struct Decision {
    bool partitioned = false;
    bool error = false;
    int error_code = 0;
    std::string reason, message;
    bool timeout = false;
    bool timeout_forwards = false;
    Duration latency{0};
    Duration read_lag{0};  // responses of get/list
    StaleListPinner pin;   // a list in a read-lag window with a pinner
  };

  FaultProxyOptions options;
  net::io_context ioc;
  tcp::acceptor acceptor{ioc};
  tcp::endpoint upstream;
  uint16_t port = 0;
  std::thread accept_thread;

  mutable Mutex mu;
  CondVar cv;  // wakes waits of connections (cut, stop, fault changes)
  bool stopping GUARDED_BY(mu) = false;
  std::list<std::shared_ptr<Conn>> conns GUARDED_BY(mu);
  std::array<VerbFaults, kVerbs> faults GUARDED_BY(mu);
  SteadyClock::time_point partition_until GUARDED_BY(mu){};
  SteadyClock::time_point watch_delay_until GUARDED_BY(mu){};
  SteadyClock::time_point read_lag_until GUARDED_BY(mu){};
  SteadyClock::time_point stall_until GUARDED_BY(mu){};
  Duration watch_delay GUARDED_BY(mu){0};
  Duration read_lag GUARDED_BY(mu){0};
  StaleListPinner read_lag_pin GUARDED_BY(mu);
  FaultProxyCounters counters GUARDED_BY(mu);
  std::mt19937_64 rng GUARDED_BY(mu);

  double Uniform() REQUIRES(mu) { return std::uniform_real_distribution<double>(0.0, 1.0)(rng); }

  Decision Decide(const ProxiedCall& call) {
    MutexLock lock(mu);
    Decision d;
    const auto now = SteadyClock::now();
    if (now < partition_until) {
      d.partitioned = true;
      ++counters.partitioned_requests;
      return d;
    }
    if (!call.faultable) return d;
    ++counters.calls[static_cast<int>(call.verb)];
    const VerbFaults& f = faults[static_cast<int>(call.verb)];
    if (now < f.latency_until && f.latency_max > Duration::zero()) {
      auto span = (f.latency_max - f.latency_min).count();
      d.latency = f.latency_min + Duration(static_cast<Duration::rep>(Uniform() * static_cast<double>(span)));
    }
    if ((call.verb == Verb::kGet || call.verb == Verb::kList) && now < read_lag_until) {
      if (!read_lag_pin) {
        d.read_lag = read_lag;
      } else if (call.verb == Verb::kList) {
        d.pin = read_lag_pin;
      }
    }
    const double draw = Uniform();
    const double err = now < f.error_until ? f.error_rate : 0.0;
    const double tmo = now < f.timeout_until ? f.timeout_rate : 0.0;
    if (draw < err) {
      d.error = true;
      d.error_code = f.error_code;
      d.reason = f.reason;
      d.message = f.message.empty() ? "injected: " + f.reason + " (" + VerbName(call.verb) + ")" : f.message;
      ++counters.errors_injected;
    } else if (draw < err + tmo) {
      d.timeout = true;
      d.timeout_forwards = Uniform() < 0.5;
      ++counters.timeouts_injected;
    }
    return d;
  }

  // Waits until `t`, or until the connection is cut or the proxy stops; false if it was cut.
  bool WaitUntil(Conn& c, SteadyClock::time_point t) {
    MutexLock lock(mu);
    cv.WaitUntil(mu, t, [&]() REQUIRES(mu) { return c.cut || stopping; });
    return !c.cut && !stopping;
  }

  void CutLocked(Conn& c) {
    c.cut = true;
    if (c.client_fd >= 0) ::shutdown(c.client_fd, SHUT_RDWR);
    if (c.upstream_fd >= 0) ::shutdown(c.upstream_fd, SHUT_RDWR);
  }

  void Serve(std::shared_ptr<Conn> conn, tcp::socket client);
  bool RelayWatch(Conn& conn, tcp::socket& client, tcp::socket& up, beast::flat_buffer& up_buf, int version,
                  bool faultable);
  void AcceptLoop();
};

void FaultProxy::Impl::AcceptLoop() {
  while (true) {
    beast::error_code ec;
    tcp::socket s(ioc);
    acceptor.accept(s, ec);
    MutexLock lock(mu);
    if (stopping) return;
    // Reap the threads of finished connections.
    for (auto it = conns.begin(); it != conns.end();) {
      if ((*it)->done) {
        (*it)->thread.join();
        it = conns.erase(it);
      } else {
        ++it;
      }
    }
    if (ec) continue;
    s.set_option(tcp::no_delay(true), ec);
    auto conn = std::make_shared<Conn>();
    conn->client_fd = s.native_handle();
    conns.push_back(conn);
    conn->thread = std::thread([this, conn, sock = std::move(s)]() mutable { Serve(conn, std::move(sock)); });
  }
}

void FaultProxy::Impl::Serve(std::shared_ptr<Conn> conn, tcp::socket client) {
  tcp::socket up(ioc);
  bool up_reused = false;
  beast::flat_buffer client_buf, up_buf;
  auto close_all = [&] {
    {
      MutexLock lock(mu);
      conn->client_fd = -1;
      conn->upstream_fd = -1;
    }
    beast::error_code ignored;
    client.close(ignored);
    up.close(ignored);
  };
  auto connect_up = [&]() -> bool {
    beast::error_code ec;
    {
      MutexLock lock(mu);
      conn->upstream_fd = -1;
    }
    up.close(ec);
    up = tcp::socket(ioc);
    up.connect(upstream, ec);
    if (ec) return false;
    up.set_option(tcp::no_delay(true), ec);
    MutexLock lock(mu);
    if (conn->cut || stopping) return false;
    conn->upstream_fd = up.native_handle();
    up_buf.clear();
    up_reused = false;
    return true;
  };
  while (true) {
    beast::error_code ec;
    http::request_parser<http::string_body> req_parser;
    req_parser.header_limit(kMaxHeaderBytes);
    req_parser.body_limit(kMaxBodyBytes);
    http::read(client, client_buf, req_parser, ec);
    if (ec) break;
    http::request<http::string_body> req = req_parser.release();
    const auto arrived = SteadyClock::now();
    const ProxiedCall call = ClassifyCall(AsStd(req.method_string()), AsStd(req.target()));
    Decision d = Decide(call);
    if (d.partitioned) {
      WaitUntil(*conn, arrived + options.timeout);
      break;
    }
    if (d.latency > Duration::zero() && !WaitUntil(*conn, arrived + d.latency)) break;
    if (d.error) {
      http::response<http::string_body> res{static_cast<http::status>(d.error_code), req.version()};
      res.set(http::field::content_type, "application/json");
      res.body() = StatusBody(d.error_code, d.reason, d.message);
      res.keep_alive(req.keep_alive());
      res.prepare_payload();
      http::write(client, res, ec);
      if (ec || !req.keep_alive()) break;
      continue;
    }
    if (d.timeout && !d.timeout_forwards) {
      WaitUntil(*conn, arrived + options.timeout);
      break;
    }
    if (d.pin) {
      const std::string_view target = AsStd(req.target());
      ListOptions opts;
      opts.resource_version = QueryParam(target, "resourceVersion");
      if (QueryParam(target, "resourceVersionMatch") == "Exact") {
        opts.resource_version_match = ResourceVersionMatch::kExact;
      }
      opts.continue_token = QueryParam(target, "continue");
      if (d.pin(&opts)) {
        req.target(ExactListTarget(target, opts.resource_version));
        MutexLock lock(mu);
        ++counters.stale_lists;
      }
    }
    if (call.watch) {
      MutexLock lock(mu);
      conn->watch = true;
    }
    // Forward; a reused upstream connection the server closed as idle is retried once on a new one.
    bool sent = false;
    for (int attempt = 0; attempt < 2 && !sent; ++attempt) {
      if (!up.is_open() || attempt > 0) {
        if (!connect_up()) break;
      }
      http::write(up, req, ec);
      if (!ec) {
        sent = true;
      } else if (!up_reused) {
        break;
      }
    }
    if (!sent) break;  // the API server is unreachable: the client sees its connection go
    if (call.watch) {
      RelayWatch(*conn, client, up, up_buf, static_cast<int>(req.version()), call.faultable);
      break;  // a watch connection ends with its stream
    }
    http::response_parser<http::string_body> res_parser;
    res_parser.header_limit(kMaxHeaderBytes);
    res_parser.body_limit(kNoBodyLimit);
    if (req.method() == http::verb::head) res_parser.skip(true);
    http::read(up, up_buf, res_parser, ec);
    if (ec && up_reused && !res_parser.got_some()) {
      // The server closed the idle connection as we reused it: the request never reached it.
      if (!connect_up()) break;
      http::write(up, req, ec);
      if (ec) break;
      http::response_parser<http::string_body> retry;
      retry.header_limit(kMaxHeaderBytes);
      retry.body_limit(kNoBodyLimit);
      http::read(up, up_buf, retry, ec);
      if (ec) break;
      res_parser.release();
      http::response<http::string_body> res = retry.release();
      if (d.timeout) {
        WaitUntil(*conn, arrived + options.timeout);
        break;
      }
      if (d.read_lag > Duration::zero() && !WaitUntil(*conn, SteadyClock::now() + d.read_lag)) break;
      http::write(client, res, ec);
      if (ec || !res.keep_alive()) break;
      up_reused = true;
      continue;
    }
    if (ec) break;
    http::response<http::string_body> res = res_parser.release();
    if (d.timeout) {  // applied, but the client never hears of it
      WaitUntil(*conn, arrived + options.timeout);
      break;
    }
    if (d.read_lag > Duration::zero() && !WaitUntil(*conn, SteadyClock::now() + d.read_lag)) break;
    http::write(client, res, ec);
    if (ec || !res.keep_alive()) break;
    up_reused = true;
  }
  close_all();
  MutexLock lock(mu);
  conn->done = true;
}

bool FaultProxy::Impl::RelayWatch(Conn& conn, tcp::socket& client, tcp::socket& up,
                                  beast::flat_buffer& up_buf, int version, bool faultable) {
  beast::error_code ec;
  http::response_parser<http::buffer_body> parser;
  parser.header_limit(kMaxHeaderBytes);
  parser.body_limit(kNoBodyLimit);
  http::read_header(up, up_buf, parser, ec);
  if (ec) return false;
  char buf[16384];
  // Used by one thread at a time: this one for a plain response, else the reader below.
  beast::error_code read_ec;
  auto read_some = [&](std::string* out) -> bool {
    parser.get().body().data = buf;
    parser.get().body().size = sizeof(buf);
    http::read_some(up, up_buf, parser, read_ec);
    if (read_ec == http::error::need_buffer) read_ec = {};
    if (read_ec) return false;
    out->append(buf, sizeof(buf) - parser.get().body().size);
    return true;
  };
  const auto& head = parser.get();
  if (head.result() != http::status::ok) {
    // Not a stream (410, 429, ...): forward as a plain response.
    std::string body;
    while (!parser.is_done() && read_some(&body)) {
    }
    if (read_ec) return false;
    http::response<http::string_body> res{head.result(), version};
    for (const auto& f : head) {
      if (f.name() != http::field::transfer_encoding && f.name() != http::field::content_length) {
        res.set(f.name_string(), f.value());
      }
    }
    res.body() = std::move(body);
    res.keep_alive(false);
    res.prepare_payload();
    http::write(client, res, ec);
    return !ec;
  }
  http::response<http::empty_body> out{head.result(), version};
  for (const auto& f : head) {
    if (f.name() != http::field::transfer_encoding && f.name() != http::field::content_length &&
        f.name() != http::field::connection) {
      out.set(f.name_string(), f.value());
    }
  }
  out.chunked(true);
  out.keep_alive(false);
  http::response_serializer<http::empty_body> sr{out};
  http::write_header(client, sr, ec);
  if (ec) return false;

  // The reader thread queues complete lines with the time they may be delivered; this thread writes
  // them in order once due (and not stalled).
  struct Item {
    SteadyClock::time_point due;
    std::string line;
  };
  std::deque<Item> queue;  // guarded by mu (locals cannot be annotated)
  bool ended = false;      // guarded by mu
  std::thread reader([&] {
    std::string pending;
    while (!parser.is_done()) {
      if (!read_some(&pending)) break;
      std::size_t start = 0, nl;
      std::vector<std::string> lines;
      while ((nl = pending.find('\n', start)) != std::string::npos) {
        lines.push_back(pending.substr(start, nl + 1 - start));
        start = nl + 1;
      }
      pending.erase(0, start);
      if (lines.empty()) continue;
      MutexLock lock(mu);
      const auto now = SteadyClock::now();
      Duration extra{0};
      if (faultable && now < watch_delay_until) extra += watch_delay;
      if (faultable && now < read_lag_until) extra += read_lag;
      for (std::string& l : lines) queue.push_back(Item{now + extra, std::move(l)});
      cv.NotifyAll();
    }
    MutexLock lock(mu);
    if (!pending.empty()) queue.push_back(Item{SteadyClock::now(), std::move(pending)});
    ended = true;
    cv.NotifyAll();
  });
  bool ok = true;
  while (true) {
    MutexLock lock(mu);
    // Wait for an item that is due and not held by a stall, the stream's end, or a cut.
    while (true) {
      if (conn.cut || stopping) break;
      const auto now = SteadyClock::now();
      const bool stalled = faultable && now < stall_until;
      if (!queue.empty() && !stalled && queue.front().due <= now) break;
      if (queue.empty() && ended) break;
      SteadyClock::time_point wake = now + std::chrono::seconds(1);
      if (stalled) wake = std::min(wake, stall_until);
      if (!queue.empty() && !stalled) wake = std::min(wake, queue.front().due);
      cv.WaitUntil(mu, wake);
    }
    if (conn.cut || stopping) {
      ok = false;
      break;
    }
    if (queue.empty()) break;  // ended and drained
    Item item = std::move(queue.front());
    queue.pop_front();
    ++counters.watch_events;
    lock.Unlock();
    net::write(client, http::make_chunk(net::buffer(item.line)), ec);
    if (ec) {
      ok = false;
      break;
    }
  }
  if (ok) net::write(client, http::make_chunk_last(), ec);
  {
    // Unblock the reader (a stream that has not ended, a client gone) and wait for it.
    MutexLock lock(mu);
    if (conn.upstream_fd >= 0) ::shutdown(conn.upstream_fd, SHUT_RDWR);
  }
  reader.join();
  return ok;
}

FaultProxy::FaultProxy(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Result<std::unique_ptr<FaultProxy>> FaultProxy::Start(FaultProxyOptions options) {
  auto impl = std::make_unique<Impl>();
  impl->options = std::move(options);
  const FaultProxyOptions& o = impl->options;
  {
    MutexLock lock(impl->mu);  // no other thread yet; for the analysis
    impl->rng.seed(o.seed);
  }
  beast::error_code ec;
  auto up_addr = net::ip::make_address(o.upstream_host, ec);
  if (ec) return Status(Code::kInvalid, "fault proxy: bad upstream address " + o.upstream_host);
  impl->upstream = tcp::endpoint(up_addr, o.upstream_port);
  auto addr = net::ip::make_address(o.listen_address, ec);
  if (ec) return Status(Code::kInvalid, "fault proxy: bad listen address " + o.listen_address);
  tcp::endpoint ep(addr, o.listen_port);
  impl->acceptor.open(ep.protocol(), ec);
  if (!ec) impl->acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) impl->acceptor.bind(ep, ec);
  if (!ec) impl->acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec)
    return Status(Code::kUnavailable,
                  "fault proxy: cannot listen on " + o.listen_address + ": " + ec.message());
  impl->port = impl->acceptor.local_endpoint().port();
  Impl* raw = impl.get();
  impl->accept_thread = std::thread([raw] { raw->AcceptLoop(); });
  return std::unique_ptr<FaultProxy>(new FaultProxy(std::move(impl)));
}

FaultProxy::~FaultProxy() { Stop(); }

uint16_t FaultProxy::port() const { return impl_->port; }
std::string FaultProxy::url() const { return "http://127.0.0.1:" + std::to_string(impl_->port); }

namespace {
// The indexes of `verbs` in Impl::faults; every verb when empty.
std::vector<int> VerbIndexes(const std::vector<Verb>& verbs) {
  std::vector<int> out;
  if (verbs.empty()) {
    for (int v = 0; v < kVerbs; ++v) out.push_back(v);
  } else {
    for (Verb v : verbs) out.push_back(static_cast<int>(v));
  }
  return out;
}
}  // namespace

void FaultProxy::SetErrors(const std::vector<Verb>& verbs, double rate, int http_code,
                           const std::string& reason, const std::string& message, Duration for_) {
  MutexLock lock(impl_->mu);
  const auto until = SteadyClock::now() + for_;
  for (int v : VerbIndexes(verbs)) {
    auto& f = impl_->faults[v];
    f.error_rate = rate;
    f.error_code = http_code;
    f.reason = reason;
    f.message = message;
    f.error_until = until;
  }
}

void FaultProxy::SetTimeouts(const std::vector<Verb>& verbs, double rate, Duration for_) {
  MutexLock lock(impl_->mu);
  const auto until = SteadyClock::now() + for_;
  for (int v : VerbIndexes(verbs)) {
    impl_->faults[v].timeout_rate = rate;
    impl_->faults[v].timeout_until = until;
  }
}

void FaultProxy::SetLatency(const std::vector<Verb>& verbs, Duration min, Duration max, Duration for_) {
  MutexLock lock(impl_->mu);
  const auto until = SteadyClock::now() + for_;
  for (int v : VerbIndexes(verbs)) {
    impl_->faults[v].latency_min = min;
    impl_->faults[v].latency_max = std::max(min, max);
    impl_->faults[v].latency_until = until;
  }
}

void FaultProxy::SetWatchDelay(Duration delay, Duration for_) {
  MutexLock lock(impl_->mu);
  impl_->watch_delay = delay;
  impl_->watch_delay_until = SteadyClock::now() + for_;
}

void FaultProxy::SetReadLag(Duration lag, Duration for_, StaleListPinner pin) {
  MutexLock lock(impl_->mu);
  impl_->read_lag = lag;
  impl_->read_lag_pin = std::move(pin);
  impl_->read_lag_until = SteadyClock::now() + for_;
}

void FaultProxy::StallWatches(Duration for_) {
  MutexLock lock(impl_->mu);
  impl_->stall_until = SteadyClock::now() + for_;
  impl_->cv.NotifyAll();
}

void FaultProxy::Partition(Duration for_) {
  MutexLock lock(impl_->mu);
  impl_->partition_until = SteadyClock::now() + for_;
  for (auto& c : impl_->conns) {
    if (!c->done) impl_->CutLocked(*c);
  }
  impl_->cv.NotifyAll();
}

int FaultProxy::DropWatches() {
  MutexLock lock(impl_->mu);
  int n = 0;
  for (auto& c : impl_->conns) {
    if (c->watch && !c->done && !c->cut) {
      impl_->CutLocked(*c);
      ++n;
    }
  }
  impl_->counters.watches_dropped += static_cast<uint64_t>(n);
  impl_->cv.NotifyAll();
  return n;
}

void FaultProxy::ClearFaults() {
  MutexLock lock(impl_->mu);
  for (auto& f : impl_->faults) f = Impl::VerbFaults{};
  impl_->partition_until = impl_->watch_delay_until = impl_->read_lag_until = impl_->stall_until = {};
  impl_->read_lag_pin = nullptr;
  impl_->cv.NotifyAll();
}

FaultProxyCounters FaultProxy::counters() const {
  MutexLock lock(impl_->mu);
  return impl_->counters;
}

int FaultProxy::open_watches() const {
  MutexLock lock(impl_->mu);
  int n = 0;
  for (const auto& c : impl_->conns) n += c->watch && !c->done && !c->cut ? 1 : 0;
  return n;
}

void FaultProxy::Stop() {
  {
    MutexLock lock(impl_->mu);
    if (impl_->stopping) return;
    impl_->stopping = true;
    for (auto& c : impl_->conns) impl_->CutLocked(*c);
    ::shutdown(impl_->acceptor.native_handle(), SHUT_RDWR);
    impl_->cv.NotifyAll();
  }
  if (impl_->accept_thread.joinable()) impl_->accept_thread.join();
  beast::error_code ec;
  impl_->acceptor.close(ec);
  std::list<std::shared_ptr<Impl::Conn>> conns;
  {
    MutexLock lock(impl_->mu);
    conns.swap(impl_->conns);
  }
  for (auto& c : conns) {
    if (c->thread.joinable()) c->thread.join();
  }
}

}  // namespace rcsim
