#include "backends/httpclient/http_api_client.h"

#include <sys/socket.h>

#include <array>
#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cerrno>
#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <optional>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "backends/httpclient/rest_wire.h"
#include "backends/httpclient/token_bucket.h"
#include "backends/tls/tls_context.h"
#include "backends/tls/tls_or_tcp_stream.h"
#include "engine/codec.h"
#include "engine/lease.h"
#include "engine/mutex.h"
#include "engine/node_codec.h"

namespace rcsim {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using ErrorCode = beast::error_code;

constexpr size_t kWatchReadChunk = size_t{64} * 1024;
constexpr size_t kMaxWatchLine = size_t{64} * 1024 * 1024;  // one event; guards against a runaway stream
constexpr size_t kMaxErrorBody = size_t{64} * 1024;
// Not boost::none: Boost 1.74's parser compares Content-Length against the optional and fails with
// body_limit when it is disengaged.
constexpr uint64_t kNoBodyLimit = std::numeric_limits<uint64_t>::max();

// One socket (TLS over it when `tls` is set). All operations on it run on its strand (the stream's
// executor).
struct Conn {
  Conn(asio::io_context& ioc, uint64_t conn_id, asio::ssl::context* tls)
      : stream(asio::make_strand(ioc), tls), id(conn_id) {}
  TlsOrTcpStream stream;
  beast::flat_buffer buffer;  // bytes read past the end of the last message (normally none)
  const uint64_t id;
};

// Runs on the connection's strand.
void CloseConn(Conn& conn) {
  ErrorCode ignored;
  conn.stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
  conn.stream.close();
}

// True if an idle keep-alive connection can carry another request: the server has not closed it and
// sent nothing unsolicited.
bool IdleConnUsable(Conn& conn) {
  if (conn.buffer.size() != 0 || !conn.stream.socket().is_open()) return false;
  char byte;
  const ssize_t n = ::recv(conn.stream.socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

bool IsConnectionClosedError(const ErrorCode& ec) {
  // A TLS server that closes an idle connection without close_notify: stream_truncated.
  return ec == http::error::end_of_stream || ec == asio::error::eof || ec == asio::error::connection_reset ||
         ec == asio::error::broken_pipe || ec == asio::ssl::error::stream_truncated;
}

Status ConnectError(const ErrorCode& ec, const std::string& host) {
  if (ec == beast::error::timeout) return Status(Code::kUnavailable, "connect to " + host + ": timed out");
  return Status(Code::kUnavailable, "connect to " + host + ": " + ec.message());
}

}  // namespace

// A live watch stream on its own connection. Shared by the ApiWatch handle and the handlers in flight.
class WatchStream : public std::enable_shared_from_this<WatchStream> {
 public:
  // Called with one complete line; returns false when the watch has ended (it delivered an error).
  using LineFn = std::function<bool(std::string_view line)>;
  using FailFn = std::function<void(Status)>;

  WatchStream(std::shared_ptr<HttpTransport> transport, std::shared_ptr<Conn> conn,
              http::request<http::string_body> req, LineFn on_line, FailFn on_fail)
      : transport_(std::move(transport)),
        conn_(std::move(conn)),
        strand_(conn_->stream.get_executor()),
        req_(std::move(req)),
        on_line_(std::move(on_line)),
        on_fail_(std::move(on_fail)) {}

  uint64_t id() const { return conn_id_; }
  void set_id(uint64_t id) { conn_id_ = id; }

  // Connects after `delay` (the rate limiter's wait; zero: at once).
  void Begin(std::chrono::steady_clock::duration delay);
  // From any thread, including from inside a callback of this watch. No callback runs after it returns.
  void Stop();
  // For the transport's shutdown: no further callback, then close.
  void Abandon();

 private:
  void Connect();
  void WriteRequest();
  void ReadHeader();
  void ReadSome();
  void OnBytes(std::string_view bytes);
  // Delivers `line` unless stopped; returns false once the watch is over.
  bool DeliverLine(std::string_view line);
  void Fail(Status status);
  // On the strand, only where no operation is pending (a handler that starts none): closes and
  // releases the connection, so it never outlives the io_context.
  void Finalize();
  // On the strand, with an operation possibly pending: closes the socket, so it completes with an error.
  void Close();
  void PostClose();

  // Owns the io_context: a handle that outlives the client keeps it (threads already joined) until the
  // strand and the connection below are gone. Declared first, so destroyed last.
  const std::shared_ptr<HttpTransport> transport_;
  std::shared_ptr<Conn> conn_;  // strand only; reset when the stream ends
  const TlsOrTcpStream::executor_type strand_;
  std::optional<asio::steady_timer> delay_;  // strand only: the rate limiter's wait before connecting
  uint64_t conn_id_ = 0;
  http::request<http::string_body> req_;
  std::optional<http::response_parser<http::buffer_body>> parser_;  // strand only
  std::vector<char> chunk_ = std::vector<char>(kWatchReadChunk);    // strand only
  std::string pending_;     // strand only: a partial line (200) or the error body (non-200)
  bool ok_status_ = false;  // strand only: the response status was 200

  // Held while a callback runs, so Stop() waits for a running callback. Recursive because the callback
  // may destroy its own ApiWatch (Stop on the same thread).
  RecursiveMutex cb_mu_;
  bool stopped_ GUARDED_BY(cb_mu_) = false;  // no further callback
  const LineFn on_line_;
  const FailFn on_fail_;
};

class HttpTransport : public std::enable_shared_from_this<HttpTransport> {
 public:
  // `tls` set: every connection speaks TLS, verified against `verify_host` (the URL's host).
  HttpTransport(HttpApiClientOptions options, tcp::resolver::results_type endpoints, std::string host,
                std::shared_ptr<asio::ssl::context> tls, std::string verify_host)
      : options_(std::move(options)),
        endpoints_(std::move(endpoints)),
        host_(std::move(host)),
        tls_(std::move(tls)),
        verify_host_(std::move(verify_host)) {
    if (options_.qps > 0) limiter_.emplace(options_.qps, options_.burst, std::chrono::steady_clock::now());
  }
  ~HttpTransport() { assert(threads_.empty()); }

  void Start() {
    work_.emplace(asio::make_work_guard(ioc_));
    const int n = options_.io_threads > 0 ? options_.io_threads : 1;
    for (int i = 0; i < n; ++i) threads_.emplace_back([this] { ioc_.run(); });
  }

  // Completes pending calls, ends watches, joins the I/O threads. Called once, by the client's destructor.
  void Shutdown();

  void Send(const std::string& method, const std::string& target, std::string body,
            Callback<Result<HttpReply>> done);

  std::shared_ptr<WatchStream> OpenWatch(const std::string& target, WatchStream::LineFn on_line,
                                         WatchStream::FailFn on_fail);

  // Runs fn on an I/O thread (never inline), even during shutdown.
  void PostToIo(std::function<void()> fn) { asio::post(ioc_, std::move(fn)); }

  // Posts `fn` to a strand unless shut down (then the shutdown closes everything itself).
  void PostIfRunning(const TlsOrTcpStream::executor_type& strand, std::function<void()> fn) {
    MutexLock lock(mu_);
    if (stopping_) return;
    asio::post(strand, std::move(fn));
  }
  void ForgetWatch(uint64_t id) {
    MutexLock lock(mu_);
    watches_.erase(id);
  }
  bool stopping() const { return stopping_flag_.load(std::memory_order_acquire); }

  const HttpApiClientOptions& options() const { return options_; }
  const tcp::resolver::results_type& endpoints() const { return endpoints_; }
  const std::string& host() const { return host_; }
  asio::ssl::context* tls() const { return tls_.get(); }

  // After a connect: the TLS handshake (with the server's certificate checked), then next(OK); or
  // next(kUnavailable saying why). Plain HTTP: next(OK) at once. Runs on the connection's strand.
  void Handshake(const std::shared_ptr<Conn>& conn, std::function<void(Status)> next) {
    if (!conn->stream.is_tls()) return next(Status::Ok());
    if (Status s = PrepareTlsClient(conn->stream.ssl(), verify_host_, options_.tls); !s.ok()) return next(s);
    conn->stream.async_handshake(
        asio::ssl::stream_base::client, [this, conn, next = std::move(next)](ErrorCode ec) {
          if (!ec) return next(Status::Ok());
          next(Status(Code::kUnavailable,
                      "TLS handshake with " + host_ + ": " + TlsHandshakeError(conn->stream.ssl(), ec)));
        });
  }

  // The rate limiter's wait before the next request or watch start (zero without a limit).
  std::chrono::steady_clock::duration Throttle() {
    MutexLock lock(mu_);
    return limiter_ ? limiter_->Reserve(std::chrono::steady_clock::now())
                    : std::chrono::steady_clock::duration::zero();
  }

  http::request<http::string_body> MakeRequest(http::verb verb, const std::string& target,
                                               std::string body) const {
    http::request<http::string_body> req{verb, target, 11};
    req.set(http::field::host, host_);
    req.set(http::field::user_agent, "rcsim-httpclient");
    req.set(http::field::accept, "application/json");
    if (!options_.bearer_token.empty()) {
      req.set(http::field::authorization, "Bearer " + options_.bearer_token);
    }
    if (!body.empty()) {
      // The only PATCH this client sends is the strategic merge patch of PatchOwnerReferences.
      req.set(http::field::content_type,
              verb == http::verb::patch ? "application/strategic-merge-patch+json" : "application/json");
      req.body() = std::move(body);
    }
    req.keep_alive(true);
    req.prepare_payload();
    return req;
  }

 private:
  struct RequestOp {
    http::request<http::string_body> req;
    Callback<Result<HttpReply>> done;
    bool mutating = false;  // not a GET: a lost response leaves the outcome unknown
    std::shared_ptr<Conn> conn;
    bool reused = false;
    bool retried = false;
    bool written = false;
    bool sent = false;  // the whole request went out: only then can the server have acted on it
    std::optional<http::response_parser<http::string_body>> parser;
  };
  using OpPtr = std::shared_ptr<RequestOp>;

  // Gives `op` a connection (idle, new, or later when one is released).
  void Acquire(OpPtr op);
  void Run(OpPtr op, std::shared_ptr<Conn> conn, bool fresh);
  void Connect(const OpPtr& op);
  void Write(const OpPtr& op);
  void OnResponse(const OpPtr& op, ErrorCode ec);
  void FailIo(OpPtr op, const ErrorCode& ec);
  void Finish(OpPtr op, Result<HttpReply> result, bool reusable);
  void Release(std::shared_ptr<Conn> conn, bool reusable);
  std::shared_ptr<Conn> NewConnLocked() REQUIRES(mu_);

  const HttpApiClientOptions options_;
  const tcp::resolver::results_type endpoints_;
  const std::string host_;                         // the Host header: "host:port"
  const std::shared_ptr<asio::ssl::context> tls_;  // https: shared by every connection
  const std::string verify_host_;                  // https: the name or IP the certificate must match
  asio::io_context ioc_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_;
  std::vector<std::thread> threads_;  // owned by the thread that calls Start/Shutdown

  Mutex mu_;
  bool stopping_ GUARDED_BY(mu_) = false;
  std::atomic<bool> stopping_flag_{false};  // mirrors stopping_ for lock-free checks
  uint64_t next_id_ GUARDED_BY(mu_) = 1;
  int open_ GUARDED_BY(mu_) = 0;  // pooled connections open
  std::vector<std::shared_ptr<Conn>> idle_ GUARDED_BY(mu_);
  std::deque<OpPtr> waiting_ GUARDED_BY(mu_);
  std::map<uint64_t, std::weak_ptr<Conn>> conns_ GUARDED_BY(mu_);  // open pooled connections
  std::map<uint64_t, std::weak_ptr<WatchStream>> watches_ GUARDED_BY(mu_);
  std::optional<TokenBucket> limiter_ GUARDED_BY(mu_);  // set when qps > 0
  // Requests waiting for the rate limiter, each on its own timer (on its own strand).
  std::map<uint64_t, std::shared_ptr<asio::steady_timer>> throttled_ GUARDED_BY(mu_);
};

// --- HttpTransport: the request pool. ---

std::shared_ptr<Conn> HttpTransport::NewConnLocked() {
  auto conn = std::make_shared<Conn>(ioc_, next_id_++, tls_.get());
  conns_[conn->id] = conn;
  ++open_;
  return conn;
}

void HttpTransport::Send(const std::string& method, const std::string& target, std::string body,
                         Callback<Result<HttpReply>> done) {
  auto op = std::make_shared<RequestOp>();
  const http::verb verb = http::string_to_verb(method);
  if (verb == http::verb::unknown) {
    PostToIo([done = std::move(done), method] {
      done(Status(Code::kBadRequest, "unknown HTTP method " + method));
    });
    return;
  }
  op->req = MakeRequest(verb, target, std::move(body));
  op->done = std::move(done);
  op->mutating = verb != http::verb::get && verb != http::verb::head;
  const std::chrono::steady_clock::duration wait = Throttle();
  if (wait <= std::chrono::steady_clock::duration::zero()) return Acquire(std::move(op));
  auto timer = std::make_shared<asio::steady_timer>(asio::make_strand(ioc_), wait);
  MutexLock lock(mu_);
  if (stopping_) {
    asio::post(ioc_, [op] { op->done(Status(Code::kUnavailable, "client shut down")); });
    return;
  }
  const uint64_t id = next_id_++;
  throttled_[id] = timer;
  // The wait starts on the timer's strand, posted under mu_, so Shutdown's cancel (posted to the
  // same strand after it takes mu_) comes after it; Acquire then fails the request as shut down.
  asio::post(timer->get_executor(), [this, timer, op = std::move(op), id]() mutable {
    timer->async_wait([this, timer, op = std::move(op), id](ErrorCode) mutable {
      {
        MutexLock lock(mu_);
        throttled_.erase(id);
      }
      Acquire(std::move(op));
    });
  });
}

void HttpTransport::Acquire(OpPtr op) {
  std::shared_ptr<Conn> conn;
  bool fresh = false;
  std::vector<std::shared_ptr<Conn>> dead;  // destroyed outside the lock; they have no pending work
  {
    MutexLock lock(mu_);
    if (stopping_) {
      asio::post(ioc_, [op] { op->done(Status(Code::kUnavailable, "client shut down")); });
      return;
    }
    while (!idle_.empty() && !conn) {
      std::shared_ptr<Conn> c = std::move(idle_.back());
      idle_.pop_back();
      if (IdleConnUsable(*c)) {
        conn = std::move(c);
      } else {
        conns_.erase(c->id);
        --open_;
        dead.push_back(std::move(c));
      }
    }
    if (!conn) {
      if (open_ >= options_.max_connections && options_.max_connections > 0) {
        waiting_.push_back(std::move(op));
        return;
      }
      conn = NewConnLocked();
      fresh = true;
    }
  }
  Run(std::move(op), std::move(conn), fresh);
}

void HttpTransport::Run(OpPtr op, std::shared_ptr<Conn> conn, bool fresh) {
  op->conn = std::move(conn);
  op->reused = !fresh;
  auto strand = op->conn->stream.get_executor();
  asio::post(strand, [this, op = std::move(op), fresh]() mutable {
    if (fresh) {
      Connect(op);
    } else {
      Write(op);
    }
  });
}

void HttpTransport::Connect(const OpPtr& op) {
  if (stopping()) return FailIo(op, asio::error::operation_aborted);
  Conn& conn = *op->conn;
  conn.stream.expires_after(options_.connect_timeout);
  conn.stream.async_connect(endpoints_, [this, op](ErrorCode ec, const tcp::endpoint&) {
    if (ec) {
      Finish(op, ConnectError(ec, host_), /*reusable=*/false);
      return;
    }
    ErrorCode ignored;
    op->conn->stream.socket().set_option(tcp::no_delay(true), ignored);
    Handshake(op->conn, [this, op](Status s) {
      if (!s.ok()) return Finish(op, std::move(s), /*reusable=*/false);
      Write(op);
    });
  });
}

void HttpTransport::Write(const OpPtr& op) {
  if (stopping()) return FailIo(op, asio::error::operation_aborted);
  Conn& conn = *op->conn;
  op->written = true;
  op->parser.emplace();
  op->parser->body_limit(kNoBodyLimit);
  conn.stream.expires_after(options_.request_timeout);
  http::async_write(conn.stream, op->req, [this, op](ErrorCode ec, size_t) {
    if (ec && !stopping() && (ec == asio::error::broken_pipe || ec == asio::error::connection_reset)) {
      // The server stopped reading: it may have answered first (a 413 for a body over its limit),
      // and that answer is the outcome, as Go's transport prefers it to the write error.
      http::async_read(op->conn->stream, op->conn->buffer, *op->parser,
                       [this, op, ec](ErrorCode ec2, size_t) {
                         if (ec2) return FailIo(op, ec);
                         OnResponse(op, ec2);
                       });
      return;
    }
    if (ec) return FailIo(op, ec);
    op->sent = true;
    http::async_read(op->conn->stream, op->conn->buffer, *op->parser,
                     [this, op](ErrorCode ec2, size_t) { OnResponse(op, ec2); });
  });
}

void HttpTransport::OnResponse(const OpPtr& op, ErrorCode ec) {
  if (ec) return FailIo(op, ec);
  http::response<http::string_body> res = op->parser->release();
  HttpReply reply;
  reply.status = static_cast<int>(res.result_int());
  reply.content_type = std::string(res[http::field::content_type]);
  const bool reusable = res.keep_alive();
  reply.body = std::move(res.body());
  Finish(op, std::move(reply), reusable);
}

void HttpTransport::FailIo(OpPtr op, const ErrorCode& ec) {
  const bool nothing_received = !op->parser || !op->parser->got_some();
  if (op->reused && !op->retried && (!op->mutating || !op->sent) && nothing_received &&
      IsConnectionClosedError(ec) && !stopping()) {
    // The server closed the idle connection as we reused it: a read is sent again, and so is a write
    // that did not go out whole (no server acts on half a request). A write sent whole is not (below:
    // outcome unknown): a server killed after it read and applied the request closes the connection
    // the same way, and a retried create would make a second pod.
    Release(std::move(op->conn), /*reusable=*/false);
    op->retried = true;
    op->written = false;
    op->sent = false;
    op->parser.reset();
    Acquire(std::move(op));
    return;
  }
  Status status;
  if (ec == beast::error::timeout) {
    status = Status(op->written ? Code::kTimeout : Code::kUnavailable,
                    op->written ? "request timed out; outcome unknown" : "connect timed out");
  } else if (ec == asio::error::operation_aborted || stopping()) {
    status = Status(op->written && op->mutating ? Code::kTimeout : Code::kUnavailable, "client shut down");
  } else if (op->sent && op->mutating) {
    status =
        Status(Code::kTimeout, "connection lost before the response: " + ec.message() + "; outcome unknown");
  } else {
    status = Status(Code::kUnavailable, "connection lost: " + ec.message());
  }
  Finish(std::move(op), std::move(status), /*reusable=*/false);
}

void HttpTransport::Finish(OpPtr op, Result<HttpReply> result, bool reusable) {
  if (reusable) op->conn->stream.expires_never();
  Release(std::move(op->conn), reusable);
  Callback<Result<HttpReply>> done = std::move(op->done);
  op.reset();
  done(std::move(result));
}

void HttpTransport::Release(std::shared_ptr<Conn> conn, bool reusable) {
  OpPtr next;
  bool fresh = false;
  std::shared_ptr<Conn> to_close;
  {
    MutexLock lock(mu_);
    if (stopping_ || !reusable) {
      conns_.erase(conn->id);
      --open_;
      to_close = std::move(conn);
    }
    if (!stopping_ && !waiting_.empty()) {
      next = std::move(waiting_.front());
      waiting_.pop_front();
      if (!conn) {
        conn = NewConnLocked();
        fresh = true;
      }
    } else if (conn) {
      idle_.push_back(std::move(conn));
    }
  }
  // Release runs on to_close's strand (the handler that finished with it), so closing here is safe.
  if (to_close) CloseConn(*to_close);
  if (next) Run(std::move(next), std::move(conn), fresh);
}

std::shared_ptr<WatchStream> HttpTransport::OpenWatch(const std::string& target, WatchStream::LineFn on_line,
                                                      WatchStream::FailFn on_fail) {
  std::shared_ptr<WatchStream> watch;
  {
    MutexLock lock(mu_);
    const uint64_t id = next_id_++;
    watch = std::make_shared<WatchStream>(shared_from_this(), std::make_shared<Conn>(ioc_, id, tls_.get()),
                                          MakeRequest(http::verb::get, target, ""), std::move(on_line),
                                          std::move(on_fail));
    watch->set_id(id);
    if (!stopping_) watches_[id] = watch;
  }
  watch->Begin(Throttle());
  return watch;
}

void HttpTransport::Shutdown() {
  std::deque<OpPtr> waiting;
  std::vector<std::shared_ptr<Conn>> idle;
  std::vector<std::shared_ptr<Conn>> active;
  std::vector<std::shared_ptr<WatchStream>> watches;
  {
    MutexLock lock(mu_);
    stopping_ = true;
    stopping_flag_.store(true, std::memory_order_release);
    waiting.swap(waiting_);
    idle.swap(idle_);
    for (const auto& c : idle) conns_.erase(c->id);
    open_ -= static_cast<int>(idle.size());
    for (const auto& [id, weak] : conns_) {
      if (auto c = weak.lock()) active.push_back(std::move(c));
    }
    for (const auto& [id, weak] : watches_) {
      if (auto w = weak.lock()) watches.push_back(std::move(w));
    }
    watches_.clear();
  }
  for (OpPtr& op : waiting) {
    asio::post(ioc_, [op] { op->done(Status(Code::kUnavailable, "client shut down")); });
  }
  idle.clear();
  for (auto& c : active) {
    asio::post(c->stream.get_executor(), [c] { CloseConn(*c); });
  }
  active.clear();
  for (auto& w : watches) w->Abandon();
  watches.clear();
  std::map<uint64_t, std::shared_ptr<asio::steady_timer>> throttled;
  {
    MutexLock lock(mu_);
    throttled.swap(throttled_);
  }
  for (auto& entry : throttled) {
    std::shared_ptr<asio::steady_timer> timer = entry.second;
    asio::post(timer->get_executor(), [timer] { timer->cancel(); });
  }
  throttled.clear();
  work_.reset();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
}

// --- WatchStream. ---

void WatchStream::Begin(std::chrono::steady_clock::duration delay) {
  auto self = shared_from_this();
  if (delay <= std::chrono::steady_clock::duration::zero()) {
    asio::post(strand_, [self] { self->Connect(); });
    return;
  }
  asio::post(strand_, [self, delay] {
    {
      RecursiveMutexLock lock(self->cb_mu_);
      if (self->stopped_ || self->transport_->stopping()) return self->Finalize();
    }
    self->delay_.emplace(self->strand_, delay);
    self->delay_->async_wait([self](ErrorCode ec) {
      if (ec) return self->Finalize();  // stopped (Close cancels the wait)
      {
        RecursiveMutexLock lock(self->cb_mu_);
        if (self->stopped_) return self->Finalize();
      }
      self->Connect();
    });
  });
}

void WatchStream::Connect() {
  if (transport_->stopping()) return Finalize();
  conn_->stream.expires_after(transport_->options().connect_timeout);
  conn_->stream.async_connect(transport_->endpoints(),
                              [self = shared_from_this()](ErrorCode ec, const tcp::endpoint&) {
                                if (ec) return self->Fail(ConnectError(ec, self->transport_->host()));
                                ErrorCode ignored;
                                self->conn_->stream.socket().set_option(tcp::no_delay(true), ignored);
                                self->transport_->Handshake(self->conn_, [self](Status s) {
                                  if (!s.ok()) return self->Fail(std::move(s));
                                  self->WriteRequest();
                                });
                              });
}

void WatchStream::WriteRequest() {
  conn_->stream.expires_after(transport_->options().request_timeout);
  http::async_write(conn_->stream, req_, [self = shared_from_this()](ErrorCode ec, size_t) {
    if (ec) return self->Fail(Status(Code::kUnavailable, "watch request: " + ec.message()));
    self->ReadHeader();
  });
}

void WatchStream::ReadHeader() {
  parser_.emplace();
  parser_->body_limit(kNoBodyLimit);
  http::async_read_header(
      conn_->stream, conn_->buffer, *parser_, [self = shared_from_this()](ErrorCode ec, size_t) {
        if (ec) return self->Fail(Status(Code::kUnavailable, "watch response: " + ec.message()));
        self->conn_->stream.expires_never();
        self->ok_status_ = self->parser_->get().result_int() == 200;
        self->ReadSome();
      });
}

void WatchStream::ReadSome() {
  if (parser_->is_done()) {
    if (ok_status_) return Fail(Status(Code::kUnavailable, "watch stream ended"));
    return Fail(StatusFromHttp(static_cast<int>(parser_->get().result_int()), pending_));
  }
  parser_->get().body().data = chunk_.data();
  parser_->get().body().size = chunk_.size();
  http::async_read_some(conn_->stream, conn_->buffer, *parser_,
                        [self = shared_from_this()](ErrorCode ec, size_t) {
                          const size_t got = self->chunk_.size() - self->parser_->get().body().size;
                          if (ec == http::error::need_buffer) ec = {};
                          if (got > 0) {
                            {
                              RecursiveMutexLock lock(self->cb_mu_);
                              if (self->stopped_) return self->Finalize();
                            }
                            self->OnBytes(std::string_view(self->chunk_.data(), got));
                            if (!self->conn_) return;  // the watch ended inside OnBytes
                          }
                          if (ec)
                            return self->Fail(Status(Code::kUnavailable, "watch stream: " + ec.message()));
                          self->ReadSome();
                        });
}

void WatchStream::OnBytes(std::string_view bytes) {
  if (!ok_status_) {
    if (pending_.size() < kMaxErrorBody) pending_.append(bytes.substr(0, kMaxErrorBody - pending_.size()));
    return;
  }
  size_t start = 0;
  while (true) {
    const size_t nl = bytes.find('\n', start);
    if (nl == std::string_view::npos) break;
    std::string_view piece = bytes.substr(start, nl - start);
    start = nl + 1;
    bool go_on;
    if (pending_.empty()) {
      go_on = DeliverLine(piece);
    } else {
      pending_.append(piece);
      std::string line = std::move(pending_);
      pending_.clear();
      go_on = DeliverLine(line);
    }
    if (!go_on) return Finalize();
  }
  pending_.append(bytes.substr(start));
  if (pending_.size() > kMaxWatchLine) Fail(Status(Code::kInternal, "watch event larger than 64 MiB"));
}

bool WatchStream::DeliverLine(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.empty()) return true;
  RecursiveMutexLock lock(cb_mu_);
  if (stopped_) return false;
  if (on_line_(line)) return !stopped_;
  stopped_ = true;
  return false;
}

void WatchStream::Fail(Status status) {
  {
    RecursiveMutexLock lock(cb_mu_);
    if (!stopped_ && !transport_->stopping()) {
      stopped_ = true;
      on_fail_(std::move(status));
    }
    stopped_ = true;
  }
  Finalize();
}

void WatchStream::Finalize() {
  if (!conn_) return;
  CloseConn(*conn_);
  conn_.reset();
  parser_.reset();
}

void WatchStream::Close() {
  if (delay_) delay_->cancel();
  if (conn_) CloseConn(*conn_);
}

void WatchStream::PostClose() {
  transport_->ForgetWatch(conn_id_);
  transport_->PostIfRunning(strand_, [self = shared_from_this()] { self->Close(); });
}

void WatchStream::Stop() {
  {
    RecursiveMutexLock lock(cb_mu_);
    stopped_ = true;
  }
  PostClose();
}

void WatchStream::Abandon() {
  {
    RecursiveMutexLock lock(cb_mu_);
    stopped_ = true;
  }
  asio::post(strand_, [self = shared_from_this()] { self->Close(); });
}

// --- The typed resource clients. ---

namespace {

class HttpApiWatch final : public ApiWatch {
 public:
  explicit HttpApiWatch(std::shared_ptr<WatchStream> stream) : stream_(std::move(stream)) {}
  ~HttpApiWatch() override { stream_->Stop(); }

