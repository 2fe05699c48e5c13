// PATCH bodies applied to an object's JSON, as the Kubernetes API server does for the fields we serve.
//
// - application/merge-patch+json: RFC 7386 JSON merge patch.
// - application/strategic-merge-patch+json: strategic merge patch over the core/v1 schema
//   (strategic_merge.h): lists merged by their merge keys, $patch / $setElementOrder / $retainKeys /
//   $deleteFromPrimitiveList directives.
// - application/apply-patch+yaml: server-side apply (the body must be JSON, which kubectl sends);
//   applied by the handler with field ownership (server_side_apply.h), not by ApplyPatch.
// - application/json-patch+json: RFC 6902 JSON patch.
//
// Thread-safety: pure functions.
#ifndef RCSIM_BACKENDS_HTTP_PATCH_H_
#define RCSIM_BACKENDS_HTTP_PATCH_H_

#include <nlohmann/json.hpp>
#include <string_view>

#include "engine/status.h"

namespace rcsim {

enum class PatchType { kMerge, kStrategicMerge, kJsonPatch, kApply };

// The patch type of a Content-Type header (parameters ignored); kBadRequest-free: nullopt-like
// failure is reported as false.
bool PatchTypeOf(std::string_view content_type, PatchType* type);

// Applies `patch_body` to `target`, whose core/v1 schema type is `schema_type` ("V1Pod"; it gives
// the strategic merge patch its merge keys; "" merges every list by replacement). kBadRequest for a malformed
// body (not JSON, a merge patch that is not an object, a JSON patch that is not an array of operations);
// kInvalid when a JSON patch operation cannot be applied (missing path, failed test).
Result<nlohmann::json> ApplyPatch(const nlohmann::json& target, PatchType type, std::string_view patch_body,
                                  std::string_view schema_type = "");

}  // namespace rcsim

#endif  // RCSIM_BACKENDS_HTTP_PATCH_H_
