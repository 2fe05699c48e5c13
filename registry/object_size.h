// Approximate heap footprint of a typed object, for caches that must stay within a byte budget.
//
// Counts sizeof the object plus the characters of its strings and the nodes of its maps and vectors
// (a fixed overhead each), so it is O(fields) and allocation-free. It under-counts what it does not
// model. The members carried verbatim (unknown_fields) are walked and counted too, so a 1 MB env
// value weighs 1 MB; a copy sharing them with its original is counted in full.
//
// Thread-safety: pure functions.
#ifndef RCSIM_REGISTRY_OBJECT_SIZE_H_
#define RCSIM_REGISTRY_OBJECT_SIZE_H_

#include <cstddef>

#include "engine/node_types.h"
#include "engine/types.h"

namespace rcsim {

std::size_t ApproxObjectBytes(const Pod& pod);
std::size_t ApproxObjectBytes(const ReplicationController& rc);
std::size_t ApproxObjectBytes(const Node& node);

}  // namespace rcsim

#endif  // RCSIM_REGISTRY_OBJECT_SIZE_H_
