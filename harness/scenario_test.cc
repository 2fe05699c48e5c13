#include "harness/scenario.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

namespace rcsim {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;
using ::testing::HasSubstr;

// The example of the scenario contract (issue 3), verbatim.
const char* kExample = R"({
  "name": "kill-half-web",
  "description": "half of web dies; it must come back within 5s",
  "seed": 7,
  "tier": "fast",
  "duration": "10m",
  "cluster": {
    "nodes": 10,
    "pod_start_latency": {"min": "500ms", "max": "2s"},
    "api_latency": {"min": "1ms", "max": "5ms"},
    "watch_latency": {"min": "0ms", "max": "50ms"}
  },
  "manager": {"workers": 5, "resync": "30s", "burst_replicas": 500},
  "controllers": [
    {"name": "web", "namespace": "default", "replicas": 10, "selector": {"app": "web"},
     "template": {"metadata": {"labels": {"app": "web"}},
                  "spec": {"containers": [{"name": "web", "image": "nginx", "command": ["sleep", "3600"]}]}}}
  ],
  "events": [
    {"at": "30s", "kill_pods": {"selector": {"app": "web"}, "fraction": 0.5}}
  ],
  "expect": [
    {"converged": {"controller": "web", "after": "30s", "within": "5s"}},
    {"never_above": {"controller": "web", "active": 10}},
    {"final": {"controller": "web", "running": 10}}
  ]
})";

json Minimal() {
  return json::parse(R"({"name": "m", "controllers": [{"name": "web", "replicas": 3}],
                         "expect": [{"final": {"controller": "web"}}]})");
}

// Parses `doc` and returns the error message ("" when it parsed).
std::string ErrorOf(const json& doc) {
  Result<Scenario> s = ParseScenario(doc, "t.json");
  return s.ok() ? "" : s.status().message();
}

TEST(ScenarioTest, ParsesTheContractExample) {
  Result<Scenario> r = ParseScenarioText(kExample, "example.json");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const Scenario& s = *r;
  EXPECT_EQ(s.name, "kill-half-web");
  EXPECT_EQ(s.seed, 7u);
  EXPECT_EQ(s.duration, minutes(10));
  EXPECT_EQ(s.cluster.pod_start_latency.max, seconds(2));
  ASSERT_EQ(s.controllers.size(), 1u);
  EXPECT_EQ(s.controllers[0].replicas, 10);
  EXPECT_EQ(s.controllers[0].template_.spec.containers[0].image, "nginx");
  ASSERT_EQ(s.events.size(), 1u);
  EXPECT_EQ(s.events[0].kind, "kill_pods");
  const auto& kill = std::get<KillPodsAction>(s.events[0].action);
  EXPECT_EQ(kill.target.mode, PodTarget::Mode::kFraction);
  EXPECT_DOUBLE_EQ(kill.target.fraction, 0.5);
  ASSERT_EQ(s.expect.size(), 3u);
  EXPECT_EQ(std::get<ConvergedExpect>(s.expect[0].spec).within, seconds(5));
  EXPECT_EQ(s.QuietPeriod(), seconds(30));  // resync 30s > within 5s
  EXPECT_EQ(s.SettleTime(), seconds(30));
}

TEST(ScenarioTest, ManagerKindDefaultsToModernAndAccepts2014) {
  Result<Scenario> d = ParseScenario(Minimal(), "t.json");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->manager.kind, "modern");
  json doc = Minimal();
  doc["manager"] = {{"kind", "2014"}};
  Result<Scenario> old = ParseScenario(doc, "t.json");
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_EQ(old->manager.kind, "2014");
  doc["manager"] = {{"kind", 2014}};
  EXPECT_THAT(ErrorOf(doc), HasSubstr("/manager/kind"));
  doc["manager"] = {{"kind", "2015"}};
  EXPECT_THAT(ErrorOf(doc), HasSubstr("/manager/kind"));
}

TEST(ScenarioTest, AnExpectationMayNameTheFlawItPins) {
  json doc = Minimal();
  doc["expect"] = json::parse(R"([{"final": {"controller": "web"}, "flaw": "first N deleted"}])");
  Result<Scenario> s = ParseScenario(doc, "t.json");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->expect[0].kind, "final");
  EXPECT_EQ(s->expect[0].flaw, "first N deleted");
  doc["expect"] = json::parse(R"([{"flaw": "alone"}])");
  EXPECT_THAT(ErrorOf(doc), HasSubstr("/expect/0: no expectation"));
  doc["expect"] = json::parse(R"([{"final": {"controller": "web"}, "status_matches": {"controller": "web"},
                                   "flaw": "x"}])");
  EXPECT_THAT(ErrorOf(doc), HasSubstr("/expect/0: has 2 expectations"));
  doc["expect"] = json::parse(R"([{"final": {"controller": "web"}, "flaw": 3}])");
  EXPECT_THAT(ErrorOf(doc), HasSubstr("/expect/0/flaw"));
}

TEST(ScenarioTest, AppliesDocumentedDefaults) {
  Result<Scenario> r = ParseScenario(Minimal(), "m.json");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const Scenario& s = *r;
  EXPECT_EQ(s.seed, 1u);
  EXPECT_EQ(s.tier, "fast");
  EXPECT_EQ(s.duration, minutes(10));
  EXPECT_EQ(s.cluster.nodes, 10);
  EXPECT_EQ(s.cluster.api_latency.min, milliseconds(1));
  EXPECT_EQ(s.manager.workers, 5);
  EXPECT_EQ(s.manager.resync, seconds(30));
  EXPECT_EQ(s.manager.burst_replicas, 500);
  const ControllerConfig& c = s.controllers[0];
  EXPECT_EQ(c.namespace_, "default");
  EXPECT_EQ(c.selector, (Labels{{"app", "web"}}));
  EXPECT_EQ(c.template_.metadata.labels, c.selector);
  ASSERT_EQ(c.template_.spec.containers.size(), 1u);
  EXPECT_EQ(c.template_.spec.containers[0].name, "web");
  EXPECT_TRUE(s.events.empty());
  // No converged expectation: the quiet period is the resync period.
  EXPECT_EQ(s.QuietPeriod(), seconds(30));
}

