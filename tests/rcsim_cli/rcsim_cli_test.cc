// Runs the built rcsim binary as a user or CI would, and checks its exit codes, messages and reports.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>

namespace rcsim {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::HasSubstr;

struct Output {
  int code = -1;
  std::string out;
  std::string err;
};

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

class RcsimCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("rcsim_cli_" + std::to_string(getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs `rcsim <args>` (args already shell-quoted where needed).
  Output Rcsim(const std::string& args) {
    fs::path out = dir_ / "stdout.txt", err = dir_ / "stderr.txt";
    std::string cmd = std::string(RCSIM_BIN) + " " + args + " >" + out.string() + " 2>" + err.string();
    // NOLINTNEXTLINE(concurrency-mt-unsafe): the test runs its commands from one thread
    int status = std::system(cmd.c_str());
    Output o;
    o.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    o.out = Slurp(out);
    o.err = Slurp(err);
    return o;
  }

  std::string Write(const std::string& name, const std::string& text) {
    fs::path p = dir_ / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
  }

  static std::string LastLine(const std::string& s) {
    std::string t = s;
    while (!t.empty() && t.back() == '\n') t.pop_back();
    std::size_t nl = t.rfind('\n');
    return nl == std::string::npos ? t : t.substr(nl + 1);
  }

  fs::path dir_;
};

const char* kPassing = R"({"name": "small-pass", "seed": 3,
  "controllers": [{"name": "web", "replicas": 4}],
  "events": [{"at": "10s", "kill_pods": {"selector": {"app": "web"}, "count": 2}},
             {"at": "12s", "scale": {"controller": "web", "replicas": 6}}],
  "expect": [{"converged": {"controller": "web", "after": "12s", "within": "10s"}},
             {"final": {"controller": "web", "running": 6}}]})";

const char* kFailing = R"({"name": "small-fail", "seed": 5,
  "controllers": [{"name": "web", "replicas": 4}],
  "events": [{"at": "5s", "restart_manager": {"down": "1s"}}],
  "expect": [{"never_above": {"controller": "web", "active": 2}}]})";

TEST_F(RcsimCliTest, PassingRunExitsZeroWithSummaryLast) {
  std::string f = Write("pass.json", kPassing);
  Output o = Rcsim("run " + f);
  EXPECT_EQ(o.code, 0) << o.out << o.err;
  EXPECT_THAT(o.out, HasSubstr("PASS  small-pass  seed=3  converged="));
  EXPECT_THAT(o.out, HasSubstr("virtual="));
  EXPECT_THAT(o.out, HasSubstr("wall="));
  EXPECT_EQ(LastLine(o.out), "1 passed, 0 failed");
  // Not a terminal: no progress bar.
  EXPECT_EQ(o.out.find('\r'), std::string::npos);
}

TEST_F(RcsimCliTest, FailingRunExitsOneAndPrintsReplayCommand) {
  std::string f = Write("fail.json", kFailing);
  Output o = Rcsim("run " + f);
  EXPECT_EQ(o.code, 1) << o.out << o.err;
  EXPECT_THAT(o.out, HasSubstr("FAIL  small-fail  seed=5"));
  EXPECT_THAT(o.out, HasSubstr("replay: rcsim replay " + f + " --seed 5"));
  EXPECT_EQ(LastLine(o.out), "0 passed, 1 failed");
}

TEST_F(RcsimCliTest, SeedOverrideAndQuiet) {
  std::string f = Write("pass.json", kPassing);
  Output o = Rcsim("run " + f + " --seed 99 --quiet");
  EXPECT_EQ(o.code, 0);
  EXPECT_EQ(o.out, "1 passed, 0 failed\n");
  o = Rcsim("run " + f + " --seed=99");
  EXPECT_THAT(o.out, HasSubstr("seed=99"));
}

TEST_F(RcsimCliTest, ReplayPrintsTheTrace) {
  std::string f = Write("fail.json", kFailing);
  Output o = Rcsim("replay " + f + " --seed 5");
  EXPECT_EQ(o.code, 1);
  // Lines of "<virtual seconds> <actor> <event>".
  EXPECT_TRUE(std::regex_search(o.out, std::regex(R"(\n\d+\.\d{6} scenario event \{)")))
      << o.out.substr(0, 2000);
  EXPECT_TRUE(std::regex_search(o.out, std::regex(R"(\n\d+\.\d{6} manager )")));
  // The cluster components: the scheduler binds, the node agents admit and start.
  EXPECT_TRUE(std::regex_search(o.out, std::regex(R"(\n\d+\.\d{6} scheduler bind )")));
  EXPECT_TRUE(std::regex_search(o.out, std::regex(R"(\n\d+\.\d{6} node-\d+ start )")));
  Output again = Rcsim("replay " + f + " --seed 5");
  EXPECT_EQ(again.out.substr(0, again.out.rfind("wall=")), o.out.substr(0, o.out.rfind("wall=")));
}

struct BadInput {
  const char* name;
  const char* doc;
  const char* pointer;
};

class RcsimBadInputTest : public RcsimCliTest, public ::testing::WithParamInterface<BadInput> {};

TEST_P(RcsimBadInputTest, ExitsTwoWithFileAndPointer) {
  std::string f = Write("bad.json", GetParam().doc);
  std::string ok = Write("ok.json", kPassing);
  Output o = Rcsim("run " + ok + " " + f);
  EXPECT_EQ(o.code, 2) << o.out << o.err;
  EXPECT_THAT(o.err, HasSubstr(f + ": " + GetParam().pointer + ": "));
  // Refused before anything ran.
  EXPECT_THAT(o.out, Not(HasSubstr("PASS")));
}

