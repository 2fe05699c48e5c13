// Scenario files: the public JSON contract of rcsim (see docs/scenarios.md for every field and default).
//
// Scenario files are JSON or YAML (scenario_document.h maps both to one JSON value); the keys, types
// and bounds of every object come from the field table in scenario_fields.h, which also generates the
// JSON Schema that `rcsim schema` prints.
//
// ParseScenario is strict: unknown keys, wrong types, negative counts, fractions outside [0, 1],
// references to controllers the scenario never defines, unparsable durations, events with zero or
// several actions are refused with Code::kInvalid and the message "<file>: <json pointer>: <reason>"
// (e.g. "s.json: /events/2/kill_pods/fraction: must be within [0, 1], got 1.5"). Nothing runs before a
// scenario parsed. Defaults are applied here, so a parsed Scenario is complete.
#ifndef RCSIM_HARNESS_SCENARIO_H_
#define RCSIM_HARNESS_SCENARIO_H_

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "engine/api_client.h"
#include "engine/status.h"
#include "engine/time.h"
#include "engine/types.h"
#include "harness/scenario_document.h"

namespace rcsim {

struct DurationRange {
  Duration min{0};
  Duration max{0};
  bool operator==(const DurationRange&) const = default;
};

struct ClusterConfig {
  int32_t nodes = 10;
  DurationRange pod_start_latency{std::chrono::milliseconds(500), std::chrono::seconds(2)};
  DurationRange api_latency{std::chrono::milliseconds(1), std::chrono::milliseconds(5)};
  DurationRange watch_latency{Duration(0), std::chrono::milliseconds(50)};
  // The node lifecycle controller's (kube-controller-manager's defaults).
  Duration node_monitor_grace_period = std::chrono::seconds(40);
  Duration pod_eviction_timeout = std::chrono::minutes(5);
  int32_t max_pods = 110;  // status.capacity.pods of every node
};

struct ManagerConfig {
  int32_t workers = 5;
  Duration resync = std::chrono::seconds(30);
  int32_t burst_replicas = 500;
  // "modern" (engine/) or "2014" (baseline2014/: the seed's design, which ignores the fields above and
  // resyncs every 10 s).
  std::string kind = "modern";
};

struct ControllerConfig {
  std::string name;
  std::string namespace_ = "default";
  int32_t replicas = 1;
  int32_t min_ready_seconds = 0;  // spec.minReadySeconds
  Labels selector;                // default: the template's labels, else {"app": name}
  PodTemplateSpec template_;      // default: labels = selector, one container "sleep 3600"
};

// Which pods a kill_pods / delete_pods event hits. Pods are those in `namespace_` matching `selector`
// that are active at the event's time; the chosen ones are drawn with the scenario's RNG.
struct PodTarget {
  enum class Mode { kCount, kFraction, kAll };
  Labels selector;  // empty: every pod of the namespace
  std::string namespace_ = "default";
  Mode mode = Mode::kCount;
  int64_t count = 1;      // kCount
  double fraction = 0.0;  // kFraction: round(fraction * matching pods)
};

// References to a controller (`controller` in events and expectations) are written `name` or
// `namespace/name`. The parser resolves each: `controller` holds the name and `namespace_` the
// namespace, of the one controller the scenario defines (in `controllers` or a create_controller) with
// that name (and namespace, when given). A bare name that several namespaces define is ambiguous and
// refused, as is a reference to no controller.
struct KillPodsAction {
  PodTarget target;
};
struct DeletePodsAction {
  PodTarget target;
};
struct LabelPodsAction {
  PodTarget target;
  Labels labels;  // set on each chosen pod
};
struct ScaleAction {
  std::string controller;              // the controller referred to: its name
  std::string namespace_ = "default";  // and its namespace (resolved by the parser)
  int32_t replicas = 0;
};
struct UpdateControllerAction {
  std::string controller;              // the controller referred to: its name
  std::string namespace_ = "default";  // and its namespace (resolved by the parser)
  std::optional<int32_t> replicas;
  std::optional<Labels> selector;
  std::optional<PodTemplateSpec> template_;
};
struct CreateControllerAction {
  ControllerConfig controller;
};
struct DeleteControllerAction {
  std::string controller;              // the controller referred to: its name
  std::string namespace_ = "default";  // and its namespace (resolved by the parser)
  bool cascade = true;
};
struct FailNodeAction {
  std::optional<std::string> node;  // a node name ("node-3"); else `count` nodes drawn with the RNG
  int32_t count = 1;
  std::optional<Duration> for_;  // the node recovers after this; never if absent
};
struct ApiFaultsAction {
  Duration for_{0};
  double error_rate = 0.0;
  std::optional<DurationRange> latency;  // extra latency added to each call
  double timeout_rate = 0.0;
  std::vector<Verb> verbs;               // empty: every verb
  Code error_code = Code::kUnavailable;  // what the failed calls answer (`reason`)
  std::string message;                   // "" : "injected: <code> (<verb>)"
};
struct WatchFaultsAction {
  Duration for_{std::chrono::seconds(10)};
  bool drop = false;
  std::optional<Duration> delay;
  bool compact = false;
  bool stall = false;  // streams stay open, nothing delivered during `for`; everything held at its end
};
struct StaleReadsAction {
  Duration for_{0};
  Duration lag{0};
};
struct RestartManagerAction {
  Duration down{0};
};
struct PartitionManagerAction {
  Duration for_{0};
};
// etcd crashes (SIGKILL in real mode) and restarts on the same data after `down`.
struct RestartEtcdAction {
  int32_t member = 0;  // which member (real mode with --etcd-members); the simulation has one
  Duration down{0};
};
// The etcd leader crashes (real mode: a multi-member cluster); it restarts after `down`. The
// simulation's store is unavailable for one leader election (kEtcdElection, etcd's default
// --election-timeout) while the other members keep quorum.
inline constexpr Duration kEtcdElection = std::chrono::seconds(1);
struct KillEtcdLeaderAction {
  Duration down{0};
};
// The chosen pods' containers exit (code 1) right after every start for `for_`; their agents restart
// them with the crash-loop backoff.
struct CrashLoopAction {
  PodTarget target;
  Duration for_{std::chrono::seconds(30)};
};
// Node agents stop (heartbeats and pod updates stop; containers keep running), and start again after
// `for_` (never if absent). Nodes are chosen as for fail_node.
struct StopNodeAgentAction {
  std::optional<std::string> node;
  int32_t count = 1;
  std::optional<Duration> for_;
};
struct StartNodeAgentAction {
  std::string node;
};
// The chosen pods' containers pass (ready) or fail (not ready) their runtime's readiness check from
// now on, container restarts included, until another event sets them again; their node agents write
// the Ready condition (a not-ready pod stays Running, is not replaced, and is not available).
struct SetReadyAction {
  PodTarget target;
  bool ready = false;
};
// The chosen pods' readiness toggles every `period` for `for_`: not ready at once, ready after one
// period, not ready after two, ...; ready again when `for_` is over.
struct FlapReadinessAction {
  PodTarget target;
  Duration period{std::chrono::seconds(2)};
  Duration for_{std::chrono::seconds(30)};
};
// Nodes' status.capacity.pods (and allocatable.pods) become `pods`, as a kubelet reconfigured with
// --max-pods reports: the named node, `count` nodes drawn with the RNG, or every node when neither is
// given. The scheduler honours it for new bindings; pods already bound stay.
struct NodeCapacityAction {
  std::optional<std::string> node;
  std::optional<int32_t> count;
  int64_t pods = 0;
};

using EventAction =
    std::variant<KillPodsAction, DeletePodsAction, ScaleAction, UpdateControllerAction,
                 CreateControllerAction, DeleteControllerAction, FailNodeAction, ApiFaultsAction,
                 WatchFaultsAction, StaleReadsAction, RestartManagerAction, PartitionManagerAction,
                 LabelPodsAction, RestartEtcdAction, KillEtcdLeaderAction, CrashLoopAction,
                 StopNodeAgentAction, StartNodeAgentAction, SetReadyAction, FlapReadinessAction,
                 NodeCapacityAction>;

struct ScenarioEvent {
  Duration at{0};
  std::string kind;  // the action's key: "kill_pods", ...
  EventAction action;
  // When the event's effect is over: at + for / down (at for instantaneous actions).
  Duration settled_at{0};
  std::string text;  // the event's JSON, compact, for traces and reports
};

// What `converged` counts against the desired count.
enum class ConvergedCount {
  kRunning,  // pods running (the default): the manager's pods and the cluster that runs them
  kActive,   // active pods (not terminated, not being deleted): the manager's own part alone
};
struct ConvergedExpect {
  std::string controller;              // the controller referred to: its name
  std::string namespace_ = "default";  // and its namespace (resolved by the parser)
  Duration after{0};
  Duration within{std::chrono::minutes(1)};
  ConvergedCount count = ConvergedCount::kRunning;
};
struct NeverAboveExpect {
  std::string controller;              // the controller referred to: its name
  std::string namespace_ = "default";  // and its namespace (resolved by the parser)
  int32_t active = 0;                  // default: the highest replicas the scenario ever gives the controller
  Duration after{0};
  std::optional<Duration> until;  // absent: the end of the run
  // Pods the controller did not create that became its to count (orphaned, or relabelled into its
  // selector) after its first own pod appeared do not count toward the bound: it adopts them and then
  // deletes the surplus, as upstream does. Foreign pods already there before it created anything
  // count (creating instead of adopting them is an overshoot). Not with after/until.
  bool allow_late_orphans = false;
};
struct NeverBelowExpect {
  std::string controller;              // the controller referred to: its name
  std::string namespace_ = "default";  // and its namespace (resolved by the parser)
  int32_t ready = 0;
  Duration after{0};
  std::optional<Duration> until;
};
struct PodsMatchingExpect {
  Labels selector;
  std::string namespace_ = "default";
  std::optional<int32_t> never_above;  // active matching pods
  std::optional<int32_t> final_running;
};
struct ConditionExpect {
  std::string controller;              // the controller referred to: its name
  std::string namespace_ = "default";  // and its namespace (resolved by the parser)
  std::string type = "ReplicaFailure";
  std::string reason;         // "" : any
  bool seen = true;           // must be seen True during the run (false: must never be)
  std::optional<bool> final;  // must be present (true) or absent (false) at the end
};
struct FinalExpect {
  std::string controller;              // the controller referred to: its name
  std::string namespace_ = "default";  // and its namespace (resolved by the parser)
  std::optional<int32_t> running;      // if neither is given: running == the final desired replicas
  std::optional<int32_t> replicas_status;
};
struct ApiCallsExpect {
  std::optional<Verb> verb;  // absent: all verbs
  int64_t at_most = 0;
};
struct StatusMatchesExpect {
  std::string controller;              // the controller referred to: its name
  std::string namespace_ = "default";  // and its namespace (resolved by the parser)
};
// Container restarts by every node agent over the run are at most `at_most`.
struct RestartsAtMostExpect {
  int64_t at_most = 0;
};

using ExpectationSpec =
    std::variant<ConvergedExpect, NeverAboveExpect, FinalExpect, ApiCallsExpect, StatusMatchesExpect,
                 NeverBelowExpect, PodsMatchingExpect, ConditionExpect, RestartsAtMostExpect>;

struct Expectation {
  std::string kind;  // "converged", ...
  ExpectationSpec spec;
  std::string text;  // the expectation's JSON as written (keys sorted), for reports
  std::string flaw;  // the 2014 flaw it pins ("" if none)
};

struct Scenario {
  std::string file;  // where it was read from ("" when parsed from a string)
  std::string name;
  std::string description;
  uint64_t seed = 1;
  std::string tier = "fast";  // "fast" or "slow"
  Duration duration{std::chrono::minutes(10)};
  ClusterConfig cluster;
  ManagerConfig manager;
  std::vector<ControllerConfig> controllers;
  std::vector<ScenarioEvent> events;  // in file order; the runner fires them by `at`, ties in file order
  std::vector<Expectation> expect;