TEST(ScenarioTest, QuietPeriodIsTheLongerOfResyncAndWithin) {
  json doc = Minimal();
  doc["expect"] = json::parse(R"([{"converged": {"controller": "web", "within": "2m"}},
                                  {"converged": {"controller": "web", "within": "5s"}}])");
  Result<Scenario> r = ParseScenario(doc, "m.json");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->QuietPeriod(), minutes(2));
}

TEST(ScenarioTest, SelectorDefaultsToTemplateLabels) {
  json doc = Minimal();
  doc["controllers"][0]["template"] = {{"metadata", {{"labels", {{"tier", "fe"}}}}}};
  Result<Scenario> r = ParseScenario(doc, "m.json");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->controllers[0].selector, (Labels{{"tier", "fe"}}));
}

TEST(ScenarioTest, NeverAboveDefaultsToHighestReplicasEver) {
  json doc = Minimal();
  doc["events"] = json::parse(R"([{"at": "20s", "scale": {"controller": "web", "replicas": 2}},
                                  {"at": "10s", "scale": {"controller": "web", "replicas": 8}}])");
  doc["expect"] = json::parse(R"([{"never_above": {"controller": "web"}}])");
  Result<Scenario> r = ParseScenario(doc, "m.json");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(std::get<NeverAboveExpect>(r->expect[0].spec).active, 8);
}

TEST(ScenarioTest, ParsesEveryEventKind) {
  json doc = Minimal();
  doc["events"] = json::parse(R"([
    {"at": "1s", "kill_pods": {"selector": {"app": "web"}, "count": 2}},
    {"at": "2s", "delete_pods": {"all": true, "namespace": "default"}},
    {"at": "3s", "scale": {"controller": "web", "replicas": 5}},
    {"at": "4s", "update_controller": {"controller": "web", "replicas": 4}},
    {"at": "5s", "create_controller": {"name": "api", "replicas": 2}},
    {"at": "6s", "delete_controller": {"controller": "api", "cascade": false}},
    {"at": "7s", "fail_node": {"node": "node-3", "for": "10s"}},
    {"at": "8s", "api_faults": {"for": "5s", "error_rate": 0.5, "verbs": ["list", "create"],
                                "latency": {"min": "10ms", "max": "20ms"}}},
    {"at": "9s", "watch_faults": {"drop": true, "delay": "1s", "compact": true}},
    {"at": "10s", "stale_reads": {"for": "20s", "lag": "2s"}},
    {"at": "11s", "restart_manager": {"down": "3s"}},
    {"at": "12s", "partition_manager": {"for": "4s"}},
    {"at": "13s", "label_pods": {"selector": {"app": "web"}, "count": 2, "labels": {"app": "debug"}}},
    {"at": "14s", "api_faults": {"for": "5s", "error_rate": 1, "verbs": ["create"], "reason": "Forbidden",
                                 "message": "exceeded quota"}},
    {"at": "15s", "crash_loop": {"selector": {"app": "web"}, "count": 1, "for": "5s"}},
    {"at": "16s", "stop_node_agent": {"count": 2, "for": "20s"}},
    {"at": "17s", "start_node_agent": {"node": "node-1"}}
  ])");
  Result<Scenario> r = ParseScenario(doc, "m.json");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->events.size(), 17u);
  const auto& label = std::get<LabelPodsAction>(r->events[12].action);
  EXPECT_EQ(label.labels, (Labels{{"app", "debug"}}));
  EXPECT_EQ(label.target.count, 2);
  const auto& quota = std::get<ApiFaultsAction>(r->events[13].action);
  EXPECT_EQ(quota.error_code, Code::kForbidden);
  EXPECT_EQ(quota.message, "exceeded quota");
  EXPECT_EQ(std::get<ApiFaultsAction>(r->events[7].action).error_code, Code::kUnavailable);
  EXPECT_EQ(std::get<CrashLoopAction>(r->events[14].action).for_, seconds(5));
  EXPECT_EQ(std::get<StopNodeAgentAction>(r->events[15].action).count, 2);
  EXPECT_EQ(std::get<StartNodeAgentAction>(r->events[16].action).node, "node-1");
  EXPECT_EQ(r->events[15].settled_at, seconds(36));
  EXPECT_TRUE(std::holds_alternative<PartitionManagerAction>(r->events[11].action));
  EXPECT_EQ(std::get<ApiFaultsAction>(r->events[7].action).verbs,
            (std::vector<Verb>{Verb::kList, Verb::kCreate}));
  EXPECT_EQ(r->events[6].settled_at, seconds(17));
  EXPECT_EQ(r->events[9].settled_at, seconds(32));  // for + lag
  EXPECT_EQ(r->SettleTime(), seconds(36));          // stop_node_agent at 16s for 20s
}

TEST(ScenarioTest, ParsesAWatchStallWithItsWindow) {
  json doc = Minimal();
  doc["events"] = json::parse(R"([
    {"at": "1s", "watch_faults": {"stall": true}},
    {"at": "2s", "watch_faults": {"stall": true, "for": "3s"}},
    {"at": "3s", "watch_faults": {"stall": false}}
  ])");
  Result<Scenario> r = ParseScenario(doc, "m.json");
  ASSERT_FALSE(r.ok());  // stall: false alone is no fault
  EXPECT_NE(r.status().message().find("/events/2/watch_faults"), std::string::npos) << r.status().ToString();
  doc["events"].erase(2);
  r = ParseScenario(doc, "m.json");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const auto& first = std::get<WatchFaultsAction>(r->events[0].action);
  EXPECT_TRUE(first.stall);
  EXPECT_FALSE(first.drop);
  EXPECT_EQ(first.for_, seconds(10));
  EXPECT_EQ(r->events[0].settled_at, seconds(11));
  EXPECT_EQ(std::get<WatchFaultsAction>(r->events[1].action).for_, seconds(3));
  EXPECT_EQ(r->events[1].settled_at, seconds(5));
}

