// What a suite of runs says beyond each run: swarm statistics per scenario (--seeds N) and the
// comparison with an earlier report (--baseline DIR).
#ifndef RCSIM_REPORTS_SUITE_STATS_H_
#define RCSIM_REPORTS_SUITE_STATS_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "harness/run_result.h"

namespace rcsim {

// One scenario's runs over several seeds.
struct SwarmStats {
  std::string scenario;
  std::size_t runs = 0;
  std::size_t passed = 0;
  std::size_t never_converged = 0;  // runs with a converged expectation that never held
  // Convergence (the run's largest converged time, seconds) over the runs that measured one, sorted.
  std::vector<double> convergence;
  std::vector<uint64_t> failing_seeds;  // in run order
  std::vector<std::string> replay;      // their replay commands
  double PassRate() const { return runs == 0 ? 0 : static_cast<double>(passed) / static_cast<double>(runs); }
  // Nearest-rank percentile of `convergence` (q in [0, 1]); nullopt when there is none.
  std::optional<double> Percentile(double q) const;
};

// Per scenario, in order of first appearance.
std::vector<SwarmStats> ComputeSwarmStats(const std::vector<RunResult>& results);
nlohmann::json SwarmStatsToJson(const std::vector<SwarmStats>& stats);
// "web: 19/20 passed (95.0%), convergence min 1.20s p50 1.90s p90 2.40s p99 3.10s max 3.10s, 1 never"
std::string SwarmLine(const SwarmStats& s);

// One run compared with the same (scenario, seed) of a baseline report.
struct RunComparison {
  std::string scenario;
  uint64_t seed = 0;
  bool in_baseline = false;
  bool base_passed = false, now_passed = false;
  std::optional<double> base_convergence, now_convergence;  // seconds; nullopt: none measured
  bool base_never = false, now_never = false;               // some converged expectation never held
  uint64_t base_calls = 0, now_calls = 0;
  std::vector<std::string> regressions;   // "verdict PASS -> FAIL", "convergence 1.20s -> 2.50s (2.08x)"
  std::vector<std::string> improvements;  // the same the other way
  bool regressed() const { return !regressions.empty(); }
};

// Matches `now` with `baseline` by (scenario, seed); a change beyond `factor` (e.g. 1.2) in
// convergence time or API calls is a regression (convergence also needs 10 ms, calls 2 more, so noise
// around zero does not count), and so is PASS -> FAIL or converged -> never.
std::vector<RunComparison> CompareWithBaseline(const std::vector<RunResult>& now,
                                               const std::vector<RunResult>& baseline, double factor);

}  // namespace rcsim

#endif  // RCSIM_REPORTS_SUITE_STATS_H_
