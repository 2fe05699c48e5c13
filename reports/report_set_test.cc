#include "reports/report_set.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "harness/runner.h"
#include "harness/scenario.h"
#include "reports/json_report.h"

namespace rcsim {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

RunResult SampleRun(uint64_t seed) {
  Result<Scenario> s = ParseScenarioText(R"({"name": "rt", "controllers": [{"name": "web", "replicas": 3},
      {"name": "api", "replicas": 2}], "events": [{"at": "5s", "kill_pods": {"count": 1}}],
      "expect": [{"converged": {"controller": "web", "after": "5s", "within": "10s"}},
                 {"never_above": {"controller": "web"}}]})",
                                         "rt.json");
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return RunScenario(*s, seed);
}

TEST(ReportSetTest, RunResultSurvivesItsJson) {
  RunResult r = SampleRun(4);
  nlohmann::json j = RunResultToJson(r);
  Result<RunResult> back = RunResultFromJson(j);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(RunResultToJson(*back), j);
  EXPECT_EQ(back->trace_digest, r.trace_digest);
  EXPECT_EQ(back->controllers.size(), 2u);
  EXPECT_FALSE(RunResultFromJson(nlohmann::json::object()).ok());
}

TEST(ReportSetTest, WriteReadMergeKeepsPlanOrderAndRefusesOverlaps) {
  fs::path dir = fs::temp_directory_path() / ("rcsim_report_set_" + std::to_string(getpid()));
  fs::remove_all(dir);
  ReportSet a, b;
  a.per_seed = b.per_seed = true;
  a.plan_size = b.plan_size = 3;
  a.results = {SampleRun(1), SampleRun(3)};
  a.plan_index = {0, 2};
  b.results = {SampleRun(2)};
  b.plan_index = {1};
  ASSERT_TRUE(WriteReportSet((dir / "a").string(), a).ok());
  ASSERT_TRUE(WriteReportSet((dir / "b").string(), b).ok());
  Result<ReportSet> ra = ReadReportSet((dir / "a").string()), rb = ReadReportSet((dir / "b").string());
  ASSERT_TRUE(ra.ok()) << ra.status().ToString();
  ASSERT_TRUE(rb.ok()) << rb.status().ToString();
  Result<ReportSet> m = MergeReportSets({*rb, *ra});
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_EQ(m->results.size(), 3u);
  EXPECT_EQ(m->results[0].seed, 1u);
  EXPECT_EQ(m->results[1].seed, 2u);
  EXPECT_EQ(m->results[2].seed, 3u);
  EXPECT_THAT(MergeReportSets({*ra, *ra}).status().message(), HasSubstr("is in two reports"));
  EXPECT_THAT(ReadReportSet((dir / "missing").string()).status().message(),
              HasSubstr("not a report directory"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace rcsim
