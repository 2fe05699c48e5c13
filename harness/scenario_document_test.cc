#include "harness/scenario_document.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/scenario.h"
#include "harness/scenario_fields.h"

namespace rcsim {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string YamlError(const std::string& text) {
  Result<Scenario> s = ParseScenarioText(text, "s.yaml", DocumentFormat::kYaml);
  return s.ok() ? "" : s.status().message();
}
std::string JsonError(const std::string& text) {
  Result<Scenario> s = ParseScenarioText(text, "s.json", DocumentFormat::kJson);
  return s.ok() ? "" : s.status().message();
}

const char* kYaml = R"(# the contract example, in YAML
name: kill-half-web
seed: 7
duration: 10m
cluster:
  nodes: 10
  pod_start_latency: {min: 500ms, max: 2s}
controllers:
  - name: web
    replicas: 10
    selector: {app: web}
events:
  - at: 30s
    kill_pods:
      selector: {app: web}
      fraction: 0.5
expect:
  - converged: {controller: web, after: 30s, within: 5s}
  - never_above: {controller: web, active: 10}
)";

TEST(ScenarioDocumentTest, YamlMapsToTheSameModelAsJson) {
  Result<Scenario> y = ParseScenarioText(kYaml, "s.yaml", DocumentFormat::kYaml);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  Result<Scenario> j = ParseScenarioText(R"({"name": "kill-half-web", "seed": 7, "duration": "10m",
      "cluster": {"nodes": 10, "pod_start_latency": {"min": "500ms", "max": "2s"}},
      "controllers": [{"name": "web", "replicas": 10, "selector": {"app": "web"}}],
      "events": [{"at": "30s", "kill_pods": {"selector": {"app": "web"}, "fraction": 0.5}}],
      "expect": [{"converged": {"controller": "web", "after": "30s", "within": "5s"}},
                 {"never_above": {"controller": "web", "active": 10}}]})",
                                         "s.json");
  ASSERT_TRUE(j.ok()) << j.status().ToString();
  EXPECT_EQ(y->seed, 7u);
  EXPECT_EQ(y->cluster.pod_start_latency, j->cluster.pod_start_latency);
  ASSERT_EQ(y->events.size(), 1u);
  // The event text (which goes into the trace and so the digest) is identical.
  EXPECT_EQ(y->events[0].text, j->events[0].text);
  EXPECT_EQ(y->expect[0].text, j->expect[0].text);
  EXPECT_EQ(y->events[0].settled_at, j->events[0].settled_at);
}

TEST(ScenarioDocumentTest, YamlScalarsFollowTheCoreSchema) {
  Result<ScenarioDocument> d = ParseYamlDocument(
      "a: 3\nb: '3'\nc: true\nd: ~\ne: 0.5\nf: yes\ng: -4\nh: 0x1f\ni: 18446744073709551615\nj: \"x\"\nk:\n",
      "d.yaml");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  const json& v = d->value;
  EXPECT_TRUE(v["a"].is_number_integer());
  EXPECT_EQ(v["b"], "3");
  EXPECT_EQ(v["c"], true);
  EXPECT_TRUE(v["d"].is_null());
  EXPECT_DOUBLE_EQ(v["e"].get<double>(), 0.5);
  EXPECT_EQ(v["f"], "yes");  // YAML 1.1 booleans are strings in 1.2
  EXPECT_EQ(v["g"], -4);
  EXPECT_EQ(v["h"], 31);
  EXPECT_EQ(v["i"].get<uint64_t>(), UINT64_MAX);
  EXPECT_EQ(v["j"], "x");
  EXPECT_TRUE(v["k"].is_null());
}

TEST(ScenarioDocumentTest, YamlErrorsNameLineColumnAndPointer) {
  std::string text = kYaml;
  text.replace(text.find("fraction: 0.5"), 13, "fraction: 1.5");
  EXPECT_EQ(YamlError(text), "s.yaml:16:7: /events/0/kill_pods/fraction: must be within [0, 1], got 1.5");
  text = kYaml;
  text.replace(text.find("  nodes: 10"), 11, "  nodez: 10");
  EXPECT_THAT(YamlError(text), StartsWith("s.yaml:6:3: /cluster/nodez: unknown key"));
  // A missing key is located at its parent.
  text = kYaml;
  text.replace(text.find("  - name: web\n"), 14, "  - namespace: default\n");
  EXPECT_THAT(YamlError(text), StartsWith("s.yaml:9:5: /controllers/0/name: required"));
}

TEST(ScenarioDocumentTest, YamlSyntaxErrorHasLineAndColumn) {
  EXPECT_THAT(YamlError("name: x\ncontrollers: [\n"),
              testing::MatchesRegex(R"(s\.yaml:[0-9]+:[0-9]+: /: invalid YAML: .*)"));
}

TEST(ScenarioDocumentTest, DuplicateKeysAreRefusedInBothFormats) {
  EXPECT_EQ(YamlError("name: a\nname: b\ncontrollers: []\nexpect: []\n"), "s.yaml:2:1: /name: duplicate key");
  EXPECT_EQ(
      JsonError(R"({"name": "a", "controllers": [], "expect": [], "cluster": {"nodes": 1, "nodes": 2}})"),
      "s.json: /cluster/nodes: duplicate key");
  EXPECT_EQ(
      JsonError(R"({"name": "a", "controllers": [{"name": "w"}, {"name": "v", "name": "u"}], "expect": []})"),
      "s.json: /controllers/1/name: duplicate key");
}

