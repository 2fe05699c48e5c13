#include "reports/manager_pairs.h"

#include <map>
#include <utility>

namespace rcsim {

std::vector<ManagerPair> PairManagers(const std::vector<RunResult>& results) {
  std::map<std::pair<std::string, uint64_t>, std::size_t> index;  // (file, seed) -> pair
  std::vector<ManagerPair> pairs;
  for (const RunResult& r : results) {
    auto [it, inserted] = index.emplace(std::make_pair(r.file, r.seed), pairs.size());
    if (inserted) pairs.push_back(ManagerPair{});
    ManagerPair& p = pairs[it->second];
    p.seed = r.seed;
    std::string name = r.scenario;
    const std::string suffix = "." + r.manager_kind;
    if (r.manager_from_flag && name.size() > suffix.size() && name.ends_with(suffix)) {
      name.resize(name.size() - suffix.size());
    }
    p.scenario = name;
    (r.manager_kind == "2014" ? p.old : p.modern) = &r;
  }
  std::vector<ManagerPair> out;
  for (ManagerPair& p : pairs) {
    if (p.modern != nullptr && p.old != nullptr) out.push_back(std::move(p));
  }
  return out;
}

std::vector<std::string> FailedExpectations(const RunResult& r) {
  std::vector<std::string> out;
  if (!r.error.empty()) out.push_back("error: " + r.error);
  for (const ExpectationOutcome& o : r.expectations) {
    if (!o.passed) out.push_back(o.text);
  }
  return out;
}

nlohmann::json ManagerPairsToJson(const std::vector<ManagerPair>& pairs) {
  nlohmann::json out = nlohmann::json::array();
  auto side = [](const RunResult& r) {
    return nlohmann::json{
        {"verdict", r.passed ? "PASS" : "FAIL"}, {"scenario", r.scenario}, {"failed", FailedExpectations(r)}};
  };
  for (const ManagerPair& p : pairs) {
    out.push_back(
        {{"scenario", p.scenario}, {"seed", p.seed}, {"modern", side(*p.modern)}, {"2014", side(*p.old)}});
  }
  return out;
}

}  // namespace rcsim
