// The Kubernetes core/v1 REST wire format as the HTTP ApiClient speaks it: request paths and query
// strings, request bodies, and the decoding of responses (objects, lists, Status errors, watch lines).
// Pure functions with no I/O, so they are unit-tested on their own.
//
// Thread-safety: every function is thread-safe (no shared state).
#ifndef RCSIM_BACKENDS_HTTPCLIENT_REST_WIRE_H_
#define RCSIM_BACKENDS_HTTPCLIENT_REST_WIRE_H_

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "engine/api_client.h"
#include "engine/lease.h"
#include "engine/node_types.h"
#include "engine/status.h"
#include "engine/types.h"

namespace rcsim {

// What differs between the resources on the wire. Specialised for Pod, ReplicationController, Node and
// Lease.
template <typename T>
struct RestResource;

template <>
struct RestResource<Pod> {
  static constexpr const char* kPlural = "pods";
  static std::string Encode(const Pod& pod);
  static Result<Pod> FromJson(const nlohmann::json& j);
};

template <>
struct RestResource<ReplicationController> {
  static constexpr const char* kPlural = "replicationcontrollers";
  static std::string Encode(const ReplicationController& rc);
  static Result<ReplicationController> FromJson(const nlohmann::json& j);
};

template <>
struct RestResource<Node> {
  static constexpr const char* kPlural = "nodes";
  static std::string Encode(const Node& node);
  static Result<Node> FromJson(const nlohmann::json& j);
};

// coordination.k8s.io/v1 Leases: only the codec (their paths are under /apis/coordination.k8s.io/v1,
// which the lease client builds itself).
template <>
struct RestResource<Lease> {
  static constexpr const char* kPlural = "leases";
  static std::string Encode(const Lease& lease);
  static Result<Lease> FromJson(const nlohmann::json& j);
};

// Percent-encodes everything but RFC 3986 unreserved characters (A-Z a-z 0-9 - . _ ~), so the result
// is safe both as a path segment and as a query component.
std::string PercentEncode(std::string_view s);

// "/api/v1/namespaces/<ns>/<plural>[/<name>[/<subresource>]]"; ns "" gives the all-namespaces
// collection "/api/v1/<plural>". ns and name are percent-encoded.
std::string ResourcePath(std::string_view plural, std::string_view ns, std::string_view name = "",
                         std::string_view subresource = "");

// "labelSelector=...&fieldSelector=metadata.name%3D...&limit=N&continue=..." (only the set options,
// in that order, no leading '?'); "" when nothing is set.
std::string ListQuery(const ListOptions& opts);

// The query of a watch: ListQuery's selectors plus "watch=true" and resourceVersion when non-empty.
std::string WatchQuery(const ListOptions& opts, std::string_view resource_version);

// A DeleteOptions body carrying the preconditions, gracePeriodSeconds and propagationPolicy, or ""
// when none is set (no body is sent).
std::string DeleteOptionsBody(const DeleteOptions& opts);

// The Status of a non-2xx response. The body is a Kubernetes Status when the server sent one (its
// message and details.causes are kept); otherwise the message names the HTTP code and the start of
// the body. Mapping: 400 kBadRequest, 401 kUnauthorized, 403 kForbidden, 404 kNotFound, 405
// kMethodNotAllowed, 409 kAlreadyExists when reason is AlreadyExists else kConflict, 410 kGone, 413
// kRequestTooLarge, 415 kBadRequest, 422 kInvalid, 429 kUnavailable, 500 kInternal, 504 kTimeout, other 5xx
// kUnavailable, other codes kBadRequest. (The inverse of engine/codec.h's HttpCodeOf, so a Status
// crosses the wire with its code.)
Status StatusFromHttp(int http_status, std::string_view body);

// The Status carried by a Kubernetes Status object (an ERROR watch event), by its "code" field.
Status StatusFromStatusJson(const nlohmann::json& j);

// A single object (the body of a 2xx Get/Create/Update/Delete). kInternal if it does not decode:
// a server sending an undecodable object is the server's fault, not the caller's.
template <typename T>
Result<std::shared_ptr<const T>> DecodeObjectResponse(std::string_view body);

// A list ({"metadata":{"resourceVersion","continue"},"items":[...]}); items keep the server's order.
template <typename T>
Result<ObjectList<T>> DecodeListResponse(std::string_view body);

// One line of a watch stream: {"type":"ADDED|MODIFIED|DELETED|BOOKMARK|ERROR","object":{...}}.
// ERROR yields a kError event whose error is the Status in the object (code 410: kGone). BOOKMARK
// yields an object carrying only metadata.resourceVersion. A line that does not decode is an error
// value (kInternal), not an event.
template <typename T>
Result<ApiWatchEvent<T>> DecodeWatchLine(std::string_view line);

}  // namespace rcsim

#endif  // RCSIM_BACKENDS_HTTPCLIENT_REST_WIRE_H_
