// The node agent's kubelet endpoint: GET /containerLogs/<namespace>/<pod>/<container> over plain HTTP,
// as the kubelet serves it to the API server's pods/log proxy (query: tailLines, follow, previous).
// 200 text/plain with the container's output (backends/process/container_logs.h); with follow=true the
// response is chunked and stays open, sending what the container writes (polled every 100 ms) until
// the client goes or the server stops. 404 Status for a pod or container this node has no logs of,
// 400 for a bad query, 405 for other methods, /healthz answers "ok".
//
// No authentication: bind it where only the API server can reach it (the node's InternalIP).
// Threading: one thread accepts, one thread per connection (log reads are rare); Stop closes the
// listener and every connection and joins them all.
#ifndef RCSIM_APPS_NODE_AGENT_LOG_SERVER_H_
#define RCSIM_APPS_NODE_AGENT_LOG_SERVER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "engine/status.h"

namespace rcsim {

class LogServer {
 public:
  // Serves the logs under `root_dir` (ProcessRuntime's) on address:port (port 0: any free port).
  LogServer(std::string root_dir, std::string address, uint16_t port);
  ~LogServer();  // Stop()
  LogServer(const LogServer&) = delete;
  LogServer& operator=(const LogServer&) = delete;

  Status Start();
  uint16_t port() const;
  void Stop();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace rcsim

#endif  // RCSIM_APPS_NODE_AGENT_LOG_SERVER_H_
