#include "backends/http/http_server.h"

#include <algorithm>
#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "backends/http/api_handler.h"
#include "backends/http/request_info.h"
#include "backends/http/self_subject_review.h"
#include "backends/http/token_auth.h"
#include "backends/tls/tls_context.h"
#include "backends/tls/tls_or_tcp_stream.h"
#include "engine/codec.h"
#include "engine/mutex.h"

namespace rcsim {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

constexpr auto kWriteTimeout = std::chrono::seconds(60);
constexpr auto kTlsHandshakeTimeout = std::chrono::seconds(10);  // kube-apiserver's

// Lets threads outside the I/O loop (workers, store watch threads) post into it until Stop closes it;
// after that their posts are dropped, so nothing touches the io_context while it is torn down.
class Gate {
 public:
  // False when closed (`fn` is dropped, not run).
  template <typename Executor, typename Fn>
  bool Post(const Executor& ex, Fn&& fn) {
    MutexLock lock(mu_);
    if (open_) net::post(ex, std::forward<Fn>(fn));
    return open_;
  }
  void Close() {
    MutexLock lock(mu_);
    open_ = false;
  }

 private:
  Mutex mu_;
  bool open_ GUARDED_BY(mu_) = true;
};

std::string_view AsStd(beast::string_view s) { return std::string_view(s.data(), s.size()); }

// A watcher beyond this share of the global watch buffer budget is the one closed when it is spent.
constexpr std::size_t kWatchBufferShare = 64 << 10;

// A watch stream over budget: `own` bytes beyond its own limit, or the server's `total` spent while its
// client holds more than its share `unsent`.
bool OverWatchBudget(const HttpServerOptions& o, std::size_t own, std::size_t total, std::size_t unsent) {
  return own > o.max_watch_buffer_bytes ||
         (total > o.max_total_watch_buffer_bytes && unsent > kWatchBufferShare);
}
constexpr auto kAcceptBackoff = std::chrono::milliseconds(100);

// A Kubernetes Status body for the codes engine/status.h does not name (429, 431).
std::string StatusBody(int code, std::string_view reason, std::string_view message) {
  nlohmann::json j = {{"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", nlohmann::json::object()},
                      {"status", "Failure"}, {"message", message}, {"reason", reason},
                      {"code", code}};
  if (code == 429) j["details"] = {{"retryAfterSeconds", 1}};
  return j.dump();
}

}  // namespace

struct HttpServer::Impl {
  Impl(Registry* registry, const Clock* clock, HttpServerOptions o)
      : options(std::move(o)), handler(registry, clock), gate(std::make_shared<Gate>()) {
    handler.set_lease_registry(options.leases);
    if (options.authenticator != nullptr) tokens = *options.authenticator;
    if (!options.bearer_token.empty()) tokens.Add(options.bearer_token, TokenUser{"admin", "admin", {}});
  }

  void DoAccept();
  // Answers 429 on a connection over max_connections and closes it (asynchronously, within 2 s).
  void RejectConnection(tcp::socket socket);

  const HttpServerOptions options;
  TokenAuthenticator tokens;               // --token-file and --token-auth-file together; empty: no auth
  std::shared_ptr<net::ssl::context> tls;  // set by Start for HTTPS; immutable after
  bool client_certificates = false;        // tls verifies client certificates
  ApiHandler handler;
  std::shared_ptr<Gate> gate;
  std::unique_ptr<net::io_context> ioc;
  std::unique_ptr<tcp::acceptor> acceptor;
  std::unique_ptr<net::thread_pool> workers;
  std::vector<std::thread> io_threads;
  uint16_t port = 0;
  bool running = false;
  std::unique_ptr<net::steady_timer> accept_backoff;  // used only by the accept loop
  std::atomic<int> connections{0};                    // live sessions
  std::atomic<int> watches{0};                        // live watch streams
  std::atomic<std::size_t> watch_buffer_bytes{0};     // buffered by every watch stream together
  std::atomic<std::size_t> watch_queued_bytes{0};     // watch lines posted to strands, not yet taken
};

