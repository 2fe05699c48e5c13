// FaultProxy: a small HTTP/1.1 proxy that sits between a client (the controller-manager) and the API
// server and injects faults on demand, for the real mode of the harness (rcsim run --real).
//
// Everything it is not told to break passes through as it came: requests and responses byte for byte
// in meaning (Beast re-frames them: headers are kept, bodies are re-sent with the same framing),
// keep-alive on both sides (one upstream connection per client connection), and watch streams
// (GET ...?watch=true answered 200 with a chunked body) relayed line by line as the events arrive.
// Plain HTTP only (no TLS).
//
// Faults (each with a window: it ends by itself `for_` after it was set; setting one again replaces it):
// - errors: a share of the calls of some verbs is answered at once with a Kubernetes Status of the
//   chosen HTTP code and reason, and never reaches the API server;
// - timeouts: a share of the calls of some verbs gets no answer: half of them are forwarded (applied)
//   and half are not, and after `timeout` (1 s) the client connection is closed without a response
//   (HttpApiClient reports kTimeout for a write, kUnavailable for a read: the outcome is unknown);
// - latency: calls of some verbs wait a uniform [min, max] before they are forwarded;
// - watch delay: every watch event reaches the client `delay` after the proxy received it;
// - read lag (stale reads): the client sees the world as it was `lag` ago. Watch events reach it `lag`
//   after the proxy received them. Given a StaleListPinner (real mode passes one over a revision
//   timeline of etcd, as the simulation's FaultyApiClient does), a list a cache may serve
//   (resourceVersion "0" or "N") is forwarded at once as resourceVersion=<the revision current `lag`
//   ago>&resourceVersionMatch=Exact, and every other get and list is fresh (a quorum read, as
//   kube-apiserver serves a GET and a list without a resourceVersion); without one, responses to gets
//   and lists are fetched at once and delivered `lag` late;
// - stall: watch streams stay open but deliver nothing until the window ends (then everything held);
// - drop: DropWatches() cuts every open watch stream now (both sockets closed);
// - partition: every open connection is cut now; while it lasts, every new request is held for
//   `timeout` and its connection closed unanswered (nothing reaches the API server).
// Errors, timeouts and latency apply to pods and replicationcontrollers (the manager's resources)
// only; everything else (events, leases, discovery) passes untouched except under a partition.
//
// Counters: the calls on pods and replicationcontrollers by verb (as the simulation counts the
// manager's API calls: an injected error or timeout counts, a call cut by a partition does not).
//
// Threading: one thread accepts; each client connection has its own thread (blocking I/O), and each
// watch stream one more that reads the upstream. Every public method is thread-safe. Stop() (and the
// destructor) cut every connection and join every thread.
#ifndef RCSIM_BACKENDS_FAULTPROXY_FAULT_PROXY_H_
#define RCSIM_BACKENDS_FAULTPROXY_FAULT_PROXY_H_

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/api_client.h"
#include "engine/status.h"
#include "engine/time.h"

namespace rcsim {

struct FaultProxyOptions {
  std::string upstream_host = "127.0.0.1";
  uint16_t upstream_port = 8080;
  std::string listen_address = "127.0.0.1";
  uint16_t listen_port = 0;                    // 0: an ephemeral port, see port()
  Duration timeout = std::chrono::seconds(1);  // how long a timed-out or partitioned call is held
  uint64_t seed = 1;                           // for the shares of errors and timeouts
};

struct FaultProxyCounters {
  std::array<uint64_t, 7> calls{};  // by Verb, pods and replicationcontrollers only
  uint64_t errors_injected = 0;
  uint64_t timeouts_injected = 0;
  uint64_t partitioned_requests = 0;
  uint64_t watches_dropped = 0;
  uint64_t watch_events = 0;  // events relayed to clients
  uint64_t stale_lists = 0;   // lists a StaleListPinner moved to an older revision
  uint64_t calls_total() const {
    uint64_t n = 0;
    for (uint64_t c : calls) n += c;
    return n;
  }
};

// What the proxy makes of a request: its verb and whether it is on the manager's resources.
struct ProxiedCall {
  Verb verb = Verb::kGet;
  bool faultable = false;  // pods or replicationcontrollers (any subresource)
  bool watch = false;
};
// Classifies "METHOD target" (target with its query string).
ProxiedCall ClassifyCall(std::string_view method, std::string_view target);

// Moves a list to an older revision: given the list's resourceVersion, resourceVersionMatch and
// continue token, true if it set opts' resource_version (with kExact) to the revision to serve it at.
// Called on the connection's thread, so it must be thread-safe.
using StaleListPinner = std::function<bool(ListOptions* opts)>;
// `target` with resourceVersion=<rv>&resourceVersionMatch=Exact in place of any it had.
std::string ExactListTarget(std::string_view target, const std::string& rv);

class FaultProxy {
 public:
  // Binds and starts accepting. kUnavailable if it cannot bind.
  static Result<std::unique_ptr<FaultProxy>> Start(FaultProxyOptions options);
  ~FaultProxy();  // Stop()
  FaultProxy(const FaultProxy&) = delete;
  FaultProxy& operator=(const FaultProxy&) = delete;

  uint16_t port() const;
  std::string url() const;  // "http://127.0.0.1:<port>"

  // `verbs` empty: every verb. `http_code` and `reason` make the Status body (e.g. 503
  // ServiceUnavailable); `message` "" gives "injected: <reason> (<verb>)".
  void SetErrors(const std::vector<Verb>& verbs, double rate, int http_code, const std::string& reason,
                 const std::string& message, Duration for_);
  void SetTimeouts(const std::vector<Verb>& verbs, double rate, Duration for_);
  void SetLatency(const std::vector<Verb>& verbs, Duration min, Duration max, Duration for_);
  void SetWatchDelay(Duration delay, Duration for_);
  void SetReadLag(Duration lag, Duration for_, StaleListPinner pin = nullptr);
  void StallWatches(Duration for_);
  void Partition(Duration for_);
  // Cuts every open watch stream; returns how many.
  int DropWatches();
  // Ends every fault window now.
  void ClearFaults();

  FaultProxyCounters counters() const;
  int open_watches() const;
  // Cuts every connection and joins every thread. Idempotent.
  void Stop();

  struct Impl;

 private:
  explicit FaultProxy(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace rcsim

#endif  // RCSIM_BACKENDS_FAULTPROXY_FAULT_PROXY_H_
