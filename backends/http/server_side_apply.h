// Server-side apply (PATCH with application/apply-patch+yaml) with field ownership recorded in
// metadata.managedFields, in kube-apiserver's FieldsV1 shape ("f:spec", "k:{\"name\":\"web\"}",
// "v:\"x\"", "." for a list element itself).
//
// Simplified from structured-merge-diff, kept to what kubectl relies on:
// - the applied object's fields (leaves; keyed lists by their merge key, other lists atomic) become
//   the manager's set; fields it applied before and no longer applies are removed unless another
//   manager owns them;
// - applying a value different from the live one on a field another manager owns is a conflict (409,
//   each field named, as kube-apiserver words it) unless force=true, which takes the field over;
// - an Update (PUT, PATCH, create) by a manager takes the fields it changed from the others. Updates
//   are tracked only on objects that already carry managedFields, so objects written by the
//   controller alone stay as cheap as before.
// Server-managed metadata (name, namespace, uid, resourceVersion, creationTimestamp, generation,
// managedFields) and status are never owned.
//
// Thread-safety: pure functions.
#ifndef RCSIM_BACKENDS_HTTP_SERVER_SIDE_APPLY_H_
#define RCSIM_BACKENDS_HTTP_SERVER_SIDE_APPLY_H_

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "engine/status.h"
#include "engine/time.h"

namespace rcsim {

struct ApplyOptions {
  std::string manager;      // ?fieldManager; required
  bool force = false;       // ?force=true
  std::string schema_type;  // "V1Pod", "V1ReplicationController"
  TimePoint now;
};

// The object after `manager` applies `applied` to `live` (null when the object does not exist yet),
// with managedFields updated; kConflict naming the conflicting fields.
Result<nlohmann::json> ServerSideApply(const nlohmann::json& live, const nlohmann::json& applied,
                                       const ApplyOptions& opts);

// Records an Update by `manager` from `old` (null on create) to `next` in next's managedFields, if
// `old` has managedFields (or `force_track`).
void RecordUpdate(const nlohmann::json& old, nlohmann::json& next, const std::string& manager,
                  std::string_view schema_type, TimePoint now, bool force_track = false);

}  // namespace rcsim

#endif  // RCSIM_BACKENDS_HTTP_SERVER_SIDE_APPLY_H_
