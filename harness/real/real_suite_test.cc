// The acceptance run of issue 12: `rcsim run --compare scenarios/real` (each scenario in the simulation
// and against real etcd, the apiserver, the controller-manager and node agents) passes with the same
// verdicts in both modes, and writes the reports. About 4 minutes of wall time: label faults (./scripts/test
// -L faults), not in the default ./scripts/test.
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

TEST(RealSuiteTest, CompareScenariosRealGivesTheSameVerdictsInBothModes) {
  char tmpl[] = "/tmp/rcsim-real-suite-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::filesystem::path dir = tmpl;
  const std::string cmd = std::string(RCSIM_BINARY) + " run --compare " + RCSIM_SOURCE_DIR +
                          "/scenarios/real --report " + (dir / "report").string() + " --timeout 2m > " +
                          (dir / "out").string() + " 2>&1";
  const int status = std::system(cmd.c_str());  // NOLINT(concurrency-mt-unsafe): one thread here
  const std::string out = Slurp(dir / "out");
  ASSERT_TRUE(WIFEXITED(status)) << out;
  EXPECT_EQ(WEXITSTATUS(status), 0) << out;
  EXPECT_EQ(out.find("DIFFERS"), std::string::npos) << out;
  nlohmann::json cmp = nlohmann::json::parse(Slurp(dir / "report" / "compare.json"));
  ASSERT_GE(cmp["runs"].size(), 12u);
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
  std::filesystem::remove_all(dir);
}

}  // namespace