 private:
  std::shared_ptr<WatchStream> stream_;
};

bool Is2xx(int status) { return status >= 200 && status < 300; }

template <typename T>
Result<std::shared_ptr<const T>> ObjectOf(Result<HttpReply> reply) {
  if (!reply.ok()) return reply.status();
  if (!Is2xx(reply->status)) return StatusFromHttp(reply->status, reply->body);
  return DecodeObjectResponse<T>(reply->body);
}

// A watch of `target` whose lines are decoded as T's events; a line that does not decode ends it with a
// kError event, as does a failed stream.
template <typename T>
std::unique_ptr<ApiWatch> OpenTypedWatch(HttpTransport* t, const std::string& target,
                                         std::function<void(const ApiWatchEvent<T>&)> on_event) {
  auto shared_on_event = std::make_shared<std::function<void(const ApiWatchEvent<T>&)>>(std::move(on_event));
  auto on_line = [shared_on_event](std::string_view line) {
    Result<ApiWatchEvent<T>> ev = DecodeWatchLine<T>(line);
    if (!ev.ok()) {
      ApiWatchEvent<T> error;
      error.type = ApiWatchEvent<T>::Type::kError;
      error.error = ev.status();
      (*shared_on_event)(error);
      return false;
    }
    (*shared_on_event)(*ev);
    return ev->type != ApiWatchEvent<T>::Type::kError;
  };
  auto on_fail = [shared_on_event](const Status& status) {
    ApiWatchEvent<T> error;
    error.type = ApiWatchEvent<T>::Type::kError;
    error.error = status;
    (*shared_on_event)(error);
  };
  return std::make_unique<HttpApiWatch>(t->OpenWatch(target, std::move(on_line), std::move(on_fail)));
}

template <typename T>
class HttpResourceClient final : public ResourceClient<T> {
 public:
  using Ptr = typename ResourceClient<T>::Ptr;
  explicit HttpResourceClient(HttpTransport* transport) : t_(transport) {}