TEST(ScenarioTest, ParsesTheReadinessEventsWithTheirDefaults) {
  json doc = Minimal();
  doc["events"] = json::parse(R"([
    {"at": "1s", "set_ready": {"selector": {"app": "web"}, "count": 2}},
    {"at": "2s", "set_ready": {"all": true, "ready": true}},
    {"at": "3s", "flap_readiness": {"selector": {"app": "web"}}},
    {"at": "4s", "flap_readiness": {"fraction": 0.5, "period": "500ms", "for": "6s", "namespace": "default"}}
  ])");
  Result<Scenario> r = ParseScenario(doc, "m.json");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const auto& not_ready = std::get<SetReadyAction>(r->events[0].action);
  EXPECT_FALSE(not_ready.ready);
  EXPECT_EQ(not_ready.target.count, 2);
  EXPECT_EQ(not_ready.target.selector, (Labels{{"app", "web"}}));
  EXPECT_EQ(r->events[0].settled_at, seconds(1));  // instantaneous: it holds until set again
  const auto& ready = std::get<SetReadyAction>(r->events[1].action);
  EXPECT_TRUE(ready.ready);
  EXPECT_EQ(ready.target.mode, PodTarget::Mode::kAll);
  const auto& flap = std::get<FlapReadinessAction>(r->events[2].action);
  EXPECT_EQ(flap.period, seconds(2));
  EXPECT_EQ(flap.for_, seconds(30));
  EXPECT_EQ(flap.target.count, 1);
  EXPECT_EQ(r->events[2].settled_at, seconds(33));
  const auto& fast = std::get<FlapReadinessAction>(r->events[3].action);
  EXPECT_EQ(fast.period, milliseconds(500));
  EXPECT_EQ(fast.target.mode, PodTarget::Mode::kFraction);
  EXPECT_EQ(r->events[3].settled_at, seconds(10));
  EXPECT_EQ(r->SettleTime(), seconds(33));
}

TEST(ScenarioTest, ParsesNodeCapacityByNodeCountOrEveryNode) {
  json doc = Minimal();
  doc["events"] = json::parse(R"([
    {"at": "1s", "node_capacity": {"node": "node-1", "pods": 3}},
    {"at": "2s", "node_capacity": {"count": 4, "pods": 0}},
    {"at": "3s", "node_capacity": {"pods": 110}}
  ])");
  Result<Scenario> r = ParseScenario(doc, "m.json");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const auto& one = std::get<NodeCapacityAction>(r->events[0].action);
  EXPECT_EQ(one.node, "node-1");
  EXPECT_EQ(one.count, std::nullopt);
  EXPECT_EQ(one.pods, 3);
  const auto& some = std::get<NodeCapacityAction>(r->events[1].action);
  EXPECT_EQ(some.node, std::nullopt);
  EXPECT_EQ(some.count, 4);
  EXPECT_EQ(some.pods, 0);
  const auto& every = std::get<NodeCapacityAction>(r->events[2].action);
  EXPECT_FALSE(every.node || every.count);
  EXPECT_EQ(every.pods, 110);
  EXPECT_EQ(r->events[2].settled_at, seconds(3));  // instantaneous
}

TEST(ScenarioTest, ParsesTheEtcdEventsWithTheirDefaults) {
  json doc = Minimal();
  doc["events"] = json::parse(R"([
    {"at": "1s", "restart_etcd": {}},
    {"at": "2s", "restart_etcd": {"member": 2, "down": "3s"}},
    {"at": "3s", "kill_etcd_leader": {}},
    {"at": "4s", "kill_etcd_leader": {"down": "5s"}}
  ])");
  Result<Scenario> r = ParseScenario(doc, "m.json");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const auto& plain = std::get<RestartEtcdAction>(r->events[0].action);
  EXPECT_EQ(plain.member, 0);
  EXPECT_EQ(plain.down, seconds(0));
  const auto& member = std::get<RestartEtcdAction>(r->events[1].action);
  EXPECT_EQ(member.member, 2);
  EXPECT_EQ(member.down, seconds(3));
  EXPECT_EQ(r->events[1].settled_at, seconds(5));
  EXPECT_EQ(std::get<KillEtcdLeaderAction>(r->events[2].action).down, seconds(0));
  EXPECT_EQ(r->events[2].settled_at, seconds(3) + kEtcdElection);  // one election at least
  EXPECT_EQ(r->events[3].settled_at, seconds(9));
}

TEST(ScenarioTest, ParsesEveryExpectationKind) {
  json doc = Minimal();
  doc["expect"] = json::parse(R"([
    {"converged": {"controller": "web"}},
    {"never_above": {"controller": "web", "active": 3}},
    {"final": {"controller": "web", "running": 3, "replicas_status": 3}},
    {"api_calls": {"verb": "create", "at_most": 10}},
    {"api_calls": {"at_most": 100}},
    {"status_matches": {"controller": "web"}},
    {"never_below": {"controller": "web", "ready": 2, "after": "10s", "until": "20s"}},
    {"pods_matching": {"selector": {"app": "web"}, "never_above": 4}},
    {"condition": {"controller": "web", "reason": "FailedCreate", "final": false}},
    {"never_above": {"controller": "web", "after": "5s"}},
    {"restarts_at_most": {"at_most": 4}}
  ])");
  Result<Scenario> r = ParseScenario(doc, "m.json");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(std::get<NeverBelowExpect>(r->expect[6].spec).until, seconds(20));
  EXPECT_EQ(std::get<PodsMatchingExpect>(r->expect[7].spec).namespace_, "default");
  const auto& cond = std::get<ConditionExpect>(r->expect[8].spec);
  EXPECT_EQ(cond.type, "ReplicaFailure");
  EXPECT_TRUE(cond.seen);
  EXPECT_EQ(cond.final, false);
  EXPECT_EQ(std::get<NeverAboveExpect>(r->expect[9].spec).after, seconds(5));
  EXPECT_EQ(std::get<RestartsAtMostExpect>(r->expect[10].spec).at_most, 4);
  EXPECT_EQ(std::get<ConvergedExpect>(r->expect[0].spec).within, minutes(1));
  EXPECT_EQ(std::get<ApiCallsExpect>(r->expect[3].spec).verb, Verb::kCreate);
  EXPECT_FALSE(std::get<ApiCallsExpect>(r->expect[4].spec).verb.has_value());
  EXPECT_EQ(r->expect[5].kind, "status_matches");
}

