// Strategic merge patch (application/strategic-merge-patch+json) over core/v1 objects, with the
// semantics of Kubernetes' apimachinery strategicpatch:
// - maps merge key by key; null deletes a key;
// - lists the schema marks patchStrategy=merge (core_v1_schema.h) merge by their patchMergeKey
//   (containers and volumes by name, ports by containerPort, env by name, volumeMounts by mountPath,
//   conditions by type, ...), or as a set for lists of primitives (finalizers); other lists are
//   replaced;
// - directives: {"$patch": "replace"|"delete"|"merge"} on a map or a list element,
//   "$setElementOrder/<list>", "$retainKeys", "$deleteFromPrimitiveList/<list>".
//
// Thread-safety: pure functions.
#ifndef RCSIM_BACKENDS_HTTP_STRATEGIC_MERGE_H_
#define RCSIM_BACKENDS_HTTP_STRATEGIC_MERGE_H_

#include <nlohmann/json.hpp>
#include <string_view>

#include "engine/status.h"

namespace rcsim {

// Applies `patch` to `original`, whose core/v1 type is `type` ("V1Pod", "V1ReplicationController").
// kBadRequest for a malformed patch (a merge-key list element without its key, an unknown $patch
// value, a directive of the wrong shape).
Result<nlohmann::json> StrategicMergePatch(const nlohmann::json& original, const nlohmann::json& patch,
                                           std::string_view type);

}  // namespace rcsim

#endif  // RCSIM_BACKENDS_HTTP_STRATEGIC_MERGE_H_