TEST(ScenarioDocumentTest, MoreThanOneYamlDocumentIsRefused) {
  EXPECT_THAT(YamlError("name: a\ncontrollers: []\nexpect: []\n---\nname: b\n"),
              HasSubstr("more than one YAML document"));
}

TEST(ScenarioDocumentTest, AliasesExpand) {
  Result<Scenario> s = ParseScenarioText(
      "name: a\ncontrollers:\n  - &web {name: web, replicas: 2}\nevents: []\nexpect:\n  - final: "
      "{controller: web}\n",
      "s.yaml", DocumentFormat::kYaml);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->controllers[0].replicas, 2);
}

// Issue 7, finding 8: rcsim aborted on 1e999 (an uncaught out_of_range from the JSON parser).
TEST(ScenarioDocumentTest, Regression_HugeNumberIsRefusedNotAborted) {
  EXPECT_THAT(JsonError(R"({"name": "a", "seed": 1e999, "controllers": [], "expect": []})"),
              StartsWith("s.json: /: invalid JSON: "));
  EXPECT_THAT(YamlError("name: a\nseed: 1e999\ncontrollers: []\nexpect: []\n"),
              StartsWith("s.yaml:2:7: /seed: number out of range"));
  EXPECT_THAT(YamlError("name: a\nseed: 99999999999999999999999\ncontrollers: []\nexpect: []\n"),
              StartsWith("s.yaml:2:7: /seed: integer out of range"));
}

// Issue 7, finding 8: deep nesting in `expect` overflowed the stack.
TEST(ScenarioDocumentTest, Regression_DeepNestingIsRefusedBeforeRecursion) {
  std::string deep = R"({"name": "a", "controllers": [], "expect": [{"converged": )" +
                     std::string(100000, '[') + std::string(100000, ']') + "}]}";
  EXPECT_THAT(JsonError(deep), HasSubstr("nesting deeper than 64 levels"));
  std::string yaml = "name: a\ncontrollers: []\nexpect:\n  - converged: " + std::string(100000, '[') +
                     std::string(100000, ']') + "\n";
  EXPECT_THAT(YamlError(yaml), HasSubstr("nesting deeper than 64 levels"));
  std::string block = "name: a\ncontrollers: []\nexpect:\n";
  for (int i = 0; i < 200; ++i) block += std::string(2 + 2 * i, ' ') + "- \n";
  EXPECT_THAT(YamlError(block), HasSubstr("nesting deeper than 64 levels"));
}

// Issue 7, finding 8: durations overflowed ("9223372036854.999ms" wrapped; "2200000h" ended the run
// at 0 s with a false FAIL; at + for and for + lag sums wrapped).
TEST(ScenarioDocumentTest, Regression_DurationOverflowsAreRefused) {
  const std::string base = R"({"name": "a", "controllers": [], "expect": [], )";
  EXPECT_THAT(JsonError(base + R"("duration": "9223372036854.999ms"})"),
              HasSubstr("s.json: /duration: value too large"));
  EXPECT_THAT(JsonError(base + R"("duration": "2200000h"})"),
              HasSubstr("s.json: /duration: must be at most 100000h"));
  EXPECT_THAT(
      JsonError(
          base +
          R"("duration": "100000h", "events": [{"at": "100000h", "stale_reads": {"for": "100000h", "lag": "100000h"}}]})"),
      testing::Eq(""));
  EXPECT_THAT(JsonError(base + R"("events": [{"stale_reads": {"for": "1s", "lag": "100001h"}}]})"),
              HasSubstr("s.json: /events/0/stale_reads/lag: must be at most 100000h"));
}

TEST(ScenarioDocumentTest, FieldTableCoversEveryObjectTheParserReads) {
  // Every kObject/kObjectArray field names a spec that exists (ScenarioObjectSpec aborts otherwise).
  for (const ObjectSpec& o : ScenarioObjectSpecs()) {
    for (const FieldSpec& f : o.fields) {
      if (f.type == FieldType::kObject || f.type == FieldType::kObjectArray) {
        EXPECT_EQ(ScenarioObjectSpec(f.object).name, f.object);
      }
    }
  }
  json schema = ScenarioJsonSchema();
  EXPECT_EQ(schema["$schema"], "https://json-schema.org/draft/2020-12/schema");
  EXPECT_EQ(schema["required"], json::parse(R"(["name", "controllers", "expect"])"));
  EXPECT_TRUE(schema["$defs"].contains("pod_target"));
}

}  // namespace
// Found by the scenario fuzzer: YAML passed invalid UTF-8 through, and the event's text (JSON) then
// aborted rcsim. It is refused with the line and column instead.
TEST(ScenarioDocumentTest, InvalidUtf8InYamlIsRefusedNotFatal) {
  const std::string text =
      "name: m\ncontrollers: [{name: web, replicas: 1}]\nevents:\n  - restart_manager: {}\n    note: "
      "\"\xF0\x28\"\n"
      "expect: [{final: {controller: web}}]\n";
  Result<Scenario> r = ParseScenarioText(text, "u.yaml", DocumentFormat::kYaml);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("u.yaml:5:"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("invalid UTF-8"), std::string::npos) << r.status().message();
}

}  // namespace rcsim