  // The longer of the manager's resync period and the longest `within` of the converged
  // expectations: a settled world quiet for this long ends the run early (a resync would have woken
  // any controller with work left).
  Duration QuietPeriod() const;
  // Earliest time at which the run may end early: every event settled, every `after` passed.
  Duration SettleTime() const;
};

// Parses one scenario document. `file` is used only in error messages and Scenario::file.
Result<Scenario> ParseScenario(const nlohmann::json& doc, std::string_view file);
// Parses a document from either front end; YAML errors carry the line and column. A document using
// `include` or `matrix` is refused here: those need the file (scenario_expand.h).
Result<Scenario> ParseScenarioDocument(const ScenarioDocument& doc);
// Parses `value`; a bad field's message is error(pointer, reason).
Result<Scenario> ParseScenarioValue(
    const nlohmann::json& value, std::string_view file,
    const std::function<std::string(const std::string&, const std::string&)>& error);
// Parses JSON text (syntax errors are reported as "<file>: /: invalid JSON: ...").
Result<Scenario> ParseScenarioText(std::string_view text, std::string_view file);
// Parses JSON or YAML text ("<file>:<line>:<col>: /: invalid YAML: ..." for YAML syntax errors).
Result<Scenario> ParseScenarioText(std::string_view text, std::string_view file, DocumentFormat format);
// Reads and parses a file, YAML if it is named *.yaml or *.yml, else JSON (unreadable file:
// "<file>: cannot read the file"), with its includes; a matrix file must name one run ("f.yaml#run").
Result<Scenario> LoadScenarioFile(const std::string& path);

// The scenario-file name of an API verb ("get", "list", ..., "delete"); the same names as the API's.
const char* VerbKey(Verb verb);

// Escapes one reference token for a JSON pointer (RFC 6901: "~" -> "~0", "/" -> "~1").
std::string EscapePointerToken(std::string_view token);

}  // namespace rcsim

#endif  // RCSIM_HARNESS_SCENARIO_H_