  void Get(const std::string& ns, const std::string& name, Callback<Result<Ptr>> done) override {
    if (name.empty()) return Reject(std::move(done), "get: name is required");
    SendForObject("GET", Path(ns, name), "", std::move(done));
  }

  void List(const std::string& ns, const ListOptions& opts, Callback<Result<ObjectList<T>>> done) override {
    std::string target = Path(ns, "");
    const std::string query = ListQuery(opts);
    if (!query.empty()) target += "?" + query;
    t_->Send("GET", target, "", [done = std::move(done)](Result<HttpReply> reply) {
      if (!reply.ok()) return done(reply.status());
      if (!Is2xx(reply->status)) return done(StatusFromHttp(reply->status, reply->body));
      done(DecodeListResponse<T>(reply->body));
    });
  }

  void Create(const std::string& ns, T object, Callback<Result<Ptr>> done) override {
    if (object.metadata.namespace_.empty()) object.metadata.namespace_ = ns;
    SendForObject("POST", Path(ns, ""), RestResource<T>::Encode(object), std::move(done));
  }

  void Update(T object, Callback<Result<Ptr>> done) override {
    if (object.metadata.name.empty()) return Reject(std::move(done), "update: metadata.name is required");
    const std::string path = Path(object.metadata.namespace_, object.metadata.name);
    SendForObject("PUT", path, RestResource<T>::Encode(object), std::move(done));
  }

