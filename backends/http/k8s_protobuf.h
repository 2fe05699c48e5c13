// Request bodies in Kubernetes' protobuf encoding (Content-Type application/vnd.kubernetes.protobuf),
// turned into the JSON the handlers take.
//
// kubectl's typed clients send protobuf: `kubectl create namespace` a Namespace, `kubectl drain` an
// Eviction (or, without the eviction API, DeleteOptions on the pod's DELETE). The body is the magic
// "k8s\0" and a runtime.Unknown: typeMeta (apiVersion, kind), raw (the object's own protobuf),
// contentEncoding (must be empty), contentType. The kinds decoded are Namespace (v1), DeleteOptions (v1,
// meta.k8s.io/v1), Eviction (policy/v1) and `kubectl auth can-i`'s SelfSubjectAccessReview and
// SelfSubjectRulesReview (authorization.k8s.io/v1): their fields by number, as the objects' generated.proto
// defines them (field names and numbers are the wire contract).
//
// No field is lost: a field number this decoder does not know (e.g. metadata.managedFields, a
// namespace's status.conditions) is an error naming it, never dropped. Zero values of the fields Go
// marshals with `omitempty` (gogo-protobuf writes them anyway) are left out of the JSON, as Go's JSON
// encoding of the same object would; pointer fields (gracePeriodSeconds, orphanDependents, ...) keep
// their zero values.
//
// Errors: kBadRequest for a malformed body or an unknown field; a well-formed body of another kind is
// returned with `unsupported_kind` set (the caller answers 415).
#ifndef RCSIM_BACKENDS_HTTP_K8S_PROTOBUF_H_
#define RCSIM_BACKENDS_HTTP_K8S_PROTOBUF_H_

#include <nlohmann/json.hpp>
#include <string_view>

#include "engine/status.h"

namespace rcsim {

inline constexpr std::string_view kProtobufContentType = "application/vnd.kubernetes.protobuf";

// Is `content_type` (parameters allowed) Kubernetes' protobuf media type?
bool IsProtobufContentType(std::string_view content_type);

struct ProtobufBody {
  nlohmann::json object;  // with apiVersion and kind from the envelope
  // Set when the body was well formed but of a kind this decoder does not read (answer 415).
  bool unsupported_kind = false;
  std::string kind;
};

Result<ProtobufBody> DecodeK8sProtobuf(std::string_view body);

}  // namespace rcsim

#endif  // RCSIM_BACKENDS_HTTP_K8S_PROTOBUF_H_