// The watch lines posted to one session's strand and not yet taken into its buffer. Shared by the
// sink (any thread) and the session (its strand).
struct WatchBacklog {
  std::atomic<std::size_t> queued{0};
  std::atomic<std::size_t> pending{0};  // the session's buffered_: taken, not yet sent to the client
  std::atomic<bool> live{false};        // the stream's header is sent: the budgets apply from now on
  std::atomic<bool> overflowed{false};
};

namespace {

// One connection. All members are touched only on the connection's strand (the socket's executor).
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, HttpServer::Impl* server)
      : stream_(std::move(socket), server->tls.get()), server_(server), timer_(stream_.get_executor()) {
    server_->connections.fetch_add(1);
  }
  ~Session() {
    ReleaseWatch();
    ReleaseBuffered(buffered_);
    server_->connections.fetch_sub(1);
  }

  void Start() {
    if (!stream_.is_tls()) return DoRead();
    stream_.expires_after(kTlsHandshakeTimeout);
    stream_.async_handshake(net::ssl::stream_base::server, [self = shared_from_this()](beast::error_code ec) {
      if (ec) return self->Close();
      if (std::optional<PeerIdentity> id = VerifiedPeerIdentity(self->stream_.ssl())) {
        self->peer_user_ = UserFromCertificate(std::move(id->common_name), std::move(id->organizations));
      }
      self->DoRead();
    });
  }

 private:
  // Forwards a watch's lines to the session's strand; holds the session weakly (the session owns the
  // watch, which owns this sink).
  class Sink final : public WatchSink {
   public:
    Sink(std::shared_ptr<Gate> gate, std::weak_ptr<Session> session, net::any_io_executor ex,
         HttpServer::Impl* server)
        : gate_(std::move(gate)), session_(std::move(session)), ex_(std::move(ex)), server_(server) {}
    // Lines are counted when posted, so a strand that falls behind the watch's producer cannot queue
    // copies without bound (1,000 watchers of 300 8 KiB events held 1.7 GB): beyond the session's or
    // the server's budget (as OnWatchLine's) the watch is closed and its next lines dropped.
    void OnLine(WatchLine line) override {
      if (backlog_->overflowed.load()) return;
      const std::size_t n = line->size();
      const std::size_t queued = backlog_->queued.fetch_add(n) + n;
      const std::size_t total = server_->watch_queued_bytes.fetch_add(n) + n;
      // The server's total is spent: the watchers whose clients hold the most (unsent lines beyond
      // their share) go, not the ones the server's own threads are behind on.
      if (backlog_->live.load() &&
          OverWatchBudget(server_->options, queued, total, backlog_->pending.load())) {
        backlog_->overflowed = true;
        Unqueue(backlog_.get(), server_, n);
        gate_->Post(ex_, [w = session_] {
          if (auto s = w.lock()) s->OnWatchOverflow();
        });
        return;
      }
      const bool posted =
          gate_->Post(ex_, [w = session_, b = backlog_, server = server_, line = std::move(line)]() mutable {
            Unqueue(b.get(), server, line->size());
            if (auto s = w.lock()) s->OnWatchLine(std::move(line));
          });
      if (!posted) Unqueue(backlog_.get(), server_, n);
    }
    const std::shared_ptr<WatchBacklog>& backlog() const { return backlog_; }
    void OnEnd() override {
      gate_->Post(ex_, [w = session_] {
        if (auto s = w.lock()) s->OnWatchEnd();
      });
    }

   private:
    static void Unqueue(WatchBacklog* b, HttpServer::Impl* server, std::size_t n) {
      b->queued.fetch_sub(n);
      server->watch_queued_bytes.fetch_sub(n);
    }

    std::shared_ptr<Gate> gate_;
    std::weak_ptr<Session> session_;
    net::any_io_executor ex_;
    HttpServer::Impl* server_;
    std::shared_ptr<WatchBacklog> backlog_ = std::make_shared<WatchBacklog>();
  };

  void DoRead() {
    parser_.emplace();
    parser_->body_limit(server_->options.max_body_bytes);
    parser_->header_limit(static_cast<std::uint32_t>(server_->options.max_header_bytes));
    stream_.expires_after(server_->options.idle_timeout);
    http::async_read(stream_, buffer_, *parser_,
                     beast::bind_front_handler(&Session::OnRead, shared_from_this()));
  }

  void OnRead(beast::error_code ec, std::size_t) {
    if (ec == http::error::body_limit) {
      version_ = parser_->get().version();
      keep_alive_ = false;
      Status s(Code::kRequestTooLarge, "the request body is larger than " +
                                           std::to_string(server_->options.max_body_bytes) + " bytes");
      return WriteResponse(HttpCodeOf(s.code()), "application/json", DumpJson(StatusToJson(s)));
    }
    if (ec == http::error::header_limit) {
      keep_alive_ = false;
      return WriteResponse(431, "application/json",
                           StatusBody(431, "RequestHeaderFieldsTooLarge",
                                      "the request headers are larger than " +
                                          std::to_string(server_->options.max_header_bytes) + " bytes"));
    }
    if (ec && ec.category() == http::make_error_code(http::error::end_of_stream).category() &&
        ec != http::error::end_of_stream && ec != http::error::partial_message) {
      keep_alive_ = false;  // a malformed request: answer 400 and close
      Status s(Code::kBadRequest, "malformed HTTP request: " + ec.message());
      return WriteResponse(400, "application/json", DumpJson(StatusToJson(s)));
    }
    if (ec) return Close();

    http::request<http::string_body> req = parser_->release();
    version_ = req.version();
    keep_alive_ = req.keep_alive();
    const auto read_at = std::chrono::steady_clock::now();
    std::optional<TokenUser> user = peer_user_;
    if (!user && !server_->tokens.empty())
      user = server_->tokens.Authenticate(AsStd(req[http::field::authorization]));
    const bool auth_required = !server_->tokens.empty() || server_->client_certificates;
    if (auth_required && !user && !IsUnauthenticatedPath(AsStd(req.target()))) {
      Status s(Code::kUnauthorized, "Unauthorized");
      return WriteResponse(401, "application/json", DumpJson(StatusToJson(s)));
    }
    if (server_->options.observer != nullptr) {
      observed_ = ClassifyRequest(AsStd(req.method_string()), AsStd(req.target()),
                                  AsStd(req[http::field::content_type]));
      observed_read_at_ = read_at;
    }
    if (std::optional<std::string> v =
            SelfSubjectReviewVersion(AsStd(req.method_string()), AsStd(req.target()))) {
      return WriteResponse(201, "application/json", SelfSubjectReviewBody(user, *v));
    }
    if (server_->options.readiness && req.method() == http::verb::get &&
        AsStd(req.target()).substr(0, AsStd(req.target()).find('?')) == "/readyz") {
      net::post(*server_->workers, [self = shared_from_this()] {
        const Status ready = self->server_->options.readiness();
        ApiOutcome out;
        out.response.status = ready.ok() ? 200 : 503;
        out.response.content_type = "text/plain; charset=utf-8";
        out.response.body = ready.ok() ? "ok" : "readyz check failed: " + ready.message() + "\n";
        auto ex = self->stream_.get_executor();
        self->server_->gate->Post(
            ex, [self, out = std::move(out)]() mutable { self->OnHandled(std::move(out)); });
      });
      return;
    }
    if (server_->options.metrics && req.method() == http::verb::get &&
        AsStd(req.target()).substr(0, AsStd(req.target()).find('?')) == "/metrics") {
      net::post(*server_->workers, [self = shared_from_this()] {
        ApiOutcome out;
        out.response.status = 200;
        out.response.content_type = "text/plain; version=0.0.4; charset=utf-8";
        out.response.body = self->server_->options.metrics();
        auto ex = self->stream_.get_executor();
        self->server_->gate->Post(
            ex, [self, out = std::move(out)]() mutable { self->OnHandled(std::move(out)); });
      });
      return;
    }
    HttpRequest r;
    r.method = std::string(req.method_string());
    r.target = std::string(req.target());
    r.content_type = std::string(req[http::field::content_type]);
    r.accept = std::string(req[http::field::accept]);
    r.user_agent = std::string(req[http::field::user_agent]);
    r.body = std::move(req.body());
    auto sink = std::make_shared<Sink>(server_->gate, weak_from_this(), stream_.get_executor(), server_);
    backlog_ = sink->backlog();
    net::post(*server_->workers, [self = shared_from_this(), r = std::move(r), sink]() mutable {
      ApiOutcome out = self->server_->handler.Handle(r, sink);
      auto ex = self->stream_.get_executor();
      self->server_->gate->Post(ex,
                                [self, out = std::move(out)]() mutable { self->OnHandled(std::move(out)); });
    });
  }

  void OnHandled(ApiOutcome out) {
    if (out.watch == nullptr) {
      return WriteResponse(out.response.status, out.response.content_type, std::move(out.response.body),
                           out.response.warnings);
    }
    if (server_->watches.fetch_add(1) >= server_->options.max_watches) {
      server_->watches.fetch_sub(1);
      out.watch.reset();
      ending_ = true;  // lines the watch queued before it was dropped are ignored
      keep_alive_ = false;
      return WriteResponse(429, "application/json",
                           StatusBody(429, "TooManyRequests",
                                      "too many watches: the server serves at most " +
                                          std::to_string(server_->options.max_watches)),
                           /*warnings=*/{}, /*retry_after=*/true);
    }
    counted_watch_ = true;
    if (observed_) {
      server_->options.observer->OnRequest(*observed_, 200,
                                           std::chrono::steady_clock::now() - observed_read_at_);
      server_->options.observer->OnLongRunning(*observed_, +1);
      long_running_ = std::move(observed_);
      observed_.reset();
    }
    watch_ = std::move(out.watch);
    stream_.expires_never();
    watch_header_.emplace(http::status::ok, version_);
    watch_header_->set(http::field::server, "rcsim-apiserver");
    watch_header_->set(http::field::content_type, out.response.content_type);
    watch_header_->set(http::field::cache_control, "no-cache, private");
    watch_header_->chunked(true);
    watch_header_->keep_alive(false);
    watch_serializer_.emplace(*watch_header_);
    writing_ = true;
    http::async_write_header(stream_, *watch_serializer_,
                             [self = shared_from_this()](beast::error_code ec, std::size_t) {
                               self->writing_ = false;
                               if (ec) return self->Close();
                               self->header_sent_ = true;
                               if (self->backlog_) self->backlog_->live = true;
                               self->Pump();
                             });
    const Duration timeout =
        out.watch_timeout > Duration::zero() ? out.watch_timeout : server_->options.default_watch_timeout;
    timer_.expires_after(std::chrono::duration_cast<net::steady_timer::duration>(timeout));
    timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
      if (!ec) self->OnWatchEnd();
    });
    WatchForHangup();
  }

  // The client sends nothing during a watch; a completed read means it closed (or misbehaves).
  void WatchForHangup() {
    stream_.socket().async_read_some(net::buffer(probe_),
                                     [self = shared_from_this()](beast::error_code ec, std::size_t) {
                                       if (ec) return self->Close();
                                       self->WatchForHangup();
                                     });
  }

  void OnWatchLine(WatchLine line) {
    if (closed_ || ending_) return;
    const std::size_t n = line->size();
    pending_.push_back(std::move(line));
    pending_bytes_ += n;
    buffered_ += n;
    if (backlog_) backlog_->pending = buffered_;
    const std::size_t total = server_->watch_buffer_bytes.fetch_add(n) + n;
    // A client that does not keep up is closed (it re-lists), rather than buffered without bound.
    // The initial events (queued before the header could be sent) are a list, bounded by the store.
    if (header_sent_ && OverWatchBudget(server_->options, pending_bytes_, total, pending_bytes_)) {
      return OnWatchOverflow();
    }
    Pump();
  }

  // The client does not keep up: closed (it re-lists), rather than buffered without bound. Reset
  // rather than linger: the kernel would otherwise keep sending the socket's backlog to a client that
  // does not read, holding its memory.
  void OnWatchOverflow() {
    beast::error_code ignored;
    stream_.socket().set_option(net::socket_base::linger(true, 0), ignored);
    Close();
  }

  // Gives back `n` of the bytes this session holds in the server's watch buffer budget.
  void ReleaseBuffered(std::size_t n) {
    n = std::min(n, buffered_);
    buffered_ -= n;
    if (backlog_) backlog_->pending = buffered_;
    server_->watch_buffer_bytes.fetch_sub(n);
  }
  void ReleaseWatch() {
    if (counted_watch_) server_->watches.fetch_sub(1);
    counted_watch_ = false;
    if (long_running_) server_->options.observer->OnLongRunning(*long_running_, -1);
    long_running_.reset();
  }

  void OnWatchEnd() {
    if (closed_) return;
    ending_ = true;
    watch_.reset();
    Pump();
  }

  void Pump() {
    if (!header_sent_ || writing_ || closed_) return;
    if (!pending_.empty()) {
      in_flight_ = std::move(pending_);
      in_flight_bytes_ = pending_bytes_;
      pending_.clear();
      pending_bytes_ = 0;
      in_flight_buffers_.clear();
      for (const WatchLine& l : in_flight_) in_flight_buffers_.emplace_back(l->data(), l->size());
      writing_ = true;
      stream_.expires_after(kWriteTimeout);
      net::async_write(stream_, http::make_chunk(in_flight_buffers_),
                       [self = shared_from_this()](beast::error_code ec, std::size_t) {
                         self->writing_ = false;
                         self->stream_.expires_never();
                         self->ReleaseBuffered(self->in_flight_bytes_);
                         self->in_flight_.clear();  // the lines other watchers may still share
                         self->in_flight_buffers_.clear();
                         if (ec) return self->Close();
                         self->Pump();
                       });
      return;
    }
    if (ending_) {
      writing_ = true;
      stream_.expires_after(kWriteTimeout);
      net::async_write(stream_, http::make_chunk_last(),
                       [self = shared_from_this()](beast::error_code, std::size_t) {
                         self->writing_ = false;
                         self->Close();
                       });
    }
  }

  void WriteResponse(int code, std::string_view content_type, std::string body,
                     const std::vector<std::string>& warnings = {}, bool retry_after = false) {
    if (observed_) {
      server_->options.observer->OnRequest(*observed_, code,
                                           std::chrono::steady_clock::now() - observed_read_at_);
      observed_.reset();
    }
    auto res = std::make_shared<http::response<http::string_body>>();
    res->version(version_);
    res->result(static_cast<unsigned>(code));
    res->set(http::field::server, "rcsim-apiserver");
    if (retry_after) res->set(http::field::retry_after, "1");
    res->set(http::field::content_type, std::string(content_type));
    for (const std::string& w : warnings) res->insert(http::field::warning, WarningHeaderValue(w));
    res->body() = std::move(body);
    res->keep_alive(keep_alive_);
    res->prepare_payload();
    stream_.expires_after(kWriteTimeout);
    http::async_write(stream_, *res, [self = shared_from_this(), res](beast::error_code ec, std::size_t) {
      if (ec || !res->keep_alive()) return self->Close();
      self->DoRead();
    });
  }

  void Close() {
    if (closed_) return;
    closed_ = true;
    watch_.reset();
    ReleaseWatch();
    pending_.clear();
    pending_bytes_ = 0;
    // Bytes of a write still in flight are given back when it completes, the rest now.
    ReleaseBuffered(writing_ ? buffered_ - std::min(buffered_, in_flight_bytes_) : buffered_);
    timer_.cancel();
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_.socket().close(ec);
  }

  TlsOrTcpStream stream_;
  HttpServer::Impl* const server_;
  std::optional<TokenUser> peer_user_;  // from a verified client certificate
  net::steady_timer timer_;             // the watch's timeoutSeconds
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  unsigned version_ = 11;
  bool keep_alive_ = true;
  bool closed_ = false;
  // The request being answered, when the server has an observer; reported with its response.
  std::optional<RequestInfo> observed_;
  std::chrono::steady_clock::time_point observed_read_at_;
  std::optional<RequestInfo> long_running_;  // the watch this session streams, counted by the observer

  // Watch streaming.
  std::unique_ptr<RegistryWatch> watch_;
  std::optional<http::response<http::empty_body>> watch_header_;
  std::optional<http::response_serializer<http::empty_body>> watch_serializer_;
  // Lines not yet written, and the chunk being written (shared with the other watchers of a change).
  std::vector<WatchLine> pending_;
  std::size_t pending_bytes_ = 0;
  std::vector<WatchLine> in_flight_;
  std::size_t in_flight_bytes_ = 0;
  std::vector<net::const_buffer> in_flight_buffers_;
  bool header_sent_ = false;
  bool writing_ = false;
  bool ending_ = false;
  bool counted_watch_ = false;             // counted in server_->watches
  std::size_t buffered_ = 0;               // bytes of pending_ and in_flight_ counted in watch_buffer_bytes
  std::shared_ptr<WatchBacklog> backlog_;  // of the current request's sink (a watch's lines in flight)
  char probe_[512];
};

}  // namespace