struct BadCase {
  const char* what;
  const char* pointer;  // expected JSON pointer in the message
  std::function<void(json&)> mutate;
};

class BadInputTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadInputTest, RefusedWithPointer) {
  json doc = Minimal();
  doc["events"] = json::array();
  GetParam().mutate(doc);
  std::string err = ErrorOf(doc);
  ASSERT_FALSE(err.empty()) << "accepted: " << GetParam().what;
  EXPECT_THAT(err, HasSubstr(std::string("t.json: ") + GetParam().pointer + ": ")) << err;
}

// The same malformed document written as YAML: refused with the same pointer and reason, plus the
// line and column of the bad field.
TEST_P(BadInputTest, RefusedInYamlWithLineColumnAndPointer) {
  json doc = Minimal();
  doc["events"] = json::array();
  GetParam().mutate(doc);
  std::string json_err = ErrorOf(doc);
  ASSERT_FALSE(json_err.empty());
  std::string yaml = EmitYaml(doc);
  Result<Scenario> r = ParseScenarioText(yaml, "t.yaml", DocumentFormat::kYaml);
  ASSERT_FALSE(r.ok()) << "YAML accepted: " << GetParam().what << "\n" << yaml;
  std::smatch m;
  const std::string& err = r.status().message();
  ASSERT_TRUE(std::regex_match(err, m, std::regex("t\\.yaml:([0-9]+):([0-9]+): (.*)"))) << err;
  // Same pointer and reason as the JSON front end.
  EXPECT_EQ(m[3].str(), json_err.substr(std::string("t.json: ").size())) << yaml;
  EXPECT_THAT(err, HasSubstr(std::string(": ") + GetParam().pointer + ": "));
  int line = std::stoi(m[1].str());
  int lines = static_cast<int>(std::count(yaml.begin(), yaml.end(), '\n'));
  EXPECT_GE(line, 1);
  EXPECT_LE(line, lines);
}

json Ev(const char* text) { return json::parse(text); }

