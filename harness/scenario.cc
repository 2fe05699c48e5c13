#include "harness/scenario.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "engine/labels.h"
#include "harness/duration.h"
#include "registry/validation.h"

namespace rcsim {
namespace {

using nlohmann::json;

// Thrown inside the parser only; ParseScenario turns it into a Status.
struct ParseError {
  std::string pointer;
  std::string reason;
};

[[noreturn]] void Fail(const std::string& pointer, std::string reason) {
  throw ParseError{pointer.empty() ? "/" : pointer, std::move(reason)};
}

std::string Child(const std::string& ptr, std::string_view key) {
  return ptr + "/" + EscapePointerToken(key);
}
std::string Child(const std::string& ptr, std::size_t index) { return ptr + "/" + std::to_string(index); }

const char* TypeName(const json& j) {
  switch (j.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::object:
      return "an object";
    case json::value_t::array:
      return "an array";
    case json::value_t::string:
      return "a string";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "an integer";
    case json::value_t::number_float:
      return "a number";
    default:
      return "an unsupported value";
  }
}

[[noreturn]] void WrongType(const json& j, const std::string& ptr, const char* expected) {
  Fail(ptr, std::string("expected ") + expected + ", got " + TypeName(j));
}

std::string JoinKeys(const std::vector<std::string_view>& keys) {
  std::string out;
  for (std::string_view k : keys) {
    if (!out.empty()) out += ", ";
    out += k;
  }
  return out;
}

// A JSON object whose keys must all be among `allowed`; unknown keys fail at construction.
class ObjectReader {
 public:
  ObjectReader(const json& j, std::string ptr, std::vector<std::string_view> allowed)
      : j_(j), ptr_(std::move(ptr)), allowed_(std::move(allowed)) {
    if (!j.is_object()) WrongType(j, ptr_, "an object");
    for (const auto& [key, value] : j.items()) {
      if (std::find(allowed_.begin(), allowed_.end(), key) == allowed_.end()) {
        Fail(Child(ptr_, key), "unknown key (expected one of: " + JoinKeys(allowed_) + ")");
      }
    }
  }
  const json* Get(std::string_view key) const {
    auto it = j_.find(key);
    return it == j_.end() ? nullptr : &*it;
  }
  bool Has(std::string_view key) const { return j_.contains(key); }
  const json& Required(std::string_view key) const {
    const json* v = Get(key);
    if (v == nullptr) Fail(Ptr(key), "required");
    return *v;
  }
  std::string Ptr(std::string_view key) const { return Child(ptr_, key); }
  const std::string& ptr() const { return ptr_; }
  const json& json_value() const { return j_; }

