#include "harness/scenario_expand.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace rcsim {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::StartsWith;

class ScenarioExpandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("rcsim_expand_" + std::to_string(getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "shared");
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }
  std::string ErrorOf(const std::string& path) {
    Result<std::vector<Scenario>> r = LoadScenarioFileRuns(path);
    return r.ok() ? "" : r.status().message();
  }
  fs::path dir_;
};

TEST_F(ScenarioExpandTest, IncludeGivesDefaultsFieldByField) {
  Write("shared/a.yaml", "cluster: {nodes: 20, api_latency: 3ms}\nmanager: {workers: 8}\n");
  Write("shared/b.json", R"({"manager": {"workers": 9, "resync": "10s"}})");
  std::string f = Write("s.yaml",
                        "name: s\ninclude: [shared/a.yaml, shared/b.json]\ncluster: {nodes: 30}\n"
                        "controllers: []\nexpect: []\n");
  Result<std::vector<Scenario>> r = LoadScenarioFileRuns(f);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 1u);
  const Scenario& s = (*r)[0];
  EXPECT_EQ(s.cluster.nodes, 30);                                      // own field wins
  EXPECT_EQ(s.cluster.api_latency.min, std::chrono::milliseconds(3));  // from a.yaml
  EXPECT_EQ(s.manager.workers, 9);                                     // the later include wins
  EXPECT_EQ(s.manager.resync, std::chrono::seconds(10));
  EXPECT_EQ(s.file, f);
}

TEST_F(ScenarioExpandTest, ErrorsInIncludedValuesNameTheIncludedFile) {
  std::string shared = Write("shared/a.yaml", "cluster:\n  nodes: 0\n");
  std::string f =
      Write("s.json", R"({"name": "s", "include": "shared/a.yaml", "controllers": [], "expect": []})");
  EXPECT_EQ(ErrorOf(f), shared + ":2:3: /cluster/nodes: must be at least 1, got 0");
  Write("shared/a.yaml", "controllers: []\n");
  EXPECT_THAT(ErrorOf(f), StartsWith(shared + ":1:1: /controllers: unknown key in an included file"));
  Write("shared/a.yaml", "include: x.yaml\n");
  EXPECT_THAT(ErrorOf(f), HasSubstr("/include: includes do not nest"));
  f = Write("s.json", R"({"name": "s", "include": "shared/missing.yaml", "controllers": [], "expect": []})");
  EXPECT_THAT(ErrorOf(f), StartsWith(f + ": /include: cannot read the included file"));
}

const char* kMatrix = R"(name: web
matrix:
  replicas: [5, 20]
  rate: [0.1, 0.5]
controllers:
  - {name: web, replicas: "${replicas}"}
events:
  - api_faults: {for: 10s, error_rate: "${rate}"}
expect:
  - final: {controller: web, running: "${replicas}"}
)";

TEST_F(ScenarioExpandTest, MatrixExpandsIntoNamedTypedRuns) {
  std::string f = Write("m.yaml", kMatrix);
  Result<std::vector<Scenario>> r = LoadScenarioFileRuns(f);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 4u);
  EXPECT_EQ((*r)[0].name, "web-rate-0.1-replicas-5");
  EXPECT_EQ((*r)[1].name, "web-rate-0.1-replicas-20");
  EXPECT_EQ((*r)[3].name, "web-rate-0.5-replicas-20");
  EXPECT_EQ((*r)[3].controllers[0].replicas, 20);
  EXPECT_DOUBLE_EQ(std::get<ApiFaultsAction>((*r)[3].events[0].action).error_rate, 0.5);
  EXPECT_EQ((*r)[3].file, f + "#web-rate-0.5-replicas-20");
  // One run selected, as `rcsim replay FILE#RUN` does.
  Result<Scenario> one = LoadScenarioFile(f + "#web-rate-0.1-replicas-20");
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  EXPECT_EQ(one->controllers[0].replicas, 20);
  EXPECT_THAT(LoadScenarioFile(f).status().message(), HasSubstr("/matrix: expands to 4 runs"));
  EXPECT_THAT(ErrorOf(f + "#nope"), HasSubstr("/matrix: no run named \"nope\""));
}

TEST_F(ScenarioExpandTest, MatrixMistakesAreRefused) {
  std::string text = kMatrix;
  std::string f = Write("m.yaml", std::string(text).replace(text.find("${rate}"), 7, "${rat}"));
  EXPECT_THAT(ErrorOf(f), HasSubstr("/events/0/api_faults/error_rate: unknown matrix parameter \"rat\""));
  f = Write("m.yaml",
            std::string(text).replace(text.find("  rate: [0.1, 0.5]"), 18, "  rate: [0.1, 0.5]\n  x: [1]"));
  EXPECT_THAT(ErrorOf(f), HasSubstr("/matrix/x: never used"));
  f = Write("m.yaml", std::string(text).replace(text.find("[5, 20]"), 7, "[]"));
  EXPECT_THAT(ErrorOf(f), HasSubstr("/matrix/replicas: expected a non-empty list of values"));
  f = Write("m.yaml", std::string(text).replace(text.find("[5, 20]"), 7, "[5, -1]"));
  EXPECT_THAT(
      ErrorOf(f),
      HasSubstr(
          "/controllers/0/replicas: must not be negative, got -1 (matrix run web-rate-0.1-replicas--1)"));
  std::string big = "name: b\nmatrix:\n";
  for (const char* p : {"a", "b", "c", "d", "e"}) big += std::string("  ") + p + ": [0, 1, 2, 3, 4, 5, 6]\n";
  big += "controllers: []\nexpect: []\ndescription: \"${a}${b}${c}${d}${e}\"\n";
  f = Write("big.yaml", big);
  EXPECT_THAT(ErrorOf(f), HasSubstr("/matrix: expands to more than 10000 runs"));
}

}  // namespace
}  // namespace rcsim
