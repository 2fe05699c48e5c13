// JSON codec for the domain types, in the Kubernetes core/v1 wire shapes (camelCase, omitempty).
//
// Decode* reject input that is not the expected shape with Code::kBadRequest and a message naming the
// JSON path of the bad field (e.g. "spec.replicas: expected integer"). Lossless: members a typed
// struct does not model go to its unknown_fields (null members dropped, as Go's decoder does) and are
// re-emitted beside the typed ones, so decode -> encode gives the same JSON value for every field of
// core/v1 Pod, PodTemplateSpec and ReplicationController. Timestamps: RFC 3339 with any offset on
// input, truncated to seconds (metav1.Time), emitted in UTC with "Z".
#ifndef RCSIM_ENGINE_CODEC_H_
#define RCSIM_ENGINE_CODEC_H_

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "engine/status.h"
#include "engine/types.h"

namespace rcsim {

nlohmann::json PodToJson(const Pod& pod);
nlohmann::json ControllerToJson(const ReplicationController& rc);
nlohmann::json ScaleToJson(const Scale& scale);
nlohmann::json ObjectMetaToJson(const ObjectMeta& meta);
// A Kubernetes Status object ({"kind":"Status","apiVersion":"v1","status":"Failure",...}).
nlohmann::json StatusToJson(const Status& status);
// The HTTP code and Kubernetes reason ("NotFound", "Invalid", ...) for a Status.
int HttpCodeOf(Code code);
const char* ReasonOf(Code code);

std::string EncodePod(const Pod& pod);                          // compact JSON bytes
std::string EncodeController(const ReplicationController& rc);  // compact JSON bytes

Result<Pod> PodFromJson(const nlohmann::json& j);
Result<ReplicationController> ControllerFromJson(const nlohmann::json& j);
Result<Scale> ScaleFromJson(const nlohmann::json& j);
// The ObjectMeta at `j` (errors name `path`, e.g. "metadata.uid: expected string"), for the kinds
// with codecs of their own (Lease).
Result<ObjectMeta> ObjectMetaFromJson(const nlohmann::json& j, const std::string& path);
Result<Pod> DecodePod(std::string_view bytes);
Result<ReplicationController> DecodeController(std::string_view bytes);

}  // namespace rcsim

#endif  // RCSIM_ENGINE_CODEC_H_
