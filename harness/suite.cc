#include "harness/suite.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <regex>
#include <thread>

#include "engine/mutex.h"
#include "engine/rng.h"
#include "harness/scenario_expand.h"

namespace rcsim {

namespace fs = std::filesystem;

Result<std::vector<std::string>> FindScenarioFiles(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (const std::string& p : paths) {
    std::error_code ec;
    fs::file_status st = fs::status(p, ec);
    if (ec || !fs::exists(st)) return Status(Code::kInvalid, p + ": no such file or directory");
    if (!fs::is_directory(st)) {
      out.push_back(p);
      continue;
    }
    std::vector<std::string> found;
    for (fs::recursive_directory_iterator it(p, fs::directory_options::follow_directory_symlink, ec), end;
         !ec && it != end; it.increment(ec)) {
      std::string ext = it->path().extension().string();
      if (it->is_regular_file(ec) && (ext == ".json" || ext == ".yaml" || ext == ".yml")) {
        found.push_back(it->path().string());
      }
    }
    if (ec) return Status(Code::kInvalid, p + ": cannot list: " + ec.message());
    if (found.empty()) return Status(Code::kInvalid, p + ": no scenario files (*.json, *.yaml, *.yml)");
    std::sort(found.begin(), found.end());
    out.insert(out.end(), found.begin(), found.end());
  }
  return out;
}

Result<std::vector<Scenario>> LoadScenarios(const std::vector<std::string>& files) {
  std::vector<Scenario> out;
  std::map<std::string, std::string> names;  // name -> file
  for (const std::string& f : files) {
    Result<std::vector<Scenario>> runs = LoadScenarioFileRuns(f);
    if (!runs.ok()) return runs.status();
    for (Scenario& s : *runs) {
      auto [it, inserted] = names.emplace(s.name, f);
      if (!inserted) {
        return Status(Code::kInvalid,
                      f + ": /name: scenario name \"" + s.name + "\" is also used by " + it->second);
      }
      out.push_back(std::move(s));
    }
  }
  return out;
}

std::vector<uint64_t> SwarmSeeds(uint64_t base, int n) {
  std::vector<uint64_t> seeds;
  for (int i = 1; i <= n; ++i) seeds.push_back(DeriveSeed(base, static_cast<uint64_t>(i)));
  return seeds;
}

Result<std::vector<PlannedRun>> PlanRuns(const std::vector<Scenario>& scenarios,
                                         const SuiteOptions& options) {
  if (options.tier != "fast" && options.tier != "slow" && options.tier != "all") {
    return Status(Code::kInvalid, "--tier: must be fast, slow or all, got \"" + options.tier + "\"");
  }
  std::optional<std::regex> filter;
  if (!options.filter.empty()) {
    try {
      filter.emplace(options.filter, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      return Status(Code::kInvalid,
                    "--filter: invalid regular expression \"" + options.filter + "\": " + e.what());
    }
  }
  std::vector<PlannedRun> plan;
  for (const Scenario& s : scenarios) {
    if (options.tier != "all" && s.tier != options.tier) continue;
    if (filter && !std::regex_search(s.name, *filter)) continue;
    uint64_t base = options.seed.value_or(s.seed);
    if (options.seeds > 0) {
      for (uint64_t seed : SwarmSeeds(base, options.seeds)) plan.push_back({&s, seed, plan.size()});
    } else {
      plan.push_back({&s, base, plan.size()});
    }
  }
  return plan;
}

std::vector<std::size_t> ShardIndices(const std::vector<PlannedRun>& plan, int k, int n,
                                      const std::map<std::pair<std::string, uint64_t>, double>& costs) {
  std::vector<std::size_t> mine;
  if (costs.empty()) {
    for (std::size_t i = 0; i < plan.size(); ++i) {
      if (static_cast<int>(i % static_cast<std::size_t>(n)) == k - 1) mine.push_back(i);
    }
    return mine;
  }
  std::map<std::string, std::pair<double, int>> by_scenario;  // sum, count
  std::vector<double> all;
  for (const auto& [key, c] : costs) {
    by_scenario[key.first].first += c;
    by_scenario[key.first].second += 1;
    all.push_back(c);
  }
  std::sort(all.begin(), all.end());
  const double median = all[all.size() / 2];
  std::vector<double> cost(plan.size());
  for (std::size_t i = 0; i < plan.size(); ++i) {
    auto it = costs.find({plan[i].scenario->name, plan[i].seed});
    if (it != costs.end()) {
      cost[i] = it->second;
    } else if (auto s = by_scenario.find(plan[i].scenario->name); s != by_scenario.end()) {
      cost[i] = s->second.first / s->second.second;
    } else {
      cost[i] = median;
    }
  }
  std::vector<std::size_t> order(plan.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return cost[a] > cost[b]; });
  std::vector<double> load(static_cast<std::size_t>(n), 0.0);
  for (std::size_t i : order) {
    std::size_t best = static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    load[best] += cost[i];
    if (static_cast<int>(best) == k - 1) mine.push_back(i);
  }
  std::sort(mine.begin(), mine.end());
  return mine;
}

std::vector<RunResult> RunPlan(const std::vector<PlannedRun>& plan, int jobs, const RunOptions& run_options,
                               const std::function<void(std::size_t, const RunResult&)>& on_done) {
  std::vector<RunResult> results(plan.size());
  std::atomic<std::size_t> next{0};
  Mutex done_mu;
  auto worker = [&] {
    for (std::size_t i = next.fetch_add(1); i < plan.size(); i = next.fetch_add(1)) {
      RunOptions options = run_options;
      if (!plan[i].manager.empty()) options.manager = plan[i].manager;
      RunResult r = RunScenario(*plan[i].scenario, plan[i].seed, options);
      MutexLock lock(done_mu);
      results[i] = std::move(r);
      if (on_done) on_done(i, results[i]);
    }
  };
  int threads = std::max(1, std::min<int>(jobs, static_cast<int>(plan.size())));
  if (threads == 1) {
    worker();
    return results;
  }
  std::vector<std::thread> pool;
  pool.reserve(static_cast<std::size_t>(threads));
  for (int t = 0; t < threads; ++t) pool.emplace_back(worker);
  for (std::thread& t : pool) t.join();
  return results;
}

}  // namespace rcsim