#define BASE R"("name": "bad", "controllers": [{"name": "web", "replicas": 2}])"
INSTANTIATE_TEST_SUITE_P(
    Cli, RcsimBadInputTest,
    ::testing::Values(
        BadInput{"unknown_key", "{" BASE R"(, "expect": [], "colour": "blue"})", "/colour"},
        BadInput{"wrong_type", "{" BASE R"(, "expect": [], "seed": "seven"})", "/seed"},
        BadInput{"negative_count", "{" BASE R"(, "expect": [], "events": [{"kill_pods": {"count": -1}}]})",
                 "/events/0/kill_pods/count"},
        BadInput{"fraction_out_of_range",
                 "{" BASE R"(, "expect": [], "events": [{"restart_manager": {}}, {"restart_manager": {}},
                              {"kill_pods": {"fraction": 1.5}}]})",
                 "/events/2/kill_pods/fraction"},
        BadInput{"unknown_controller",
                 "{" BASE R"(, "expect": [], "events": [{"scale": {"controller": "db", "replicas": 1}}]})",
                 "/events/0/scale/controller"},
        BadInput{"unparsable_duration", "{" BASE R"(, "expect": [], "duration": "ten minutes"})",
                 "/duration"},
        BadInput{"event_without_action", "{" BASE R"(, "expect": [], "events": [{"at": "1s"}]})",
                 "/events/0"},
        BadInput{
            "event_with_two_actions",
            "{" BASE
            R"(, "expect": [], "events": [{"restart_manager": {}, "partition_manager": {"for": "1s"}}]})",
            "/events/0"},
        BadInput{"missing_expect", "{" BASE "}", "/expect"}, BadInput{"syntax_error", "{\"name\": ", "/"}),
    [](const ::testing::TestParamInfo<BadInput>& info) { return std::string(info.param.name); });

TEST_F(RcsimCliTest, UsageErrorsExitTwo) {
  std::string f = Write("pass.json", kPassing);
  EXPECT_EQ(Rcsim("").code, 2);
  EXPECT_EQ(Rcsim("frobnicate").code, 2);
  EXPECT_EQ(Rcsim("run").code, 2);
  EXPECT_EQ(Rcsim("run " + f + " --jobs abc").code, 2);
  EXPECT_EQ(Rcsim("run " + f + " --tier medium").code, 2);
  EXPECT_EQ(Rcsim("run " + f + " --filter '('").code, 2);
  EXPECT_EQ(Rcsim("run " + f + " --bogus").code, 2);
  EXPECT_EQ(Rcsim("run " + (dir_ / "missing.json").string()).code, 2);
  EXPECT_EQ(Rcsim("replay").code, 2);
  Output help = Rcsim("run --help");
  EXPECT_EQ(help.code, 0);
  EXPECT_THAT(help.out, HasSubstr("usage: rcsim run PATH..."));
  // Every command's --help is the usage, never "--help: missing value" (explore said so, exit 2).
  for (const char* command : {"explore", "replay", "validate", "schema", "convert", "report", "bench"}) {
    Output h = Rcsim(std::string(command) + " --help");
    EXPECT_EQ(h.code, 0) << command << ": " << h.err;
    EXPECT_THAT(h.out, HasSubstr("rcsim explore FILE...")) << command;
  }
}

TEST_F(RcsimCliTest, TierAndFilterSelect) {
  Write("suite/a/pass.json", kPassing);
  Write("suite/b/fail.json", kFailing);
  std::string slow = kPassing;
  slow.replace(slow.find("small-pass\""), 11, "slow-pass\", \"tier\": \"slow\"");
  Write("suite/b/slow.json", slow);
  Output o = Rcsim("run " + (dir_ / "suite").string() + " --filter pass --tier fast");
  EXPECT_EQ(o.code, 0) << o.out << o.err;
  EXPECT_EQ(LastLine(o.out), "1 passed, 0 failed");
  o = Rcsim("run " + (dir_ / "suite").string() + " --jobs 2");
  EXPECT_EQ(o.code, 1);
  EXPECT_EQ(LastLine(o.out), "2 passed, 1 failed");
}

int Count(const std::string& haystack, const std::string& needle) {
  int n = 0;
  for (std::size_t p = haystack.find(needle); p != std::string::npos; p = haystack.find(needle, p + 1)) ++n;
  return n;
}

