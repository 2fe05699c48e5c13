#include "reports/report_set.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "harness/runner.h"
#include "harness/scenario.h"
#include "reports/json_report.h"

namespace rcsim {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

RunResult SampleRun(uint64_t seed, const RunOptions& options = {}) {
  Result<Scenario> s = ParseScenarioText(R"({"name": "rt", "controllers": [{"name": "web", "replicas": 3},
      {"name": "api", "replicas": 2}], "events": [{"at": "5s", "kill_pods": {"count": 1}}],
      "expect": [{"converged": {"controller": "web", "after": "5s", "within": "10s"}},
                 {"never_above": {"controller": "web"}}]})",
                                         "rt.json");
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return RunScenario(*s, seed, options);
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

// rcsim run --manager both --shard K/N puts the two runs of a pair in different shards: each shard has
// no complete pair (no managers.json), their merge has it, and its HTML report the paired plots.
TEST(ReportSetTest, MergeOfBothManagersShardsWritesManagersJson) {
  fs::path dir = fs::temp_directory_path() / ("rcsim_report_set_managers_" + std::to_string(getpid()));
  fs::remove_all(dir);
  RunOptions modern, old;
  modern.manager = "modern";
  old.manager = "2014";
  ReportSet a, b;
  a.plan_size = b.plan_size = 2;
  a.results = {SampleRun(1, modern)};
  a.plan_index = {0};
  b.results = {SampleRun(1, old)};
  b.plan_index = {1};
  ASSERT_TRUE(WriteReportSet((dir / "a").string(), a).ok());
  ASSERT_TRUE(WriteReportSet((dir / "b").string(), b).ok());
  EXPECT_FALSE(fs::exists(dir / "a" / "managers.json"));
  EXPECT_FALSE(fs::exists(dir / "b" / "managers.json"));
  Result<ReportSet> ra = ReadReportSet((dir / "a").string()), rb = ReadReportSet((dir / "b").string());
  ASSERT_TRUE(ra.ok() && rb.ok());
  Result<ReportSet> m = MergeReportSets({*ra, *rb});
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_TRUE(WriteReportSet((dir / "merged").string(), *m).ok());
  std::ifstream in(dir / "merged" / "managers.json");
  ASSERT_TRUE(in.good()) << "no managers.json in the merge";
  nlohmann::json pairs = nlohmann::json::parse(in);
  ASSERT_EQ(pairs.size(), 1u) << pairs.dump();
  EXPECT_EQ(pairs[0]["scenario"], "rt");
  EXPECT_EQ(pairs[0]["seed"], 1);
  EXPECT_EQ(pairs[0]["modern"]["verdict"], a.results[0].passed ? "PASS" : "FAIL");
  EXPECT_EQ(pairs[0]["2014"]["verdict"], b.results[0].passed ? "PASS" : "FAIL");
  std::ifstream html(dir / "merged" / "index.html");
  std::string page((std::istreambuf_iterator<char>(html)), std::istreambuf_iterator<char>());
  EXPECT_THAT(page, HasSubstr("<div class=\"manager-pair\" data-scenario=\"rt\" data-seed=\"1\">"));
  EXPECT_THAT(page, HasSubstr("data-manager=\"2014\""));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace rcsim
