// The acceptance run of issue 12: `rcsim run --compare scenarios/real` (each scenario in the simulation
// and against real etcd, the apiserver, the controller-manager and node agents) passes with the same
// verdicts in both modes, and writes the reports. About 6 minutes of wall time in all: label faults
// (./scripts/test -L faults), not in the default ./scripts/test.
// The suite runs as kShards tests, each `--shard K/kShards` (every scenario in exactly one shard, a
// property RcsimCliTest checks): a real run is mostly waiting on its scenario's timeline, so ctest -j2
// runs two shards side by side, each with its own processes, ports and directories.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace {

std::string Slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The last `lines` lines of a file.
std::string Tail(const std::filesystem::path& p, std::size_t lines) {
  const std::string all = Slurp(p);
  std::size_t at = all.size();
  for (std::size_t n = 0; at > 0 && n <= lines;) {
    if (all[--at] == '\n') ++n;
  }
  return all.substr(at == 0 ? 0 : at + 1);
}

// A failed real run keeps its processes' logs in <report>/<scenario>.logs/ (the runner copies them
// there). CI keeps only this test's output, so on failure the logs' tails are printed here and the
// directory is left in place: a failure seen once can be read, not only guessed at.
void PrintFailedRunsLogs(const std::filesystem::path& report) {
  std::error_code ec;
  for (const auto& run : std::filesystem::directory_iterator(report, ec)) {
    if (!run.is_directory() || run.path().extension() != ".logs") continue;
    // The run's timeline (active, desired and running pods per sample time) is in its report.
    std::filesystem::path report_file = run.path();
    report_file.replace_extension(".json");
    if (std::filesystem::exists(report_file)) {
      const nlohmann::json r = nlohmann::json::parse(Slurp(report_file), nullptr, false);
      if (!r.is_discarded() && r.contains("totals")) {
        std::printf("===== %s: totals %s\n", report_file.c_str(), r["totals"].dump().c_str());
      }
    }
    for (const auto& log : std::filesystem::recursive_directory_iterator(run.path(), ec)) {
      if (!log.is_regular_file()) continue;
      std::printf("===== %s (last 60 lines)\n%s\n", log.path().c_str(), Tail(log.path(), 60).c_str());
    }
  }
}

constexpr int kShards = 4;

// The number of scenario files in scenarios/real.
std::size_t RealScenarioFiles() {
  std::size_t n = 0;
  for (const auto& f :
       std::filesystem::directory_iterator(std::string(RCSIM_SOURCE_DIR) + "/scenarios/real")) {
    const std::string ext = f.path().extension().string();
    if (ext == ".json" || ext == ".yaml" || ext == ".yml") ++n;
  }
  return n;
}

class RealSuiteTest : public ::testing::TestWithParam<int> {};

TEST_P(RealSuiteTest, CompareScenariosRealGivesTheSameVerdictsInBothModes) {
  const int shard = GetParam();
  char tmpl[] = "/tmp/rcsim-real-suite-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::filesystem::path dir = tmpl;
  const std::string cmd = std::string(RCSIM_BINARY) + " run --compare " + RCSIM_SOURCE_DIR +
                          "/scenarios/real --shard " + std::to_string(shard) + "/" + std::to_string(kShards) +
                          " --report " + (dir / "report").string() + " --timeout 2m > " +
                          (dir / "out").string() + " 2>&1";
  const int status = std::system(cmd.c_str());  // NOLINT(concurrency-mt-unsafe): one thread here
  const std::string out = Slurp(dir / "out");
  ASSERT_TRUE(WIFEXITED(status)) << out;
  EXPECT_EQ(WEXITSTATUS(status), 0) << out;
  EXPECT_EQ(out.find("DIFFERS"), std::string::npos) << out;
  nlohmann::json cmp = nlohmann::json::parse(Slurp(dir / "report" / "compare.json"));
  // Sharded by count: each shard holds at least its share of the 22 files.
  ASSERT_GE(RealScenarioFiles(), 22u);
  ASSERT_GE(cmp["runs"].size(), RealScenarioFiles() / kShards);
  for (const auto& run : cmp["runs"]) {
    EXPECT_TRUE(run["same_verdict"].get<bool>()) << run.dump();
    EXPECT_EQ(run["real"]["verdict"], "PASS") << run.dump();
    const std::string name = run["scenario"].get<std::string>();
    nlohmann::json report = nlohmann::json::parse(Slurp(dir / "report" / (name + ".json")));
    EXPECT_EQ(report["mode"], "real") << name;
    EXPECT_EQ(nlohmann::json::parse(Slurp(dir / "report" / "sim" / (name + ".json")))["mode"], "sim") << name;
  }
  EXPECT_TRUE(std::filesystem::exists(dir / "report" / "junit.xml"));
  const std::string html = Slurp(dir / "report" / "index.html");
  EXPECT_NE(html.find("Simulation and real mode"), std::string::npos);
  EXPECT_NE(html.find("class=\"paired\""), std::string::npos);
  if (::testing::Test::HasFailure()) {
    PrintFailedRunsLogs(dir / "report");
    std::printf("the run's reports and logs are kept in %s\n", dir.c_str());
    return;
  }
  std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Shard, RealSuiteTest, ::testing::Range(1, kShards + 1));

}  // namespace
