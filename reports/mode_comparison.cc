#include "reports/mode_comparison.h"

#include <cstdio>
#include <map>

#include "reports/suite_stats.h"

namespace rcsim {
namespace {

std::string Secs(std::optional<double> v) {
  if (!v) return "never";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3fs", *v);
  return buf;
}

const char* Verdict(bool passed) { return passed ? "PASS" : "FAIL"; }

nlohmann::json Opt(std::optional<double> v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

}  // namespace

std::string ModeComparison::Outcome() const {
  if (EverySeedAgrees()) return "SAME";
  return MajorityAgrees() && !sim.empty() ? "SPLIT" : "DIFFERS";
}

ModeRun ModeRunOf(const RunResult& r) {
  ModeRun m;
  m.seed = r.seed;
  m.passed = r.passed;
  m.never_converged = r.any_not_converged;
  if (r.convergence && !r.any_not_converged) m.convergence = ToSeconds(*r.convergence);
  return m;
}

std::vector<ModeComparison> CompareModes(const std::vector<RunResult>& real,
                                         const std::vector<RunResult>& sim) {
  std::map<std::string, std::vector<const RunResult*>> by_scenario;
  for (const RunResult& r : sim) by_scenario[r.scenario].push_back(&r);
  // Pass counts and the convergence percentiles are the swarm's (the same definitions as its line).
  std::map<std::string, SwarmStats> swarm;
  for (SwarmStats& s : ComputeSwarmStats(sim)) swarm.emplace(s.scenario, std::move(s));
  std::vector<ModeComparison> out;
  for (const RunResult& r : real) {
    ModeComparison c;
    c.scenario = r.scenario;
    c.real = ModeRunOf(r);
    for (const RunResult* s : by_scenario[r.scenario]) c.sim.push_back(ModeRunOf(*s));
    if (auto it = swarm.find(r.scenario); it != swarm.end()) {
      const SwarmStats& s = it->second;
      c.sim_passed = s.passed;
      c.sim_never_converged = s.never_converged;
      c.sim_min = s.Percentile(0);
      c.sim_median = s.Percentile(0.5);
      c.sim_max = s.Percentile(1);
    }
    if (c.real.convergence && c.sim_median && *c.sim_median > 0)
      c.ratio = *c.real.convergence / *c.sim_median;
    out.push_back(std::move(c));
  }
  return out;
}

nlohmann::json ModeComparisonToJson(const ModeComparison& c) {
  nlohmann::json seeds = nlohmann::json::array();
  for (const ModeRun& s : c.sim) {
    seeds.push_back(
        {{"seed", s.seed}, {"verdict", Verdict(s.passed)}, {"convergence_seconds", Opt(s.convergence)}});
  }
  return {{"scenario", c.scenario},
          {"sim",
           {{"verdict", Verdict(c.SimMajorityPassed())},
            {"convergence_seconds", Opt(c.sim_median)},
            {"runs", c.sim.size()},
            {"passed", c.sim_passed},
            {"never_converged", c.sim_never_converged},
            {"convergence_min_seconds", Opt(c.sim_min)},
            {"convergence_median_seconds", Opt(c.sim_median)},
            {"convergence_max_seconds", Opt(c.sim_max)},
            {"seeds", seeds}}},
          {"real",
           {{"verdict", Verdict(c.real.passed)},
            {"convergence_seconds", Opt(c.real.convergence)},
            {"seed", c.real.seed}}},
          {"same_verdict", c.EverySeedAgrees()},
          {"majority_verdict_matches", c.MajorityAgrees()},
          {"outcome", c.Outcome()},
          {"convergence_ratio", Opt(c.ratio)}};
}

std::string ModeComparisonLine(const ModeComparison& c) {
  std::string outcome = c.Outcome();
  outcome.resize(8, ' ');
  char ratio[32] = "-";
  if (c.ratio) std::snprintf(ratio, sizeof(ratio), "%.2fx", *c.ratio);
  const std::string real = std::string("  real=") + Verdict(c.real.passed) + " " + Secs(c.real.convergence);
  if (c.sim.size() == 1) {
    return outcome + c.scenario + "  sim=" + Verdict(c.sim[0].passed) + " " + Secs(c.sim[0].convergence) +
           real + "  real/sim=" + ratio;
  }
  std::string line =
      outcome + c.scenario + "  sim=" + std::to_string(c.sim_passed) + "/" + std::to_string(c.sim.size()) +
      " PASS median " + Secs(c.sim_median) + " (min " + Secs(c.sim_min) + " max " + Secs(c.sim_max) +
      (c.sim_never_converged > 0 ? ", " + std::to_string(c.sim_never_converged) + " never" : "") + ")" +
      real + "  real/median=" + ratio;
  // The seeds whose verdict is not the real one, so they can be replayed.
  std::string odd;
  for (const ModeRun& s : c.sim) {
    if (s.passed != c.real.passed) odd += (odd.empty() ? "" : ", ") + std::to_string(s.seed);
  }
  if (!odd.empty()) {
    line += std::string("  (sim ") + Verdict(!c.real.passed) + " at seed" +
            (odd.find(',') == std::string::npos ? " " : "s ") + odd + ")";
  }
  return line;
}

}  // namespace rcsim
