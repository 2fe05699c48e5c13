#include "harness/suite.h"

#include <gtest/gtest.h>

#include <set>

namespace rcsim {
namespace {

std::vector<PlannedRun> Plan(const std::vector<Scenario>& scenarios, int seeds) {
  SuiteOptions o;
  o.seeds = seeds;
  Result<std::vector<PlannedRun>> p = PlanRuns(scenarios, o);
  EXPECT_TRUE(p.ok());
  return *p;
}

std::vector<Scenario> Scenarios(int n) {
  std::vector<Scenario> out(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) out[static_cast<std::size_t>(i)].name = "s" + std::to_string(i);
  return out;
}

// Every run in exactly one shard, for every shard count, with and without costs.
TEST(SuiteTest, ShardsPartitionThePlan) {
  std::vector<Scenario> scenarios = Scenarios(7);
  std::vector<PlannedRun> plan = Plan(scenarios, 3);
  ASSERT_EQ(plan.size(), 21u);
  std::map<std::pair<std::string, uint64_t>, double> costs;
  for (const PlannedRun& p : plan) costs[{p.scenario->name, p.seed}] = p.scenario->name == "s0" ? 10.0 : 1.0;
  costs.erase({plan[5].scenario->name, plan[5].seed});  // an unknown run costs its scenario's mean
  for (bool with_costs : {false, true}) {
    for (int n = 1; n <= 8; ++n) {
      std::multiset<std::size_t> seen;
      for (int k = 1; k <= n; ++k) {
        std::vector<std::size_t> mine = ShardIndices(plan, k, n, with_costs ? costs : decltype(costs){});
        if (!with_costs) {
          EXPECT_LE(mine.size(), (plan.size() + n - 1) / n);
          EXPECT_GE(mine.size(), plan.size() / n);
        }
        seen.insert(mine.begin(), mine.end());
        EXPECT_EQ(mine, ShardIndices(plan, k, n, with_costs ? costs : decltype(costs){}));  // deterministic
      }
      ASSERT_EQ(seen.size(), plan.size());
      for (std::size_t i = 0; i < plan.size(); ++i) EXPECT_EQ(seen.count(i), 1u);
    }
  }
  // Balanced by cost: the three 10 s runs of s0 go to three different shards of three.
  for (int k = 1; k <= 3; ++k) {
    int heavy = 0;
    for (std::size_t i : ShardIndices(plan, k, 3, costs)) heavy += plan[i].scenario->name == "s0" ? 1 : 0;
    EXPECT_EQ(heavy, 1) << "shard " << k;
  }
}

}  // namespace
}  // namespace rcsim
