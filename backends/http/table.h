// Table output (meta.k8s.io/v1 Table) for `kubectl get`: the server prints the columns.
//   pods:                   NAME READY STATUS RESTARTS AGE
//   replicationcontrollers: NAME DESIRED CURRENT READY AGE
//   nodes:                  NAME STATUS ROLES AGE VERSION
//   leases:                 NAME HOLDER AGE
//
// Thread-safety: pure functions.
#ifndef RCSIM_BACKENDS_HTTP_TABLE_H_
#define RCSIM_BACKENDS_HTTP_TABLE_H_

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "engine/lease.h"
#include "engine/node_types.h"
#include "engine/time.h"
#include "engine/types.h"

namespace rcsim {

// What each row carries in its `object` field (?includeObject=None|Metadata|Object; default Metadata,
// a PartialObjectMetadata).
enum class IncludeObject { kNone, kMetadata, kObject };

struct TableOptions {
  TimePoint now;  // for AGE
  IncludeObject include_object = IncludeObject::kMetadata;
  bool include_columns = true;  // false for the watch events after the first
  std::string resource_version;
  std::string continue_token;
};

// True when an Accept header asks for a Table (application/json;as=Table;...;g=meta.k8s.io).
bool AcceptsTable(std::string_view accept);
// The Content-Type of a Table response.
inline constexpr const char* kTableContentType = "application/json;as=Table;v=v1;g=meta.k8s.io";

nlohmann::json PodTable(const std::vector<PodPtr>& pods, const TableOptions& opts);
nlohmann::json ControllerTable(const std::vector<ControllerPtr>& rcs, const TableOptions& opts);
nlohmann::json NodeTable(const std::vector<NodePtr>& nodes, const TableOptions& opts);
nlohmann::json LeaseTable(const std::vector<LeasePtr>& leases, const TableOptions& opts);

// Kubernetes' short human duration (duration.HumanDuration): "45s", "3m20s", "5h", "12d".
std::string HumanAge(Duration d);

}  // namespace rcsim

#endif  // RCSIM_BACKENDS_HTTP_TABLE_H_