  void UpdateStatus(T object, Callback<Result<Ptr>> done) override {
    if (object.metadata.name.empty()) {
      return Reject(std::move(done), "update status: metadata.name is required");
    }
    const std::string path = Path(object.metadata.namespace_, object.metadata.name, "status");
    SendForObject("PUT", path, RestResource<T>::Encode(object), std::move(done));
  }

  void Delete(const std::string& ns, const std::string& name, const DeleteOptions& opts,
              Callback<Result<Ptr>> done) override {
    if (name.empty()) return Reject(std::move(done), "delete: name is required");
    SendForObject("DELETE", Path(ns, name), DeleteOptionsBody(opts), std::move(done));
  }

  // {"metadata":{"ownerReferences":[<add>, {"$patch":"delete","uid":<remove_uid>}],"uid":<uid>}}: the
  // list merges by uid, and the uid is the precondition (a different one is refused as immutable).
  void PatchOwnerReferences(const std::string& ns, const std::string& name, const OwnerReferencePatch& patch,
                            Callback<Result<Ptr>> done) override {
    if (name.empty()) return Reject(std::move(done), "patch: name is required");
    if (patch.uid.empty()) return Reject(std::move(done), "patch: the object's uid is required");
    nlohmann::json refs = nlohmann::json::array();
    if (patch.add) {
      ObjectMeta meta;
      meta.owner_references.push_back(*patch.add);
      refs.push_back(ObjectMetaToJson(meta).at("ownerReferences").at(0));
    }
    if (!patch.remove_uid.empty()) refs.push_back({{"$patch", "delete"}, {"uid", patch.remove_uid}});
    const nlohmann::json body = {{"metadata", {{"ownerReferences", std::move(refs)}, {"uid", patch.uid}}}};
    SendForObject("PATCH", Path(ns, name), body.dump(), std::move(done));
  }