INSTANTIATE_TEST_SUITE_P(
    Scenario, BadInputTest,
    ::testing::Values(
        BadCase{"unknown top-level key", "/replicas", [](json& d) { d["replicas"] = 3; }},
        BadCase{"unknown nested key", "/cluster/nodez", [](json& d) { d["cluster"] = {{"nodez", 3}}; }},
        BadCase{"unknown controller key", "/controllers/0/image",
                [](json& d) { d["controllers"][0]["image"] = "x"; }},
        BadCase{"missing name", "/name", [](json& d) { d.erase("name"); }},
        BadCase{"missing controllers", "/controllers", [](json& d) { d.erase("controllers"); }},
        BadCase{"missing expect", "/expect", [](json& d) { d.erase("expect"); }},
        BadCase{"name wrong type", "/name", [](json& d) { d["name"] = 5; }},
        BadCase{"replicas wrong type", "/controllers/0/replicas",
                [](json& d) { d["controllers"][0]["replicas"] = "3"; }},
        BadCase{"replicas float", "/controllers/0/replicas",
                [](json& d) { d["controllers"][0]["replicas"] = 2.5; }},
        BadCase{"negative replicas", "/controllers/0/replicas",
                [](json& d) { d["controllers"][0]["replicas"] = -1; }},
        BadCase{"negative nodes", "/cluster/nodes", [](json& d) { d["cluster"] = {{"nodes", -2}}; }},
        BadCase{"bad tier", "/tier", [](json& d) { d["tier"] = "medium"; }},
        BadCase{"unparsable duration", "/duration", [](json& d) { d["duration"] = "10 minutes"; }},
        BadCase{"duration without unit", "/manager/resync", [](json& d) { d["manager"] = {{"resync", "30"}}; }},
        BadCase{"duration as number", "/events/0/at",
                [](json& d) { d["events"].push_back(Ev(R"({"at": 30, "restart_manager": {}})")); }},
        BadCase{"range max below min", "/cluster/api_latency/max",
                [](json& d) { d["cluster"] = {{"api_latency", {{"min", "5ms"}, {"max", "1ms"}}}}; }},
        BadCase{"fraction above 1", "/events/0/kill_pods/fraction",
                [](json& d) { d["events"].push_back(Ev(R"({"kill_pods": {"fraction": 1.5}})")); }},
        BadCase{"fraction negative", "/events/0/delete_pods/fraction",
                [](json& d) { d["events"].push_back(Ev(R"({"delete_pods": {"fraction": -0.1}})")); }},
        BadCase{"negative count", "/events/0/kill_pods/count",
                [](json& d) { d["events"].push_back(Ev(R"({"kill_pods": {"count": -3}})")); }},
        BadCase{"count and fraction", "/events/0/kill_pods/fraction",
                [](json& d) { d["events"].push_back(Ev(R"({"kill_pods": {"count": 1, "fraction": 0.5}})")); }},
        BadCase{"third event bad fraction", "/events/2/kill_pods/fraction",
                [](json& d) {
                  d["events"].push_back(Ev(R"({"restart_manager": {}})"));
                  d["events"].push_back(Ev(R"({"restart_manager": {}})"));
                  d["events"].push_back(Ev(R"({"kill_pods": {"fraction": 2}})"));
                }},
        BadCase{"label_pods without labels", "/events/0/label_pods/labels",
                [](json& d) { d["events"].push_back(Ev(R"({"label_pods": {"all": true}})")); }},
        BadCase{"label_pods with empty labels", "/events/0/label_pods/labels",
                [](json& d) { d["events"].push_back(Ev(R"({"label_pods": {"all": true, "labels": {}}})")); }},
        BadCase{"api_faults unknown reason", "/events/0/api_faults/reason",
                [](json& d) {
                  d["events"].push_back(Ev(R"({"api_faults": {"for": "1s", "error_rate": 1, "reason": "Nope"}})"));
                }},
        BadCase{"api_faults reason without error_rate", "/events/0/api_faults/reason",
                [](json& d) {
                  d["events"].push_back(
                      Ev(R"({"api_faults": {"for": "1s", "timeout_rate": 1, "reason": "Forbidden"}})"));
                }},
        BadCase{"never_below without ready", "/expect/0/never_below/ready",
                [](json& d) { d["expect"] = Ev(R"([{"never_below": {"controller": "web"}}])"); }},
        BadCase{"window until before after", "/expect/0/never_above/until",
                [](json& d) {
                  d["expect"] = Ev(R"([{"never_above": {"controller": "web", "after": "2m", "until": "1m"}}])");
                }},
        BadCase{"window beyond the duration", "/expect/0/never_below/until",
                [](json& d) {
                  d["expect"] = Ev(R"([{"never_below": {"controller": "web", "ready": 1, "until": "100h"}}])");
                }},
        BadCase{"pods_matching without a bound", "/expect/0/pods_matching",
                [](json& d) { d["expect"] = Ev(R"([{"pods_matching": {"selector": {"app": "web"}}}])"); }},
        BadCase{"condition of an unknown controller", "/expect/0/condition/controller",
                [](json& d) { d["expect"] = Ev(R"([{"condition": {"controller": "nope"}}])"); }},
        BadCase{"event with no action", "/events/0",
                [](json& d) { d["events"].push_back(Ev(R"({"at": "1s"})")); }},
        BadCase{"event with two actions", "/events/0",
                [](json& d) {
                  d["events"].push_back(Ev(R"({"restart_manager": {}, "partition_manager": {"for": "1s"}})"));
                }},
        BadCase{"unknown event kind", "/events/0/explode",
                [](json& d) { d["events"].push_back(Ev(R"({"explode": {}})")); }},
        BadCase{"unknown controller in scale", "/events/0/scale/controller",
                [](json& d) { d["events"].push_back(Ev(R"({"scale": {"controller": "db", "replicas": 1}})")); }},
        BadCase{"unknown controller in delete", "/events/0/delete_controller/controller",
                [](json& d) { d["events"].push_back(Ev(R"({"delete_controller": {"controller": "db"}})")); }},
        BadCase{"scale after delete", "/events/1/scale/controller",
                [](json& d) {
                  d["events"].push_back(Ev(R"({"at": "1s", "delete_controller": {"controller": "web"}})"));
                  d["events"].push_back(Ev(R"({"at": "2s", "scale": {"controller": "web", "replicas": 1}})"));
                }},
        BadCase{"unknown controller in expectation", "/expect/0/final/controller",
                [](json& d) { d["expect"] = Ev(R"([{"final": {"controller": "db"}}])"); }},
        BadCase{"scale without replicas", "/events/0/scale/replicas",
                [](json& d) { d["events"].push_back(Ev(R"({"scale": {"controller": "web"}})")); }},
        BadCase{"update with nothing", "/events/0/update_controller",
                [](json& d) { d["events"].push_back(Ev(R"({"update_controller": {"controller": "web"}})")); }},
        BadCase{"unknown node", "/events/0/fail_node/node",
                [](json& d) { d["events"].push_back(Ev(R"({"fail_node": {"node": "node-99"}})")); }},
        BadCase{"restart_etcd negative member", "/events/0/restart_etcd/member",
                [](json& d) { d["events"].push_back(Ev(R"({"restart_etcd": {"member": -1}})")); }},
        BadCase{"restart_etcd member past 4", "/events/0/restart_etcd/member",
                [](json& d) { d["events"].push_back(Ev(R"({"restart_etcd": {"member": 5}})")); }},
        BadCase{"restart_etcd bad down", "/events/0/restart_etcd/down",
                [](json& d) { d["events"].push_back(Ev(R"({"restart_etcd": {"down": "2 s"}})")); }},
        BadCase{"kill_etcd_leader unknown field", "/events/0/kill_etcd_leader/member",
                [](json& d) { d["events"].push_back(Ev(R"({"kill_etcd_leader": {"member": 1}})")); }},
        BadCase{"api_faults without for", "/events/0/api_faults/for",
                [](json& d) { d["events"].push_back(Ev(R"({"api_faults": {"error_rate": 0.1}})")); }},
        BadCase{"api_faults unknown verb", "/events/0/api_faults/verbs/1",
                [](json& d) {
                  d["events"].push_back(Ev(R"({"api_faults": {"for": "1s", "error_rate": 0.1, "verbs": ["list", "post"]}})"));
                }},
        BadCase{"api_faults error rate above 1", "/events/0/api_faults/error_rate",
                [](json& d) { d["events"].push_back(Ev(R"({"api_faults": {"for": "1s", "error_rate": 3}})")); }},
        BadCase{"watch_faults nothing", "/events/0/watch_faults",
                [](json& d) { d["events"].push_back(Ev(R"({"watch_faults": {"for": "1s"}})")); }},
        BadCase{"stale_reads bad lag", "/events/0/stale_reads/lag",
                [](json& d) { d["events"].push_back(Ev(R"({"stale_reads": {"for": "1s", "lag": "soon"}})")); }},
        BadCase{"event after duration", "/events/0/at",
                [](json& d) {
                  d["duration"] = "1m";
                  d["events"].push_back(Ev(R"({"at": "2m", "restart_manager": {}})"));
                }},
        BadCase{"expectation with two kinds", "/expect/0",
                [](json& d) {
                  d["expect"] = Ev(R"([{"final": {"controller": "web"}, "status_matches": {"controller": "web"}}])");
                }},
        BadCase{"unknown expectation kind", "/expect/0/eventually",
                [](json& d) { d["expect"] = Ev(R"([{"eventually": {}}])"); }},
        BadCase{"negative at_most", "/expect/0/api_calls/at_most",
                [](json& d) { d["expect"] = Ev(R"([{"api_calls": {"at_most": -1}}])"); }},
        BadCase{"duplicate controller", "/controllers/1/name",
                [](json& d) { d["controllers"].push_back(Ev(R"({"name": "web"})")); }},
        BadCase{"template labels not matching", "/controllers/0/template/metadata/labels",
                [](json& d) {
                  d["controllers"][0]["selector"] = {{"app", "web"}};
                  d["controllers"][0]["template"] = {{"metadata", {{"labels", {{"app", "db"}}}}}};
                }},
        // The cluster components' fields and events. Zero is parsed as unsigned JSON: the minimum
        // applies to it too (it did not: `max_pods: 0` and `nodes: 0` were accepted).
        BadCase{"zero max_pods", "/cluster/max_pods", [](json& d) { d["cluster"] = {{"max_pods", 0}}; }},
        BadCase{"zero nodes", "/cluster/nodes", [](json& d) { d["cluster"] = {{"nodes", 0}}; }},
        BadCase{"max_pods wrong type", "/cluster/max_pods", [](json& d) { d["cluster"] = {{"max_pods", "9"}}; }},
        BadCase{"zero grace period", "/cluster/node_monitor_grace_period",
                [](json& d) { d["cluster"] = {{"node_monitor_grace_period", "0s"}}; }},
        BadCase{"unparsable eviction timeout", "/cluster/pod_eviction_timeout",
                [](json& d) { d["cluster"] = {{"pod_eviction_timeout", "soon"}}; }},
        BadCase{"crash_loop negative count", "/events/0/crash_loop/count",
                [](json& d) { d["events"].push_back(Ev(R"({"crash_loop": {"count": -1}})")); }},
        BadCase{"crash_loop bad for", "/events/0/crash_loop/for",
                [](json& d) { d["events"].push_back(Ev(R"({"crash_loop": {"for": "x"}})")); }},
        BadCase{"stop_node_agent zero count", "/events/0/stop_node_agent/count",
                [](json& d) { d["events"].push_back(Ev(R"({"stop_node_agent": {"count": 0}})")); }},
        BadCase{"stop_node_agent unknown node", "/events/0/stop_node_agent/node",
                [](json& d) { d["events"].push_back(Ev(R"({"stop_node_agent": {"node": "node-99"}})")); }},
        BadCase{"start_node_agent without node", "/events/0/start_node_agent/node",
                [](json& d) { d["events"].push_back(Ev(R"({"start_node_agent": {}})")); }},
        BadCase{"set_ready ready not a boolean", "/events/0/set_ready/ready",
                [](json& d) { d["events"].push_back(Ev(R"({"set_ready": {"ready": "no"}})")); }},
        BadCase{"set_ready count and all", "/events/0/set_ready/all",
                [](json& d) { d["events"].push_back(Ev(R"({"set_ready": {"count": 2, "all": true}})")); }},
        BadCase{"set_ready unknown key", "/events/0/set_ready/for",
                [](json& d) { d["events"].push_back(Ev(R"({"set_ready": {"for": "5s"}})")); }},
        BadCase{"set_ready bad selector", "/events/0/set_ready/selector/app",
                [](json& d) { d["events"].push_back(Ev(R"({"set_ready": {"selector": {"app": 3}}})")); }},
        BadCase{"flap_readiness zero period", "/events/0/flap_readiness/period",
                [](json& d) { d["events"].push_back(Ev(R"({"flap_readiness": {"period": "0s"}})")); }},
        BadCase{"flap_readiness bad for", "/events/0/flap_readiness/for",
                [](json& d) { d["events"].push_back(Ev(R"({"flap_readiness": {"for": "a while"}})")); }},
        BadCase{"flap_readiness period beyond for", "/events/0/flap_readiness/period",
                [](json& d) {
                  d["events"].push_back(Ev(R"({"flap_readiness": {"period": "10s", "for": "5s"}})"));
                }},
        BadCase{"flap_readiness for below the default period", "/events/0/flap_readiness/for",
                [](json& d) { d["events"].push_back(Ev(R"({"flap_readiness": {"for": "1s"}})")); }},
        BadCase{"flap_readiness negative count", "/events/0/flap_readiness/count",
                [](json& d) { d["events"].push_back(Ev(R"({"flap_readiness": {"count": -2}})")); }},
        // Controllers referred to as name or namespace/name (two namespaces may each have a "web").
        BadCase{"ambiguous bare name in an expectation", "/expect/0/final/controller",
                [](json& d) { d["controllers"].push_back(Ev(R"({"name": "web", "namespace": "prod"})")); }},
        BadCase{"ambiguous bare name in an event", "/events/0/scale/controller",
                [](json& d) {
                  d["controllers"].push_back(Ev(R"({"name": "web", "namespace": "prod"})"));
                  d["expect"] = Ev(R"([{"final": {"controller": "prod/web"}}])");
                  d["events"].push_back(Ev(R"({"scale": {"controller": "web", "replicas": 1}})"));
                }},
        BadCase{"converged count neither running nor active", "/expect/0/converged/count",
                [](json& d) { d["expect"] = Ev(R"([{"converged": {"controller": "web", "count": "ready"}}])"); }},
        BadCase{"ambiguous with a controller created later", "/expect/0/converged/controller",
                [](json& d) {
                  d["events"].push_back(
                      Ev(R"({"at": "5s", "create_controller": {"name": "web", "namespace": "prod"}})"));
                  d["expect"] = Ev(R"([{"converged": {"controller": "web"}}])");
                }},
        BadCase{"unknown namespace/name", "/expect/0/final/controller",
                [](json& d) { d["expect"] = Ev(R"([{"final": {"controller": "prod/web"}}])"); }},
        BadCase{"unknown namespace/name in delete", "/events/0/delete_controller/controller",
                [](json& d) {
                  d["events"].push_back(Ev(R"({"delete_controller": {"controller": "prod/web"}})"));
                }},
        BadCase{"invalid namespace in a reference", "/expect/0/status_matches/controller",
                [](json& d) { d["expect"] = Ev(R"([{"status_matches": {"controller": "Prod/web"}}])"); }},
        BadCase{"two slashes in a reference", "/expect/0/never_below/controller",
                [](json& d) {
                  d["expect"] = Ev(R"([{"never_below": {"controller": "default/web/x", "ready": 1}}])");
                }},
        BadCase{"empty name after the namespace", "/events/0/update_controller/controller",
                [](json& d) {
                  d["events"].push_back(Ev(R"({"update_controller": {"controller": "default/", "replicas": 1}})"));
                }},
        BadCase{"duplicate controller in one namespace", "/controllers/2/name",
                [](json& d) {
                  d["controllers"].push_back(Ev(R"({"name": "web", "namespace": "prod"})"));
                  d["controllers"].push_back(Ev(R"({"name": "web", "namespace": "prod"})"));
                  d["expect"] = json::array();
                }},
        BadCase{"creating an existing namespace/name", "/events/0/create_controller/name",
                [](json& d) {
                  d["controllers"].push_back(Ev(R"({"name": "web", "namespace": "prod"})"));
                  d["expect"] = json::array();
                  d["events"].push_back(Ev(R"({"at": "5s", "create_controller": {"name": "web", "namespace": "prod"}})"));
                }},
        BadCase{"scale of a namespace/name deleted before", "/events/1/scale/controller",
                [](json& d) {
                  d["controllers"].push_back(Ev(R"({"name": "web", "namespace": "prod"})"));
                  d["expect"] = json::array();
                  d["events"].push_back(Ev(R"({"at": "1s", "delete_controller": {"controller": "prod/web"}})"));
                  d["events"].push_back(Ev(R"({"at": "2s", "scale": {"controller": "prod/web", "replicas": 1}})"));
                }},
        BadCase{"node_capacity without pods", "/events/0/node_capacity/pods",
                [](json& d) { d["events"].push_back(Ev(R"({"node_capacity": {"node": "node-1"}})")); }},
        BadCase{"node_capacity negative pods", "/events/0/node_capacity/pods",
                [](json& d) { d["events"].push_back(Ev(R"({"node_capacity": {"pods": -1}})")); }},
        BadCase{"node_capacity pods wrong type", "/events/0/node_capacity/pods",
                [](json& d) { d["events"].push_back(Ev(R"({"node_capacity": {"pods": "3"}})")); }},
        BadCase{"node_capacity unknown node", "/events/0/node_capacity/node",
                [](json& d) { d["events"].push_back(Ev(R"({"node_capacity": {"node": "node-10", "pods": 3}})")); }},
        BadCase{"node_capacity count above the nodes", "/events/0/node_capacity/count",
                [](json& d) { d["events"].push_back(Ev(R"({"node_capacity": {"count": 11, "pods": 3}})")); }},
        BadCase{"node_capacity node and count", "/events/0/node_capacity/count",
                [](json& d) {
                  d["events"].push_back(Ev(R"({"node_capacity": {"node": "node-1", "count": 2, "pods": 3}})"));
                }},
        BadCase{"node_capacity unknown key", "/events/0/node_capacity/max_pods",
                [](json& d) { d["events"].push_back(Ev(R"({"node_capacity": {"max_pods": 3}})")); }},
        BadCase{"restarts_at_most without at_most", "/expect/0/restarts_at_most/at_most",
                [](json& d) { d["expect"] = Ev(R"([{"restarts_at_most": {}}])"); }},
        BadCase{"restarts_at_most negative", "/expect/0/restarts_at_most/at_most",
                [](json& d) { d["expect"] = Ev(R"([{"restarts_at_most": {"at_most": -3}}])"); }},
        BadCase{"pointer escaping", "/cluster/a~1b~0c", [](json& d) { d["cluster"] = {{"a/b~c", 1}}; }}),
    [](const ::testing::TestParamInfo<BadCase>& info) {
      std::string n = info.param.what;
      for (char& c : n) {
        if (!isalnum(static_cast<unsigned char>(c))) c = '_';
      }
      return n;
    });

