// Checkers: the verdict of each expectation of a scenario, from what the WorldMonitor observed and the
// world's ground truth at the end of the run. They never look at the manager's state.
//
// - converged: the first moment T >= after at which running == desired (the state at an instant is the
//   state at the end of that instant, after every change of that instant); passes when
//   T <= after + within. The measured value is T - after in seconds (null if never, within the run).
// - never_above: the peak of active pods, checked after every committed change; passes when <= bound.
// - final: running (and status.replicas) at the end; without explicit values, running == desired.
// - api_calls: the manager's API calls (of one verb, or all) over the run; passes when <= at_most.
// - status_matches: at the end, the controller's status equals what the pods show: replicas = active,
//   readyReplicas = ready, availableReplicas = available (minReadySeconds), fullyLabeledReplicas = active
//   pods carrying every template label, observedGeneration = metadata.generation.
// - never_above with `after`/`until`, never_below: the highest active / lowest ready count over the
//   window, every intermediate state included, and the state that held at `after`.
// - pods_matching: active pods of a namespace matching a selector, whoever owns them: the peak over
//   the run (never_above) and the running ones at the end (final_running).
// - condition: the controller's status condition of a type (ReplicaFailure) seen with status True
//   (with the reason, if given) at some change of the run, and/or present at the end.
// - restarts_at_most: container restarts by every node agent over the run; passes when <= at_most.
#ifndef RCSIM_HARNESS_CHECKERS_H_
#define RCSIM_HARNESS_CHECKERS_H_

#include <optional>
#include <vector>

#include "fakes/faulty_api_client.h"
#include "fakes/sim_world.h"
#include "harness/run_result.h"
#include "harness/scenario.h"
#include "harness/world_monitor.h"

namespace rcsim {

// The first time T >= after at which a change-only series has running == desired, if any.
std::optional<Duration> FirstConvergedAt(const std::vector<SeriesPoint>& series, Duration after,
                                         ConvergedCount count = ConvergedCount::kRunning);

inline constexpr std::size_t kNoProbe = static_cast<std::size_t>(-1);
// Registers with the monitor what the expectations must observe during the run (windows, selectors);
// call before the run. Returns one probe handle per expectation (kNoProbe when it needs none).
std::vector<std::size_t> PrepareChecks(const Scenario& scenario, WorldMonitor* monitor);

// Evaluates one expectation at the end of a run. `world` is only read. `probe` is the expectation's
// handle from PrepareChecks.
ExpectationOutcome CheckExpectation(const Expectation& expectation, const WorldMonitor& monitor,
                                    SimWorld& world, std::size_t probe = kNoProbe);

}  // namespace rcsim

#endif  // RCSIM_HARNESS_CHECKERS_H_
