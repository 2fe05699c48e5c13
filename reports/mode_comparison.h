// What `rcsim run --compare` says per scenario: its real run against the simulation's runs of it, over
// one seed or several (--seeds N).
//
// The verdict rule: a scenario fails the comparison unless every simulated seed's verdict equals the
// real run's. A majority alone is not enough: a seed the simulation fails (or passes) while real mode
// passes (or fails) is a verdict that differs, and swarm mode without --compare fails on one failing seed
// too. Outcome() tells the two ways to fail apart: DIFFERS (the simulation's majority verdict is not the
// real one) and SPLIT (the majority agrees, some seeds do not).
#ifndef RCSIM_REPORTS_MODE_COMPARISON_H_
#define RCSIM_REPORTS_MODE_COMPARISON_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "harness/run_result.h"

namespace rcsim {

// One run's verdict and convergence (seconds; nullopt when none was measured or one never held).
struct ModeRun {
  uint64_t seed = 0;
  bool passed = false;
  std::optional<double> convergence;
  bool never_converged = false;
};

struct ModeComparison {
  std::string scenario;
  ModeRun real;
  std::vector<ModeRun> sim;  // the simulated seeds, in plan order
  std::size_t sim_passed = 0;
  std::size_t sim_never_converged = 0;
  // Over the simulated runs that measured a convergence; the median is the nearest-rank p50 (a run's
  // own value, as the swarm line's p50).
  std::optional<double> sim_min, sim_median, sim_max;
  std::optional<double> ratio;  // real / sim_median, when both were measured and the median is > 0

  // More than half the seeds passed (a tie is FAIL). With one seed: that seed's verdict.
  bool SimMajorityPassed() const { return 2 * sim_passed > sim.size(); }
  bool MajorityAgrees() const { return SimMajorityPassed() == real.passed; }
  // The verdict rule (above): every seed's verdict is the real one. False without simulated runs.
  bool EverySeedAgrees() const {
    return !sim.empty() && (real.passed ? sim_passed == sim.size() : sim_passed == 0);
  }
  // "SAME", "DIFFERS" or "SPLIT".
  std::string Outcome() const;
};

ModeRun ModeRunOf(const RunResult& r);

// One comparison per real run, in their order, with every simulated run of the same scenario (the
// simulated runs of scenarios without a real run are ignored).
std::vector<ModeComparison> CompareModes(const std::vector<RunResult>& real,
                                         const std::vector<RunResult>& sim);

// compare.json's runs[] entry. The fields of the one-seed report keep their names and meaning for one
// seed: sim.verdict is the majority verdict, sim.convergence_seconds the median, same_verdict the
// verdict rule and convergence_ratio real / median. Added: outcome, majority_verdict_matches,
// real.seed, and sim.{runs, passed, never_converged, convergence_min/median/max_seconds, seeds[]}.
nlohmann::json ModeComparisonToJson(const ModeComparison& c);

// The console line, e.g. with three seeds:
// "SPLIT   web  sim=2/3 PASS median 1.200s (min 1.100s max 1.500s)  real=PASS 1.900s  real/median=1.58x
//  (sim FAIL at seed 42)"; with one seed the line of the one-seed --compare:
// "SAME    web  sim=PASS 1.200s  real=PASS 1.900s  real/sim=1.58x".
std::string ModeComparisonLine(const ModeComparison& c);

}  // namespace rcsim

#endif  // RCSIM_REPORTS_MODE_COMPARISON_H_