  std::unique_ptr<ApiWatch> Watch(const std::string& ns, const ListOptions& opts,
                                  const std::string& resource_version,
                                  std::function<void(const ApiWatchEvent<T>&)> on_event) override {
    return OpenTypedWatch<T>(t_, Path(ns, "") + "?" + WatchQuery(opts, resource_version),
                             std::move(on_event));
  }

 private:
  static std::string Path(const std::string& ns, const std::string& name, std::string_view sub = "") {
    return ResourcePath(RestResource<T>::kPlural, ns, name, sub);
  }

  void SendForObject(const char* method, const std::string& target, std::string&& body,
                     Callback<Result<Ptr>> done) {
    t_->Send(method, target, std::move(body),
             [done = std::move(done)](Result<HttpReply> reply) { done(ObjectOf<T>(std::move(reply))); });
  }

  void Reject(Callback<Result<Ptr>> done, std::string message) {
    t_->PostToIo(
        [done = std::move(done), message = std::move(message)] { done(Status(Code::kBadRequest, message)); });
  }

  HttpTransport* const t_;
};

// coordination.k8s.io/v1 Leases: GET/POST/PUT/DELETE of
// /apis/coordination.k8s.io/v1/namespaces/{ns}/leases[/{name}].
class HttpLeaseClient final : public LeaseClient {
 public:
  explicit HttpLeaseClient(HttpTransport* transport) : t_(transport) {}