TEST_F(RcsimCliTest, ReportsHoldJsonJunitAndPlots) {
  Write("suite/pass.json", kPassing);
  std::string fail = Write("suite/fail.json", kFailing);
  fs::path report = dir_ / "report";
  Output o = Rcsim("run " + (dir_ / "suite").string() + " --report " + report.string());
  EXPECT_EQ(o.code, 1) << o.out << o.err;

  // JSON per scenario.
  json pass = json::parse(Slurp(report / "small-pass.json"));
  EXPECT_EQ(pass["verdict"], "PASS");
  EXPECT_EQ(pass["seed"], 3);
  EXPECT_EQ(pass["expectations"].size(), 2u);
  EXPECT_TRUE(pass["expectations"][0]["measured"].is_number());
  EXPECT_TRUE(pass["api_calls"].contains("create"));
  EXPECT_GE(pass["peak_active"].get<int>(), 4);
  EXPECT_EQ(pass["trace"]["digest"].get<std::string>().size(), 16u);
  EXPECT_EQ(pass["controllers"][0]["series"]["running"].size(), pass["controllers"][0]["series"]["t"].size());
  json failed = json::parse(Slurp(report / "small-fail.json"));
  EXPECT_EQ(failed["verdict"], "FAIL");
  EXPECT_EQ(failed["expectations"][0]["measured"], 4);
  EXPECT_THAT(failed["replay"].get<std::string>(), HasSubstr("--seed 5"));

  // JUnit: parses, 2 test cases, 1 failure carrying the expectation and the replay command.
  std::string junit = Slurp(report / "junit.xml");
  // NOLINTNEXTLINE(concurrency-mt-unsafe): the test runs its commands from one thread
  if (std::system("command -v xmllint >/dev/null 2>&1") == 0) {
    std::string cmd = "xmllint --noout " + (report / "junit.xml").string();
    // NOLINTNEXTLINE(concurrency-mt-unsafe): the test runs its commands from one thread
    EXPECT_EQ(std::system(cmd.c_str()), 0) << junit;
    std::string xpath = "xmllint --xpath 'count(//testcase)' " + (report / "junit.xml").string() + " > " +
                        (dir_ / "count.txt").string();
    // NOLINTNEXTLINE(concurrency-mt-unsafe): the test runs its commands from one thread
    ASSERT_EQ(std::system(xpath.c_str()), 0);
    EXPECT_EQ(Slurp(dir_ / "count.txt").substr(0, 1), "2");
    xpath = "xmllint --xpath 'count(//testcase/failure)' " + (report / "junit.xml").string() + " > " +
            (dir_ / "count.txt").string();
    // NOLINTNEXTLINE(concurrency-mt-unsafe): the test runs its commands from one thread
    ASSERT_EQ(std::system(xpath.c_str()), 0);
    EXPECT_EQ(Slurp(dir_ / "count.txt").substr(0, 1), "1");
  }
  EXPECT_THAT(junit, HasSubstr("<testsuite name=\"rcsim\" tests=\"2\" failures=\"1\""));
  EXPECT_EQ(Count(junit, "<testcase "), 2);
  EXPECT_EQ(Count(junit, "<failure "), 1);
  EXPECT_THAT(junit, HasSubstr("never_above"));
  EXPECT_THAT(junit, HasSubstr("rcsim replay " + fail + " --seed 5"));

  // HTML: self-contained, one plot per scenario with its three series and one mark per event,
  // failing scenarios first.
  std::string html = Slurp(report / "index.html");
  EXPECT_EQ(Count(html, "<svg class=\"plot\""), 2);
  EXPECT_EQ(Count(html, "<polyline class=\"series desired\""), 2);
  EXPECT_EQ(Count(html, "<polyline class=\"series active\""), 2);
  EXPECT_EQ(Count(html, "<polyline class=\"series running\""), 2);
  EXPECT_EQ(Count(html, "<g class=\"event-mark\""), 3);  // 2 events + 1 event
  EXPECT_LT(html.find("data-scenario=\"small-fail\""), html.find("data-scenario=\"small-pass\""));
  EXPECT_EQ(html.find("src=\"http"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_THAT(html, HasSubstr("1 passed, 1 failed"));
}

// Removes the wall-clock fields, which are the only ones allowed to differ between runs.
void StripWall(json& j) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end();) {
      if (it.key().rfind("wall_", 0) == 0) {
        it = j.erase(it);
      } else {
        StripWall(*it);
        ++it;
      }
    }
  } else if (j.is_array()) {
    for (json& e : j) StripWall(e);
  }
}

TEST_F(RcsimCliTest, SameSeedGivesIdenticalReportsApartFromWallFields) {
  std::string f = Write("pass.json", kPassing);
  ASSERT_EQ(Rcsim("run " + f + " --report " + (dir_ / "r1").string()).code, 0);
  ASSERT_EQ(Rcsim("run " + f + " --jobs 2 --report " + (dir_ / "r2").string()).code, 0);
  json a = json::parse(Slurp(dir_ / "r1" / "small-pass.json"));
  json b = json::parse(Slurp(dir_ / "r2" / "small-pass.json"));
  EXPECT_TRUE(a.contains("wall_seconds"));
  StripWall(a);
  StripWall(b);
  EXPECT_EQ(a, b);
  ASSERT_EQ(Rcsim("run " + f + " --seed 4 --report " + (dir_ / "r3").string()).code, 0);
  json c = json::parse(Slurp(dir_ / "r3" / "small-pass.json"));
  EXPECT_NE(a["trace"]["digest"], c["trace"]["digest"]);
}

const char* kPassingYaml = R"(name: small-pass
seed: 3
controllers:
  - {name: web, replicas: 4}
events:
  - at: 10s
    kill_pods: {selector: {app: web}, count: 2}
  - at: 12s
    scale: {controller: web, replicas: 6}
expect:
  - converged: {controller: web, after: 12s, within: 10s}
  - final: {controller: web, running: 6}
)";

TEST_F(RcsimCliTest, YamlScenarioRunsLikeItsJson) {
  std::string j = Write("j/pass.json", kPassing);
  std::string y = Write("y/pass.yaml", kPassingYaml);
  ASSERT_EQ(Rcsim("run " + j + " --report " + (dir_ / "rj").string()).code, 0);
  Output o = Rcsim("run " + (dir_ / "y").string() + " --report " + (dir_ / "ry").string());
  ASSERT_EQ(o.code, 0) << o.out << o.err;
  json a = json::parse(Slurp(dir_ / "rj" / "small-pass.json"));
  json b = json::parse(Slurp(dir_ / "ry" / "small-pass.json"));
  EXPECT_EQ(a["trace"]["digest"], b["trace"]["digest"]);
}

