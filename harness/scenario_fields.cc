#include "harness/scenario_fields.h"

#include <cstdlib>
#include <iostream>
#include <limits>
#include <string>

namespace rcsim {
namespace {

using nlohmann::json;
using T = FieldType;

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr std::string_view kControllerRefText =
    "the controller: its name, or namespace/name (a bare name must be unique across namespaces)";

FieldSpec F(std::string_view key, T type, std::string_view description) { return {key, type, description}; }
FieldSpec Req(FieldSpec f) {
  f.required = true;
  return f;
}
FieldSpec Int(std::string_view key, int64_t min, int64_t max, std::string_view description) {
  FieldSpec f{key, T::kInteger, description};
  f.min = min;
  f.max = max;
  return f;
}
FieldSpec Obj(std::string_view key, std::string_view object, std::string_view description) {
  FieldSpec f{key, T::kObject, description};
  f.object = object;
  return f;
}
FieldSpec Arr(std::string_view key, std::string_view object, std::string_view description) {
  FieldSpec f{key, T::kObjectArray, description};
  f.object = object;
  return f;
}
FieldSpec Enum(std::string_view key, std::vector<std::string_view> values, std::string_view description) {
  FieldSpec f{key, T::kEnum, description};
  f.values = std::move(values);
  return f;
}
FieldSpec NonEmpty(FieldSpec f) {
  f.non_empty = true;
  return f;
}

std::vector<FieldSpec> PodTargetFields() {
  return {F("selector", T::kLabels, "pods matching these labels ({} or absent: every pod of the namespace)"),
          F("namespace", T::kDnsLabel, "the pods' namespace (default \"default\")"),
          Int("count", 0, kMaxReplicas, "this many matching active pods (default 1)"),
          F("fraction", T::kFraction, "this fraction of the matching active pods, rounded to nearest"),
          F("all", T::kTrue, "every matching active pod")};
}

std::vector<ObjectSpec> BuildSpecs() {
  std::vector<ObjectSpec> s;
  s.push_back(
      {"scenario",
       "An rcsim scenario: a cluster, a replication manager, controllers, timed events and "
       "expectations.",
       {Req(F("name", T::kName, "the scenario's name, unique in a run; names the report file")),
        F("description", T::kString, "free text"), F("seed", T::kSeed, "the run's seed (default 1)"),
        [] {
          FieldSpec f = F("tier", T::kEnum, "the suite tier (default \"fast\")");
          f.values = {"fast", "slow"};
          return f;
        }(),
        F("duration", T::kPositiveDuration, "the longest the run may last, virtual time (default 10m)"),
        Obj("cluster", "cluster", "the simulated cluster"),
        Obj("manager", "manager", "the replication manager's settings"),
        Req(Arr("controllers", "controller", "the controllers created at time 0 (may be empty)")),
        Arr("events", "event", "timed events, fired in `at` order, ties in file order"),
        Req(Arr("expect", "expectation", "what must hold (may be empty)")),
        F("include", T::kPaths,
          "files (relative to this one) holding shared cluster and manager blocks; this file's own fields "
          "win"),
        F("matrix", T::kMatrix,
          "parameter -> values: one run per combination, \"${parameter}\" replaced in the document")}});
  s.push_back({"cluster",
               "The simulated cluster.",
               {Int("nodes", 1, kMaxNodes, "number of nodes, named node-0 .. node-<n-1> (default 10)"),
                F("pod_start_latency", T::kRange, "bind to Running+Ready (default 500ms..2s)"),
                F("api_latency", T::kRange, "every manager API call (default 1ms..5ms)"),
                F("watch_latency", T::kRange, "every watch event the manager receives (default 0ms..50ms)"),
                F("node_monitor_grace_period", T::kPositiveDuration,
                  "a node silent this long is marked unreachable and its pods not ready (default 40s)"),
                F("pod_eviction_timeout", T::kDuration,
                  "an unreachable node's pods are deleted after this long (default 5m)"),
                Int("max_pods", 1, 1000000, "status.capacity.pods of every node (default 110)")}});
  s.push_back({"manager",
               "The replication manager's settings.",
               {Int("workers", 1, 1024, "concurrent syncs (default 5)"),
                F("resync", T::kPositiveDuration, "full resync period (default 30s)"),
                Int("burst_replicas", 1, kMaxReplicas, "most creates or deletes per sync (default 500)"),
                Enum("kind", {"modern", "2014"},
                     "which manager runs: the modern engine, or the 2014 baseline (default \"modern\")")}});
  s.push_back({"controller",
               "A replication controller.",
               {Req(F("name", T::kName, "unique in the scenario")),
                F("namespace", T::kDnsLabel, "default \"default\""),
                Int("replicas", 0, kMaxReplicas, "desired pods (default 1)"),
                Int("min_ready_seconds", 0, 2147483647,
                    "spec.minReadySeconds: seconds a pod must be ready to count as available (default 0)"),
                NonEmpty(F("selector", T::kLabels, "default: the template's labels, else {\"app\": <name>}")),
                Obj("template", "template", "the pod template, Kubernetes core/v1 shape")}});
  s.push_back({"template",
               "A pod template (core/v1 PodTemplateSpec subset).",
               {Obj("metadata", "template_metadata", "labels and annotations"),
                Obj("spec", "pod_spec", "the pod spec")}});
  s.push_back({"template_metadata",
               "A pod template's metadata.",
               {F("labels", T::kLabels, "must match the controller's selector"),
                F("annotations", T::kStringMap, "annotations")}});
  s.push_back(
      {"pod_spec",
       "A pod spec (core/v1 PodSpec subset).",
       {NonEmpty(Arr("containers", "container", "at least one container")),
        [] {
          FieldSpec f = F("restartPolicy", T::kEnum, "a replication controller's pods use Always");
          f.values = {"Always"};
          return f;
        }(),
        Int("terminationGracePeriodSeconds", 0, int64_t{24} * 3600, "grace period of a pod's deletion")}});
  s.push_back({"container",
               "A container.",
               {Req(F("name", T::kDnsLabel, "a DNS-1123 label")), Req([] {
                  FieldSpec f = F("image", T::kString, "the image");
                  f.non_empty = true;
                  return f;
                }()),
                F("command", T::kStringArray, "entrypoint"), F("args", T::kStringArray, "arguments")}});
  s.push_back({"duration_range",
               "A uniform range of durations (max >= min).",
               {Req(F("min", T::kDuration, "lower bound")), Req(F("max", T::kDuration, "upper bound"))}});

  ObjectSpec event{
      "event",
      "A timed event: `at` and exactly one action.",
      {F("at", T::kDuration, "when the event fires (default 0s, at most the scenario's duration)"),
       Obj("kill_pods", "pod_target",
           "the chosen active pods' containers exit (restarted per restartPolicy)"),
       Obj("delete_pods", "pod_target", "the chosen pods are deleted through the API"),
       Obj("label_pods", "label_pods", "the chosen pods get new labels through the API"),
       Obj("scale", "scale", "sets a controller's spec.replicas"),
       Obj("update_controller", "update_controller", "updates a controller's spec"),
       Obj("create_controller", "controller", "creates a controller"),
       Obj("delete_controller", "delete_controller", "deletes a controller"),
       Obj("fail_node", "fail_node", "nodes fail; the node lifecycle controller evicts their pods"),
       Obj("api_faults", "api_faults", "the manager's API connection misbehaves"),
       Obj("watch_faults", "watch_faults", "the manager's watches break or lag"),
       Obj("stale_reads", "stale_reads", "the manager's lists and watches see the world late"),
       Obj("restart_manager", "restart_manager", "the manager crashes and restarts"),
       Obj("partition_manager", "partition_manager", "the manager cannot reach the API or store"),
       Obj("restart_etcd", "restart_etcd", "etcd crashes and restarts on the same data"),
       Obj("kill_etcd_leader", "kill_etcd_leader", "the etcd leader crashes (multi-member etcd)"),
       Obj("crash_loop", "crash_loop",
           "the chosen pods' containers exit right after every start for a while"),
       Obj("stop_node_agent", "stop_node_agent", "node agents stop; their containers keep running"),
       Obj("start_node_agent", "start_node_agent", "a stopped node agent starts again"),
       Obj("set_ready", "set_ready", "the chosen pods' containers pass or fail their readiness check"),
       Obj("flap_readiness", "flap_readiness", "the chosen pods' readiness toggles every period for a while"),
       Obj("node_capacity", "node_capacity", "nodes' status.capacity.pods changes")},
      ObjectSpec::Shape::kOneAction};
  for (const FieldSpec& f : event.fields) {
    if (f.key != "at") event.action_keys.push_back(f.key);
  }
  s.push_back(std::move(event));
  s.push_back(
      {"pod_target",
       "Which pods: those of `namespace` matching `selector`, by count, fraction or all (default count 1).",
       PodTargetFields(),
       ObjectSpec::Shape::kPlain,
       {},
       {{"count", "fraction", "all"}}});
  {
    std::vector<FieldSpec> fields = PodTargetFields();
    fields.push_back(
        Req(NonEmpty(F("labels", T::kLabels,
                       "labels set on each chosen pod (added, or replacing a label of the same key)"))));
    s.push_back(
        {"label_pods",
         "Relabels pods: those of `namespace` matching `selector`, by count, fraction or all (default "
         "count 1).",
         std::move(fields),
         ObjectSpec::Shape::kPlain,
         {},
         {{"count", "fraction", "all"}}});
  }
  s.push_back({"scale",
               "Sets a controller's replicas.",
               {Req(F("controller", T::kControllerRef, kControllerRefText)),
                Req(Int("replicas", 0, kMaxReplicas, "the new replicas"))}});
  s.push_back({"update_controller",
               "Updates a controller's spec (at least one of replicas, selector, template).",
               {Req(F("controller", T::kControllerRef, kControllerRefText)),
                Int("replicas", 0, kMaxReplicas, "the new replicas"),
                NonEmpty(F("selector", T::kLabels, "the new selector")),
                Obj("template", "template", "the new template (must have labels)")},
               ObjectSpec::Shape::kPlain,
               {},
               {},
               {{"replicas", "selector", "template"}}});
  s.push_back({"delete_controller",
               "Deletes a controller.",
               {Req(F("controller", T::kControllerRef, kControllerRefText)),
                F("cascade", T::kBool, "delete its pods too (default true); false orphans them")}});
  s.push_back({"fail_node",
               "Nodes fail: a named node, or `count` nodes drawn with the RNG.",
               {F("node", T::kString, "a node name (\"node-3\")"),
                Int("count", 1, kMaxNodes, "this many ready nodes (default 1, at most the cluster's nodes)"),
                F("for", T::kPositiveDuration, "the nodes recover after this (default: never)")},
               ObjectSpec::Shape::kPlain,
               {},
               {{"node", "count"}}});
  s.push_back({"stop_node_agent",
               "Node agents stop (no heartbeats, no pod updates; containers keep running): a named node, "
               "or `count` nodes drawn with the RNG.",
               {F("node", T::kString, "a node name (\"node-3\")"),
                Int("count", 1, kMaxNodes, "this many ready nodes (default 1, at most the cluster's nodes)"),
                F("for", T::kPositiveDuration, "the agents start again after this (default: never)")},
               ObjectSpec::Shape::kPlain,
               {},
               {{"node", "count"}}});
  s.push_back({"start_node_agent",
               "A stopped node agent starts again.",
               {Req(F("node", T::kString, "a node name (\"node-3\")"))}});
  s.push_back({"node_capacity",
               "Nodes' status.capacity.pods (and allocatable) become `pods`, as their agents report: a named "
               "node, `count` nodes drawn with the RNG, or every node (neither given).",
               {F("node", T::kString, "a node name (\"node-3\")"),
                Int("count", 1, kMaxNodes, "this many nodes, drawn among all (at most the cluster's nodes)"),
                Req(Int("pods", 0, 1000000, "the new capacity; pods already bound stay"))},
               ObjectSpec::Shape::kPlain,
               {},
               {{"node", "count"}}});
  {
    std::vector<FieldSpec> fields = PodTargetFields();
    fields.push_back(F("for", T::kPositiveDuration, "how long the containers keep crashing (default 30s)"));
    s.push_back({"crash_loop",
                 "The chosen active pods' containers exit with code 1 right after every start for `for`.",
                 std::move(fields),
                 ObjectSpec::Shape::kPlain,
                 {},
                 {{"count", "fraction", "all"}}});
  }
  {
    std::vector<FieldSpec> fields = PodTargetFields();
    fields.push_back(F("ready", T::kBool,
                       "whether the containers pass their readiness check from now on (default false)"));
    s.push_back({"set_ready",
                 "The chosen active pods become not ready (or ready again) until another event sets them.",
                 std::move(fields),
                 ObjectSpec::Shape::kPlain,
                 {},
                 {{"count", "fraction", "all"}}});
  }
  {
    std::vector<FieldSpec> fields = PodTargetFields();
    fields.push_back(F("period", T::kPositiveDuration,
                       "readiness toggles this often, not ready first (default 2s; at most `for`)"));
    fields.push_back(F("for", T::kPositiveDuration, "how long it flaps; ready afterwards (default 30s)"));
    s.push_back({"flap_readiness",
                 "The chosen active pods' readiness toggles every `period` for `for`, then they are ready.",
                 std::move(fields),
                 ObjectSpec::Shape::kPlain,
                 {},
                 {{"count", "fraction", "all"}}});
  }
  s.push_back(
      {"api_faults",
       "The manager's API connection misbehaves for `for` (at least one fault).",
       {Req(F("for", T::kPositiveDuration, "how long")),
        F("error_rate", T::kFraction, "fraction of calls that fail, not applied (default 0)"),
        F("latency", T::kRange, "latency of each call, replacing api_latency"),
        F("timeout_rate", T::kFraction,
          "fraction of calls that time out, applied half the time (default 0; error_rate + "
          "timeout_rate <= 1)"),
        NonEmpty(F("verbs", T::kVerbArray, "the verbs affected (default all)")),
        Enum("reason", {"ServiceUnavailable", "Forbidden", "InternalError"},
             "what the failed calls answer (default ServiceUnavailable; Forbidden as a quota does)"),
        F("message", T::kString, "the failed calls' message (default \"injected: <reason> (<verb>)\")")},
       ObjectSpec::Shape::kPlain,
       {},
       {},
       {{"error_rate", "timeout_rate", "latency"}}});
  s.push_back({"watch_faults",
               "The manager's watches misbehave (at least one of drop, delay, compact, stall).",
               {F("for", T::kPositiveDuration, "how long (default 10s)"),
                F("drop", T::kBool, "watches break at `at` and every second during `for`"),
                F("delay", T::kPositiveDuration, "every watch event arrives this late during `for`"),
                F("compact", T::kBool, "the store is compacted at once"),
                F("stall", T::kBool,
                  "watches stay open but deliver nothing during `for`; everything held arrives at its end")},
               ObjectSpec::Shape::kPlain,
               {},
               {},
               {{"drop", "delay", "compact", "stall"}}});
  s.push_back(
      {"stale_reads",
       "The manager's lists and watches see the world `lag` late for `for`.",
       {Req(F("for", T::kPositiveDuration, "how long")), Req(F("lag", T::kPositiveDuration, "how stale"))}});
  s.push_back({"restart_manager",
               "The manager crashes and a new one starts after `down`.",
               {F("down", T::kDuration, "time without a manager (default 0s)")}});
  s.push_back({"partition_manager",
               "The manager cannot reach the API or the store for `for`.",
               {Req(F("for", T::kPositiveDuration, "how long"))}});
  s.push_back({"restart_etcd",
               "etcd crashes and restarts on the same data after `down`: the store is unavailable meanwhile.",
               {Int("member", 0, 4, "which member (default 0; real mode: below --etcd-members)"),
                F("down", T::kDuration, "time etcd is down (default 0s)")}});
  s.push_back({"kill_etcd_leader",
               "The leader of a multi-member etcd crashes; it restarts on its data after `down`.",
               {F("down", T::kDuration, "time the killed member is down (default 0s)")}});

  s.push_back({"expectation",
               "What must hold: exactly one kind per entry (and optionally the flaw it pins).",
               {Obj("converged", "converged", "running == desired within `within` after `after`"),
                Obj("never_above", "never_above", "active pods never above a bound"),
                Obj("never_below", "never_below", "ready pods never below a floor during a window"),
                Obj("pods_matching", "pods_matching", "pods matching a selector, whoever owns them"),
                Obj("condition", "condition", "a status condition of the controller (ReplicaFailure)"),
                Obj("final", "final", "the state at the end"),
                Obj("api_calls", "api_calls", "a budget of manager API calls"),
                Obj("status_matches", "status_matches", "the controller's status equals what is observable"),
                Obj("restarts_at_most", "restarts_at_most", "a budget of container restarts"),
                F("flaw", T::kString, "the 2014 flaw this expectation pins (scenarios/flaws)")},
               ObjectSpec::Shape::kOneKey});
  s.push_back({"converged",
               "The controller converges (running == desired) within `within` after `after`.",
               {Req(F("controller", T::kControllerRef, kControllerRefText)),
                F("after", T::kDuration, "from when (default 0s)"),
                F("within", T::kPositiveDuration, "the bound (default 1m)"),
                Enum("count", {"running", "active"},
                     "what must equal desired: running pods (default) or active ones (the manager's part "
                     "alone, when the cluster cannot run them all)")}});
  s.push_back(
      {"never_above",
       "Active pods never exceed `active`.",
       {Req(F("controller", T::kControllerRef, kControllerRefText)),
        Int("active", 0, kMaxReplicas, "the bound (default: the highest replicas the scenario gives it)"),
        F("after", T::kDuration, "the window's start (default 0s)"),
        F("until", T::kDuration, "the window's end (default: the end of the run)"),
        F("allow_late_orphans", T::kBool,
          "pods it did not create that became its own after its first pod appeared do not count "
          "(default false; not with after/until)")}});
  s.push_back({"never_below",
               "Ready pods of the controller never fall below `ready` from `after` to `until`.",
               {Req(F("controller", T::kControllerRef, kControllerRefText)),
                Req(Int("ready", 0, kMaxReplicas, "the floor")),
                F("after", T::kDuration, "the window's start (default 0s)"),
                F("until", T::kDuration, "the window's end (default: the end of the run)")}});
  s.push_back({"pods_matching",
               "Pods of `namespace` matching `selector`, owned by anyone or no one (at least one bound).",
               {Req(NonEmpty(F("selector", T::kLabels, "the pods' labels"))),
                F("namespace", T::kDnsLabel, "the pods' namespace (default \"default\")"),
                Int("never_above", 0, kMaxReplicas, "active matching pods never exceed this"),
                Int("final_running", 0, kMaxReplicas, "running matching pods at the end")},
               ObjectSpec::Shape::kPlain,
               {},
               {},
               {{"never_above", "final_running"}}});
  s.push_back(
      {"condition",
       "A condition of the controller's status: set at some time during the run, and/or at the end.",
       {Req(F("controller", T::kControllerRef, kControllerRefText)),
        F("type", T::kString, "the condition's type (default \"ReplicaFailure\")"),
        F("reason", T::kString, "the reason it must carry when seen (default: any)"),
        F("seen", T::kBool, "whether it must be seen with status True during the run (default true)"),
        F("final", T::kBool, "whether it must be present (True) at the end (default: not checked)")}});
  s.push_back({"final",
               "At the end, running pods and status.replicas equal the given values.",
               {Req(F("controller", T::kControllerRef, kControllerRefText)),
                Int("running", 0, kMaxReplicas, "running pods (default: the final desired replicas)"),
                Int("replicas_status", 0, kMaxReplicas, "status.replicas")}});
  s.push_back({"api_calls",
               "The manager's API calls of `verb` over the run are at most `at_most`.",
               {F("verb", T::kVerb, "the verb (default: all verbs)"),
                Req(Int("at_most", 0, kInt64Max, "the budget"))}});
  s.push_back({"restarts_at_most",
               "Container restarts by every node agent over the run are at most `at_most`.",
               {Req(Int("at_most", 0, kInt64Max, "the budget"))}});
  s.push_back({"status_matches",
               "The controller's status equals what is observable at the end.",
               {Req(F("controller", T::kControllerRef, kControllerRefText))}});
  return s;
}

// Patterns mirror registry/validation.cc and harness/duration.cc (ECMA-262 syntax).
constexpr const char* kLabelPattern = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$";
constexpr const char* kSubdomainPattern =
    "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$";
// An optional "namespace/" (a DNS-1123 label) before a name (a DNS-1123 subdomain).
constexpr const char* kControllerRefPattern =
    "^([a-z0-9]([-a-z0-9]*[a-z0-9])?/)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$";
constexpr const char* kQualifiedNamePattern =
    "^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/"
    ")?([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$";
constexpr const char* kLabelValuePattern = "^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$";
constexpr const char* kDurationPattern = "^(0|(([0-9]+(\\.[0-9]*)?|\\.[0-9]+)(ms|s|m|h))+)$";
// The same with at least one non-zero digit.
constexpr const char* kPositiveDurationPattern =
    "^(?=[^1-9]*[1-9])(([0-9]+(\\.[0-9]*)?|\\.[0-9]+)(ms|s|m|h))+$";

json Ref(std::string_view object) { return {{"$ref", "#/$defs/" + std::string(object)}}; }

json DurationSchema(bool positive, std::string_view description) {
  return {{"type", "string"},
          {"pattern", positive ? kPositiveDurationPattern : kDurationPattern},
          {"description", std::string(description) + (positive ? " (a duration > 0" : " (a duration") +
                              ": <number><unit>..., units ms, s, m, h, e.g. \"1m30s\")"}};
}

json FieldSchema(const FieldSpec& f) {
  json j;
  switch (f.type) {
    case T::kString:
      j = {{"type", "string"}};
      if (f.non_empty) j["minLength"] = 1;
      break;
    case T::kEnum:
      j = {{"type", "string"}, {"enum", json::array()}};
      for (std::string_view v : f.values) j["enum"].push_back(std::string(v));
      break;
    case T::kName: j = {{"type", "string"}, {"pattern", kSubdomainPattern}, {"maxLength", 253}}; break;
    case T::kDnsLabel: j = {{"type", "string"}, {"pattern", kLabelPattern}, {"maxLength", 63}}; break;
    case T::kControllerRef:
      j = {{"type", "string"}, {"pattern", kControllerRefPattern}, {"maxLength", 63 + 1 + 253}};
      break;
    case T::kSeed:
      j = {{"type", "integer"}, {"minimum", 0}, {"maximum", std::numeric_limits<uint64_t>::max()}};
      break;
    case T::kInteger: j = {{"type", "integer"}, {"minimum", f.min}, {"maximum", f.max}}; break;
    case T::kFraction: j = {{"type", "number"}, {"minimum", 0}, {"maximum", 1}}; break;
    case T::kBool: j = {{"type", "boolean"}}; break;
    case T::kTrue: j = {{"const", true}}; break;
    case T::kDuration:
    case T::kPositiveDuration: return DurationSchema(f.type == T::kPositiveDuration, f.description);
    case T::kRange:
      j = {{"oneOf", {DurationSchema(false, "a fixed duration"), Ref("duration_range")}}};
      break;
    case T::kLabels:
      j = {{"type", "object"},
           {"propertyNames", {{"pattern", kQualifiedNamePattern}}},
           {"additionalProperties", {{"type", "string"}, {"pattern", kLabelValuePattern}}}};
      if (f.non_empty) j["minProperties"] = 1;
      break;
    case T::kStringMap: j = {{"type", "object"}, {"additionalProperties", {{"type", "string"}}}}; break;
    case T::kStringArray: j = {{"type", "array"}, {"items", {{"type", "string"}}}}; break;
    case T::kVerb:
    case T::kVerbArray: {
      json verb = {{"enum", {"get", "list", "watch", "create", "update", "patch", "delete"}}};
      if (f.type == T::kVerb) {
        j = verb;
      } else {
        j = {{"type", "array"}, {"items", verb}, {"uniqueItems", true}};
        if (f.non_empty) j["minItems"] = 1;
      }
      break;
    }
    case T::kPaths:
      j = {{"oneOf",
            {{{"type", "string"}, {"minLength", 1}},
             {{"type", "array"}, {"items", {{"type", "string"}, {"minLength", 1}}}, {"minItems", 1}}}}};
      break;
    case T::kMatrix:
      j = {{"type", "object"},
           {"minProperties", 1},
           {"propertyNames", {{"pattern", "^[A-Za-z_][A-Za-z0-9_]*$"}}},
           {"additionalProperties",
            {{"type", "array"}, {"minItems", 1}, {"items", {{"type", {"string", "number", "boolean"}}}}}}};
      break;
    case T::kObject: j = Ref(f.object); break;
    case T::kObjectArray:
      j = {{"type", "array"}, {"items", Ref(f.object)}};
      if (f.non_empty) j["minItems"] = 1;
      break;
  }
  j["description"] = std::string(f.description);
  return j;
}

json ObjectSchema(const ObjectSpec& o) {
  json j = {{"type", "object"}, {"description", std::string(o.description)}, {"additionalProperties", false}};
  json props = json::object();
  json required = json::array();
  for (const FieldSpec& f : o.fields) {
    props[std::string(f.key)] = FieldSchema(f);
    if (f.required) required.push_back(std::string(f.key));
  }
  j["properties"] = props;
  if (!required.empty()) j["required"] = required;
  json all_of = json::array();
  for (const auto& group : o.exclusive) {
    for (std::size_t a = 0; a < group.size(); ++a) {
      for (std::size_t b = a + 1; b < group.size(); ++b) {
        all_of.push_back({{"not", {{"required", {std::string(group[a]), std::string(group[b])}}}}});
      }
    }
  }
  for (const auto& group : o.any_of) {
    json any = json::array();
    for (std::string_view k : group) any.push_back({{"required", {std::string(k)}}});
    all_of.push_back({{"anyOf", any}});
  }
  if (o.shape == ObjectSpec::Shape::kOneAction) {
    json one = json::array();
    for (std::string_view k : o.action_keys) one.push_back({{"required", {std::string(k)}}});
    all_of.push_back({{"oneOf", one}});
  }
  if (o.shape == ObjectSpec::Shape::kOneKey) {
    // Exactly one of the object-valued keys (the kinds); the others annotate it.
    json one = json::array();
    for (const FieldSpec& f : o.fields) {
      if (f.type == T::kObject) one.push_back({{"required", {std::string(f.key)}}});
    }
    all_of.push_back({{"oneOf", one}});
  }
  if (!all_of.empty()) j["allOf"] = all_of;
  return j;
}

}  // namespace

const std::vector<ObjectSpec>& ScenarioObjectSpecs() {
  static const std::vector<ObjectSpec>* specs = new std::vector<ObjectSpec>(BuildSpecs());
  return *specs;
}

const ObjectSpec& ScenarioObjectSpec(std::string_view name) {
  for (const ObjectSpec& o : ScenarioObjectSpecs()) {
    if (o.name == name) return o;
  }
  std::cerr << "rcsim: internal error: no scenario object spec \"" << name << "\"\n";
  std::abort();
}

const FieldSpec* FindField(const ObjectSpec& spec, std::string_view key) {
  for (const FieldSpec& f : spec.fields) {
    if (f.key == key) return &f;
  }
  return nullptr;
}

json ScenarioJsonSchema() {
  json defs = json::object();
  for (const ObjectSpec& o : ScenarioObjectSpecs()) {
    if (o.name != "scenario") defs[std::string(o.name)] = ObjectSchema(o);
  }
  json root = ObjectSchema(ScenarioObjectSpec("scenario"));
  root["$schema"] = "https://json-schema.org/draft/2020-12/schema";
  root["$id"] = "https://rcsim.dev/schema/scenario.json";
  root["title"] = "rcsim scenario";
  root["$defs"] = defs;
  return root;
}

}  // namespace rcsim