 private:
  const json& j_;
  std::string ptr_;
  std::vector<std::string_view> allowed_;
};

std::string ReadString(const json& j, const std::string& ptr) {
  if (!j.is_string()) WrongType(j, ptr, "a string");
  return j.get<std::string>();
}

int64_t ReadInt(const json& j, const std::string& ptr, int64_t min, int64_t max) {
  if (j.is_number_unsigned()) {
    uint64_t u = j.get<uint64_t>();
    if (u > static_cast<uint64_t>(max)) Fail(ptr, "must be at most " + std::to_string(max) + ", got " + j.dump());
    return static_cast<int64_t>(u);
  }
  if (!j.is_number_integer()) WrongType(j, ptr, "an integer");
  int64_t v = j.get<int64_t>();
  if (v < min) {
    Fail(ptr, (min == 0 ? std::string("must not be negative") : "must be at least " + std::to_string(min)) +
                  ", got " + std::to_string(v));
  }
  if (v > max) Fail(ptr, "must be at most " + std::to_string(max) + ", got " + std::to_string(v));
  return v;
}

constexpr int64_t kMaxReplicas = 10'000'000;

int32_t ReadCount(const json& j, const std::string& ptr, int64_t min = 0, int64_t max = kMaxReplicas) {
  return static_cast<int32_t>(ReadInt(j, ptr, min, max));
}

double ReadFraction(const json& j, const std::string& ptr) {
  if (!j.is_number()) WrongType(j, ptr, "a number");
  double v = j.get<double>();
  if (!(v >= 0.0 && v <= 1.0)) Fail(ptr, "must be within [0, 1], got " + j.dump());
  return v;
}

bool ReadBool(const json& j, const std::string& ptr) {
  if (!j.is_boolean()) WrongType(j, ptr, "a boolean");
  return j.get<bool>();
}

Duration ReadDuration(const json& j, const std::string& ptr) {
  if (!j.is_string()) WrongType(j, ptr, "a duration string such as \"1m30s\"");
  Result<Duration> d = ParseDuration(j.get_ref<const std::string&>());
  if (!d.ok()) Fail(ptr, d.status().message());
  return *d;
}

Duration ReadPositiveDuration(const json& j, const std::string& ptr) {
  Duration d = ReadDuration(j, ptr);
  if (d <= Duration::zero()) Fail(ptr, "must be greater than 0");
  return d;
}

// {"min": d, "max": d}, or one duration string meaning min == max.
DurationRange ReadRange(const json& j, const std::string& ptr) {
  if (j.is_string()) {
    Duration d = ReadDuration(j, ptr);
    return {d, d};
  }
  if (!j.is_object()) WrongType(j, ptr, "a duration or {\"min\", \"max\"}");
  ObjectReader r(j, ptr, {"min", "max"});
  DurationRange range;
  range.min = ReadDuration(r.Required("min"), r.Ptr("min"));
  range.max = ReadDuration(r.Required("max"), r.Ptr("max"));
  if (range.max < range.min) Fail(r.Ptr("max"), "must not be below min");
  return range;
}

Labels ReadLabels(const json& j, const std::string& ptr) {
  if (!j.is_object()) WrongType(j, ptr, "an object of label strings");
  Labels labels;
  for (const auto& [key, value] : j.items()) {
    std::string p = Child(ptr, key);
    if (!IsQualifiedName(key)) Fail(p, "invalid label key \"" + key + "\"");
    std::string v = ReadString(value, p);
    if (!IsValidLabelValue(v)) Fail(p, "invalid label value \"" + v + "\"");
    labels[key] = std::move(v);
  }
  return labels;
}

std::vector<std::string> ReadStringArray(const json& j, const std::string& ptr) {
  if (!j.is_array()) WrongType(j, ptr, "an array of strings");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < j.size(); ++i) out.push_back(ReadString(j[i], Child(ptr, i)));
  return out;
}

std::string ReadName(const json& j, const std::string& ptr) {
  std::string name = ReadString(j, ptr);
  if (!IsDns1123Subdomain(name)) {
    Fail(ptr, "invalid name \"" + name + "\" (lower-case letters, digits, '-' and '.', starting and "
                                         "ending with a letter or digit)");
  }
  return name;
}

std::string ReadNamespace(const json& j, const std::string& ptr) {
  std::string ns = ReadString(j, ptr);
  if (!IsDns1123Label(ns)) Fail(ptr, "invalid namespace \"" + ns + "\"");
  return ns;
}

Container DefaultContainer(const std::string& name) {
  Container c;
  c.name = name;
  c.image = "busybox";
  c.command = {"sleep", "3600"};
  return c;
}

Container ReadContainer(const json& j, const std::string& ptr) {
  ObjectReader r(j, ptr, {"name", "image", "command", "args"});
  Container c;
  c.name = ReadString(r.Required("name"), r.Ptr("name"));
  if (!IsDns1123Label(c.name)) Fail(r.Ptr("name"), "invalid container name \"" + c.name + "\"");
  c.image = ReadString(r.Required("image"), r.Ptr("image"));
  if (c.image.empty()) Fail(r.Ptr("image"), "must not be empty");
  if (const json* v = r.Get("command")) c.command = ReadStringArray(*v, r.Ptr("command"));
  if (const json* v = r.Get("args")) c.args = ReadStringArray(*v, r.Ptr("args"));
  return c;
}

// A pod template in the core/v1 shape (camelCase keys, as in Kubernetes manifests).
PodTemplateSpec ReadTemplate(const json& j, const std::string& ptr, const std::string& controller_name,
                             bool* has_labels) {
  ObjectReader r(j, ptr, {"metadata", "spec"});
  PodTemplateSpec t;
  *has_labels = false;
  if (const json* m = r.Get("metadata")) {
    ObjectReader mr(*m, r.Ptr("metadata"), {"labels", "annotations"});
    if (const json* v = mr.Get("labels")) {
      t.metadata.labels = ReadLabels(*v, mr.Ptr("labels"));
      *has_labels = true;
    }
    if (const json* v = mr.Get("annotations")) {
      if (!v->is_object()) WrongType(*v, mr.Ptr("annotations"), "an object of strings");
      for (const auto& [key, value] : v->items()) {
        t.metadata.annotations[key] = ReadString(value, Child(mr.Ptr("annotations"), key));
      }
    }
  }
  t.spec.containers = {DefaultContainer(controller_name)};
  if (const json* s = r.Get("spec")) {
    ObjectReader sr(*s, r.Ptr("spec"), {"containers", "restartPolicy", "terminationGracePeriodSeconds"});
    if (const json* v = sr.Get("containers")) {
      std::string cp = sr.Ptr("containers");
      if (!v->is_array()) WrongType(*v, cp, "an array of containers");
      if (v->empty()) Fail(cp, "must hold at least one container");
      t.spec.containers.clear();
      std::set<std::string> names;
      for (std::size_t i = 0; i < v->size(); ++i) {
        Container c = ReadContainer((*v)[i], Child(cp, i));
        if (!names.insert(c.name).second) {
          Fail(Child(Child(cp, i), "name"), "duplicate container name \"" + c.name + "\"");
        }
        t.spec.containers.push_back(std::move(c));
      }
    }
    if (const json* v = sr.Get("restartPolicy")) {
      std::string p = ReadString(*v, sr.Ptr("restartPolicy"));
      if (p != "Always") Fail(sr.Ptr("restartPolicy"), "a replication controller's pods must use \"Always\"");
      t.spec.restart_policy = p;
    }
    if (const json* v = sr.Get("terminationGracePeriodSeconds")) {
      t.spec.termination_grace_period_seconds =
          ReadInt(*v, sr.Ptr("terminationGracePeriodSeconds"), 0, 24 * 3600);
    }
  }
  return t;
}

ControllerConfig ReadController(const json& j, const std::string& ptr) {
  ObjectReader r(j, ptr, {"name", "namespace", "replicas", "selector", "template"});
  ControllerConfig c;
  c.name = ReadName(r.Required("name"), r.Ptr("name"));
  if (const json* v = r.Get("namespace")) c.namespace_ = ReadNamespace(*v, r.Ptr("namespace"));
  if (const json* v = r.Get("replicas")) c.replicas = ReadCount(*v, r.Ptr("replicas"));
  bool has_selector = false, has_labels = false;
  if (const json* v = r.Get("selector")) {
    c.selector = ReadLabels(*v, r.Ptr("selector"));
    if (c.selector.empty()) Fail(r.Ptr("selector"), "must not be empty");
    has_selector = true;
  }
  if (const json* v = r.Get("template")) {
    c.template_ = ReadTemplate(*v, r.Ptr("template"), c.name, &has_labels);
  } else {
    c.template_.spec.containers = {DefaultContainer(c.name)};
  }
  if (!has_selector) c.selector = has_labels && !c.template_.metadata.labels.empty()
                                       ? c.template_.metadata.labels
                                       : Labels{{"app", c.name}};
  if (!has_labels) c.template_.metadata.labels = c.selector;
  if (!SelectorMapMatches(c.selector, c.template_.metadata.labels)) {
    Fail(r.Ptr("template") + "/metadata/labels",
         "do not match the selector " + FormatSelectorMap(c.selector));
  }
  return c;
}

PodTarget ReadPodTarget(const json& j, const std::string& ptr) {
  ObjectReader r(j, ptr, {"selector", "namespace", "count", "fraction", "all"});
  PodTarget t;
  if (const json* v = r.Get("selector")) t.selector = ReadLabels(*v, r.Ptr("selector"));
  if (const json* v = r.Get("namespace")) t.namespace_ = ReadNamespace(*v, r.Ptr("namespace"));
  int modes = 0;
  for (std::string_view key : {"count", "fraction", "all"}) {
    if (!r.Has(key)) continue;
    if (++modes > 1) Fail(r.Ptr(key), "count, fraction and all are exclusive; give one");
  }
  if (const json* v = r.Get("count")) {
    t.mode = PodTarget::Mode::kCount;
    t.count = ReadInt(*v, r.Ptr("count"), 0, kMaxReplicas);
  } else if (const json* v = r.Get("fraction")) {
    t.mode = PodTarget::Mode::kFraction;
    t.fraction = ReadFraction(*v, r.Ptr("fraction"));
  } else if (const json* v = r.Get("all")) {
    if (!ReadBool(*v, r.Ptr("all"))) Fail(r.Ptr("all"), "must be true (omit it to target by count or fraction)");
    t.mode = PodTarget::Mode::kAll;
  }
  return t;
}

std::string ReadControllerRef(const ObjectReader& r) {
  return ReadName(r.Required("controller"), r.Ptr("controller"));
}

constexpr std::pair<const char*, Verb> kVerbs[] = {
    {"get", Verb::kGet},       {"list", Verb::kList},     {"watch", Verb::kWatch},
    {"create", Verb::kCreate}, {"update", Verb::kUpdate}, {"patch", Verb::kPatch},
    {"delete", Verb::kDelete}};

Verb ReadVerb(const json& j, const std::string& ptr) {
  std::string s = ReadString(j, ptr);
  for (const auto& [name, verb] : kVerbs) {
    if (s == name) return verb;
  }
  Fail(ptr, "unknown verb \"" + s + "\" (expected one of: get, list, watch, create, update, patch, delete)");
}

constexpr std::string_view kEventKinds[] = {
    "kill_pods",       "delete_pods",      "scale",       "update_controller",
    "create_controller", "delete_controller", "fail_node", "api_faults",
    "watch_faults",    "stale_reads",      "restart_manager", "partition_manager"};

constexpr std::string_view kExpectKinds[] = {"converged", "never_above", "final", "api_calls",
                                             "status_matches"};

// A reference to a controller by name, checked once every controller is known.
struct ControllerRef {
  std::string name;
  std::string pointer;
};

struct ParseState {
  std::vector<ControllerRef> refs;
};

EventAction ReadAction(std::string_view kind, const json& j, const std::string& ptr, Duration* settle,
                       const ClusterConfig& cluster, ParseState* state) {
  if (kind == "kill_pods") return KillPodsAction{ReadPodTarget(j, ptr)};
  if (kind == "delete_pods") return DeletePodsAction{ReadPodTarget(j, ptr)};
  if (kind == "scale") {
    ObjectReader r(j, ptr, {"controller", "replicas"});
    ScaleAction a;
    a.controller = ReadControllerRef(r);
    state->refs.push_back({a.controller, r.Ptr("controller")});
    a.replicas = ReadCount(r.Required("replicas"), r.Ptr("replicas"));
    return a;
  }
  if (kind == "update_controller") {
    ObjectReader r(j, ptr, {"controller", "replicas", "selector", "template"});
    UpdateControllerAction a;
    a.controller = ReadControllerRef(r);
    state->refs.push_back({a.controller, r.Ptr("controller")});
    if (const json* v = r.Get("replicas")) a.replicas = ReadCount(*v, r.Ptr("replicas"));
    if (const json* v = r.Get("selector")) {
      a.selector = ReadLabels(*v, r.Ptr("selector"));
      if (a.selector->empty()) Fail(r.Ptr("selector"), "must not be empty");
    }
    if (const json* v = r.Get("template")) {
      bool has_labels = false;
      a.template_ = ReadTemplate(*v, r.Ptr("template"), a.controller, &has_labels);
      if (!has_labels) Fail(r.Ptr("template") + "/metadata/labels", "required when updating a template");
    }
    if (!a.replicas && !a.selector && !a.template_) Fail(ptr, "nothing to update (give replicas, selector or template)");
    return a;
  }
  if (kind == "create_controller") return CreateControllerAction{ReadController(j, ptr)};
  if (kind == "delete_controller") {
    ObjectReader r(j, ptr, {"controller", "cascade"});
    DeleteControllerAction a;
    a.controller = ReadControllerRef(r);
    state->refs.push_back({a.controller, r.Ptr("controller")});
    if (const json* v = r.Get("cascade")) a.cascade = ReadBool(*v, r.Ptr("cascade"));
    return a;
  }
  if (kind == "fail_node") {
    ObjectReader r(j, ptr, {"node", "count", "for"});
    FailNodeAction a;
    if (r.Has("node") && r.Has("count")) Fail(r.Ptr("count"), "node and count are exclusive; give one");
    if (const json* v = r.Get("node")) {
      a.node = ReadString(*v, r.Ptr("node"));
      bool known = false;
      for (int32_t i = 0; i < cluster.nodes; ++i) known = known || *a.node == "node-" + std::to_string(i);
      if (!known) {
        Fail(r.Ptr("node"), "unknown node \"" + *a.node + "\" (nodes are node-0 .. node-" +
                                std::to_string(cluster.nodes - 1) + ")");
      }
    }
    if (const json* v = r.Get("count")) a.count = ReadCount(*v, r.Ptr("count"), 1, cluster.nodes);
    if (const json* v = r.Get("for")) {
      a.for_ = ReadPositiveDuration(*v, r.Ptr("for"));
      *settle += *a.for_;
    }
    return a;
  }
  if (kind == "api_faults") {
    ObjectReader r(j, ptr, {"for", "error_rate", "latency", "timeout_rate", "verbs"});
    ApiFaultsAction a;
    a.for_ = ReadPositiveDuration(r.Required("for"), r.Ptr("for"));
    *settle += a.for_;
    if (const json* v = r.Get("error_rate")) a.error_rate = ReadFraction(*v, r.Ptr("error_rate"));
    if (const json* v = r.Get("timeout_rate")) a.timeout_rate = ReadFraction(*v, r.Ptr("timeout_rate"));
    if (a.error_rate + a.timeout_rate > 1.0) Fail(r.Ptr("timeout_rate"), "error_rate + timeout_rate must not exceed 1");
    if (const json* v = r.Get("latency")) a.latency = ReadRange(*v, r.Ptr("latency"));
    if (const json* v = r.Get("verbs")) {
      std::string vp = r.Ptr("verbs");
      if (!v->is_array()) WrongType(*v, vp, "an array of verbs");
      if (v->empty()) Fail(vp, "must name at least one verb (omit it for all verbs)");
      for (std::size_t i = 0; i < v->size(); ++i) {
        Verb verb = ReadVerb((*v)[i], Child(vp, i));
        if (std::find(a.verbs.begin(), a.verbs.end(), verb) != a.verbs.end()) {
          Fail(Child(vp, i), "duplicate verb");
        }
        a.verbs.push_back(verb);
      }
    }
    if (a.error_rate == 0 && a.timeout_rate == 0 && !a.latency) {
      Fail(ptr, "no fault (give error_rate, timeout_rate or latency)");
    }
    return a;
  }
  if (kind == "watch_faults") {
    ObjectReader r(j, ptr, {"for", "drop", "delay", "compact"});
    WatchFaultsAction a;
    if (const json* v = r.Get("for")) a.for_ = ReadPositiveDuration(*v, r.Ptr("for"));
    if (const json* v = r.Get("drop")) a.drop = ReadBool(*v, r.Ptr("drop"));
    if (const json* v = r.Get("delay")) a.delay = ReadPositiveDuration(*v, r.Ptr("delay"));
    if (const json* v = r.Get("compact")) a.compact = ReadBool(*v, r.Ptr("compact"));
    if (!a.drop && !a.delay && !a.compact) Fail(ptr, "no fault (give drop, delay or compact)");
    if (a.drop || a.delay) *settle += a.for_;
    return a;
  }
  if (kind == "stale_reads") {
    ObjectReader r(j, ptr, {"for", "lag"});
    StaleReadsAction a;
    a.for_ = ReadPositiveDuration(r.Required("for"), r.Ptr("for"));
    a.lag = ReadPositiveDuration(r.Required("lag"), r.Ptr("lag"));
    *settle += a.for_ + a.lag;
    return a;
  }
  if (kind == "restart_manager") {
    ObjectReader r(j, ptr, {"down"});
    RestartManagerAction a;
    if (const json* v = r.Get("down")) a.down = ReadDuration(*v, r.Ptr("down"));
    *settle += a.down;
    return a;
  }
  // partition_manager
  ObjectReader r(j, ptr, {"for"});
  PartitionManagerAction a;
  a.for_ = ReadPositiveDuration(r.Required("for"), r.Ptr("for"));
  *settle += a.for_;
  return a;
}

ScenarioEvent ReadEvent(const json& j, const std::string& ptr, const Scenario& s, ParseState* state) {
  std::vector<std::string_view> allowed = {"at"};
  allowed.insert(allowed.end(), std::begin(kEventKinds), std::end(kEventKinds));
  ObjectReader r(j, ptr, allowed);
  ScenarioEvent e;
  if (const json* v = r.Get("at")) e.at = ReadDuration(*v, r.Ptr("at"));
  if (e.at > s.duration) {
    Fail(r.Ptr("at"), "after the scenario's duration (" + FormatScenarioDuration(s.duration) + ")");
  }
  std::vector<std::string_view> kinds;
  for (std::string_view k : kEventKinds) {
    if (r.Has(k)) kinds.push_back(k);
  }
  if (kinds.empty()) Fail(ptr, "no action (expected one of: " + JoinKeys({std::begin(kEventKinds), std::end(kEventKinds)}) + ")");
  if (kinds.size() > 1) {
    Fail(ptr, "has " + std::to_string(kinds.size()) + " actions (" + JoinKeys(kinds) +
                  "); an event has exactly one");
  }
  e.kind = std::string(kinds[0]);
  e.settled_at = e.at;
  e.action = ReadAction(kinds[0], *r.Get(kinds[0]), r.Ptr(kinds[0]), &e.settled_at, s.cluster, state);
  e.text = j.dump();
  return e;
}

Expectation ReadExpectation(const json& j, const std::string& ptr, const Scenario& s, ParseState* state) {
  ObjectReader outer(j, ptr, {std::begin(kExpectKinds), std::end(kExpectKinds)});
  if (j.size() != 1) {
    Fail(ptr, j.empty() ? "no expectation (expected one of: " +
                              JoinKeys({std::begin(kExpectKinds), std::end(kExpectKinds)}) + ")"
                        : "has " + std::to_string(j.size()) + " expectations; give one per entry");
  }
  Expectation e;
  e.kind = j.begin().key();
  e.text = j.dump();
  const json& body = j.begin().value();
  std::string p = outer.Ptr(e.kind);
  auto ref = [&](const ObjectReader& r) {
    std::string name = ReadControllerRef(r);
    state->refs.push_back({name, r.Ptr("controller")});
    return name;
  };
  if (e.kind == "converged") {
    ObjectReader r(body, p, {"controller", "after", "within"});
    ConvergedExpect c;
    c.controller = ref(r);
    if (const json* v = r.Get("after")) c.after = ReadDuration(*v, r.Ptr("after"));
    if (c.after > s.duration) Fail(r.Ptr("after"), "after the scenario's duration");
    if (const json* v = r.Get("within")) c.within = ReadPositiveDuration(*v, r.Ptr("within"));
    e.spec = c;
  } else if (e.kind == "never_above") {
    ObjectReader r(body, p, {"controller", "active"});
    NeverAboveExpect c;
    c.controller = ref(r);
    c.active = -1;  // resolved once events are known
    if (const json* v = r.Get("active")) c.active = ReadCount(*v, r.Ptr("active"));
    e.spec = c;
  } else if (e.kind == "final") {
    ObjectReader r(body, p, {"controller", "running", "replicas_status"});
    FinalExpect c;
    c.controller = ref(r);
    if (const json* v = r.Get("running")) c.running = ReadCount(*v, r.Ptr("running"));
    if (const json* v = r.Get("replicas_status")) c.replicas_status = ReadCount(*v, r.Ptr("replicas_status"));
    e.spec = c;
  } else if (e.kind == "api_calls") {
    ObjectReader r(body, p, {"verb", "at_most"});
    ApiCallsExpect c;
    if (const json* v = r.Get("verb")) c.verb = ReadVerb(*v, r.Ptr("verb"));
    c.at_most = ReadInt(r.Required("at_most"), r.Ptr("at_most"), 0, std::numeric_limits<int64_t>::max());
    e.spec = c;
  } else {
    ObjectReader r(body, p, {"controller"});
    e.spec = StatusMatchesExpect{ref(r)};
  }
  return e;
}

// Replays the controller-changing events in firing order: checks that every event refers to a
// controller that exists when it fires, and returns each controller's highest replicas.
std::map<std::string, int32_t> CheckControllerTimeline(const Scenario& s) {
  std::map<std::string, ControllerConfig> live;
  std::map<std::string, int32_t> peak;
  for (const ControllerConfig& c : s.controllers) {
    live[c.name] = c;
    peak[c.name] = c.replicas;
  }
  std::vector<std::size_t> order(s.events.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return s.events[a].at < s.events[b].at; });
  for (std::size_t i : order) {
    const ScenarioEvent& e = s.events[i];
    std::string ptr = "/events/" + std::to_string(i) + "/" + e.kind;
    auto need = [&](const std::string& name) -> ControllerConfig& {
      auto it = live.find(name);
      if (it == live.end()) {
        Fail(ptr + "/controller", "controller \"" + name + "\" does not exist at " + FormatScenarioDuration(e.at));
      }
      return it->second;
    };
    if (const auto* a = std::get_if<ScaleAction>(&e.action)) {
      need(a->controller).replicas = a->replicas;
      peak[a->controller] = std::max(peak[a->controller], a->replicas);
    } else if (const auto* a = std::get_if<UpdateControllerAction>(&e.action)) {
      ControllerConfig& c = need(a->controller);
      if (a->replicas) c.replicas = *a->replicas;
      if (a->selector) c.selector = *a->selector;
      if (a->template_) c.template_ = *a->template_;
      if (!SelectorMapMatches(c.selector, c.template_.metadata.labels)) {
        Fail(ptr, "the controller's template labels would not match its selector " + FormatSelectorMap(c.selector));
      }
      peak[a->controller] = std::max(peak[a->controller], c.replicas);
    } else if (const auto* a = std::get_if<CreateControllerAction>(&e.action)) {
      if (live.count(a->controller.name)) {
        Fail(ptr + "/name", "controller \"" + a->controller.name + "\" already exists at " + FormatScenarioDuration(e.at));
      }
      live[a->controller.name] = a->controller;
      peak[a->controller.name] = std::max(peak[a->controller.name], a->controller.replicas);
    } else if (const auto* a = std::get_if<DeleteControllerAction>(&e.action)) {
      need(a->controller);
      live.erase(a->controller);
    }
  }
  return peak;
}

