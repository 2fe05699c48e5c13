// scenarios/flaws on both managers (`rcsim run --manager both`): every scenario fails on the 2014
// baseline with the expectations that name its flaw, and passes on the modern manager. The 2014
// failures are the expected outcome here, so this test passes exactly when they happen.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

namespace rcsim {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

int Rcsim(const std::string& args, const fs::path& out) {
  std::string cmd = std::string(RCSIM_BIN) + " " + args + " >" + out.string() + " 2>&1";
  // One thread here: nothing else touches the environment while the child runs.
  int status = std::system(cmd.c_str());  // NOLINT(concurrency-mt-unsafe)
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The seven rows of docs/scenarios.md's table of 2014 flaws.
const std::set<std::string> kSeedFlaws = {
    "lock left held when listing fails",        "a deleted controller crashes the watch loop",
    "sequential creates under one global lock", "create and delete errors ignored",
    "double creation when the pod list lags",   "stale resync overwriting a newer watch event",
    "scale-down deletes whatever comes first"};

class FlawScenariosTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("rcsim_flaws_" + std::to_string(getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
  const std::string flaws_ = std::string(RCSIM_SOURCE_DIR) + "/scenarios/flaws";
};

TEST_F(FlawScenariosTest, EveryFlawFailsOn2014WithItsNamedExpectationAndPassesOnModern) {
  const fs::path report = dir_ / "report";
  const int code =
      Rcsim("run " + flaws_ + " --manager both --jobs 2 --report " + report.string(), dir_ / "out");
  const std::string out = Slurp(dir_ / "out");
  EXPECT_EQ(code, 1) << "the 2014 runs fail\n" << out;
  EXPECT_NE(out.find("managers side by side (modern | 2014):"), std::string::npos) << out;

  json pairs = json::parse(Slurp(report / "managers.json"));
  ASSERT_TRUE(pairs.is_array());
  std::set<std::string> reproduced;
  for (const json& p : pairs) {
    const std::string name = p.at("scenario");
    EXPECT_EQ(p.at("modern").at("verdict"), "PASS") << name << ": " << p.dump();
    EXPECT_EQ(p.at("2014").at("verdict"), "FAIL") << name << ": " << p.dump();
    EXPECT_EQ(p.at("2014").at("scenario"), name + ".2014");
    const json& failed = p.at("2014").at("failed");
    EXPECT_FALSE(failed.empty()) << name;
    for (const json& f : failed) {
      // Only the expectations naming the flaw fail: the others hold on both managers.
      json e = json::parse(f.get<std::string>(), nullptr, /*allow_exceptions=*/false);
      ASSERT_TRUE(e.is_object()) << name << ": " << f;
      ASSERT_TRUE(e.contains("flaw")) << name << " failed an expectation that names no flaw: " << f;
      reproduced.insert(e.at("flaw").get<std::string>());
    }
  }
  EXPECT_EQ(pairs.size(), kSeedFlaws.size());
  EXPECT_EQ(reproduced, kSeedFlaws);

  // Both verdicts in JUnit and the HTML report's table.
  const std::string junit = Slurp(report / "junit.xml");
  EXPECT_NE(junit.find("name=\"flaw-lock-left-held\""), std::string::npos);
  EXPECT_NE(junit.find("name=\"flaw-lock-left-held.2014\""), std::string::npos);
  const std::string html = Slurp(report / "index.html");
  EXPECT_NE(html.find("<table class=\"managers\">"), std::string::npos);
  // Paired plots: one <div class="manager-pair"> per flaw scenario, a plot for each manager.
  std::size_t pairs_html = 0;
  for (std::size_t p = html.find("<div class=\"manager-pair\""); p != std::string::npos;
       p = html.find("<div class=\"manager-pair\"", p + 1))
    ++pairs_html;
  EXPECT_EQ(pairs_html, pairs.size());
  EXPECT_NE(html.find("data-manager=\"2014\""), std::string::npos);
  json run = json::parse(Slurp(report / "flaw-lock-left-held.2014.json"));
  EXPECT_EQ(run.at("manager_kind"), "2014");
  EXPECT_EQ(run.at("replay").get<std::string>().find("--manager 2014") != std::string::npos, true);
}

TEST_F(FlawScenariosTest, ModernManagerPassesThemAll) {
  EXPECT_EQ(Rcsim("run " + flaws_ + " --manager modern --quiet --jobs 2", dir_ / "out"), 0)
      << Slurp(dir_ / "out");
}

TEST_F(FlawScenariosTest, ReplayOf2014RunReproducesItsFailure) {
  const int code = Rcsim("replay " + flaws_ + "/lock-left-held.json --manager 2014", dir_ / "out");
  const std::string out = Slurp(dir_ / "out");
  EXPECT_EQ(code, 1) << out;
  EXPECT_NE(out.find("returns with the lock held"), std::string::npos) << out;
  EXPECT_NE(out.find("FAIL  flaw-lock-left-held.2014"), std::string::npos) << out;
}

TEST_F(FlawScenariosTest, ManagerKindInTheScenarioSelectsTheBaseline) {
  std::ofstream(dir_ / "s.json") << R"({"name": "kind-2014", "manager": {"kind": "2014"},
    "controllers": [{"name": "web", "replicas": 3}],
    "expect": [{"final": {"controller": "web", "running": 3}},
               {"status_matches": {"controller": "web"}}]})";
  const int code =
      Rcsim("run " + (dir_ / "s.json").string() + " --report " + (dir_ / "r").string(), dir_ / "out");
  EXPECT_EQ(code, 1) << "the 2014 manager writes no status: " << Slurp(dir_ / "out");
  json run = json::parse(Slurp(dir_ / "r" / "kind-2014.json"));
  EXPECT_EQ(run.at("manager_kind"), "2014");
  EXPECT_EQ(run.at("manager_from_flag"), false);
  // --manager modern overrides the file: it passes, under the name kind-2014.modern.
  EXPECT_EQ(Rcsim("run " + (dir_ / "s.json").string() + " --manager modern", dir_ / "out2"), 0);
  EXPECT_NE(Slurp(dir_ / "out2").find("PASS  kind-2014.modern"), std::string::npos) << Slurp(dir_ / "out2");
}

TEST_F(FlawScenariosTest, BadManagerKindIsRefusedWithItsPointer) {
  std::ofstream(dir_ / "bad.json") << R"({"name": "bad", "manager": {"kind": "2015"},
    "controllers": [], "expect": []})";
  EXPECT_EQ(Rcsim("validate " + (dir_ / "bad.json").string(), dir_ / "out"), 2);
  EXPECT_NE(Slurp(dir_ / "out").find("/manager/kind"), std::string::npos) << Slurp(dir_ / "out");
  EXPECT_EQ(Rcsim("run " + (dir_ / "bad.json").string() + " --manager 2015", dir_ / "out2"), 2);
  EXPECT_NE(Slurp(dir_ / "out2").find("--manager: must be modern, 2014 or both"), std::string::npos);
}

}  // namespace
}  // namespace rcsim