TEST_F(RcsimCliTest, ValidateChecksWithoutRunning) {
  std::string ok = Write("v/ok.json", kPassing);
  Write("v/ok2.yml", std::string(kPassingYaml).replace(6, 10, "small-yaml"));
  Output o = Rcsim("validate " + (dir_ / "v").string());
  EXPECT_EQ(o.code, 0) << o.out << o.err;
  EXPECT_EQ(o.out, "2 scenario files valid\n");
  std::string bad = Write("v/bad.yaml", "name: bad\ncontrollers: []\nexpect:\n  - final: {controller: db}\n");
  std::string bad2 = Write("v/bad2.json", R"({"name": "x", "controllers": [], "expect": [], "seed": -1})");
  o = Rcsim("validate " + (dir_ / "v").string());
  EXPECT_EQ(o.code, 2);
  EXPECT_THAT(o.err, HasSubstr(bad + ":4:13: /expect/0/final/controller: unknown controller \"db\""));
  EXPECT_THAT(o.err, HasSubstr(bad2 + ": /seed: must not be negative"));
  EXPECT_THAT(o.err, HasSubstr("2 of 4 scenario files invalid"));
  EXPECT_EQ(o.out.find("PASS"), std::string::npos);
  EXPECT_EQ(Rcsim("validate").code, 2);
}

TEST_F(RcsimCliTest, SchemaIsDraft202012Json) {
  Output o = Rcsim("schema");
  ASSERT_EQ(o.code, 0) << o.err;
  json schema = json::parse(o.out);
  EXPECT_EQ(schema["$schema"], "https://json-schema.org/draft/2020-12/schema");
  EXPECT_TRUE(schema["$defs"]["event"]["properties"].contains("kill_pods"));
}

