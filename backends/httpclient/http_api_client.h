// An ApiClient (engine/api_client.h) over HTTP: the Kubernetes core/v1 REST API of apps/apiserver (or
// any server speaking the same subset), with Boost.Beast on the client's own I/O threads.
//
// Transport:
// - One base URL: "http://host[:port]" or "https://host[:port]" (TLS, backends/tls: the server's
//   certificate verified against `tls`'s CA and the URL's host name or IP address, a client
//   certificate sent if configured). The host is resolved once, by Create().
// - Requests share a keep-alive connection pool of at most `max_connections` sockets; requests beyond
//   that wait in FIFO order for a free connection. An idle connection the server has closed is
//   detected before reuse; a request that fails on a reused connection before any response byte
//   arrived is retried once on a fresh connection (the server closed it as idle and did not see it).
// - Every watch has its own connection, outside the pool, for as long as it lives.
// - With qps > 0, a token bucket (client-go's flowcontrol) spaces requests and watch starts: bursts of
//   `burst`, then `qps` per second; a call beyond it waits, in call order, before it is sent.
// - TCP_NODELAY on every socket; "Authorization: Bearer <token>" when a token is given.
//
// Errors (besides the HTTP statuses decoded by rest_wire.h's StatusFromHttp):
// - connection refused, resolve or connect failure or connect timeout: kUnavailable (not applied);
//   likewise a failed TLS handshake ("certificate verify failed: ..." when the server's certificate
//   is not trusted or names another host);
// - request_timeout passing after the request started to be written: kTimeout (outcome unknown);
//   likewise a connection lost before the response of a write completed (a read gets kUnavailable);
// - a watch whose stream ends or drops: one kError event with kUnavailable (the caller re-lists);
//   an in-stream ERROR Status with code 410, or a 410 response: kError with kGone.
//
// Threading: every method is thread-safe. Calls return at once; `done` and watch callbacks run on the
// client's I/O threads (never inline inside the call), so they must not block for long and must not
// destroy the client. Callbacks of one watch run in stream order and never concurrently. Destroying
// an ApiWatch (from any thread, including from inside its own callback) stops it: no callback of it
// runs after its destructor returns.
// Destroying the client completes every pending call (kUnavailable, or kTimeout for a write whose
// outcome is unknown) and ends every watch without a further callback, before the destructor returns.
// ApiWatch handles may outlive the client. Do not issue calls concurrently with the destructor.
#ifndef RCSIM_BACKENDS_HTTPCLIENT_HTTP_API_CLIENT_H_
#define RCSIM_BACKENDS_HTTPCLIENT_HTTP_API_CLIENT_H_

#include <memory>
#include <string>

#include "backends/tls/tls_config.h"
#include "engine/api_client.h"
#include "engine/cluster_api.h"
#include "engine/status.h"
#include "engine/time.h"

namespace rcsim {

struct HttpApiClientOptions {
  std::string base_url = "http://127.0.0.1:8080";
  std::string bearer_token;  // empty: no Authorization header
  int io_threads = 1;
  int max_connections = 32;  // pooled request connections (watches have their own)
  Duration connect_timeout = std::chrono::seconds(5);
  Duration request_timeout = std::chrono::seconds(30);  // from the first byte written to the last read
  // For https:// URLs: the CA to verify the server with, a client certificate, insecure_skip_verify.
  TlsClientConfig tls;
  // Client-side rate limit: `qps` requests per second on average, `burst` (at least 1) at once.
  // qps <= 0: none.
  double qps = 0;
  int burst = 1;
};

// A raw HTTP exchange, for discovery endpoints, readiness probes and tools.
struct HttpReply {
  int status = 0;
  std::string content_type;
  std::string body;
};

class HttpTransport;  // http_api_client.cc

class HttpApiClient final : public ApiClient, public ClusterApi {
 public:
  // Fails with kBadRequest for a malformed base URL (only "http[s]://host[:port][/]" is accepted),
  // kInvalid if the TLS material does not load, kUnavailable if the host does not resolve. Starts
  // the I/O threads.
  static Result<std::unique_ptr<HttpApiClient>> Create(HttpApiClientOptions options);

  HttpApiClient(const HttpApiClient&) = delete;
  HttpApiClient& operator=(const HttpApiClient&) = delete;
  ~HttpApiClient() override;

  ResourceClient<Pod>& pods() override;
  ResourceClient<ReplicationController>& controllers() override;
  ResourceClient<Node>& nodes() override;
  // /apis/coordination.k8s.io/v1/namespaces/<ns>/leases[/<name>].
  LeaseClient& leases() override;
  // POST /api/v1/namespaces/<ns>/pods/<name>/binding.
  void BindPod(const std::string& ns, Binding binding, Callback<Status> done) override;

  // Sends one request over the pool. Any HTTP status is a value (status 4xx/5xx is not an error);
  // errors are the transport errors above. `target` is path and query, already percent-encoded.
  void Send(const std::string& method, const std::string& target, std::string body,
            Callback<Result<HttpReply>> done);

 private:
  struct Resources;
  explicit HttpApiClient(std::shared_ptr<HttpTransport> transport);

  std::shared_ptr<HttpTransport> transport_;
  std::unique_ptr<Resources> resources_;
};

}  // namespace rcsim

#endif  // RCSIM_BACKENDS_HTTPCLIENT_HTTP_API_CLIENT_H_
