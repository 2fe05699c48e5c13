#include "harness/scenario.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "engine/labels.h"
#include "harness/duration.h"
#include "harness/scenario_expand.h"
#include "harness/scenario_fields.h"
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
    case json::value_t::null: return "null";
    case json::value_t::object: return "an object";
    case json::value_t::array: return "an array";
    case json::value_t::string: return "a string";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "an integer";
    case json::value_t::number_float: return "a number";
    default: return "an unsupported value";
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

std::string JoinAnd(const std::vector<std::string_view>& keys) {
  std::string out;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (i > 0) out += i + 1 == keys.size() ? " and " : ", ";
    out += keys[i];
  }
  return out;
}

[[noreturn]] void InternalError(const ObjectSpec& spec, std::string_view key, const char* what) {
  std::cerr << "rcsim: internal error: scenario field " << spec.name << "." << key << ": " << what << "\n";
  std::abort();
}

// A JSON object read through its ObjectSpec (scenario_fields.cc): keys outside the spec fail at
// construction, as do two keys of an exclusive group; the parser can only read keys the spec lists,
// with the accessor of the key's type and the spec's bounds.
class ObjectReader {
 public:
  ObjectReader(const json& j, std::string ptr, const ObjectSpec& spec)
      : j_(j), ptr_(std::move(ptr)), spec_(spec) {
    if (!j.is_object()) WrongType(j, ptr_, "an object");
    for (const auto& [key, value] : j.items()) {
      if (FindField(spec_, key) == nullptr) {
        std::vector<std::string_view> keys;
        for (const FieldSpec& f : spec_.fields) keys.push_back(f.key);
        Fail(Child(ptr_, key), "unknown key (expected one of: " + JoinKeys(keys) + ")");
      }
    }
    for (const auto& group : spec_.exclusive) {
      int given = 0;
      for (std::string_view key : group) {
        if (Has(key) && ++given > 1) Fail(Ptr(key), JoinAnd(group) + " are exclusive; give one");
      }
    }
  }
  ObjectReader(const json& j, std::string ptr, std::string_view spec_name)
      : ObjectReader(j, std::move(ptr), ScenarioObjectSpec(spec_name)) {}

  const FieldSpec& Field(std::string_view key) const {
    const FieldSpec* f = FindField(spec_, key);
    if (f == nullptr) InternalError(spec_, key, "read by the parser but not in the field table");
    return *f;
  }
  const json* Get(std::string_view key) const {
    const FieldSpec& f = Field(key);
    auto it = j_.find(key);
    if (it == j_.end()) {
      if (f.required) Fail(Ptr(key), "required");
      return nullptr;
    }
    return &*it;
  }
  bool Has(std::string_view key) const { return j_.contains(key); }
  const json& Required(std::string_view key) const {
    if (!Field(key).required) InternalError(spec_, key, "read as required but optional in the field table");
    return *Get(key);
  }
  std::string Ptr(std::string_view key) const { return Child(ptr_, key); }
  const std::string& ptr() const { return ptr_; }
  const json& json_value() const { return j_; }
  const ObjectSpec& spec() const { return spec_; }

  // Typed accessors: absent optional fields give nullopt, absent required ones fail with "required".
  std::optional<int64_t> Int(std::string_view key, std::optional<int64_t> max = std::nullopt) const;
  std::optional<Duration> Dur(std::string_view key) const;
  std::optional<double> Fraction(std::string_view key) const;
  std::optional<bool> Bool(std::string_view key) const;
  std::optional<std::string> Str(std::string_view key) const;
  std::optional<Labels> LabelMap(std::string_view key) const;
  std::optional<DurationRange> Range(std::string_view key) const;
  std::optional<std::vector<std::string>> Strings(std::string_view key) const;

 private:
  const FieldSpec& Typed(std::string_view key, std::initializer_list<FieldType> types) const {
    const FieldSpec& f = Field(key);
    for (FieldType t : types) {
      if (f.type == t) return f;
    }
    InternalError(spec_, key, "read with an accessor of another type than the field table's");
  }

  const json& j_;
  std::string ptr_;
  const ObjectSpec& spec_;
};

std::string ReadString(const json& j, const std::string& ptr) {
  if (!j.is_string()) WrongType(j, ptr, "a string");
  return j.get<std::string>();
}

