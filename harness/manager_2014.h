// The 2014 baseline (baseline2014/) as the manager of a SimWorld: `manager: {"kind": "2014"}` in a
// scenario, or `rcsim run --manager 2014|both`.
#ifndef RCSIM_HARNESS_MANAGER_2014_H_
#define RCSIM_HARNESS_MANAGER_2014_H_

#include "fakes/sim_manager.h"

namespace rcsim {

inline constexpr const char kManagerModern[] = "modern";
inline constexpr const char kManager2014[] = "2014";

// Builds a ReplicationManager2014 with the seed's settings (10 s resync, watch loop restarted 20 s
// after it died) over the world's manager views. The scenario's workers, resync and burst_replicas
// do not apply: the 2014 code had none of them.
SimManagerFactory Manager2014Factory();

}  // namespace rcsim

#endif  // RCSIM_HARNESS_MANAGER_2014_H_