void HttpServer::Impl::DoAccept() {
  acceptor->async_accept(net::make_strand(*ioc), [this](beast::error_code ec, tcp::socket socket) {
    if (ec == net::error::operation_aborted || !acceptor->is_open()) return;
    if (ec == net::error::no_descriptors || ec == beast::errc::too_many_files_open_in_system ||
        ec == net::error::no_buffer_space || ec == net::error::no_memory) {
      // Out of file descriptors (or memory): accepting again at once would spin at full CPU while
      // the pending connection stays queued. Wait for connections to close.
      accept_backoff->expires_after(kAcceptBackoff);
      accept_backoff->async_wait([this](beast::error_code wait_ec) {
        if (!wait_ec && acceptor->is_open()) DoAccept();
      });
      return;
    }
    if (!ec) {
      if (connections.load() >= options.max_connections) {
        RejectConnection(std::move(socket));
      } else {
        beast::error_code ignored;
        socket.set_option(tcp::no_delay(true), ignored);
        std::make_shared<Session>(std::move(socket), this)->Start();
      }
    }
    DoAccept();
  });
}

namespace {

// A connection over max_connections: answers 429 and closes gracefully (the request is read and
// dropped, so the close is not a reset that could destroy the answer), within kRejectTimeout.
class Rejection : public std::enable_shared_from_this<Rejection> {
 public:
  // Over HTTPS (`tls` set) the answer follows a handshake; the close is the same.
  Rejection(tcp::socket socket, std::string response, net::ssl::context* tls)
      : stream_(std::move(socket), tls), timer_(stream_.get_executor()), response_(std::move(response)) {}