// Runs python3 tests/rcsim_cli/schema_check.py; returns its exit code (77: the validator is missing).
int SchemaCheck(const std::string& schema, const std::string& expect, const std::vector<std::string>& files,
                std::string* out) {
  std::string cmd = "python3 " + std::string(RCSIM_SOURCE_DIR) + "/tests/rcsim_cli/schema_check.py " +
                    schema + " " + expect;
  for (const std::string& f : files) cmd += " '" + f + "'";
  cmd += " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  char buf[4096];
  for (std::size_t n; (n = fread(buf, 1, sizeof(buf), p)) > 0;) out->append(buf, n);
  int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::vector<std::string> BuiltInScenarios(const std::string& ext) {
  std::vector<std::string> files;
  for (const char* dir : {"scenarios", "docs/examples"}) {
    for (const auto& e : fs::recursive_directory_iterator(fs::path(RCSIM_SOURCE_DIR) / dir)) {
      if (e.path().extension() == ext) files.push_back(e.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST_F(RcsimCliTest, GeneratedSchemaAcceptsEveryBuiltInScenario) {
  Output schema = Rcsim("schema");
  ASSERT_EQ(schema.code, 0);
  std::string path = Write("schema.json", schema.out);
  std::vector<std::string> files = BuiltInScenarios(".json");
  std::vector<std::string> yaml = BuiltInScenarios(".yaml");
  ASSERT_GE(files.size(), 30u);
  ASSERT_GE(yaml.size(), 8u);
  files.insert(files.end(), yaml.begin(), yaml.end());
  std::string out;
  int rc = SchemaCheck(path, "valid", files, &out);
  if (rc == 77) GTEST_SKIP() << out;
  EXPECT_EQ(rc, 0) << out;
}

// Structural faults: both the parser and the schema must refuse each. (Cross-field rules - unknown
// controllers, `at` after `duration`, min above max - are the parser's alone.)
TEST_F(RcsimCliTest, MalformedInputsAreRefusedByParserAndSchema) {
  std::string schema = Write("schema.json", Rcsim("schema").out);
  const std::vector<std::pair<const char*, const char*>> cases = {
      {"unknown_key", "{" BASE R"(, "expect": [], "colour": "blue"})"},
      {"wrong_type", "{" BASE R"(, "expect": [], "seed": "seven"})"},
      {"negative_seed", "{" BASE R"(, "expect": [], "seed": -1})"},
      {"negative_count", "{" BASE R"(, "expect": [], "events": [{"kill_pods": {"count": -1}}]})"},
      {"fraction_out_of_range", "{" BASE R"(, "expect": [], "events": [{"kill_pods": {"fraction": 1.5}}]})"},
      {"count_and_fraction",
       "{" BASE R"(, "expect": [], "events": [{"kill_pods": {"count": 1, "fraction": 0.5}}]})"},
      {"all_false", "{" BASE R"(, "expect": [], "events": [{"kill_pods": {"all": false}}]})"},
      {"unparsable_duration", "{" BASE R"(, "expect": [], "duration": "ten minutes"})"},
      {"zero_duration", "{" BASE R"(, "expect": [], "duration": "0s"})"},
      {"duration_number", "{" BASE R"(, "expect": [], "events": [{"at": 30, "restart_manager": {}}]})"},
      {"event_without_action", "{" BASE R"(, "expect": [], "events": [{"at": "1s"}]})"},
      {"event_with_two_actions",
       "{" BASE
       R"(, "expect": [], "events": [{"restart_manager": {}, "partition_manager": {"for": "1s"}}]})"},
      {"unknown_event", "{" BASE R"(, "expect": [], "events": [{"explode": {}}]})"},
      {"missing_expect", "{" BASE "}"},
      {"missing_name", R"({"controllers": [], "expect": []})"},
      {"bad_name", R"({"name": "Bad Name", "controllers": [], "expect": []})"},
      {"bad_tier", "{" BASE R"(, "expect": [], "tier": "medium"})"},
      {"too_many_nodes", "{" BASE R"(, "expect": [], "cluster": {"nodes": 100001}})"},
      {"too_many_replicas",
       R"({"name": "b", "controllers": [{"name": "w", "replicas": 10000001}], "expect": []})"},
      {"empty_selector", R"({"name": "b", "controllers": [{"name": "w", "selector": {}}], "expect": []})"},
      {"bad_label_key",
       R"({"name": "b", "controllers": [{"name": "w", "selector": {"a b": "x"}}], "expect": []})"},
      {"no_containers",
       R"({"name": "b", "controllers": [{"name": "w", "template": {"spec": {"containers": []}}}], "expect": []})"},
      {"restart_never",
       R"({"name": "b", "controllers": [{"name": "w", "template": {"spec": {"restartPolicy": "Never"}}}], "expect": []})"},
      {"api_faults_without_for",
       "{" BASE R"(, "expect": [], "events": [{"api_faults": {"error_rate": 0.1}}]})"},
      {"api_faults_no_fault", "{" BASE R"(, "expect": [], "events": [{"api_faults": {"for": "1s"}}]})"},
      {"unknown_verb",
       "{" BASE
       R"(, "expect": [], "events": [{"api_faults": {"for": "1s", "error_rate": 0.1, "verbs": ["post"]}}]})"},
      {"duplicate_verb",
       "{" BASE
       R"(, "expect": [], "events": [{"api_faults": {"for": "1s", "error_rate": 0.1, "verbs": ["list", "list"]}}]})"},
      {"scale_without_replicas", "{" BASE R"(, "expect": [], "events": [{"scale": {"controller": "web"}}]})"},
      {"update_nothing",
       "{" BASE R"(, "expect": [], "events": [{"update_controller": {"controller": "web"}}]})"},
      {"node_and_count",
       "{" BASE R"(, "expect": [], "events": [{"fail_node": {"node": "node-1", "count": 1}}]})"},
      {"expectation_two_kinds",
       "{" BASE
       R"(, "expect": [{"final": {"controller": "web"}, "status_matches": {"controller": "web"}}]})"},
      {"expectation_empty", "{" BASE R"(, "expect": [{}]})"},
      {"negative_at_most", "{" BASE R"(, "expect": [{"api_calls": {"at_most": -1}}]})"},
      {"not_an_object", "[1, 2]"},
  };
  std::vector<std::string> files;
  for (const auto& [name, doc] : cases) {
    std::string f = Write(std::string("bad/") + name + ".json", doc);
    files.push_back(f);
    Output o = Rcsim("validate " + f);
    EXPECT_EQ(o.code, 2) << name << ": " << o.out << o.err;
    EXPECT_THAT(o.err, HasSubstr(f + ": /")) << name;
  }
  std::string out;
  int rc = SchemaCheck(schema, "invalid", files, &out);
  if (rc == 77) GTEST_SKIP() << out;
  EXPECT_EQ(rc, 0) << out;
}

std::map<std::string, std::string> Digests(const fs::path& report) {
  std::map<std::string, std::string> d;
  for (const auto& e : fs::directory_iterator(report)) {
    std::string name = e.path().filename().string();
    if (e.path().extension() != ".json" || name == "runs.json" || name == "swarm.json") continue;
    json j = json::parse(Slurp(e.path()));
    d[j["scenario"].get<std::string>()] = j["trace"]["digest"].get<std::string>();
  }
  return d;
}

// `rcsim convert` turns every built-in scenario into YAML that `rcsim validate` accepts; the
// documentation examples' checked-in YAML twins, the twins `rcsim convert` makes of their JSON
// scenarios and those JSON scenarios give the same runs (same trace digests). (That every built-in
// scenario's YAML twin is the same document, so the same scenario, is checked in-process by
// ScenarioTest.EveryBuiltInScenarioReadsTheSameFromItsYamlTwin: running the whole fast tier in both
// forms took minutes under ASan.)
TEST_F(RcsimCliTest, YamlTwinsOfBuiltInScenariosGiveTheSameDigests) {
  std::set<std::string> examples;
  for (const std::string& f : BuiltInScenarios(".yaml")) {
    if (fs::path(f).parent_path().filename() == "examples") examples.insert(fs::path(f).stem().string());
  }
  EXPECT_GE(examples.size(), 8u);
  // Its 25 s per run under ASan at -O0 were most of this test; its twin is compared as a document.
  examples.erase("many-controllers-parallel");
  int converted = 0;
  for (const std::string& f : BuiltInScenarios(".json")) {
    Output o = Rcsim("convert " + f);
    ASSERT_EQ(o.code, 0) << f << o.err;
    const std::string stem = fs::path(f).stem().string();
    Write("yaml/" + stem + ".yaml", o.out);
    ++converted;
    if (examples.count(stem) != 0) {  // a documentation example: run in both forms below
      Write("rj/" + stem + ".json", Slurp(f));
      Write("ry/" + stem + ".yaml", o.out);
    }
  }
  EXPECT_GE(converted, 28);
  EXPECT_EQ(Rcsim("validate " + (dir_ / "yaml").string()).code, 0);
  std::string src = RCSIM_SOURCE_DIR;
  std::map<std::string, std::map<std::string, std::string>> digests;
  for (const std::string& stem : examples) {
    Write("rd/" + stem + ".yaml", Slurp(src + "/docs/examples/" + stem + ".yaml"));
  }
  for (const auto& [name, dir] : std::map<std::string, std::string>{{"json", (dir_ / "rj").string()},
                                                                    {"yaml", (dir_ / "ry").string()},
                                                                    {"docs", (dir_ / "rd").string()}}) {
    Output o = Rcsim("run " + dir + " --quiet --report " + (dir_ / ("report-" + name)).string());
    ASSERT_EQ(o.code, 0) << name << o.out << o.err;
    digests[name] = Digests(dir_ / ("report-" + name));
  }
  EXPECT_EQ(digests["json"].size(), examples.size());
  EXPECT_EQ(digests["json"], digests["yaml"]);
  EXPECT_EQ(digests["json"], digests["docs"]);
}

// Removes what legitimately differs between a merged and an unsharded report: wall-clock values.
std::string StripWallText(const std::string& text) {
  std::string t = std::regex_replace(text, std::regex(R"(time="[^"]*")"), "time=\"\"");
  return std::regex_replace(t, std::regex(R"(class="wall">[^<]*<)"), "class=\"wall\"><");
}

std::set<std::pair<std::string, uint64_t>> RunsOf(const fs::path& report) {
  std::set<std::pair<std::string, uint64_t>> runs;
  json m = json::parse(Slurp(report / "runs.json"));
  for (const json& r : m["runs"]) runs.insert({r["scenario"].get<std::string>(), r["seed"].get<uint64_t>()});
  EXPECT_EQ(runs.size(), m["runs"].size());
  return runs;
}

const char* kTwoControllers = R"({"name": "two-controllers", "seed": 9,
  "controllers": [{"name": "web", "replicas": 3}, {"name": "api", "replicas": 2}],
  "events": [{"at": "5s", "scale": {"controller": "api", "replicas": 4}}],
  "expect": [{"converged": {"controller": "api", "after": "5s", "within": "10s"}},
             {"api_calls": {"verb": "create", "at_most": 100}}]})";

void WriteSuite(RcsimCliTest* t,
                const std::function<std::string(const std::string&, const std::string&)>& write) {
  (void)t;
  write("suite/pass.json", kPassing);
  write("suite/fail.json", kFailing);
  write("suite/two.json", kTwoControllers);
  write("suite/yaml.yaml", std::string(kPassingYaml).replace(6, 10, "small-yaml"));
}

// Every (scenario, seed) pair lands in exactly one shard, by count and by timings, and merging the
// shards gives the unsharded report (apart from wall-clock values).
TEST_F(RcsimCliTest, ShardsPartitionTheSuiteAndTheirMergeIsTheUnshardedReport) {
  WriteSuite(this, [&](const std::string& n, const std::string& t) { return Write(n, t); });
  std::string suite = (dir_ / "suite").string();
  for (std::string mode : {"", " --seeds 3"}) {
    SCOPED_TRACE(mode);
    fs::remove_all(dir_ / "full");
    ASSERT_EQ(Rcsim("run " + suite + mode + " --quiet --report " + (dir_ / "full").string()).code, 1);
    std::set<std::pair<std::string, uint64_t>> whole = RunsOf(dir_ / "full");
    ASSERT_EQ(whole.size(), mode.empty() ? 4u : 12u);
    for (const std::string& timings : {std::string(), " --timings " + (dir_ / "full").string()}) {
      SCOPED_TRACE(timings);
      std::set<std::pair<std::string, uint64_t>> seen;
      std::string shards;
      std::size_t total = 0;
      for (int k = 1; k <= 3; ++k) {
        fs::path out = dir_ / ("shard" + std::to_string(k));
        fs::remove_all(out);
        Output o = Rcsim("run " + suite + mode + timings + " --quiet --shard " + std::to_string(k) +
                         "/3 --report " + out.string());
        ASSERT_NE(o.code, 2) << o.err;
        std::set<std::pair<std::string, uint64_t>> mine = RunsOf(out);
        if (timings.empty()) {
          EXPECT_GE(mine.size(), whole.size() / 3);
          EXPECT_LE(mine.size(), (whole.size() + 2) / 3);
        }
        for (const auto& run : mine) EXPECT_TRUE(seen.insert(run).second) << run.first << " in two shards";
        total += mine.size();
        shards += " " + out.string();
      }
      EXPECT_EQ(seen, whole);
      EXPECT_EQ(total, whole.size());
      fs::remove_all(dir_ / "merged");
      Output m = Rcsim("report merge" + shards + " --out " + (dir_ / "merged").string());
      EXPECT_EQ(m.code, 1) << m.out << m.err;  // the suite has a failing run
      for (const auto& e : fs::directory_iterator(dir_ / "full")) {
        std::string name = e.path().filename().string();
        if (e.path().extension() == ".json" && name != "runs.json" && name != "swarm.json") {
          json a = json::parse(Slurp(e.path())), b = json::parse(Slurp(dir_ / "merged" / name));
          StripWall(a);
          StripWall(b);
          EXPECT_EQ(a, b) << name;
        }
      }
      EXPECT_EQ(StripWallText(Slurp(dir_ / "full" / "junit.xml")),
                StripWallText(Slurp(dir_ / "merged" / "junit.xml")));
      EXPECT_EQ(StripWallText(Slurp(dir_ / "full" / "index.html")),
                StripWallText(Slurp(dir_ / "merged" / "index.html")));
    }
  }
  EXPECT_EQ(Rcsim("run " + suite + " --shard 4/3").code, 2);
  EXPECT_EQ(Rcsim("run " + suite + " --shard 0/3").code, 2);
  EXPECT_EQ(Rcsim("run " + suite + " --timings " + (dir_ / "full").string()).code, 2);  // needs --shard
  EXPECT_EQ(Rcsim("report merge " + (dir_ / "shard1").string() + " " + (dir_ / "shard1").string() +
                  " --out " + (dir_ / "m2").string())
                .code,
            2);  // the same runs twice
}

// A change that slows convergence is flagged against the baseline, and fails the run when asked.
TEST_F(RcsimCliTest, BaselineFlagsASeededRegression) {
  std::string f = Write("s/pass.json", kPassing);
  ASSERT_EQ(Rcsim("run " + f + " --report " + (dir_ / "base").string()).code, 0);
  Output same = Rcsim("run " + f + " --baseline " + (dir_ / "base").string() + " --fail-on-regression");
  EXPECT_EQ(same.code, 0) << same.out << same.err;
  EXPECT_EQ(LastLine(same.out), "1 passed, 0 failed, 0 regressed");
  // The seeded regression: pods take 5x longer to start, so convergence takes longer.
  std::string slow = kPassing;
  slow.replace(slow.find("\"seed\": 3,"), 10,
               R"("seed": 3, "cluster": {"pod_start_latency": {"min": "4s", "max": "9s"}},)");
  Write("s/pass.json", slow);
  Output o = Rcsim("run " + f + " --baseline " + (dir_ / "base").string() + " --regression 1.2x --report " +
                   (dir_ / "now").string());
  EXPECT_EQ(o.code, 0) << o.out << o.err;  // flagged, not failed, without --fail-on-regression
  EXPECT_THAT(o.out, HasSubstr("REGRESSED  small-pass  seed=3  convergence "));
  EXPECT_EQ(LastLine(o.out), "1 passed, 0 failed, 1 regressed");
  std::string html = Slurp(dir_ / "now" / "index.html");
  EXPECT_THAT(html, HasSubstr("<table class=\"comparison\">"));
  EXPECT_THAT(html, HasSubstr("<svg class=\"paired\""));
  EXPECT_THAT(html, HasSubstr("<g class=\"pair regressed\" data-scenario=\"small-pass\""));
  std::string junit = Slurp(dir_ / "now" / "junit.xml");
  EXPECT_THAT(junit, HasSubstr("regressed against the baseline: convergence "));
  EXPECT_EQ(Count(junit, "<failure "), 0);  // flagged only
  EXPECT_EQ(Rcsim("run " + f + " --baseline " + (dir_ / "base").string() + " --fail-on-regression --report " +
                  (dir_ / "now2").string())
                .code,
            1);
  junit = Slurp(dir_ / "now2" / "junit.xml");
  EXPECT_EQ(Count(junit, "<failure "), 1);
  EXPECT_THAT(junit, HasSubstr("type=\"Regression\""));
  EXPECT_THAT(junit, HasSubstr("failures=\"1\""));
  EXPECT_EQ(Rcsim("run " + f + " --baseline " + (dir_ / "base").string() + " --regression 0.5x").code, 2);
  EXPECT_EQ(Rcsim("run " + f + " --baseline " + (dir_ / "missing").string()).code, 2);
}

TEST_F(RcsimCliTest, SwarmReportShowsDistributionAndFailingSeeds) {
  Write("s/pass.json", kPassing);
  Write("s/fail.json", kFailing);
  Output o = Rcsim("run " + (dir_ / "s").string() + " --seeds 4 --quiet --report " + (dir_ / "r").string());
  EXPECT_EQ(o.code, 1);
  EXPECT_THAT(o.out, HasSubstr("swarm small-pass: 4/4 passed (100.0%), convergence min "));
  EXPECT_THAT(o.out, HasSubstr(" p50 "));
  EXPECT_THAT(o.out, HasSubstr("swarm small-fail: 0/4 passed (0.0%)"));
  EXPECT_EQ(Count(o.out, "    replay: rcsim replay "), 4);
  json swarm = json::parse(Slurp(dir_ / "r" / "swarm.json"));
  ASSERT_EQ(swarm.size(), 2u);
  EXPECT_EQ(swarm[1]["scenario"], "small-pass");
  EXPECT_EQ(swarm[1]["pass_rate"], 1.0);
  EXPECT_TRUE(swarm[1]["convergence_seconds"]["p90"].is_number());
  EXPECT_EQ(swarm[0]["failing"].size(), 4u);
  std::string html = Slurp(dir_ / "r" / "index.html");
  EXPECT_EQ(Count(html, "<svg class=\"cdf\""), 2);
  EXPECT_THAT(html, HasSubstr("<table class=\"swarm-stats\">"));
  EXPECT_EQ(Count(html, "<ul class=\"failing-seeds\">"), 1);
}

TEST_F(RcsimCliTest, HtmlSummaryHasWallTimeSentencesAndPerControllerPlots) {
  Write("s/two.json", kTwoControllers);
  Write("s/fail.json", kFailing);
  ASSERT_EQ(Rcsim("run " + (dir_ / "s").string() + " --report " + (dir_ / "r").string()).code, 1);
  std::string html = Slurp(dir_ / "r" / "index.html");
  EXPECT_THAT(html, HasSubstr("<th>wall time</th><th>virtual&divide;wall</th>"));
  EXPECT_THAT(html, HasSubstr("faster than real time"));
  EXPECT_TRUE(std::regex_search(html, std::regex("api converged [0-9.]+(s|ms) after 5s \\(limit 10s\\)")))
      << html;
  EXPECT_THAT(html, HasSubstr("web had 4 active pods, above 2"));
  EXPECT_THAT(html, HasSubstr("the manager made "));
  EXPECT_EQ(Count(html, "<svg class=\"plot controller\""), 2);
  EXPECT_THAT(html, HasSubstr("data-controller=\"api\""));
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg"));  // only the SVG namespace
}

TEST_F(RcsimCliTest, EventsStreamIsJsonLines) {
  std::string f = Write("pass.json", kPassing);
  std::string events = (dir_ / "events.jsonl").string();
  ASSERT_EQ(Rcsim("run " + f + " --events " + events).code, 0);
  std::istringstream in(Slurp(events));
  std::string line;
  int lines = 0, scenario_events = 0, kills = 0, manager = 0;
  double last_t = -1;
  while (std::getline(in, line)) {
    json j = json::parse(line);
    ++lines;
    EXPECT_EQ(j["scenario"], "small-pass");
    ASSERT_TRUE(j["t"].is_number()) << line;
    EXPECT_GE(j["t"].get<double>(), last_t);
    last_t = j["t"].get<double>();
    if (j["actor"] == "scenario" && j["event"].get<std::string>().rfind("event {", 0) == 0) ++scenario_events;
    if (j["actor"] == "scenario" && j["event"].get<std::string>().rfind("kill_pod ", 0) == 0) ++kills;
    if (j["actor"] == "manager") ++manager;
  }
  EXPECT_GT(lines, 20);
  EXPECT_EQ(scenario_events, 2);  // the scenario's two events
  EXPECT_EQ(kills, 2);            // kill_pods count 2
  EXPECT_GT(manager, 0);
  json report;
  ASSERT_EQ(Rcsim("run " + f + " --report " + (dir_ / "r").string()).code, 0);
  report = json::parse(Slurp(dir_ / "r" / "small-pass.json"));
  EXPECT_EQ(report["trace"]["lines"].get<int>(), lines);
}

// Issue 7, finding 8: a scenario at the parser's maxima (10M replicas) ran for minutes unannounced.
TEST_F(RcsimCliTest, Regression_HugeScenarioIsWarnedAndTimeoutStopsIt) {
  std::string f =
      Write("huge.json", R"({"name": "huge", "controllers": [{"name": "web", "replicas": 10000000}],
      "expect": [{"final": {"controller": "web"}}]})");
  auto start = std::chrono::steady_clock::now();
  Output o = Rcsim("run " + f + " --timeout 1s");
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(o.code, 1) << o.out << o.err;
  EXPECT_THAT(o.err, HasSubstr("warning: " + f + ": asks for up to 10000000 pods"));
  EXPECT_THAT(o.out, HasSubstr("error: wall-clock timeout: still running after 1"));
  EXPECT_LT(took, 60);
  EXPECT_EQ(Rcsim("run " + f + " --timeout soon").code, 2);
}

// The HTML report in a real browser: headless Chromium (Debian's `chromium`, installed by
// scripts/setup) loads the page from disk with the network off, and its DOM holds the tables and plots;
// a screenshot is taken as well. Skipped when Chromium is absent.
TEST_F(RcsimCliTest, HtmlReportRendersInHeadlessChromium) {
  // NOLINTNEXTLINE(concurrency-mt-unsafe): the test runs its commands from one thread
  if (std::system("command -v chromium >/dev/null 2>&1") != 0) GTEST_SKIP() << "chromium is not installed";
  Write("s/two.json", kTwoControllers);
  Write("s/fail.json", kFailing);
  ASSERT_EQ(
      Rcsim("run " + (dir_ / "s").string() + " --seeds 3 --quiet --report " + (dir_ / "base").string()).code,
      1);
  ASSERT_EQ(Rcsim("run " + (dir_ / "s").string() + " --seeds 3 --quiet --baseline " +
                  (dir_ / "base").string() + " --report " + (dir_ / "r").string())
                .code,
            1);
  const std::string flags =
      "timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-background-networking "
      "--no-first-run "
      "--user-data-dir=" +
      (dir_ / "chrome").string() + " ";
  const std::string url = "file://" + fs::absolute(dir_ / "r" / "index.html").string();
  std::string dom_cmd = flags + "--dump-dom '" + url + "' > " + (dir_ / "dom.html").string() + " 2> " +
                        (dir_ / "chrome.log").string();
  // NOLINTNEXTLINE(concurrency-mt-unsafe): the test runs its commands from one thread
  ASSERT_EQ(std::system(dom_cmd.c_str()), 0) << Slurp(dir_ / "chrome.log");
  std::string dom = Slurp(dir_ / "dom.html");
  // The browser parsed the page into these elements (the DOM is re-serialized by Chromium, so this
  // checks what it built, not the bytes we wrote).
  EXPECT_THAT(dom, HasSubstr("<table class=\"runs\">"));
  EXPECT_THAT(dom, HasSubstr("<table class=\"swarm-stats\">"));
  EXPECT_THAT(dom, HasSubstr("<table class=\"comparison\">"));
  EXPECT_EQ(Count(dom, "<svg class=\"plot\""), 6);             // one per run
  EXPECT_EQ(Count(dom, "<svg class=\"plot controller\""), 6);  // two-controllers x 3 seeds x 2
  EXPECT_EQ(Count(dom, "<svg class=\"cdf\""), 2);
  EXPECT_EQ(Count(dom, "<svg class=\"paired\""), 1);
  EXPECT_GE(Count(dom, "<polyline class=\"series running\""), 12);
  EXPECT_THAT(dom, HasSubstr("faster than real time"));
  EXPECT_THAT(dom, HasSubstr("3 passed, 3 failed"));

  std::string shot = (dir_ / "shot.png").string();
  std::string shot_cmd = flags + "--window-size=1200,2400 --screenshot=" + shot + " '" + url + "' 2>> " +
                         (dir_ / "chrome.log").string();
  // NOLINTNEXTLINE(concurrency-mt-unsafe): the test runs its commands from one thread
  ASSERT_EQ(std::system(shot_cmd.c_str()), 0) << Slurp(dir_ / "chrome.log");
  std::string png = Slurp(shot);
  ASSERT_GT(png.size(), 20000u);  // a blank page compresses to a few KB
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
}

TEST_F(RcsimCliTest, SwarmModeRunsEachSeed) {
  std::string f = Write("pass.json", kPassing);
  Output o = Rcsim("run " + f + " --seeds 3 --jobs 2 --report " + (dir_ / "swarm").string());
  EXPECT_EQ(o.code, 0) << o.out << o.err;
  EXPECT_EQ(Count(o.out, "PASS  small-pass  seed="), 3);
  EXPECT_EQ(LastLine(o.out), "3 passed, 0 failed");
  int json_files = 0;
  for (const auto& e : fs::directory_iterator(dir_ / "swarm")) {
    std::string name = e.path().filename().string();
    if (e.path().extension() == ".json" && name != "runs.json" && name != "swarm.json") ++json_files;
  }
  EXPECT_EQ(json_files, 3);
  EXPECT_TRUE(fs::exists(dir_ / "swarm" / "runs.json"));
  EXPECT_TRUE(fs::exists(dir_ / "swarm" / "swarm.json"));
  EXPECT_EQ(Count(Slurp(dir_ / "swarm" / "junit.xml"), "<testcase "), 3);
}

}  // namespace
}  // namespace rcsim
