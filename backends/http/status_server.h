// StatusServer: a small HTTP/1.1 server for a process's probes and metrics, as kube-controller-manager
// serves them on --bind-address:--secure-port|--port:
//   GET /healthz, /livez  -> 200 "ok" while the process runs
//   GET /readyz           -> 200 "ok" when ready(), else 503 with the reason
//   GET /metrics          -> 200, metrics() in the Prometheus text format (0.0.4)
// anything else 404, other methods 405. One thread serves every connection asynchronously (probes and
// scrapes are small and rare); a connection idle for 5 s is closed. With `tls` set the same over HTTPS
// (the handshake within 5 s too), as kube-controller-manager's --secure-port.
//
// Thread-safety: Start/Stop/port from one thread; ready() and metrics() run on the server's thread.
#ifndef RCSIM_BACKENDS_HTTP_STATUS_SERVER_H_
#define RCSIM_BACKENDS_HTTP_STATUS_SERVER_H_

#include <boost/asio/ssl/context.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "engine/status.h"

namespace rcsim {

struct StatusServerOptions {
  std::string address = "127.0.0.1";
  uint16_t port = 0;  // 0: an ephemeral port
  // OK when ready; otherwise the message is the reason given with the 503.
  std::function<Status()> ready;
  std::function<std::string()> metrics;
  // HTTPS with this context (backends/tls: NewTlsServerContext, NewTlsServerContextFromPem); null: HTTP.
  std::shared_ptr<boost::asio::ssl::context> tls;
};

class StatusServer {
 public:
  explicit StatusServer(StatusServerOptions options);
  ~StatusServer();  // Stop()
  StatusServer(const StatusServer&) = delete;
  StatusServer& operator=(const StatusServer&) = delete;

  // kInvalid for a bad address, kUnavailable if it cannot bind.
  Status Start();
  uint16_t port() const;
  void Stop();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace rcsim

#endif  // RCSIM_BACKENDS_HTTP_STATUS_SERVER_H_