TEST(ScenarioTest, SyntaxErrorNamesTheFile) {
  Result<Scenario> r = ParseScenarioText("{\"name\": ", "broken.json");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("broken.json: /: invalid JSON"));
}

TEST(ScenarioTest, NonObjectDocumentIsRefused) {
  EXPECT_THAT(ErrorOf(json::array()), HasSubstr("t.json: /: expected an object"));
}

TEST(ScenarioTest, MissingFileIsRefused) {
  Result<Scenario> r = LoadScenarioFile("/nonexistent/x.json");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("/nonexistent/x.json: cannot read"));
}

TEST(ScenarioTest, ControllerCreatedByEventCanBeReferenced) {
  json doc = Minimal();
  doc["events"] = Ev(R"([{"at": "5s", "create_controller": {"name": "api", "replicas": 2}},
                         {"at": "9s", "scale": {"controller": "api", "replicas": 4}}])");
  doc["expect"] = Ev(R"([{"converged": {"controller": "api", "after": "9s", "within": "10s"}}])");
  EXPECT_EQ(ErrorOf(doc), "");
}

// Two controllers named web, in namespaces default and prod: each reference says which (a bare name
// only where it is unique), and the parser resolves every reference to its namespace.
TEST(ScenarioTest, SameNameInTwoNamespacesIsReferredToAsNamespaceSlashName) {
  json doc = Minimal();
  doc["controllers"] =
      Ev(R"([{"name": "web", "replicas": 3}, {"name": "web", "namespace": "prod", "replicas": 2},
                              {"name": "db", "namespace": "prod"}])");
  doc["events"] = Ev(R"([{"at": "5s", "scale": {"controller": "prod/web", "replicas": 7}},
                         {"at": "6s", "update_controller": {"controller": "default/web", "replicas": 4,
                           "template": {"metadata": {"labels": {"app": "web"}}}}},
                         {"at": "7s", "delete_controller": {"controller": "prod/db"}},
                         {"at": "8s", "create_controller": {"name": "db", "namespace": "staging"}}])");
  doc["expect"] = Ev(R"([{"never_above": {"controller": "prod/web"}},
                         {"never_above": {"controller": "default/web"}},
                         {"final": {"controller": "staging/db"}},
                         {"converged": {"controller": "prod/db"}},
                         {"status_matches": {"controller": "prod/web"}},
                         {"condition": {"controller": "default/web", "seen": false}},
                         {"never_below": {"controller": "prod/web", "ready": 1}}])");
  Result<Scenario> r = ParseScenario(doc, "m.json");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const auto& scale = std::get<ScaleAction>(r->events[0].action);
  EXPECT_EQ(scale.namespace_, "prod");
  EXPECT_EQ(scale.controller, "web");
  const auto& update = std::get<UpdateControllerAction>(r->events[1].action);
  EXPECT_EQ(update.namespace_, "default");
  EXPECT_EQ(update.controller, "web");
  EXPECT_EQ(update.template_->spec.containers[0].name, "web") << "the default container is named by the name";
  const auto& del = std::get<DeleteControllerAction>(r->events[2].action);
  EXPECT_EQ(del.namespace_, "prod");
  EXPECT_EQ(del.controller, "db");
  const auto& above_prod = std::get<NeverAboveExpect>(r->expect[0].spec);
  EXPECT_EQ(above_prod.namespace_, "prod");
  EXPECT_EQ(above_prod.active, 7) << "the highest replicas of prod/web";
  EXPECT_EQ(std::get<NeverAboveExpect>(r->expect[1].spec).active, 4) << "the highest replicas of default/web";
  EXPECT_EQ(std::get<FinalExpect>(r->expect[2].spec).namespace_, "staging");
  EXPECT_EQ(std::get<ConvergedExpect>(r->expect[3].spec).namespace_, "prod");
  EXPECT_EQ(std::get<StatusMatchesExpect>(r->expect[4].spec).namespace_, "prod");
  EXPECT_EQ(std::get<ConditionExpect>(r->expect[5].spec).namespace_, "default");
  EXPECT_EQ(std::get<NeverBelowExpect>(r->expect[6].spec).namespace_, "prod");
}

