// HttpServer: the Kubernetes-compatible API server over HTTP/1.1 (Boost.Beast on Asio).
//
// Threading: `io_threads` threads run every socket asynchronously (one strand per connection, no
// thread per connection), so hundreds of watch streams cost a few kilobytes each. Registry calls block
// on the store (a real etcd round trip), so each request is handed to a pool of `worker_threads` and
// its response handed back to the connection's strand; a slow store therefore never stalls the
// sockets. Watch events arrive on the store's watch thread and are posted to the connection's strand.
// TCP_NODELAY is set on every accepted socket.
//
// Watch streams are chunked HTTP responses, one JSON event per line, held open until the client goes
// away, ?timeoutSeconds (default options.default_watch_timeout) passes or the watch ends with an
// ERROR event; the connection then closes. A client that falls more than max_watch_buffer_bytes behind
// is disconnected. Connections, watches, header and body sizes are capped (see HttpServerOptions).
//
// HTTPS when tls_cert_file and tls_key_file are given (backends/tls): the same sessions over TLS, a
// handshake within 10 s of the connection; the limits above hold as over plain HTTP. With
// client_ca_file, a client certificate signed by it authenticates its CN as the user (O: groups).
// With any authentication configured (tokens or a client CA), a request with neither a valid
// certificate nor a valid token gets 401, except GET /healthz, /livez, /readyz.
//
// Thread-safety: Start/Stop/port from one thread; the server's own work is internally synchronised.
#ifndef RCSIM_BACKENDS_HTTP_HTTP_SERVER_H_
#define RCSIM_BACKENDS_HTTP_HTTP_SERVER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "backends/http/request_info.h"
#include "engine/status.h"
#include "engine/time.h"
#include "registry/registry.h"

namespace rcsim {

class LeaseRegistry;       // registry/lease_registry.h
class TokenAuthenticator;  // backends/http/token_auth.h

// Told about every authenticated request, for the API server's metrics (apps/apiserver keeps them, so
// this library links no metrics library). Requests refused before they are read whole (401, 413, 431,
// malformed HTTP, connections over the limit) are not reported, as kube-apiserver counts requests only
// once they are authenticated and routed. Called on the server's threads, concurrently: implementations
// are thread-safe and must not block.
class RequestObserver {
 public:
  virtual ~RequestObserver() = default;
  // `code` was answered `latency` after the request was read; a watch is reported when its stream starts
  // (200) or when it is refused.
  virtual void OnRequest(const RequestInfo& info, int code, Duration latency) = 0;
  // A long-running request (a watch, a streamed log) started streaming (+1) or ended (-1).
  virtual void OnLongRunning(const RequestInfo& info, int delta) = 0;
};

struct HttpServerOptions {
  std::string address = "127.0.0.1";
  uint16_t port = 8080;      // 0: an ephemeral port, see HttpServer::port()
  std::string bearer_token;  // non-empty: requests need "Authorization: Bearer <token>" (else 401)
  // More tokens (--token-auth-file); with either set, every request but GET /healthz, /livez and
  // /readyz needs one of them. Not owned; must outlive the server.
  const TokenAuthenticator* authenticator = nullptr;
  // When set, GET /readyz runs it (on a worker thread): 200 "ok" if OK, else 503 with the reason
  // (the apiserver: etcd answers).
  std::function<Status()> readiness;
  // When set, GET /metrics answers 200 with its text (Prometheus exposition format); run on a worker
  // thread. It needs a token like any path but the health ones.
  std::function<std::string()> metrics;
  std::size_t max_body_bytes = 3 << 20;  // larger request bodies get 413
  int io_threads = 2;
  // Registry calls in flight at once (each blocks its thread on one etcd round trip). kube-apiserver
  // serves up to 400 + 200 (--max-requests-inflight, --max-mutating-requests-inflight); 8 held a
  // controller's slow-start batch of pod creates to 8 etcd round trips at a time.
  int worker_threads = 64;
  Duration default_watch_timeout = std::chrono::minutes(30);
  Duration idle_timeout = std::chrono::minutes(5);  // idle keep-alive connections are closed
  // A watch client that falls this far behind is disconnected (as kube-apiserver closes a watcher
  // that does not keep up); all watches together may buffer max_total_watch_buffer_bytes, beyond
  // which the watcher that grows its buffer past 64 KiB is closed.
  std::size_t max_watch_buffer_bytes = 4 << 20;
  std::size_t max_total_watch_buffer_bytes = 256 << 20;
  // Beyond these a request gets 429 TooManyRequests (Retry-After: 1): open connections, live watch
  // streams. The accept loop backs off (100 ms) when the process is out of file descriptors.
  int max_connections = 4096;
  int max_watches = 2048;
  std::size_t max_header_bytes = 64 << 10;  // larger request headers get 431
  // HTTPS: PEM certificate chain and private key (both or neither; Start fails with kInvalid if they
  // do not load), and the CA bundle that client certificates must chain to (HTTPS only).
  std::string tls_cert_file;
  std::string tls_key_file;
  std::string client_ca_file;
  // Serves coordination.k8s.io/v1 Leases when set (not owned; must outlive the server).
  LeaseRegistry* leases = nullptr;
  // Told about every request when set (not owned; must outlive the server).
  RequestObserver* observer = nullptr;
};

class HttpServer {
 public:
  // Neither pointer is owned; both must outlive the server. `clock` dates Table AGE columns.
  HttpServer(Registry* registry, const Clock* clock, HttpServerOptions options);
  ~HttpServer();  // Stop()
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds, listens and starts the threads. kInvalid for a bad address, kUnavailable if it cannot bind.
  Status Start();
  // The bound port (after Start).
  uint16_t port() const;
  // Stops accepting, closes every connection and watch, joins the threads. Idempotent.
  void Stop();

  struct Impl;  // defined in http_server.cc

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace rcsim

#endif  // RCSIM_BACKENDS_HTTP_HTTP_SERVER_H_