  void Get(const std::string& ns, const std::string& name, Callback<Result<LeasePtr>> done) override {
    if (ns.empty() || name.empty())
      return Reject(std::move(done), Code::kNotFound, "get: namespace and name are required");
    SendForLease("GET", Path(ns, name), "", std::move(done));
  }

  void List(const std::string& ns, const ListOptions& opts,
            Callback<Result<ObjectList<Lease>>> done) override {
    std::string target = Collection(ns);
    if (const std::string query = ListQuery(opts); !query.empty()) target += "?" + query;
    t_->Send("GET", target, "", [done = std::move(done)](Result<HttpReply> reply) {
      if (!reply.ok()) return done(reply.status());
      if (!Is2xx(reply->status)) return done(StatusFromHttp(reply->status, reply->body));
      done(DecodeListResponse<Lease>(reply->body));
    });
  }

  std::unique_ptr<ApiWatch> Watch(const std::string& ns, const ListOptions& opts,
                                  const std::string& resource_version,
                                  std::function<void(const ApiWatchEvent<Lease>&)> on_event) override {
    return OpenTypedWatch<Lease>(t_, Collection(ns) + "?" + WatchQuery(opts, resource_version),
                                 std::move(on_event));
  }

  void Create(const std::string& ns, Lease lease, Callback<Result<LeasePtr>> done) override {
    if (ns.empty()) return Reject(std::move(done), Code::kBadRequest, "create: a lease needs a namespace");
    if (lease.metadata.namespace_.empty()) lease.metadata.namespace_ = ns;
    SendForLease("POST", Path(ns, ""), EncodeLease(lease), std::move(done));
  }

