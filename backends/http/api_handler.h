// The Kubernetes core/v1 REST surface over the shared registry, independent of the HTTP transport:
// routing, query parameters, request bodies, Status errors, lists, tables, patches and watches.
// http_server.cc feeds it parsed requests; tests may call it directly.
//
// Routes: /version, /api, /apis, /api/v1, /openapi/v3[/api/v1], /healthz, /readyz, /livez;
// /api/v1/[watch/][namespaces/{ns}/]{pods|replicationcontrollers}[/{name}[/status|/scale|/binding]];
// /api/v1/namespaces/{ns}/pods/{name}/log (pod_log.h: proxied to the pod's node agent);
// /api/v1/namespaces[/{name}]; /api/v1/[namespaces/{ns}/]events[/{name}] (no watch);
// /api/v1/namespaces/{ns}/bindings; /api/v1/[watch/]nodes[/{name}[/status]] (cluster-scoped).
// Errors are Status objects: 400 malformed JSON or query, 404 unknown route or object, 405 wrong
// method, 409 AlreadyExists/Conflict, 410 Gone, 415 unsupported Content-Type, 422 Invalid (including a
// body of the wrong kind). Never 500 for bad input.
//
// Thread-safety: Handle may be called concurrently from any thread. It blocks on registry (store)
// calls, so the server runs it off its I/O threads.
#ifndef RCSIM_BACKENDS_HTTP_API_HANDLER_H_
#define RCSIM_BACKENDS_HTTP_API_HANDLER_H_

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "engine/status.h"
#include "engine/time.h"
#include "registry/event_registry.h"
#include "registry/registry.h"
#include "registry/watch_cache.h"

namespace rcsim {

class LeaseRegistry;  // registry/lease_registry.h

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string target;  // path and query, still percent-encoded
  std::string content_type;
  std::string accept;
  std::string user_agent;  // names the field manager of a write without ?fieldManager
  std::string body;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::string> warnings;  // one "Warning: 299 - ..." header each (WarningHeaderValue)
};

// The DeleteOptions of a DELETE's JSON body (preconditions, gracePeriodSeconds, propagationPolicy,
// orphanDependents) over `opts` (from the query); kBadRequest/kInvalid for a malformed one.
Result<DeleteOptions> DeleteOptionsFromBody(std::string_view body, DeleteOptions opts);
// The same from parsed JSON (an Eviction's deleteOptions).
Result<DeleteOptions> DeleteOptionsFromJson(const nlohmann::json& options, DeleteOptions opts);

// The value of a Warning header for `message`, as kube-apiserver sends it: `299 - "message"`.
std::string WarningHeaderValue(std::string_view message);

// 415 UnsupportedMediaType naming the accepted media types (JSON and the three patch types).
HttpResponse UnsupportedMediaTypeResponse(const std::string& content_type);

// One line of a watch stream: {"type":"ADDED","object":{...}} followed by '\n'. Shared, not copied: a
// change the watch cache fans out is serialized once for all of its watchers (as kube-apiserver's
// cachingObject does), and each watcher's queue holds a reference.
using WatchLine = std::shared_ptr<const std::string>;

// Receives the lines of one watch stream, in order and never concurrently: first the initial events
// (inline, on the thread calling Handle), then from the store's watch thread. Must not block.
class WatchSink {
 public:
  virtual ~WatchSink() = default;
  // One event (a pod log stream's sink gets pieces of the log instead).
  virtual void OnLine(WatchLine line) = 0;
  // The watch ended on its own (after an ERROR event); no line follows.
  virtual void OnEnd() = 0;
};

// The result of one request: a complete response, or a live watch whose lines go to the sink given
// to Handle. Destroying `watch` stops it (no sink call after the destructor returns).
struct ApiOutcome {
  HttpResponse response;  // for a watch: status 200 and the stream's Content-Type, empty body
  std::unique_ptr<RegistryWatch> watch;
  Duration watch_timeout{0};  // from ?timeoutSeconds; 0 when absent (the server picks)
};

// Default and maximum ?limit for lists are the client's business; none is imposed.
class ApiHandler {
 public:
  // Neither pointer is owned; both must outlive the handler. The clock only dates Table AGE columns.
  ApiHandler(Registry* registry, const Clock* clock);

  ApiOutcome Handle(const HttpRequest& req, const std::shared_ptr<WatchSink>& sink);

  // Serves coordination.k8s.io/v1 Leases (lease_routes.h) from `leases` (not owned; must outlive the
  // handler). Without it those paths are 404. Call before the first Handle.
  void set_lease_registry(LeaseRegistry* leases) { leases_ = leases; }

 private:
  Registry* const registry_;
  const Clock* const clock_;
  LeaseRegistry* leases_ = nullptr;
  EventRegistry events_;  // /api/v1/events, /api/v1/namespaces/{ns}/events
};

// Serialises `j` compactly; invalid UTF-8 (request bytes echoed in messages) becomes U+FFFD instead of
// throwing.
std::string DumpJson(const nlohmann::json& j);

// Percent-decodes a query component ('+' is a space). False if an escape is malformed.
bool PercentDecode(std::string_view in, std::string* out);

}  // namespace rcsim

#endif  // RCSIM_BACKENDS_HTTP_API_HANDLER_H_
