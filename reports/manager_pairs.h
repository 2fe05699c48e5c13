// The same scenario run on the modern and the 2014 manager (`rcsim run --manager both`), side by side:
// for stdout, DIR/managers.json and the HTML report's "Managers side by side" table.
#ifndef RCSIM_REPORTS_MANAGER_PAIRS_H_
#define RCSIM_REPORTS_MANAGER_PAIRS_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/run_result.h"

namespace rcsim {

struct ManagerPair {
  std::string scenario;  // the scenario's own name (without the ".2014" / ".modern" of a flagged run)
  uint64_t seed = 0;
  const RunResult* modern = nullptr;
  const RunResult* old = nullptr;  // the 2014 manager's run
};

// Runs of the same scenario file (matrix run included) and seed on both managers, in the order of
// their first run in `results`; runs without a partner are left out. Pointers into `results`.
std::vector<ManagerPair> PairManagers(const std::vector<RunResult>& results);

// The expectations a run failed, as written ("converged {...}"), and its error if any.
std::vector<std::string> FailedExpectations(const RunResult& r);

// [{"scenario", "seed", "modern": {"verdict", "failed"}, "2014": {"verdict", "failed"}}]
nlohmann::json ManagerPairsToJson(const std::vector<ManagerPair>& pairs);

}  // namespace rcsim

#endif  // RCSIM_REPORTS_MANAGER_PAIRS_H_