  void Update(Lease lease, Callback<Result<LeasePtr>> done) override {
    if (lease.metadata.namespace_.empty() || lease.metadata.name.empty()) {
      return Reject(std::move(done), Code::kNotFound,
                    "update: metadata.namespace and metadata.name are required");
    }
    const std::string path = Path(lease.metadata.namespace_, lease.metadata.name);
    SendForLease("PUT", path, EncodeLease(lease), std::move(done));
  }

  // The reply is a Status (as kube-apiserver's for leases): the lease given back has only its
  // namespace, name and uid.
  void Delete(const std::string& ns, const std::string& name, const DeleteOptions& opts,
              Callback<Result<LeasePtr>> done) override {
    if (ns.empty() || name.empty())
      return Reject(std::move(done), Code::kNotFound, "delete: namespace and name are required");
    t_->Send("DELETE", Path(ns, name), DeleteOptionsBody(opts),
             [ns, name, done = std::move(done)](Result<HttpReply> reply) {
               if (!reply.ok()) return done(reply.status());
               if (!Is2xx(reply->status)) return done(StatusFromHttp(reply->status, reply->body));
               Lease gone;
               gone.metadata.namespace_ = ns;
               gone.metadata.name = name;
               nlohmann::json j = nlohmann::json::parse(reply->body, nullptr, /*allow_exceptions=*/false);
               if (auto d = j.is_object() ? j.find("details") : j.end(); d != j.end() && d->is_object()) {
                 if (auto uid = d->find("uid"); uid != d->end() && uid->is_string())
                   gone.metadata.uid = uid->get<std::string>();
               }
               done(std::make_shared<const Lease>(std::move(gone)));
             });
  }