Scenario ParseOrThrow(const json& doc, std::string_view file) {
  ObjectReader r(doc, "", {"name", "description", "seed", "tier", "duration", "cluster", "manager",
                           "controllers", "events", "expect"});
  Scenario s;
  s.file = std::string(file);
  s.name = ReadName(r.Required("name"), r.Ptr("name"));
  if (const json* v = r.Get("description")) s.description = ReadString(*v, r.Ptr("description"));
  if (const json* v = r.Get("seed")) {
    if (!v->is_number_integer()) WrongType(*v, r.Ptr("seed"), "an integer");
    if (v->is_number_unsigned()) {
      s.seed = v->get<uint64_t>();
    } else {
      s.seed = static_cast<uint64_t>(ReadInt(*v, r.Ptr("seed"), 0, std::numeric_limits<int64_t>::max()));
    }
  }
  if (const json* v = r.Get("tier")) {
    s.tier = ReadString(*v, r.Ptr("tier"));
    if (s.tier != "fast" && s.tier != "slow") Fail(r.Ptr("tier"), "must be \"fast\" or \"slow\", got \"" + s.tier + "\"");
  }
  if (const json* v = r.Get("duration")) s.duration = ReadPositiveDuration(*v, r.Ptr("duration"));
  if (const json* v = r.Get("cluster")) {
    ObjectReader c(*v, r.Ptr("cluster"), {"nodes", "pod_start_latency", "api_latency", "watch_latency"});
    if (const json* n = c.Get("nodes")) s.cluster.nodes = ReadCount(*n, c.Ptr("nodes"), 1, 100'000);
    if (const json* n = c.Get("pod_start_latency")) s.cluster.pod_start_latency = ReadRange(*n, c.Ptr("pod_start_latency"));
    if (const json* n = c.Get("api_latency")) s.cluster.api_latency = ReadRange(*n, c.Ptr("api_latency"));
    if (const json* n = c.Get("watch_latency")) s.cluster.watch_latency = ReadRange(*n, c.Ptr("watch_latency"));
  }
  if (const json* v = r.Get("manager")) {
    ObjectReader m(*v, r.Ptr("manager"), {"workers", "resync", "burst_replicas"});
    if (const json* n = m.Get("workers")) s.manager.workers = ReadCount(*n, m.Ptr("workers"), 1, 1024);
    if (const json* n = m.Get("resync")) s.manager.resync = ReadPositiveDuration(*n, m.Ptr("resync"));
    if (const json* n = m.Get("burst_replicas")) s.manager.burst_replicas = ReadCount(*n, m.Ptr("burst_replicas"), 1);
  }
  {
    const json& cs = r.Required("controllers");
    std::string cp = r.Ptr("controllers");
    if (!cs.is_array()) WrongType(cs, cp, "an array of controllers");
    std::set<std::string> names;
    for (std::size_t i = 0; i < cs.size(); ++i) {
      ControllerConfig c = ReadController(cs[i], Child(cp, i));
      if (!names.insert(c.name).second) {
        Fail(Child(Child(cp, i), "name"), "duplicate controller name \"" + c.name + "\"");
      }
      s.controllers.push_back(std::move(c));
    }
  }
  ParseState state;
  if (const json* v = r.Get("events")) {
    std::string ep = r.Ptr("events");
    if (!v->is_array()) WrongType(*v, ep, "an array of events");
    for (std::size_t i = 0; i < v->size(); ++i) s.events.push_back(ReadEvent((*v)[i], Child(ep, i), s, &state));
  }
  {
    const json& es = r.Required("expect");
    std::string ep = r.Ptr("expect");
    if (!es.is_array()) WrongType(es, ep, "an array of expectations");
    for (std::size_t i = 0; i < es.size(); ++i) s.expect.push_back(ReadExpectation(es[i], Child(ep, i), s, &state));
  }
  // Every referenced controller must be defined somewhere in the scenario.
  std::set<std::string> defined;
  for (const ControllerConfig& c : s.controllers) defined.insert(c.name);
  for (const ScenarioEvent& e : s.events) {
    if (const auto* a = std::get_if<CreateControllerAction>(&e.action)) defined.insert(a->controller.name);
  }
  for (const ControllerRef& ref : state.refs) {
    if (!defined.count(ref.name)) Fail(ref.pointer, "unknown controller \"" + ref.name + "\"");
  }
  std::map<std::string, int32_t> peak = CheckControllerTimeline(s);
  for (Expectation& e : s.expect) {
    if (auto* n = std::get_if<NeverAboveExpect>(&e.spec); n != nullptr && n->active < 0) {
      n->active = peak[n->controller];
    }
  }
  return s;
}

}  // namespace

