// The runner: one scenario, one seed, one SimWorld, start to verdict.
//
// A run: at virtual time 0 the scenario's controllers are created and the manager is started; each
// event fires at its `at` (ties in file order); the run ends at `duration`, or earlier at the first
// moment T such that
//   T >= settle time (every event fired and its window - for / down / lag - is over, and every
//        converged expectation's `after` has passed), and
//   no pod or controller changed during the last quiet period (the longer of the manager's resync
//        period and the longest `within` of the converged expectations),
// i.e. T = max(settle time, last change + quiet period). Then every expectation is checked.
//
// Deterministic: the result (apart from wall_seconds) is a pure function of (scenario, seed).
// Thread-safety: RunScenario may run concurrently on several threads; each run owns its world.
#ifndef RCSIM_HARNESS_RUNNER_H_
#define RCSIM_HARNESS_RUNNER_H_

#include <cstdint>
#include <string>

#include "harness/run_result.h"
#include "harness/scenario.h"

namespace rcsim {

struct RunOptions {
  // Keep every trace line in RunResult::trace (rcsim replay).
  bool keep_trace = false;
  // Compare the monitor's incremental counts with the world's at the end; a mismatch fails the run
  // (a harness self-check, used by the tests).
  bool verify_counts = false;
  // > 0: a run still going after this much wall time stops there and fails (end_reason "timeout").
  double wall_timeout_seconds = 0;
  // "modern" or "2014": runs that manager instead of the scenario's manager.kind (`--manager`). A run
  // whose manager differs from the scenario's own is named "<scenario>.<manager>" (e.g. "web.2014").
  std::string manager;
};

RunResult RunScenario(const Scenario& scenario, uint64_t seed, const RunOptions& options = {});

// "rcsim replay <file> --seed <seed>", the command that reproduces a run; with `manager`, followed by
// "--manager <manager>".
std::string ReplayCommand(const std::string& file, uint64_t seed, const std::string& manager = "");
// The command that reproduces `r`: ReplayCommand for a simulated run (with --manager when the run's
// manager came from the flag), "rcsim run --real <file>" for a real one (a real run cannot be
// replayed, only run again).
std::string ReplayCommandFor(const RunResult& r);

}  // namespace rcsim

#endif  // RCSIM_HARNESS_RUNNER_H_