// Backward compatible: a bare name that one namespace defines means that controller, whatever its
// namespace (scenarios/basic/namespaces refers to prod's web as "web").
TEST(ScenarioTest, AUniqueBareNameMeansItsControllerInAnyNamespace) {
  json doc = Minimal();
  doc["controllers"] = Ev(R"([{"name": "web", "namespace": "prod", "replicas": 4}])");
  doc["events"] = Ev(R"([{"at": "5s", "scale": {"controller": "web", "replicas": 6}}])");
  doc["expect"] = Ev(R"([{"final": {"controller": "web"}}, {"never_above": {"controller": "prod/web"}}])");
  Result<Scenario> r = ParseScenario(doc, "m.json");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(std::get<ScaleAction>(r->events[0].action).namespace_, "prod");
  EXPECT_EQ(std::get<FinalExpect>(r->expect[0].spec).namespace_, "prod");
  EXPECT_EQ(std::get<NeverAboveExpect>(r->expect[1].spec).active, 6);
  // Ambiguous: the message says which namespaces and what to write.
  doc["controllers"].push_back(Ev(R"({"name": "web", "namespace": "canary"})"));
  EXPECT_THAT(ErrorOf(doc), HasSubstr("t.json: /events/0/scale/controller: controller \"web\" is ambiguous: "
                                      "namespaces canary, prod each have one; write namespace/name"));
}

