#include "reports/suite_stats.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "harness/runner.h"

namespace rcsim {
namespace {

std::string Secs(double s) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2fs", s);
  return buf;
}

std::string Factor(double a, double b) {
  char buf[32];
  if (a <= 0) return "new";
  std::snprintf(buf, sizeof(buf), "%.2fx", b / a);
  return buf;
}

}  // namespace

std::optional<double> SwarmStats::Percentile(double q) const {
  if (convergence.empty()) return std::nullopt;
  auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(convergence.size())));
  rank = std::clamp<std::size_t>(rank, 1, convergence.size());
  return convergence[rank - 1];
}

std::vector<SwarmStats> ComputeSwarmStats(const std::vector<RunResult>& results) {
  std::vector<SwarmStats> out;
  std::map<std::string, std::size_t> index;
  for (const RunResult& r : results) {
    auto [it, inserted] = index.emplace(r.scenario, out.size());
    if (inserted) {
      out.emplace_back();
      out.back().scenario = r.scenario;
    }
    SwarmStats& s = out[it->second];
    ++s.runs;
    if (r.passed) {
      ++s.passed;
    } else {
      s.failing_seeds.push_back(r.seed);
      s.replay.push_back(ReplayCommandFor(r));
    }
    if (r.any_not_converged) {
      ++s.never_converged;
    } else if (r.convergence) {
      s.convergence.push_back(ToSeconds(*r.convergence));
    }
  }
  for (SwarmStats& s : out) std::sort(s.convergence.begin(), s.convergence.end());
  return out;
}

nlohmann::json SwarmStatsToJson(const std::vector<SwarmStats>& stats) {
  nlohmann::json out = nlohmann::json::array();
  for (const SwarmStats& s : stats) {
    auto pct = [&](double q) -> nlohmann::json {
      std::optional<double> v = s.Percentile(q);
      return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
    };
    nlohmann::json failing = nlohmann::json::array();
    for (std::size_t i = 0; i < s.failing_seeds.size(); ++i) {
      failing.push_back({{"seed", s.failing_seeds[i]}, {"replay", s.replay[i]}});
    }
    out.push_back(
        {{"scenario", s.scenario},
         {"runs", s.runs},
         {"passed", s.passed},
         {"pass_rate", s.PassRate()},
         {"never_converged", s.never_converged},
         {"convergence_seconds",
          {{"min", pct(0)}, {"p50", pct(0.5)}, {"p90", pct(0.9)}, {"p99", pct(0.99)}, {"max", pct(1)}}},
         {"failing", failing}});
  }
  return out;
}

std::string SwarmLine(const SwarmStats& s) {
  char rate[32];
  std::snprintf(rate, sizeof(rate), "%.1f%%", 100 * s.PassRate());
  std::string line =
      s.scenario + ": " + std::to_string(s.passed) + "/" + std::to_string(s.runs) + " passed (" + rate + ")";
  if (!s.convergence.empty()) {
    line += ", convergence min " + Secs(*s.Percentile(0)) + " p50 " + Secs(*s.Percentile(0.5)) + " p90 " +
            Secs(*s.Percentile(0.9)) + " p99 " + Secs(*s.Percentile(0.99)) + " max " + Secs(*s.Percentile(1));
  }
  if (s.never_converged > 0) line += ", " + std::to_string(s.never_converged) + " never converged";
  return line;
}

std::vector<RunComparison> CompareWithBaseline(const std::vector<RunResult>& now,
                                               const std::vector<RunResult>& baseline, double factor) {
  std::map<std::pair<std::string, uint64_t>, const RunResult*> base;
  for (const RunResult& r : baseline) base[{r.scenario, r.seed}] = &r;
  std::vector<RunComparison> out;
  for (const RunResult& r : now) {
    RunComparison c;
    c.scenario = r.scenario;
    c.seed = r.seed;
    c.now_passed = r.passed;
    c.now_never = r.any_not_converged;
    if (r.convergence && !r.any_not_converged) c.now_convergence = ToSeconds(*r.convergence);
    c.now_calls = r.api_calls_total;
    auto it = base.find({r.scenario, r.seed});
    if (it != base.end()) {
      const RunResult& b = *it->second;
      c.in_baseline = true;
      c.base_passed = b.passed;
      c.base_never = b.any_not_converged;
      if (b.convergence && !b.any_not_converged) c.base_convergence = ToSeconds(*b.convergence);
      c.base_calls = b.api_calls_total;
      if (b.passed && !r.passed) c.regressions.emplace_back("verdict PASS -> FAIL");
      if (!b.passed && r.passed) c.improvements.emplace_back("verdict FAIL -> PASS");
      if (!c.base_never && c.now_never) c.regressions.emplace_back("converged -> never converged");
      if (c.base_never && !c.now_never) c.improvements.emplace_back("never converged -> converged");
      if (c.base_convergence && c.now_convergence) {
        double a = *c.base_convergence, n = *c.now_convergence;
        std::string what = "convergence " + Secs(a) + " -> " + Secs(n) + " (" + Factor(a, n) + ")";
        if (n > a * factor && n - a >= 0.01) c.regressions.push_back(what);
        if (a > n * factor && a - n >= 0.01) c.improvements.push_back(what);
      }
      double a = static_cast<double>(c.base_calls), n = static_cast<double>(c.now_calls);
      std::string what = "API calls " + std::to_string(c.base_calls) + " -> " + std::to_string(c.now_calls) +
                         " (" + Factor(a, n) + ")";
      if (n > a * factor && n >= a + 2) c.regressions.push_back(what);
      if (a > n * factor && a >= n + 2) c.improvements.push_back(what);
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace rcsim