 private:
  static std::string Path(const std::string& ns, const std::string& name) {
    std::string p = "/apis/coordination.k8s.io/v1/namespaces/" + PercentEncode(ns) + "/leases";
    if (!name.empty()) p += "/" + PercentEncode(name);
    return p;
  }
  // The leases of `ns`, or of every namespace when it is "".
  static std::string Collection(const std::string& ns) {
    return ns.empty() ? "/apis/coordination.k8s.io/v1/leases" : Path(ns, "");
  }

  void SendForLease(const char* method, const std::string& target, std::string&& body,
                    Callback<Result<LeasePtr>> done) {
    t_->Send(method, target, std::move(body),
             [done = std::move(done)](Result<HttpReply> reply) { done(ObjectOf<Lease>(std::move(reply))); });
  }

  template <typename R>
  void Reject(Callback<R> done, Code code, std::string message) {
    t_->PostToIo(
        [done = std::move(done), code, message = std::move(message)] { done(Status(code, message)); });
  }

  HttpTransport* const t_;
};

// "http[s]://host[:port][/]" → https?, host (an IPv6 address without its brackets), port.
bool ParseBaseUrl(const std::string& url, bool* https, std::string* host, std::string* port) {
  std::string_view rest = url;
  if (rest.substr(0, 7) == "http://") {
    *https = false;
    rest.remove_prefix(7);
  } else if (rest.substr(0, 8) == "https://") {
    *https = true;
    rest.remove_prefix(8);
  } else {
    return false;
  }
  if (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  if (rest.empty() || rest.find('/') != std::string_view::npos) return false;
  std::string_view port_part;
  if (rest.front() == '[') {  // [v6]:port
    const size_t close = rest.find(']');
    if (close == std::string_view::npos) return false;
    *host = std::string(rest.substr(1, close - 1));
    rest.remove_prefix(close + 1);
    if (!rest.empty() && rest.front() != ':') return false;
    port_part = rest.empty() ? std::string_view() : rest.substr(1);
    if (!rest.empty() && port_part.empty()) return false;
  } else {
    const size_t colon = rest.rfind(':');
    *host = std::string(rest.substr(0, colon));
    if (colon != std::string_view::npos) {
      port_part = rest.substr(colon + 1);
      if (port_part.empty()) return false;
    }
  }
  *port = port_part.empty() ? (*https ? "443" : "80") : std::string(port_part);
  if (port->find_first_not_of("0123456789") != std::string::npos) return false;
  return !host->empty();
}

}  // namespace

struct HttpApiClient::Resources {
  explicit Resources(HttpTransport* t) : pods(t), controllers(t), nodes(t), leases(t) {}
  HttpResourceClient<Pod> pods;
  HttpResourceClient<ReplicationController> controllers;
  HttpResourceClient<Node> nodes;
  HttpLeaseClient leases;
};

Result<std::unique_ptr<HttpApiClient>> HttpApiClient::Create(HttpApiClientOptions options) {
  bool https = false;
  std::string host, port;
  if (!ParseBaseUrl(options.base_url, &https, &host, &port)) {
    return Status(Code::kBadRequest,
                  "base URL must be http[s]://host[:port], got \"" + options.base_url + "\"");
  }
  std::shared_ptr<asio::ssl::context> tls;
  if (https) {
    Result<std::shared_ptr<asio::ssl::context>> ctx = NewTlsClientContext(options.tls);
    if (!ctx.ok())
      return Status(Code::kInvalid, "TLS for " + options.base_url + ": " + ctx.status().message());
    tls = std::move(ctx).value();
  }
  asio::io_context resolve_ctx;
  tcp::resolver resolver(resolve_ctx);
  ErrorCode ec;
  tcp::resolver::results_type endpoints = resolver.resolve(host, port, ec);
  if (ec) return Status(Code::kUnavailable, "resolve " + host + ": " + ec.message());
  const std::string host_header =
      (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + port;
  auto transport = std::make_shared<HttpTransport>(std::move(options), std::move(endpoints), host_header,
                                                   std::move(tls), host);
  transport->Start();
  return std::unique_ptr<HttpApiClient>(new HttpApiClient(std::move(transport)));
}

HttpApiClient::HttpApiClient(std::shared_ptr<HttpTransport> transport)
    : transport_(std::move(transport)), resources_(std::make_unique<Resources>(transport_.get())) {}

HttpApiClient::~HttpApiClient() { transport_->Shutdown(); }

ResourceClient<Pod>& HttpApiClient::pods() { return resources_->pods; }
ResourceClient<ReplicationController>& HttpApiClient::controllers() { return resources_->controllers; }
ResourceClient<Node>& HttpApiClient::nodes() { return resources_->nodes; }
LeaseClient& HttpApiClient::leases() { return resources_->leases; }

void HttpApiClient::BindPod(const std::string& ns, Binding binding, Callback<Status> done) {
  if (binding.metadata.namespace_.empty()) binding.metadata.namespace_ = ns;
  const std::string target = ResourcePath("pods", ns, binding.metadata.name, "binding");
  transport_->Send("POST", target, BindingToJson(binding).dump(),
                   [done = std::move(done)](Result<HttpReply> reply) {
                     if (!reply.ok()) return done(reply.status());
                     if (!Is2xx(reply->status)) return done(StatusFromHttp(reply->status, reply->body));
                     done(Status::Ok());
                   });
}

void HttpApiClient::Send(const std::string& method, const std::string& target, std::string body,
                         Callback<Result<HttpReply>> done) {
  transport_->Send(method, target, std::move(body), std::move(done));
}

}  // namespace rcsim