const char* VerbKey(Verb verb) {
  for (const auto& [name, v] : kVerbs) {
    if (v == verb) return name;
  }
  return "unknown";
}

std::string EscapePointerToken(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  for (char c : token) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

Duration Scenario::QuietPeriod() const {
  Duration quiet = manager.resync;
  for (const Expectation& e : expect) {
    if (const auto* c = std::get_if<ConvergedExpect>(&e.spec)) quiet = std::max(quiet, c->within);
  }
  return quiet;
}

Duration Scenario::SettleTime() const {
  Duration t{0};
  for (const ScenarioEvent& e : events) t = std::max(t, e.settled_at);
  for (const Expectation& e : expect) {
    if (const auto* c = std::get_if<ConvergedExpect>(&e.spec)) t = std::max(t, c->after);
  }
  return t;
}

Result<Scenario> ParseScenario(const nlohmann::json& doc, std::string_view file) {
  try {
    return ParseOrThrow(doc, file);
  } catch (const ParseError& e) {
    return Status(Code::kInvalid, std::string(file) + ": " + e.pointer + ": " + e.reason);
  }
}

Result<Scenario> ParseScenarioText(std::string_view text, std::string_view file) {
  json doc;
  try {
    doc = json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    return Status(Code::kInvalid, std::string(file) + ": /: invalid JSON: " + e.what());
  }
  return ParseScenario(doc, file);
}

Result<Scenario> LoadScenarioFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(Code::kInvalid, path + ": cannot read the file");
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) return Status(Code::kInvalid, path + ": cannot read the file");
  return ParseScenarioText(buf.str(), path);
}

}  // namespace rcsim
