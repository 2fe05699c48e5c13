// ?fieldValidation for create, update and patch bodies, as kube-apiserver does it: the request's JSON
// is walked against the core/v1 schema (backends/http/core_v1_fields.inc) and every member the schema
// does not know is reported by its path ("spec.containers[0].imagee").
//
// Thread-safety: stateless after the schema's one-time initialisation; safe from any thread.
#ifndef RCSIM_BACKENDS_HTTP_FIELD_VALIDATION_H_
#define RCSIM_BACKENDS_HTTP_FIELD_VALIDATION_H_

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "engine/status.h"

namespace rcsim {

enum class FieldValidation { kIgnore, kWarn, kStrict };

// "Strict", "Warn", "Ignore" or "" (Ignore, the server default); kBadRequest otherwise.
Result<FieldValidation> ParseFieldValidation(std::string_view value);

// The paths of the members of `object` unknown to core/v1 type `type` ("V1Pod",
// "V1ReplicationController", "V1Namespace", "CoreV1Event", "V1Scale"), in document order.
std::vector<std::string> UnknownFieldPaths(const nlohmann::json& object, std::string_view type);

// Removes the members UnknownFieldPaths reports, as kube-apiserver's decoder drops them (Ignore, Warn).
void PruneUnknownFields(nlohmann::json& object, std::string_view type);

// For kStrict, a kBadRequest Status naming each unknown field ('strict decoding error: unknown field
// "spec.foo", ...'); for kWarn, the messages for Warning headers are appended to `warnings`.
Status CheckFields(const nlohmann::json& object, std::string_view type, FieldValidation mode,
                   std::vector<std::string>* warnings);

}  // namespace rcsim

#endif  // RCSIM_BACKENDS_HTTP_FIELD_VALIDATION_H_