TEST(ScenarioTest, CreatingAnExistingControllerIsRefused) {
  json doc = Minimal();
  doc["events"] = Ev(R"([{"at": "5s", "create_controller": {"name": "web"}}])");
  EXPECT_THAT(ErrorOf(doc), HasSubstr("/events/0/create_controller/name: controller \"web\" already exists"));
}

// Every built-in scenario (scenarios/**.json) converted to YAML as `rcsim convert` does (in the file's
// key order) reads back as the same document, so it is the same scenario: the YAML front end maps
// each value, type and nesting exactly. The checked-in YAML twins (docs/examples/*.yaml) hold the
// same document as the built-in scenario of their name, but for the description (prose, which the
// examples word for their readers). (rcsim_cli_test runs a few of them in both
// forms and compares trace digests; running every one twice took minutes under ASan.)
TEST(ScenarioTest, EveryBuiltInScenarioReadsTheSameFromItsYamlTwin) {
  const std::filesystem::path src = RCSIM_SOURCE_DIR;
  std::map<std::string, json> by_stem;
  for (const auto& e : std::filesystem::recursive_directory_iterator(src / "scenarios")) {
    if (e.path().extension() != ".json") continue;
    Result<ScenarioDocument> doc = LoadDocument(e.path().string());
    ASSERT_TRUE(doc.ok()) << doc.status().ToString();
    ASSERT_TRUE(ParseScenarioDocument(*doc).ok()) << e.path();
    std::ifstream in(e.path(), std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    const std::string yaml = EmitYaml(nlohmann::ordered_json::parse(text.str()));
    Result<ScenarioDocument> twin = ParseYamlDocument(yaml, "twin.yaml");
    ASSERT_TRUE(twin.ok()) << e.path() << ": " << twin.status().ToString();
    EXPECT_EQ(twin->value, doc->value) << e.path() << "\n" << yaml;
    EXPECT_TRUE(ParseScenarioDocument(*twin).ok()) << e.path();
    by_stem[e.path().stem().string()] = doc->value;
  }
  EXPECT_GE(by_stem.size(), 28u);
  int twins = 0;
  for (const auto& e : std::filesystem::directory_iterator(src / "docs" / "examples")) {
    if (e.path().extension() != ".yaml") continue;
    Result<ScenarioDocument> doc = LoadDocument(e.path().string());
    ASSERT_TRUE(doc.ok()) << doc.status().ToString();
    ASSERT_EQ(by_stem.count(e.path().stem().string()), 1u) << e.path() << " has no JSON twin";
    json twin = by_stem[e.path().stem().string()];
    twin.erase("description");
    doc->value.erase("description");
    EXPECT_EQ(doc->value, twin) << e.path();
    ++twins;
  }
  EXPECT_GE(twins, 7);
}

}  // namespace
}  // namespace rcsim