  void Start() {
    timer_.expires_after(std::chrono::seconds(2));
    timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
      if (!ec) self->Close();
    });
    if (!stream_.is_tls()) return Write();
    stream_.async_handshake(net::ssl::stream_base::server, [self = shared_from_this()](beast::error_code ec) {
      if (ec) return self->Close();
      self->Write();
    });
  }

 private:
  void Write() {
    net::async_write(stream_, net::buffer(response_),
                     [self = shared_from_this()](beast::error_code ec, std::size_t) {
                       if (ec) return self->Close();
                       beast::error_code ignored;
                       self->stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
                       self->Drain();
                     });
  }
  void Drain() {
    stream_.socket().async_read_some(
        net::buffer(drain_), [self = shared_from_this()](beast::error_code ec, std::size_t) {
          if (ec) return self->Close();  // EOF: the client has read the answer and closed
          self->Drain();
        });
  }
  void Close() {
    beast::error_code ignored;
    timer_.cancel();
    stream_.socket().close(ignored);
  }

  TlsOrTcpStream stream_;
  net::steady_timer timer_;
  std::string response_;
  char drain_[4096];
};

}  // namespace

void HttpServer::Impl::RejectConnection(tcp::socket socket) {
  const std::string body = StatusBody(
      429, "TooManyRequests",
      "too many connections: the server serves at most " + std::to_string(options.max_connections));
  std::string response =
      "HTTP/1.1 429 Too Many Requests\r\nServer: rcsim-apiserver\r\nContent-Type: application/json\r\n"
      "Retry-After: 1\r\nConnection: close\r\nContent-Length: " +
      std::to_string(body.size()) + "\r\n\r\n" + body;
  std::make_shared<Rejection>(std::move(socket), std::move(response), tls.get())->Start();
}

