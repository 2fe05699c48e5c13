#include "reports/mode_comparison.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "reports/html_report.h"

namespace rcsim {
namespace {

using std::chrono::milliseconds;
using ::testing::HasSubstr;

RunResult MakeRun(const std::string& scenario, uint64_t seed, bool passed, std::optional<int> converged_ms,
                  const std::string& mode = "sim") {
  RunResult r;
  r.scenario = scenario;
  r.seed = seed;
  r.mode = mode;
  r.passed = passed;
  if (converged_ms) {
    r.convergence = milliseconds(*converged_ms);
  } else {
    r.any_not_converged = true;
  }
  return r;
}

TEST(ModeComparisonTest, OneSeedKeepsTheOneSeedLineAndFields) {
  std::vector<ModeComparison> cs =
      CompareModes({MakeRun("web", 7, true, 2400, "real")}, {MakeRun("web", 7, true, 1200)});
  ASSERT_EQ(cs.size(), 1u);
  const ModeComparison& c = cs[0];
  EXPECT_TRUE(c.EverySeedAgrees());
  EXPECT_EQ(c.Outcome(), "SAME");
  ASSERT_TRUE(c.ratio.has_value());
  EXPECT_DOUBLE_EQ(*c.ratio, 2.0);
  EXPECT_EQ(ModeComparisonLine(c), "SAME    web  sim=PASS 1.200s  real=PASS 2.400s  real/sim=2.00x");
  const nlohmann::json j = ModeComparisonToJson(c);
  // The fields external checks read, with their one-seed meaning.
  EXPECT_EQ(j["scenario"], "web");
  EXPECT_EQ(j["sim"]["verdict"], "PASS");
  EXPECT_DOUBLE_EQ(j["sim"]["convergence_seconds"].get<double>(), 1.2);
  EXPECT_EQ(j["real"]["verdict"], "PASS");
  EXPECT_DOUBLE_EQ(j["real"]["convergence_seconds"].get<double>(), 2.4);
  EXPECT_EQ(j["same_verdict"], true);
  EXPECT_DOUBLE_EQ(j["convergence_ratio"].get<double>(), 2.0);
  EXPECT_EQ(j["real"]["seed"], 7);
  EXPECT_EQ(j["sim"]["runs"], 1);
  EXPECT_EQ(j["sim"]["seeds"].size(), 1u);
}

TEST(ModeComparisonTest, SeedsGiveMedianMinMaxAndTheRatioToTheMedian) {
  std::vector<ModeComparison> cs = CompareModes(
      {MakeRun("web", 11, true, 3000, "real")},
      {MakeRun("web", 11, true, 1000), MakeRun("web", 12, true, 1500), MakeRun("web", 13, true, 1200)});
  ASSERT_EQ(cs.size(), 1u);
  const ModeComparison& c = cs[0];
  EXPECT_EQ(c.sim.size(), 3u);
  EXPECT_EQ(c.sim_passed, 3u);
  EXPECT_DOUBLE_EQ(c.sim_min.value(), 1.0);
  EXPECT_DOUBLE_EQ(c.sim_median.value(), 1.2);
  EXPECT_DOUBLE_EQ(c.sim_max.value(), 1.5);
  EXPECT_DOUBLE_EQ(c.ratio.value(), 2.5);
  EXPECT_EQ(c.Outcome(), "SAME");
  EXPECT_EQ(
      ModeComparisonLine(c),
      "SAME    web  sim=3/3 PASS median 1.200s (min 1.000s max 1.500s)  real=PASS 3.000s  real/median=2.50x");
  const nlohmann::json j = ModeComparisonToJson(c);
  EXPECT_DOUBLE_EQ(j["sim"]["convergence_seconds"].get<double>(), 1.2);  // the median
  EXPECT_DOUBLE_EQ(j["sim"]["convergence_min_seconds"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(j["sim"]["convergence_median_seconds"].get<double>(), 1.2);
  EXPECT_DOUBLE_EQ(j["sim"]["convergence_max_seconds"].get<double>(), 1.5);
  ASSERT_EQ(j["sim"]["seeds"].size(), 3u);
  EXPECT_EQ(j["sim"]["seeds"][1]["seed"], 12);  // in plan order
  EXPECT_EQ(j["sim"]["seeds"][1]["verdict"], "PASS");
  EXPECT_DOUBLE_EQ(j["sim"]["seeds"][1]["convergence_seconds"].get<double>(), 1.5);
  EXPECT_EQ(j["outcome"], "SAME");
}

TEST(ModeComparisonTest, EvenSeedsTakeTheLowerMiddleAsTheSwarmP50Does) {
  std::vector<ModeComparison> cs = CompareModes({MakeRun("web", 1, true, 1000, "real")},
                                                {MakeRun("web", 1, true, 400), MakeRun("web", 2, true, 100),
                                                 MakeRun("web", 3, true, 300), MakeRun("web", 4, true, 200)});
  EXPECT_DOUBLE_EQ(cs[0].sim_median.value(), 0.2);
}

TEST(ModeComparisonTest, ASeedThatDisagreesWithTheMajoritySplitsAndFails) {
  std::vector<ModeComparison> cs = CompareModes(
      {MakeRun("web", 1, true, 1000, "real")},
      {MakeRun("web", 1, true, 900), MakeRun("web", 2, false, 5000), MakeRun("web", 3, true, 1100)});
  const ModeComparison& c = cs[0];
  EXPECT_TRUE(c.SimMajorityPassed());
  EXPECT_TRUE(c.MajorityAgrees());
  EXPECT_FALSE(c.EverySeedAgrees());
  EXPECT_EQ(c.Outcome(), "SPLIT");
  EXPECT_THAT(ModeComparisonLine(c), HasSubstr("sim=2/3 PASS"));
  EXPECT_THAT(ModeComparisonLine(c), HasSubstr("(sim FAIL at seed 2)"));
  const nlohmann::json j = ModeComparisonToJson(c);
  EXPECT_EQ(j["sim"]["verdict"], "PASS");  // the majority
  EXPECT_EQ(j["same_verdict"], false);     // the verdict rule
  EXPECT_EQ(j["majority_verdict_matches"], true);
  EXPECT_EQ(j["outcome"], "SPLIT");
}

TEST(ModeComparisonTest, AMajorityAgainstTheRealVerdictDiffers) {
  std::vector<ModeComparison> cs = CompareModes(
      {MakeRun("web", 1, true, 1000, "real")},
      {MakeRun("web", 1, false, 900), MakeRun("web", 2, false, 800), MakeRun("web", 3, true, 1100)});
  EXPECT_EQ(cs[0].Outcome(), "DIFFERS");
  EXPECT_THAT(ModeComparisonLine(cs[0]), HasSubstr("(sim FAIL at seeds 1, 2)"));
  EXPECT_EQ(ModeComparisonToJson(cs[0])["majority_verdict_matches"], false);
}

TEST(ModeComparisonTest, ATieIsAFailingMajority) {
  std::vector<ModeComparison> cs =
      CompareModes({MakeRun("web", 1, false, 1000, "real")},
                   {MakeRun("web", 1, true, 900), MakeRun("web", 2, false, 800)});
  EXPECT_FALSE(cs[0].SimMajorityPassed());
  EXPECT_EQ(cs[0].Outcome(), "SPLIT");  // the real FAIL is the majority's, seed 1 disagrees
  EXPECT_EQ(ModeComparisonToJson(cs[0])["sim"]["verdict"], "FAIL");
}

TEST(ModeComparisonTest, FailingInBothModesOnEverySeedIsTheSameVerdict) {
  std::vector<ModeComparison> cs =
      CompareModes({MakeRun("web", 1, false, 1000, "real")},
                   {MakeRun("web", 1, false, 900), MakeRun("web", 2, false, 800)});
  EXPECT_TRUE(cs[0].EverySeedAgrees());
  EXPECT_EQ(cs[0].Outcome(), "SAME");
}

TEST(ModeComparisonTest, SeedsThatNeverConvergedAreCountedNotMedianed) {
  std::vector<ModeComparison> cs = CompareModes(
      {MakeRun("web", 1, false, std::nullopt, "real")},
      {MakeRun("web", 1, false, std::nullopt), MakeRun("web", 2, false, 700), MakeRun("web", 3, false, 900)});
  const ModeComparison& c = cs[0];
  EXPECT_EQ(c.sim_never_converged, 1u);
  EXPECT_DOUBLE_EQ(c.sim_median.value(), 0.7);
  EXPECT_DOUBLE_EQ(c.sim_min.value(), 0.7);
  EXPECT_FALSE(c.ratio.has_value());  // the real run never converged
  EXPECT_THAT(ModeComparisonLine(c), HasSubstr("max 0.900s, 1 never)  real=FAIL never  real/median=-"));
  EXPECT_TRUE(ModeComparisonToJson(c)["real"]["convergence_seconds"].is_null());
  EXPECT_TRUE(ModeComparisonToJson(c)["sim"]["seeds"][0]["convergence_seconds"].is_null());
}

TEST(ModeComparisonTest, GroupsByScenarioInTheRealRunsOrder) {
  std::vector<ModeComparison> cs =
      CompareModes({MakeRun("b", 1, true, 1000, "real"), MakeRun("a", 5, true, 1000, "real")},
                   {MakeRun("a", 5, true, 500), MakeRun("a", 6, true, 600), MakeRun("b", 1, true, 100),
                    MakeRun("c", 1, false, 100)});
  ASSERT_EQ(cs.size(), 2u);  // c ran only in the simulation: no row
  EXPECT_EQ(cs[0].scenario, "b");
  EXPECT_EQ(cs[0].sim.size(), 1u);
  EXPECT_EQ(cs[1].scenario, "a");
  EXPECT_EQ(cs[1].sim.size(), 2u);
  EXPECT_EQ(cs[1].real.seed, 5u);
}

TEST(ModeComparisonTest, WithoutSimulatedRunsNothingAgrees) {
  std::vector<ModeComparison> cs = CompareModes({MakeRun("web", 1, true, 1000, "real")}, {});
  EXPECT_FALSE(cs[0].EverySeedAgrees());
  EXPECT_EQ(cs[0].Outcome(), "DIFFERS");
  EXPECT_FALSE(cs[0].ratio.has_value());
}

TEST(ModeComparisonTest, HtmlHasTheModesTableWithEverySeedAndThePairedPlot) {
  HtmlOptions options;
  options.comparison_title = "Simulation and real mode";
  options.mode_comparisons =
      CompareModes({MakeRun("web", 1, true, 1000, "real"), MakeRun("db", 3, true, 1000, "real")},
                   {MakeRun("web", 1, true, 900), MakeRun("web", 2, false, 800),
                    MakeRun("web", 3, true, 1100), MakeRun("db", 3, true, 500)});
  const std::string html =
      HtmlReport({MakeRun("web", 1, true, 1000, "real"), MakeRun("db", 3, true, 1000, "real")}, options);
  EXPECT_THAT(html, HasSubstr("Simulation and real mode"));
  EXPECT_THAT(html, HasSubstr("<table class=\"comparison modes\">"));
  EXPECT_THAT(html, HasSubstr("<tr class=\"split\" data-scenario=\"web\">"));
  EXPECT_THAT(html, HasSubstr("<tr class=\"same\" data-scenario=\"db\">"));
  EXPECT_THAT(html, HasSubstr("2/3 PASS"));
  EXPECT_THAT(html, HasSubstr("2 FAIL 800ms"));  // seed 2's own verdict and convergence
  EXPECT_THAT(html, HasSubstr("1.11x"));         // web: real 1s / median 0.9s
  EXPECT_THAT(html, HasSubstr("2.00x"));
  EXPECT_THAT(html, HasSubstr("1 verdicts differ</span> from the simulation"));
  EXPECT_THAT(html, HasSubstr("class=\"paired\""));
  EXPECT_EQ(html.find("against the baseline"), std::string::npos);
}

}  // namespace
}  // namespace rcsim