int64_t ReadInt(const json& j, const std::string& ptr, int64_t min, int64_t max) {
  if (j.is_number_unsigned()) {
    uint64_t u = j.get<uint64_t>();
    if (u > static_cast<uint64_t>(max))
      Fail(ptr, "must be at most " + std::to_string(max) + ", got " + j.dump());
    // JSON parses 0 and every positive integer as unsigned: the minimum applies here too.
    if (min > 0 && u < static_cast<uint64_t>(min)) {
      Fail(ptr, "must be at least " + std::to_string(min) + ", got " + j.dump());
    }
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

constexpr Duration kMaxScenarioDuration = std::chrono::hours(kMaxScenarioDurationHours);

Duration ReadDuration(const json& j, const std::string& ptr) {
  if (!j.is_string()) WrongType(j, ptr, "a duration string such as \"1m30s\"");
  Result<Duration> d = ParseDuration(j.get_ref<const std::string&>());
  if (!d.ok()) Fail(ptr, d.status().message());
  if (*d > kMaxScenarioDuration) {
    Fail(ptr, "must be at most " + FormatScenarioDuration(kMaxScenarioDuration) + ", got " + j.dump());
  }
  return *d;
}

Duration ReadPositiveDuration(const json& j, const std::string& ptr) {
  Duration d = ReadDuration(j, ptr);
  if (d <= Duration::zero()) Fail(ptr, "must be greater than 0");
  return d;
}

// a + b for durations each at most kMaxScenarioDuration: cannot overflow, checked anyway so a later
// change of the bound cannot make a sum wrap silently.
Duration AddDurations(Duration a, Duration b, const std::string& ptr) {
  if (b > Duration::zero() && a > Duration::max() - b)
    Fail(ptr, "the sum of the event's durations overflows");
  return a + b;
}

// {"min": d, "max": d}, or one duration string meaning min == max.
DurationRange ReadRange(const json& j, const std::string& ptr) {
  if (j.is_string()) {
    Duration d = ReadDuration(j, ptr);
    return {d, d};
  }
  if (!j.is_object()) WrongType(j, ptr, "a duration or {\"min\", \"max\"}");
  ObjectReader r(j, ptr, "duration_range");
  DurationRange range;
  range.min = *r.Dur("min");
  range.max = *r.Dur("max");
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
    Fail(ptr, "invalid name \"" + name +
                  "\" (lower-case letters, digits, '-' and '.', starting and "
                  "ending with a letter or digit)");
  }
  return name;
}

std::optional<int64_t> ObjectReader::Int(std::string_view key, std::optional<int64_t> max) const {
  const FieldSpec& f = Typed(key, {FieldType::kInteger});
  const json* v = Get(key);
  if (v == nullptr) return std::nullopt;
  return ReadInt(*v, Ptr(key), f.min, max.value_or(f.max));
}

std::optional<Duration> ObjectReader::Dur(std::string_view key) const {
  const FieldSpec& f = Typed(key, {FieldType::kDuration, FieldType::kPositiveDuration});
  const json* v = Get(key);
  if (v == nullptr) return std::nullopt;
  return f.type == FieldType::kPositiveDuration ? ReadPositiveDuration(*v, Ptr(key))
                                                : ReadDuration(*v, Ptr(key));
}

std::optional<double> ObjectReader::Fraction(std::string_view key) const {
  Typed(key, {FieldType::kFraction});
  const json* v = Get(key);
  if (v == nullptr) return std::nullopt;
  return ReadFraction(*v, Ptr(key));
}

std::optional<bool> ObjectReader::Bool(std::string_view key) const {
  const FieldSpec& f = Typed(key, {FieldType::kBool, FieldType::kTrue});
  const json* v = Get(key);
  if (v == nullptr) return std::nullopt;
  bool b = ReadBool(*v, Ptr(key));
  if (f.type == FieldType::kTrue && !b) {
    Fail(Ptr(key), "must be true (omit it to target by " +
                       std::string(key == "all" ? "count or fraction" : "default") + ")");
  }
  return b;
}

std::optional<std::string> ObjectReader::Str(std::string_view key) const {
  const FieldSpec& f = Typed(key, {FieldType::kString, FieldType::kEnum, FieldType::kName,
                                   FieldType::kDnsLabel, FieldType::kControllerRef});
  const json* v = Get(key);
  if (v == nullptr) return std::nullopt;
  std::string p = Ptr(key);
  switch (f.type) {
    case FieldType::kName: return ReadName(*v, p);
    case FieldType::kControllerRef: {
      std::string ref = ReadString(*v, p);
      const std::size_t slash = ref.find('/');
      if (slash == std::string::npos) return ReadName(*v, p);
      const std::string ns = ref.substr(0, slash);
      if (!IsDns1123Label(ns))
        Fail(p, "invalid namespace \"" + ns + "\" in \"" + ref + "\" (namespace/name)");
      ReadName(json(ref.substr(slash + 1)), p);
      return ref;
    }
    case FieldType::kDnsLabel: {
      std::string s = ReadString(*v, p);
      if (!IsDns1123Label(s)) {
        Fail(p, std::string(key == "namespace" ? "invalid namespace \"" : "invalid container name \"") + s +
                    "\"");
      }
      return s;
    }
    case FieldType::kEnum: {
      std::string s = ReadString(*v, p);
      if (std::find(f.values.begin(), f.values.end(), s) == f.values.end()) {
        if (f.values.size() == 1) {
          Fail(p, "a replication controller's pods must use \"" + std::string(f.values[0]) + "\"");
        }
        std::string expected;
        for (std::size_t i = 0; i < f.values.size(); ++i) {
          if (i > 0) expected += i + 1 == f.values.size() ? " or " : ", ";
          expected += "\"" + std::string(f.values[i]) + "\"";
        }
        Fail(p, "must be " + expected + ", got \"" + s + "\"");
      }
      return s;
    }
    default: {
      std::string s = ReadString(*v, p);
      if (f.non_empty && s.empty()) Fail(p, "must not be empty");
      return s;
    }
  }
}

std::optional<Labels> ObjectReader::LabelMap(std::string_view key) const {
  const FieldSpec& f = Typed(key, {FieldType::kLabels});
  const json* v = Get(key);
  if (v == nullptr) return std::nullopt;
  Labels labels = ReadLabels(*v, Ptr(key));
  if (f.non_empty && labels.empty()) Fail(Ptr(key), "must not be empty");
  return labels;
}

std::optional<DurationRange> ObjectReader::Range(std::string_view key) const {
  Typed(key, {FieldType::kRange});
  const json* v = Get(key);
  if (v == nullptr) return std::nullopt;
  return ReadRange(*v, Ptr(key));
}

std::optional<std::vector<std::string>> ObjectReader::Strings(std::string_view key) const {
  Typed(key, {FieldType::kStringArray});
  const json* v = Get(key);
  if (v == nullptr) return std::nullopt;
  return ReadStringArray(*v, Ptr(key));
}

// The array at `key` (a kObjectArray field), checked to be an array (and non-empty if the table says).
const json* ReadArrayField(const ObjectReader& r, std::string_view key, const char* expected,
                           const char* empty_reason = "must not be empty") {
  const FieldSpec& f = r.Field(key);
  if (f.type != FieldType::kObjectArray && f.type != FieldType::kVerbArray) {
    InternalError(r.spec(), key, "read as an array but not one in the field table");
  }
  const json* v = r.Get(key);
  if (v == nullptr) return nullptr;
  if (!v->is_array()) WrongType(*v, r.Ptr(key), expected);
  if (f.non_empty && v->empty()) Fail(r.Ptr(key), empty_reason);
  return v;
}

// The object at `key` (a kObject field) and its spec's name.
const json* ReadObjectField(const ObjectReader& r, std::string_view key) {
  if (r.Field(key).type != FieldType::kObject)
    InternalError(r.spec(), key, "read as an object but not one in the field table");
  return r.Get(key);
}

Container DefaultContainer(const std::string& name) {
  Container c;
  c.name = name;
  c.image = "busybox";
  c.command = {"sleep", "3600"};
  return c;
}

Container ReadContainer(const json& j, const std::string& ptr) {
  ObjectReader r(j, ptr, "container");
  Container c;
  c.name = *r.Str("name");
  c.image = *r.Str("image");
  if (auto v = r.Strings("command")) c.command = std::move(*v);
  if (auto v = r.Strings("args")) c.args = std::move(*v);
  return c;
}

// A pod template in the core/v1 shape (camelCase keys, as in Kubernetes manifests).
PodTemplateSpec ReadTemplate(const json& j, const std::string& ptr, const std::string& controller_name,
                             bool* has_labels) {
  ObjectReader r(j, ptr, "template");
  PodTemplateSpec t;
  *has_labels = false;
  if (const json* m = ReadObjectField(r, "metadata")) {
    ObjectReader mr(*m, r.Ptr("metadata"), "template_metadata");
    if (auto v = mr.LabelMap("labels")) {
      t.metadata.labels = std::move(*v);
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
  if (const json* s = ReadObjectField(r, "spec")) {
    ObjectReader sr(*s, r.Ptr("spec"), "pod_spec");
    if (const json* v =
            ReadArrayField(sr, "containers", "an array of containers", "must hold at least one container")) {
      std::string cp = sr.Ptr("containers");
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
    if (auto p = sr.Str("restartPolicy")) t.spec.restart_policy = *p;
    if (auto v = sr.Int("terminationGracePeriodSeconds")) t.spec.termination_grace_period_seconds = *v;
  }
  return t;
}

ControllerConfig ReadController(const json& j, const std::string& ptr) {
  ObjectReader r(j, ptr, "controller");
  ControllerConfig c;
  c.name = *r.Str("name");
  if (auto v = r.Str("namespace")) c.namespace_ = *v;
  if (auto v = r.Int("replicas")) c.replicas = static_cast<int32_t>(*v);
  if (auto v = r.Int("min_ready_seconds")) c.min_ready_seconds = static_cast<int32_t>(*v);
  bool has_selector = false, has_labels = false;
  if (auto v = r.LabelMap("selector")) {
    c.selector = std::move(*v);
    has_selector = true;
  }
  if (const json* v = ReadObjectField(r, "template")) {
    c.template_ = ReadTemplate(*v, r.Ptr("template"), c.name, &has_labels);
  } else {
    c.template_.spec.containers = {DefaultContainer(c.name)};
  }
  if (!has_selector)
    c.selector = has_labels && !c.template_.metadata.labels.empty() ? c.template_.metadata.labels
                                                                    : Labels{{"app", c.name}};
  if (!has_labels) c.template_.metadata.labels = c.selector;
  if (!SelectorMapMatches(c.selector, c.template_.metadata.labels)) {
    Fail(r.Ptr("template") + "/metadata/labels",
         "do not match the selector " + FormatSelectorMap(c.selector));
  }
  return c;
}

PodTarget ReadPodTarget(const json& j, const std::string& ptr, std::string_view spec = "pod_target") {
  ObjectReader r(j, ptr, spec);
  PodTarget t;
  if (auto v = r.LabelMap("selector")) t.selector = std::move(*v);
  if (auto v = r.Str("namespace")) t.namespace_ = *v;
  if (auto v = r.Int("count")) {
    t.mode = PodTarget::Mode::kCount;
    t.count = *v;
  } else if (auto f = r.Fraction("fraction")) {
    t.mode = PodTarget::Mode::kFraction;
    t.fraction = *f;
  } else if (r.Bool("all").has_value()) {
    t.mode = PodTarget::Mode::kAll;
  }
  return t;
}

std::string ReadControllerRef(const ObjectReader& r) { return *r.Str("controller"); }

constexpr std::pair<const char*, Verb> kVerbs[] = {
    {"get", Verb::kGet},       {"list", Verb::kList},   {"watch", Verb::kWatch},  {"create", Verb::kCreate},
    {"update", Verb::kUpdate}, {"patch", Verb::kPatch}, {"delete", Verb::kDelete}};

Verb ReadVerb(const json& j, const std::string& ptr) {
  std::string s = ReadString(j, ptr);
  for (const auto& [name, verb] : kVerbs) {
    if (s == name) return verb;
  }
  Fail(ptr, "unknown verb \"" + s + "\" (expected one of: get, list, watch, create, update, patch, delete)");
}

// The name part of a controller reference ("web" or "prod/web").
std::string RefName(const std::string& ref) {
  const std::size_t slash = ref.find('/');
  return slash == std::string::npos ? ref : ref.substr(slash + 1);
}

// The `node` field: one of the cluster's node names, node-0 .. node-<nodes-1>.
std::string ReadNodeName(const ObjectReader& r, const ClusterConfig& cluster) {
  std::string node = *r.Str("node");
  bool known = false;
  for (int32_t i = 0; i < cluster.nodes && !known; ++i) known = node == "node-" + std::to_string(i);
  if (!known) {
    Fail(r.Ptr("node"), "unknown node \"" + node + "\" (nodes are node-0 .. node-" +
                            std::to_string(cluster.nodes - 1) + ")");
  }
  return node;
}

EventAction ReadAction(std::string_view kind, const json& j, const std::string& ptr, Duration* settle,
                       const ClusterConfig& cluster) {
  auto extend = [&](Duration d, const std::string& p) { *settle = AddDurations(*settle, d, p); };
  if (kind == "kill_pods") return KillPodsAction{ReadPodTarget(j, ptr)};
  if (kind == "delete_pods") return DeletePodsAction{ReadPodTarget(j, ptr)};
  if (kind == "label_pods") {
    LabelPodsAction a;
    a.target = ReadPodTarget(j, ptr, "label_pods");
    a.labels = *ObjectReader(j, ptr, "label_pods").LabelMap("labels");
    return a;
  }
  if (kind == "scale") {
    ObjectReader r(j, ptr, "scale");
    ScaleAction a;
    a.controller = ReadControllerRef(r);
    a.replicas = static_cast<int32_t>(*r.Int("replicas"));
    return a;
  }
  if (kind == "update_controller") {
    ObjectReader r(j, ptr, "update_controller");
    UpdateControllerAction a;
    a.controller = ReadControllerRef(r);
    if (auto v = r.Int("replicas")) a.replicas = static_cast<int32_t>(*v);
    a.selector = r.LabelMap("selector");
    if (const json* v = ReadObjectField(r, "template")) {
      bool has_labels = false;
      a.template_ = ReadTemplate(*v, r.Ptr("template"), RefName(a.controller), &has_labels);
      if (!has_labels) Fail(r.Ptr("template") + "/metadata/labels", "required when updating a template");
    }
    if (!a.replicas && !a.selector && !a.template_)
      Fail(ptr, "nothing to update (give replicas, selector or template)");
    return a;
  }
  if (kind == "create_controller") return CreateControllerAction{ReadController(j, ptr)};
  if (kind == "delete_controller") {
    ObjectReader r(j, ptr, "delete_controller");
    DeleteControllerAction a;
    a.controller = ReadControllerRef(r);
    if (auto v = r.Bool("cascade")) a.cascade = *v;
    return a;
  }
  if (kind == "crash_loop") {
    CrashLoopAction a;
    a.target = ReadPodTarget(j, ptr, "crash_loop");
    ObjectReader r(j, ptr, "crash_loop");
    if (auto v = r.Dur("for")) a.for_ = *v;
    extend(a.for_, r.Ptr("for"));
    return a;
  }
  if (kind == "set_ready") {
    SetReadyAction a;
    a.target = ReadPodTarget(j, ptr, "set_ready");
    if (auto v = ObjectReader(j, ptr, "set_ready").Bool("ready")) a.ready = *v;
    return a;
  }
  if (kind == "flap_readiness") {
    FlapReadinessAction a;
    a.target = ReadPodTarget(j, ptr, "flap_readiness");
    ObjectReader r(j, ptr, "flap_readiness");
    if (auto v = r.Dur("period")) a.period = *v;
    if (auto v = r.Dur("for")) a.for_ = *v;
    if (a.period > a.for_) {
      Fail(r.Has("period") ? r.Ptr("period") : r.Ptr("for"),
           "the period (" + FormatScenarioDuration(a.period) + ") must not exceed `for` (" +
               FormatScenarioDuration(a.for_) + ")");
    }
    extend(a.for_, r.Ptr("for"));
    return a;
  }
  if (kind == "start_node_agent") {
    ObjectReader r(j, ptr, "start_node_agent");
    StartNodeAgentAction a;
    a.node = ReadNodeName(r, cluster);
    return a;
  }
  if (kind == "node_capacity") {
    ObjectReader r(j, ptr, "node_capacity");
    NodeCapacityAction a;
    if (r.Has("node")) a.node = ReadNodeName(r, cluster);
    if (auto v = r.Int("count", cluster.nodes)) a.count = static_cast<int32_t>(*v);
    a.pods = *r.Int("pods");
    return a;
  }
  if (kind == "fail_node" || kind == "stop_node_agent") {
    ObjectReader r(j, ptr, kind);
    FailNodeAction a;
    if (r.Has("node")) a.node = ReadNodeName(r, cluster);
    if (auto v = r.Int("count", cluster.nodes)) a.count = static_cast<int32_t>(*v);
    if (auto v = r.Dur("for")) {
      a.for_ = *v;
      extend(*v, r.Ptr("for"));
    }
    if (kind == "stop_node_agent") return StopNodeAgentAction{a.node, a.count, a.for_};
    return a;
  }
  if (kind == "api_faults") {
    ObjectReader r(j, ptr, "api_faults");
    ApiFaultsAction a;
    a.for_ = *r.Dur("for");
    extend(a.for_, r.Ptr("for"));
    if (auto v = r.Fraction("error_rate")) a.error_rate = *v;
    if (auto v = r.Fraction("timeout_rate")) a.timeout_rate = *v;
    if (a.error_rate + a.timeout_rate > 1.0)
      Fail(r.Ptr("timeout_rate"), "error_rate + timeout_rate must not exceed 1");
    a.latency = r.Range("latency");
    if (const json* v = ReadArrayField(r, "verbs", "an array of verbs",
                                       "must name at least one verb (omit it for all verbs)")) {
      std::string vp = r.Ptr("verbs");
      for (std::size_t i = 0; i < v->size(); ++i) {
        Verb verb = ReadVerb((*v)[i], Child(vp, i));
        if (std::find(a.verbs.begin(), a.verbs.end(), verb) != a.verbs.end()) {
          Fail(Child(vp, i), "duplicate verb");
        }
        a.verbs.push_back(verb);
      }
    }
    if (auto v = r.Str("reason")) {
      a.error_code = *v == "Forbidden"       ? Code::kForbidden
                     : *v == "InternalError" ? Code::kInternal
                                             : Code::kUnavailable;
      if (a.error_rate == 0)
        Fail(r.Ptr("reason"), "needs error_rate (the reason is what the failed calls answer)");
    }
    if (auto v = r.Str("message")) {
      a.message = *v;
      if (a.error_rate == 0)
        Fail(r.Ptr("message"), "needs error_rate (the message is what the failed calls answer)");
    }
    if (a.error_rate == 0 && a.timeout_rate == 0 && !a.latency) {
      Fail(ptr, "no fault (give error_rate, timeout_rate or latency)");
    }
    return a;
  }
  if (kind == "watch_faults") {
    ObjectReader r(j, ptr, "watch_faults");
    WatchFaultsAction a;
    if (auto v = r.Dur("for")) a.for_ = *v;
    if (auto v = r.Bool("drop")) a.drop = *v;
    a.delay = r.Dur("delay");
    if (auto v = r.Bool("compact")) a.compact = *v;
    if (auto v = r.Bool("stall")) a.stall = *v;
    if (!a.drop && !a.delay && !a.compact && !a.stall)
      Fail(ptr, "no fault (give drop, delay, compact or stall)");
    if (a.drop || a.delay || a.stall) extend(a.for_, r.Ptr("for"));
    return a;
  }
  if (kind == "stale_reads") {
    ObjectReader r(j, ptr, "stale_reads");
    StaleReadsAction a;
    a.for_ = *r.Dur("for");
    a.lag = *r.Dur("lag");
    extend(a.for_, r.Ptr("for"));
    extend(a.lag, r.Ptr("lag"));
    return a;
  }
  if (kind == "restart_manager") {
    ObjectReader r(j, ptr, "restart_manager");
    RestartManagerAction a;
    if (auto v = r.Dur("down")) a.down = *v;
    extend(a.down, r.Ptr("down"));
    return a;
  }
  if (kind == "partition_manager") {
    ObjectReader r(j, ptr, "partition_manager");
    PartitionManagerAction a;
    a.for_ = *r.Dur("for");
    extend(a.for_, r.Ptr("for"));
    return a;
  }
  if (kind == "restart_etcd") {
    ObjectReader r(j, ptr, "restart_etcd");
    RestartEtcdAction a;
    if (auto v = r.Int("member")) a.member = static_cast<int32_t>(*v);
    if (auto v = r.Dur("down")) a.down = *v;
    extend(a.down, r.Ptr("down"));
    return a;
  }
  if (kind == "kill_etcd_leader") {
    ObjectReader r(j, ptr, "kill_etcd_leader");
    KillEtcdLeaderAction a;
    if (auto v = r.Dur("down")) a.down = *v;
    extend(std::max(a.down, kEtcdElection), r.Ptr("down"));
    return a;
  }
  InternalError(ScenarioObjectSpec("event"), kind, "an action the parser does not read");
}

ScenarioEvent ReadEvent(const json& j, const std::string& ptr, const Scenario& s) {
  const ObjectSpec& spec = ScenarioObjectSpec("event");
  ObjectReader r(j, ptr, spec);
  ScenarioEvent e;
  if (auto v = r.Dur("at")) e.at = *v;
  if (e.at > s.duration) {
    Fail(r.Ptr("at"), "after the scenario's duration (" + FormatScenarioDuration(s.duration) + ")");
  }
  std::vector<std::string_view> kinds;
  for (std::string_view k : spec.action_keys) {
    if (r.Has(k)) kinds.push_back(k);
  }
  if (kinds.empty()) Fail(ptr, "no action (expected one of: " + JoinKeys(spec.action_keys) + ")");
  if (kinds.size() > 1) {
    Fail(ptr, "has " + std::to_string(kinds.size()) + " actions (" + JoinKeys(kinds) +
                  "); an event has exactly one");
  }
  e.kind = std::string(kinds[0]);
  e.settled_at = e.at;
  e.action = ReadAction(kinds[0], *ReadObjectField(r, kinds[0]), r.Ptr(kinds[0]), &e.settled_at, s.cluster);
  e.text = j.dump();
  return e;
}

// `after` and `until` of a windowed expectation: within the scenario's duration, after <= until.
void ReadWindow(const ObjectReader& r, const Scenario& s, Duration* after, std::optional<Duration>* until) {
  if (auto v = r.Dur("after")) *after = *v;
  if (*after > s.duration) Fail(r.Ptr("after"), "after the scenario's duration");
  *until = r.Dur("until");
  if (*until && **until > s.duration) Fail(r.Ptr("until"), "after the scenario's duration");
  if (*until && **until < *after) Fail(r.Ptr("until"), "before `after`");
}

Expectation ReadExpectation(const json& j, const std::string& ptr, const Scenario& s) {
  const ObjectSpec& spec = ScenarioObjectSpec("expectation");
  ObjectReader outer(j, ptr, spec);
  std::vector<std::string_view> kinds;
  for (const FieldSpec& f : spec.fields) {
    if (f.type == FieldType::kObject) kinds.push_back(f.key);
  }
  std::size_t given = 0;
  std::string kind;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (std::find(kinds.begin(), kinds.end(), it.key()) == kinds.end()) continue;
    ++given;
    kind = it.key();
  }
  if (given != 1) {
    Fail(ptr, given == 0 ? "no expectation (expected one of: " + JoinKeys(kinds) + ")"
                         : "has " + std::to_string(given) + " expectations; give one per entry");
  }
  Expectation e;
  e.kind = kind;
  e.text = j.dump();
  if (auto f = outer.Str("flaw")) e.flaw = *f;
  const json& body = *ReadObjectField(outer, e.kind);
  std::string p = outer.Ptr(e.kind);
  if (e.kind == "converged") {
    ObjectReader r(body, p, "converged");
    ConvergedExpect c;
    c.controller = ReadControllerRef(r);
    if (auto v = r.Dur("after")) c.after = *v;
    if (c.after > s.duration) Fail(r.Ptr("after"), "after the scenario's duration");
    if (auto v = r.Dur("within")) c.within = *v;
    if (auto v = r.Str("count"))
      c.count = *v == "active" ? ConvergedCount::kActive : ConvergedCount::kRunning;
    e.spec = c;
  } else if (e.kind == "never_above") {
    ObjectReader r(body, p, "never_above");
    NeverAboveExpect c;
    c.controller = ReadControllerRef(r);
    c.active = -1;  // resolved once events are known
    if (auto v = r.Int("active")) c.active = static_cast<int32_t>(*v);
    ReadWindow(r, s, &c.after, &c.until);
    if (auto v = r.Bool("allow_late_orphans")) c.allow_late_orphans = *v;
    if (c.allow_late_orphans && (c.after > Duration::zero() || c.until)) {
      Fail(r.Ptr("allow_late_orphans"), "not with after or until");
    }
    e.spec = c;
  } else if (e.kind == "never_below") {
    ObjectReader r(body, p, "never_below");
    NeverBelowExpect c;
    c.controller = ReadControllerRef(r);
    c.ready = static_cast<int32_t>(*r.Int("ready"));
    ReadWindow(r, s, &c.after, &c.until);
    e.spec = c;
  } else if (e.kind == "pods_matching") {
    ObjectReader r(body, p, "pods_matching");
    PodsMatchingExpect c;
    c.selector = *r.LabelMap("selector");
    if (auto v = r.Str("namespace")) c.namespace_ = *v;
    if (auto v = r.Int("never_above")) c.never_above = static_cast<int32_t>(*v);
    if (auto v = r.Int("final_running")) c.final_running = static_cast<int32_t>(*v);
    if (!c.never_above && !c.final_running) Fail(p, "no bound (give never_above or final_running)");
    e.spec = c;
  } else if (e.kind == "condition") {
    ObjectReader r(body, p, "condition");
    ConditionExpect c;
    c.controller = ReadControllerRef(r);
    if (auto v = r.Str("type")) c.type = *v;
    if (auto v = r.Str("reason")) c.reason = *v;
    if (auto v = r.Bool("seen")) c.seen = *v;
    c.final = r.Bool("final");
    if (!c.seen && !c.reason.empty()) Fail(r.Ptr("reason"), "a reason needs seen: true");
    e.spec = c;
  } else if (e.kind == "final") {
    ObjectReader r(body, p, "final");
    FinalExpect c;
    c.controller = ReadControllerRef(r);
    if (auto v = r.Int("running")) c.running = static_cast<int32_t>(*v);
    if (auto v = r.Int("replicas_status")) c.replicas_status = static_cast<int32_t>(*v);
    e.spec = c;
  } else if (e.kind == "api_calls") {
    ObjectReader r(body, p, "api_calls");
    ApiCallsExpect c;
    if (const json* v = r.Get("verb")) c.verb = ReadVerb(*v, r.Ptr("verb"));
    c.at_most = *r.Int("at_most");
    e.spec = c;
  } else if (e.kind == "restarts_at_most") {
    ObjectReader r(body, p, "restarts_at_most");
    e.spec = RestartsAtMostExpect{*r.Int("at_most")};
  } else {
    ObjectReader r(body, p, "status_matches");
    e.spec = StatusMatchesExpect{ReadControllerRef(r)};
  }
  return e;
}

// "name" for a controller of the default namespace, else "namespace/name" (messages).
std::string RefText(const std::string& ns, const std::string& name) {
  return ns == "default" ? name : ns + "/" + name;
}

// Resolves every controller reference of the events and expectations (scenario.h): `namespace/name`
// must name a controller the scenario defines; a bare name the one controller of that name, in any
// namespace. Sets each reference's name and namespace.
void ResolveControllerRefs(Scenario& s) {
  std::map<std::string, std::set<std::string>> namespaces;  // name -> namespaces defining it
  for (const ControllerConfig& c : s.controllers) namespaces[c.name].insert(c.namespace_);
  for (const ScenarioEvent& e : s.events) {
    if (const auto* a = std::get_if<CreateControllerAction>(&e.action)) {
      namespaces[a->controller.name].insert(a->controller.namespace_);
    }
  }
  auto resolve = [&](std::string& controller, std::string& ns, const std::string& pointer) {
    const std::string written = controller;
    const std::size_t slash = written.find('/');
    controller = RefName(written);
    auto it = namespaces.find(controller);
    if (slash != std::string::npos) {
      ns = written.substr(0, slash);
      if (it == namespaces.end() || it->second.count(ns) == 0) {
        Fail(pointer, "unknown controller \"" + written + "\"");
      }
      return;
    }
    if (it == namespaces.end()) Fail(pointer, "unknown controller \"" + written + "\"");
    if (it->second.size() > 1) {
      std::string list;
      for (const std::string& n : it->second) list += (list.empty() ? "" : ", ") + n;
      Fail(pointer, "controller \"" + written + "\" is ambiguous: namespaces " + list +
                        " each have one; write namespace/name");
    }
    ns = *it->second.begin();
  };
  for (std::size_t i = 0; i < s.events.size(); ++i) {
    ScenarioEvent& e = s.events[i];
    const std::string pointer = "/events/" + std::to_string(i) + "/" + e.kind + "/controller";
    if (auto* a = std::get_if<ScaleAction>(&e.action)) resolve(a->controller, a->namespace_, pointer);
    if (auto* a = std::get_if<UpdateControllerAction>(&e.action))
      resolve(a->controller, a->namespace_, pointer);
    if (auto* a = std::get_if<DeleteControllerAction>(&e.action))
      resolve(a->controller, a->namespace_, pointer);
  }
  for (std::size_t i = 0; i < s.expect.size(); ++i) {
    Expectation& e = s.expect[i];
    const std::string pointer = "/expect/" + std::to_string(i) + "/" + e.kind + "/controller";
    std::visit(
        [&](auto& spec) {
          if constexpr (requires {
                          spec.controller;
                          spec.namespace_;
                        }) {
            resolve(spec.controller, spec.namespace_, pointer);
          }
        },
        e.spec);
  }
}

// Replays the controller-changing events in firing order: checks that every event refers to a
// controller that exists when it fires, and returns each controller's highest replicas, by
// "namespace/name".
std::map<std::string, int32_t> CheckControllerTimeline(const Scenario& s) {
  std::map<std::string, ControllerConfig> live;  // by "namespace/name"
  std::map<std::string, int32_t> peak;
  auto key = [](const std::string& ns, const std::string& name) { return ns + "/" + name; };
  for (const ControllerConfig& c : s.controllers) {
    live[key(c.namespace_, c.name)] = c;
    peak[key(c.namespace_, c.name)] = c.replicas;
  }
  std::vector<std::size_t> order(s.events.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return s.events[a].at < s.events[b].at; });
  for (std::size_t i : order) {
    const ScenarioEvent& e = s.events[i];
    std::string ptr = "/events/" + std::to_string(i) + "/" + e.kind;
    auto need = [&](const std::string& ns, const std::string& name) -> ControllerConfig& {
      auto it = live.find(key(ns, name));
      if (it == live.end()) {
        Fail(ptr + "/controller",
             "controller \"" + RefText(ns, name) + "\" does not exist at " + FormatScenarioDuration(e.at));
      }
      return it->second;
    };
    if (const auto* a = std::get_if<ScaleAction>(&e.action)) {
      need(a->namespace_, a->controller).replicas = a->replicas;
      int32_t& p = peak[key(a->namespace_, a->controller)];
      p = std::max(p, a->replicas);
    } else if (const auto* a = std::get_if<UpdateControllerAction>(&e.action)) {
      ControllerConfig& c = need(a->namespace_, a->controller);
      if (a->replicas) c.replicas = *a->replicas;
      if (a->selector) c.selector = *a->selector;
      if (a->template_) c.template_ = *a->template_;
      if (!SelectorMapMatches(c.selector, c.template_.metadata.labels)) {
        Fail(ptr, "the controller's template labels would not match its selector " +
                      FormatSelectorMap(c.selector));
      }
      int32_t& p = peak[key(a->namespace_, a->controller)];
      p = std::max(p, c.replicas);
    } else if (const auto* a = std::get_if<CreateControllerAction>(&e.action)) {
      const std::string k = key(a->controller.namespace_, a->controller.name);
      if (live.count(k)) {
        Fail(ptr + "/name", "controller \"" + RefText(a->controller.namespace_, a->controller.name) +
                                "\" already exists at " + FormatScenarioDuration(e.at));
      }
      live[k] = a->controller;
      peak[k] = std::max(peak[k], a->controller.replicas);
    } else if (const auto* a = std::get_if<DeleteControllerAction>(&e.action)) {
      need(a->namespace_, a->controller);
      live.erase(key(a->namespace_, a->controller));
    }
  }
  return peak;
}

Scenario ParseOrThrow(const json& doc, std::string_view file) {
  ObjectReader r(doc, "", "scenario");
  Scenario s;
  s.file = std::string(file);
  s.name = *r.Str("name");
  if (auto v = r.Str("description")) s.description = *v;
  if (const json* v = r.Get("seed")) {
    if (!v->is_number_integer()) WrongType(*v, r.Ptr("seed"), "an integer");
    if (v->is_number_unsigned()) {
      s.seed = v->get<uint64_t>();
    } else {
      s.seed = static_cast<uint64_t>(ReadInt(*v, r.Ptr("seed"), 0, std::numeric_limits<int64_t>::max()));
    }
  }
  if (auto v = r.Str("tier")) s.tier = *v;
  if (auto v = r.Dur("duration")) s.duration = *v;
  if (const json* v = ReadObjectField(r, "cluster")) {
    ObjectReader c(*v, r.Ptr("cluster"), "cluster");
    if (auto n = c.Int("nodes")) s.cluster.nodes = static_cast<int32_t>(*n);
    if (auto n = c.Range("pod_start_latency")) s.cluster.pod_start_latency = *n;
    if (auto n = c.Range("api_latency")) s.cluster.api_latency = *n;
    if (auto n = c.Range("watch_latency")) s.cluster.watch_latency = *n;
    if (auto n = c.Dur("node_monitor_grace_period")) s.cluster.node_monitor_grace_period = *n;
    if (auto n = c.Dur("pod_eviction_timeout")) s.cluster.pod_eviction_timeout = *n;
    if (auto n = c.Int("max_pods")) s.cluster.max_pods = static_cast<int32_t>(*n);
  }
  if (const json* v = ReadObjectField(r, "manager")) {
    ObjectReader m(*v, r.Ptr("manager"), "manager");
    if (auto n = m.Int("workers")) s.manager.workers = static_cast<int32_t>(*n);
    if (auto n = m.Dur("resync")) s.manager.resync = *n;
    if (auto n = m.Int("burst_replicas")) s.manager.burst_replicas = static_cast<int32_t>(*n);
    if (auto k = m.Str("kind")) s.manager.kind = *k;
  }
  {
    const json& cs = *ReadArrayField(r, "controllers", "an array of controllers");
    std::string cp = r.Ptr("controllers");
    std::set<std::pair<std::string, std::string>> names;  // (namespace, name): unique
    for (std::size_t i = 0; i < cs.size(); ++i) {
      ControllerConfig c = ReadController(cs[i], Child(cp, i));
      if (!names.insert({c.namespace_, c.name}).second) {
        Fail(Child(Child(cp, i), "name"),
             "duplicate controller name \"" + c.name + "\"" +
                 (c.namespace_ == "default" ? "" : " in namespace " + c.namespace_));
      }
      s.controllers.push_back(std::move(c));
    }
  }
  if (const json* v = ReadArrayField(r, "events", "an array of events")) {
    std::string ep = r.Ptr("events");
    for (std::size_t i = 0; i < v->size(); ++i) s.events.push_back(ReadEvent((*v)[i], Child(ep, i), s));
  }
  {
    const json& es = *ReadArrayField(r, "expect", "an array of expectations");
    std::string ep = r.Ptr("expect");
    for (std::size_t i = 0; i < es.size(); ++i) s.expect.push_back(ReadExpectation(es[i], Child(ep, i), s));
  }
  // Every referenced controller must be defined somewhere in the scenario, and only one by that name.
  ResolveControllerRefs(s);
  std::map<std::string, int32_t> peak = CheckControllerTimeline(s);
  for (Expectation& e : s.expect) {
    if (auto* n = std::get_if<NeverAboveExpect>(&e.spec); n != nullptr && n->active < 0) {
      n->active = peak[n->namespace_ + "/" + n->controller];
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

Result<Scenario> ParseScenarioValue(
    const nlohmann::json& value, std::string_view file,
    const std::function<std::string(const std::string&, const std::string&)>& error) {
  try {
    return ParseOrThrow(value, file);
  } catch (const ParseError& e) {
    return Status(Code::kInvalid, error(e.pointer, e.reason));
  }
}

Result<Scenario> ParseScenarioDocument(const ScenarioDocument& doc) {
  if (doc.value.is_object() && (doc.value.contains("include") || doc.value.contains("matrix"))) {
    std::string key = doc.value.contains("include") ? "include" : "matrix";
    return Status(Code::kInvalid,
                  doc.Error("/" + key, "only a scenario file (rcsim run, validate, replay) can use " + key));
  }
  return ParseScenarioValue(doc.value, doc.file,
                            [&](const std::string& p, const std::string& r) { return doc.Error(p, r); });
}

Result<Scenario> ParseScenario(const nlohmann::json& doc, std::string_view file) {
  try {
    return ParseOrThrow(doc, file);
  } catch (const ParseError& e) {
    return Status(Code::kInvalid, std::string(file) + ": " + e.pointer + ": " + e.reason);
  }
}

Result<Scenario> ParseScenarioText(std::string_view text, std::string_view file) {
  return ParseScenarioText(text, file, DocumentFormat::kJson);
}

Result<Scenario> ParseScenarioText(std::string_view text, std::string_view file, DocumentFormat format) {
  Result<ScenarioDocument> doc = ParseDocument(text, file, format);
  if (!doc.ok()) return doc.status();
  return ParseScenarioDocument(*doc);
}

Result<Scenario> LoadScenarioFile(const std::string& path) {
  Result<std::vector<Scenario>> runs = LoadScenarioFileRuns(path);
  if (!runs.ok()) return runs.status();
  if (runs->size() != 1) {
    return Status(Code::kInvalid, path + ": /matrix: expands to " + std::to_string(runs->size()) +
                                      " runs; name one as " + path + "#<run>, e.g. " + (*runs)[0].file);
  }
  return std::move((*runs)[0]);
}

}  // namespace rcsim