HttpServer::HttpServer(Registry* registry, const Clock* clock, HttpServerOptions options)
    : impl_(std::make_unique<Impl>(registry, clock, std::move(options))) {}

HttpServer::~HttpServer() { Stop(); }

Status HttpServer::Start() {
  Impl& s = *impl_;
  if (s.running) return Status(Code::kInvalid, "the server is already running");
  beast::error_code ec;
  const net::ip::address addr = net::ip::make_address(s.options.address, ec);
  if (ec) return Status(Code::kInvalid, "bad listen address \"" + s.options.address + "\"");
  s.tls.reset();
  s.client_certificates = false;
  if (!s.options.tls_cert_file.empty() || !s.options.tls_key_file.empty()) {
    Result<std::shared_ptr<net::ssl::context>> tls = NewTlsServerContext(
        TlsServerFiles{s.options.tls_cert_file, s.options.tls_key_file, s.options.client_ca_file});
    if (!tls.ok()) return tls.status();
    s.tls = std::move(tls).value();
    s.client_certificates = !s.options.client_ca_file.empty();
  } else if (!s.options.client_ca_file.empty()) {
    return Status(Code::kInvalid, "a client CA needs HTTPS (a TLS certificate and key)");
  }
  s.ioc = std::make_unique<net::io_context>(std::max(1, s.options.io_threads));
  s.acceptor = std::make_unique<tcp::acceptor>(*s.ioc);
  const tcp::endpoint endpoint(addr, s.options.port);
  s.acceptor->open(endpoint.protocol(), ec);
  if (!ec) s.acceptor->set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) s.acceptor->bind(endpoint, ec);
  if (!ec) s.acceptor->listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    s.acceptor.reset();
    s.ioc.reset();
    return Status(Code::kUnavailable, "cannot listen on " + s.options.address + ":" +
                                          std::to_string(s.options.port) + ": " + ec.message());
  }
  s.port = s.acceptor->local_endpoint().port();
  s.gate = std::make_shared<Gate>();
  s.workers = std::make_unique<net::thread_pool>(std::max(1, s.options.worker_threads));
  s.accept_backoff = std::make_unique<net::steady_timer>(*s.ioc);
  s.DoAccept();
  for (int i = 0; i < std::max(1, s.options.io_threads); ++i) {
    s.io_threads.emplace_back([&s] { s.ioc->run(); });
  }
  s.running = true;
  return Status::Ok();
}

uint16_t HttpServer::port() const { return impl_->port; }

void HttpServer::Stop() {
  Impl& s = *impl_;
  if (!s.running) return;
  s.running = false;
  s.ioc->stop();
  for (std::thread& t : s.io_threads) t.join();
  s.io_threads.clear();
  s.workers->join();  // in-flight requests finish; their responses are queued, never run
  s.gate->Close();    // from here no thread posts into the io_context
  s.workers.reset();
  s.acceptor.reset();
  s.accept_backoff.reset();
  s.ioc.reset();  // destroys the queued handlers, hence every session, socket and watch
}

}  // namespace rcsim
