// A suite: scenario files found under paths, selected by tier and name, each run with one or more
// seeds, possibly in parallel. Used by `rcsim run`.
//
// Thread-safety: RunPlan runs scenarios on up to `jobs` threads; each run owns its SimWorld (the
// simulation itself stays single-threaded and deterministic), and results do not depend on `jobs`.
#ifndef RCSIM_HARNESS_SUITE_H_
#define RCSIM_HARNESS_SUITE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/status.h"
#include "harness/run_result.h"
#include "harness/runner.h"
#include "harness/scenario.h"

namespace rcsim {

struct SuiteOptions {
  std::optional<uint64_t> seed;  // overrides every scenario's seed
  int seeds = 0;                 // > 0: swarm mode, that many seeds derived from each scenario's own
  std::string tier = "all";      // "fast", "slow" or "all"
  std::string filter;            // ECMAScript regex searched in scenario names; empty: all
};

// The scenario files (*.json, *.yaml, *.yml) named by `paths`: files as given, directories searched
// recursively (sorted, so the order does not depend on the file system). kInvalid if a path does not exist or
// a directory holds no scenario.
Result<std::vector<std::string>> FindScenarioFiles(const std::vector<std::string>& paths);

// Parses every file (stopping at the first error, whose message names the file and JSON pointer),
// expanding includes and matrices (scenario_expand.h), and refuses two scenarios with the same name
// (their reports would collide).
Result<std::vector<Scenario>> LoadScenarios(const std::vector<std::string>& files);

struct PlannedRun {
  const Scenario* scenario = nullptr;
  uint64_t seed = 0;
  std::size_t index = 0;  // its place in the whole (unsharded) plan
  std::string manager;    // RunOptions::manager for this run ("": the options' own)
};

// The plan indices shard `k` (1-based) of `n` runs: every run lands in exactly one shard, and every
// shard computes the same split. With `costs` (wall seconds by (scenario, seed), e.g. from an earlier
// report) the split balances cost (longest first onto the least loaded shard; an unknown run costs its
// scenario's mean, else the median); without, it balances the count (index mod n).
std::vector<std::size_t> ShardIndices(const std::vector<PlannedRun>& plan, int k, int n,
                                      const std::map<std::pair<std::string, uint64_t>, double>& costs);

// The seeds of swarm mode: `n` seeds derived from `base` (DeriveSeed(base, 1..n)).
std::vector<uint64_t> SwarmSeeds(uint64_t base, int n);

// Selects by tier and filter and assigns seeds. kInvalid for a bad tier or regex.
Result<std::vector<PlannedRun>> PlanRuns(const std::vector<Scenario>& scenarios, const SuiteOptions& options);

// Runs every planned run on `jobs` threads (>= 1). `on_done(index, result)` is called once per run,
// serialized (never concurrently), in completion order. Returns the results in plan order.
std::vector<RunResult> RunPlan(const std::vector<PlannedRun>& plan, int jobs, const RunOptions& run_options,
                               const std::function<void(std::size_t, const RunResult&)>& on_done);

}  // namespace rcsim

#endif  // RCSIM_HARNESS_SUITE_H_
