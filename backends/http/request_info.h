// What a request is, for the API server's metrics: kube-apiserver's RequestInfo (k8s.io/apiserver's
// request.RequestInfoFactory) reduced to the labels of apiserver_request_total and its siblings.
//
// Resource requests (/api/v1/..., /apis/{group}/{version}/...):
//   verb: GET (one object), LIST, WATCH (?watch=true|1 or the /watch/ prefix), POST, PUT, PATCH (APPLY
//         for application/apply-patch+yaml), DELETE, DELETECOLLECTION; kube-apiserver's label values
//   resource, subresource ("status", "binding", "log", ...), scope: "resource" (a named object),
//   "namespace" (a collection in a namespace), "cluster" (a cluster-wide collection)
// Non-resource requests (/healthz, /metrics, ...): verb is the HTTP method, resource and scope are
// empty and subresource is the path, for the server's fixed paths only (others: "other"), so a
// client cannot grow the label set. Resources outside the served set are reported as "other" too.
#ifndef RCSIM_BACKENDS_HTTP_REQUEST_INFO_H_
#define RCSIM_BACKENDS_HTTP_REQUEST_INFO_H_

#include <string>
#include <string_view>

namespace rcsim {

struct RequestInfo {
  std::string verb;
  std::string group;    // "" for the core group
  std::string version;  // "v1"
  std::string resource;
  std::string subresource;
  std::string scope;
  // Watches and streamed logs: counted in apiserver_longrunning_requests while they last, and kept
  // out of the latency histogram (their duration is the client's, not the server's).
  bool long_running = false;
};

// `target` is the request's path and query, still percent-encoded.
RequestInfo ClassifyRequest(std::string_view method, std::string_view target, std::string_view content_type);

}  // namespace rcsim

#endif  // RCSIM_BACKENDS_HTTP_REQUEST_INFO_H_
