#include "engine/codec.h"

#include <initializer_list>
#include <string_view>
#include <utility>

#include "engine/json_parse.h"

namespace rcsim {
namespace {

using nlohmann::json;

// --- Unknown fields: what a typed struct does not model, carried verbatim. ---

// Go's decoder drops null members (they mean "absent"); so do we, at every depth of a kept value.
void DropNulls(json& v) {
  if (v.is_object()) {
    for (auto it = v.begin(); it != v.end();) {
      if (it->is_null()) {
        it = v.erase(it);
      } else {
        DropNulls(*it);
        ++it;
      }
    }
  } else if (v.is_array()) {
    for (json& e : v) DropNulls(e);
  }
}

// The members of object `j` not named in `known`.
UnknownFields CollectUnknown(const json& j, std::initializer_list<std::string_view> known) {
  json rest;
  for (const auto& [k, v] : j.items()) {
    if (v.is_null()) continue;
    bool typed = false;
    for (std::string_view name : known) {
      if (k == name) {
        typed = true;
        break;
      }
    }
    if (typed) continue;
    json copy = v;
    DropNulls(copy);
    rest[k] = std::move(copy);
  }
  return rest.is_null() ? UnknownFields() : UnknownFields(std::move(rest));
}

// Re-emits the unknown members; a typed member already present wins.
void PutUnknown(json& j, const UnknownFields& unknown) {
  if (unknown.empty()) return;
  for (const auto& [k, v] : unknown.get()->items()) {
    if (!j.contains(k)) j[k] = v;
  }
}

const std::initializer_list<std::string_view> kMetaFields = {"name",
                                                             "generateName",
                                                             "namespace",
                                                             "uid",
                                                             "resourceVersion",
                                                             "generation",
                                                             "labels",
                                                             "annotations",
                                                             "ownerReferences",
                                                             "creationTimestamp",
                                                             "deletionTimestamp",
                                                             "deletionGracePeriodSeconds",
                                                             "finalizers"};

// --- Encoding (Kubernetes omitempty conventions). ---

void PutIfNotEmpty(json& j, const char* key, const std::string& v) {
  if (!v.empty()) j[key] = v;
}

json LabelsToJson(const Labels& labels) {
  json j = json::object();
  for (const auto& [k, v] : labels) j[k] = v;
  return j;
}

json ContainersToJson(const std::vector<Container>& containers) {
  json arr = json::array();
  for (const auto& c : containers) {
    json cj = json::object();
    cj["name"] = c.name;
    PutIfNotEmpty(cj, "image", c.image);
    if (!c.command.empty()) cj["command"] = c.command;
    if (!c.args.empty()) cj["args"] = c.args;
    PutUnknown(cj, c.unknown_fields);
    arr.push_back(std::move(cj));
  }
  return arr;
}

json PodSpecToJson(const PodSpec& spec) {
  json j = json::object();
  j["containers"] = ContainersToJson(spec.containers);
  PutIfNotEmpty(j, "nodeName", spec.node_name);
  PutIfNotEmpty(j, "restartPolicy", spec.restart_policy);
  if (spec.termination_grace_period_seconds) {
    j["terminationGracePeriodSeconds"] = *spec.termination_grace_period_seconds;
  }
  PutUnknown(j, spec.unknown_fields);
  return j;
}

// Pod and controller conditions share their fields.
json ConditionsToJson(const std::vector<PodCondition>& conditions) {
  json arr = json::array();
  for (const auto& c : conditions) {
    json cj = {{"type", c.type}, {"status", c.status}};
    if (c.last_transition_time) cj["lastTransitionTime"] = FormatRfc3339(*c.last_transition_time);
    PutIfNotEmpty(cj, "reason", c.reason);
    PutIfNotEmpty(cj, "message", c.message);
    PutUnknown(cj, c.unknown_fields);
    arr.push_back(std::move(cj));
  }
  return arr;
}

void PutTime(json& j, const char* key, const std::optional<TimePoint>& t) {
  if (t) j[key] = FormatRfc3339(*t);
}

// A ContainerState; `{}` when none of its members is set (the field is not omitempty).
json ContainerStateToJson(const ContainerState& state) {
  json j = json::object();
  if (state.waiting) {
    json w = json::object();
    PutIfNotEmpty(w, "reason", state.waiting->reason);
    PutIfNotEmpty(w, "message", state.waiting->message);
    PutUnknown(w, state.waiting->unknown_fields);
    j["waiting"] = std::move(w);
  }
  if (state.running) {
    json r = json::object();
    PutTime(r, "startedAt", state.running->started_at);
    PutUnknown(r, state.running->unknown_fields);
    j["running"] = std::move(r);
  }
  if (state.terminated) {
    const ContainerStateTerminated& t = *state.terminated;
    json tj = {{"exitCode", t.exit_code}};
    if (t.signal != 0) tj["signal"] = t.signal;
    PutIfNotEmpty(tj, "reason", t.reason);
    PutIfNotEmpty(tj, "message", t.message);
    PutTime(tj, "startedAt", t.started_at);
    PutTime(tj, "finishedAt", t.finished_at);
    PutIfNotEmpty(tj, "containerID", t.container_id);
    PutUnknown(tj, t.unknown_fields);
    j["terminated"] = std::move(tj);
  }
  PutUnknown(j, state.unknown_fields);
  return j;
}

json PodStatusToJson(const PodStatus& s) {
  json j = json::object();
  PutIfNotEmpty(j, "phase", s.phase);
  if (!s.conditions.empty()) j["conditions"] = ConditionsToJson(s.conditions);
  if (!s.container_statuses.empty()) {
    json arr = json::array();
    for (const auto& c : s.container_statuses) {
      // name, state, lastState, ready, restartCount, image and imageID are not omitempty in core/v1
      // (clients such as the python one refuse a status without image or imageID).
      json cj = {{"name", c.name},
                 {"state", ContainerStateToJson(c.state)},
                 {"lastState", ContainerStateToJson(c.last_state)},
                 {"ready", c.ready},
                 {"restartCount", c.restart_count},
                 {"image", c.image},
                 {"imageID", c.image_id}};
      PutIfNotEmpty(cj, "containerID", c.container_id);
      if (c.started) cj["started"] = *c.started;
      PutUnknown(cj, c.unknown_fields);
      arr.push_back(std::move(cj));
    }
    j["containerStatuses"] = std::move(arr);
  }
  PutIfNotEmpty(j, "hostIP", s.host_ip);
  PutIfNotEmpty(j, "podIP", s.pod_ip);
  PutIfNotEmpty(j, "reason", s.reason);
  PutIfNotEmpty(j, "message", s.message);
  if (s.start_time) j["startTime"] = FormatRfc3339(*s.start_time);
  PutUnknown(j, s.unknown_fields);
  return j;
}

// --- Decoding: every error names the JSON path of the bad field. ---

class Decoder {
 public:
  Status error;

  bool Fail(const std::string& path, const std::string& what) {
    if (error.ok()) error = Status(Code::kBadRequest, path + ": " + what);
    return false;
  }
  bool Object(const json& j, const std::string& path) {
    return j.is_object() || Fail(path, "expected object");
  }
  // `Str`: std::string or SharedString.
  template <typename Str>
  bool String(const json& j, const char* key, const std::string& path, Str* out) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return true;
    if (!it->is_string()) return Fail(Join(path, key), "expected string");
    *out = it->get_ref<const std::string&>();
    return true;
  }
  template <typename Int>
  bool Integer(const json& j, const char* key, const std::string& path, Int* out) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return true;
    if (!it->is_number_integer()) return Fail(Join(path, key), "expected integer");
    auto v = it->get<int64_t>();
    if (v < static_cast<int64_t>(std::numeric_limits<Int>::min()) ||
        v > static_cast<int64_t>(std::numeric_limits<Int>::max())) {
      return Fail(Join(path, key), "integer out of range");
    }
    *out = static_cast<Int>(v);
    return true;
  }
  bool OptionalInteger(const json& j, const char* key, const std::string& path, std::optional<int64_t>* out) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return true;
    int64_t v = 0;
    if (!Integer(j, key, path, &v)) return false;
    *out = v;
    return true;
  }
  bool Bool(const json& j, const char* key, const std::string& path, bool* out) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return true;
    if (!it->is_boolean()) return Fail(Join(path, key), "expected boolean");
    *out = it->get<bool>();
    return true;
  }
  bool OptionalBool(const json& j, const char* key, const std::string& path, std::optional<bool>* out) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return true;
    bool v = false;
    if (!Bool(j, key, path, &v)) return false;
    *out = v;
    return true;
  }
  // A core/v1 ContainerState at key (absent or null: the empty state).
  bool State(const json& j, const char* key, const std::string& path, ContainerState* out) {
    std::string sp;
    const json* s = Child(j, key, path, &sp);
    if (s == nullptr) return error.ok();
    std::string cp;
    if (const json* w = Child(*s, "waiting", sp, &cp)) {
      ContainerStateWaiting v;
      if (!String(*w, "reason", cp, &v.reason) || !String(*w, "message", cp, &v.message)) return false;
      v.unknown_fields = CollectUnknown(*w, {"reason", "message"});
      out->waiting = std::move(v);
    }
    if (const json* r = Child(*s, "running", sp, &cp)) {
      ContainerStateRunning v;
      if (!Time(*r, "startedAt", cp, &v.started_at)) return false;
      v.unknown_fields = CollectUnknown(*r, {"startedAt"});
      out->running = std::move(v);
    }
    if (const json* t = Child(*s, "terminated", sp, &cp)) {
      ContainerStateTerminated v;
      if (!Integer(*t, "exitCode", cp, &v.exit_code) || !Integer(*t, "signal", cp, &v.signal) ||
          !String(*t, "reason", cp, &v.reason) || !String(*t, "message", cp, &v.message) ||
          !Time(*t, "startedAt", cp, &v.started_at) || !Time(*t, "finishedAt", cp, &v.finished_at) ||
          !String(*t, "containerID", cp, &v.container_id)) {
        return false;
      }
      v.unknown_fields = CollectUnknown(
          *t, {"exitCode", "signal", "reason", "message", "startedAt", "finishedAt", "containerID"});
      out->terminated = std::move(v);
    }
    out->unknown_fields = CollectUnknown(*s, {"waiting", "running", "terminated"});
    return error.ok();
  }
  bool Time(const json& j, const char* key, const std::string& path, std::optional<TimePoint>* out) {
    std::string s;
    if (!String(j, key, path, &s)) return false;
    if (s.empty()) return true;
    auto t = ParseRfc3339(s);
    if (!t) return Fail(Join(path, key), "expected RFC 3339 time");
    // metav1.Time has seconds precision: what we store is what we emit.
    *out = std::chrono::floor<std::chrono::seconds>(*t);
    return true;
  }
  bool StringList(const json& j, const char* key, const std::string& path, std::vector<std::string>* out) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return true;
    std::string p = Join(path, key);
    if (!it->is_array()) return Fail(p, "expected array");
    for (std::size_t i = 0; i < it->size(); ++i) {
      if (!(*it)[i].is_string()) return Fail(p + "[" + std::to_string(i) + "]", "expected string");
      out->push_back((*it)[i].get<std::string>());
    }
    return true;
  }
  bool StringMap(const json& j, const char* key, const std::string& path, Labels* out) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return true;
    std::string p = Join(path, key);
    if (!it->is_object()) return Fail(p, "expected object");
    for (const auto& [k, v] : it->items()) {
      if (!v.is_string()) return Fail(p + "." + k, "expected string");
      (*out)[k] = v.get<std::string>();
    }
    return true;
  }
  // Calls fn(element, element_path) for each element of the array at key.
  template <typename Fn>
  bool Array(const json& j, const char* key, const std::string& path, Fn fn) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return true;
    std::string p = Join(path, key);
    if (!it->is_array()) return Fail(p, "expected array");
    for (std::size_t i = 0; i < it->size(); ++i) {
      std::string ep = p + "[" + std::to_string(i) + "]";
      if (!Object((*it)[i], ep) || !fn((*it)[i], ep)) return false;
    }
    return true;
  }
  const json* Child(const json& j, const char* key, const std::string& path, std::string* child_path) {
    auto it = j.find(key);
    *child_path = Join(path, key);
    if (it == j.end() || it->is_null()) return nullptr;
    if (!it->is_object()) {
      Fail(*child_path, "expected object");
      return nullptr;
    }
    return &*it;
  }
  static std::string Join(const std::string& path, const char* key) {
    return path.empty() ? std::string(key) : path + "." + key;
  }

  bool Meta(const json& j, const std::string& path, ObjectMeta* m) {
    if (!Object(j, path)) return false;
    std::string rv;
    bool ok = String(j, "name", path, &m->name) && String(j, "generateName", path, &m->generate_name) &&
              String(j, "namespace", path, &m->namespace_) && String(j, "uid", path, &m->uid) &&
              Integer(j, "generation", path, &m->generation) && StringMap(j, "labels", path, &m->labels) &&
              StringMap(j, "annotations", path, &m->annotations) &&
              Time(j, "creationTimestamp", path, &m->creation_timestamp) &&
              Time(j, "deletionTimestamp", path, &m->deletion_timestamp) &&
              OptionalInteger(j, "deletionGracePeriodSeconds", path, &m->deletion_grace_period_seconds) &&
              StringList(j, "finalizers", path, &m->finalizers);
    if (!ok) return false;
    // resourceVersion is a string on the wire; accept it as given.
    if (!String(j, "resourceVersion", path, &m->resource_version)) return false;
    m->unknown_fields = CollectUnknown(j, kMetaFields);
    return Array(j, "ownerReferences", path, [&](const json& e, const std::string& ep) {
      OwnerReference r;
      r.controller = false;
      r.block_owner_deletion = false;
      bool ok2 = String(e, "apiVersion", ep, &r.api_version) && String(e, "kind", ep, &r.kind) &&
                 String(e, "name", ep, &r.name) && String(e, "uid", ep, &r.uid) &&
                 Bool(e, "controller", ep, &r.controller) &&
                 Bool(e, "blockOwnerDeletion", ep, &r.block_owner_deletion);
      r.unknown_fields =
          CollectUnknown(e, {"apiVersion", "kind", "name", "uid", "controller", "blockOwnerDeletion"});
      if (ok2) m->owner_references.push_back(std::move(r));
      return ok2;
    });
  }

  bool Spec(const json& j, const std::string& path, PodSpec* s) {
    if (!Object(j, path)) return false;
    s->restart_policy.clear();
    bool ok = String(j, "nodeName", path, &s->node_name) &&
              String(j, "restartPolicy", path, &s->restart_policy) &&
              OptionalInteger(j, "terminationGracePeriodSeconds", path, &s->termination_grace_period_seconds);
    if (s->restart_policy.empty()) s->restart_policy = "Always";
    s->unknown_fields =
        CollectUnknown(j, {"nodeName", "restartPolicy", "terminationGracePeriodSeconds", "containers"});
    return ok && Array(j, "containers", path, [&](const json& e, const std::string& ep) {
             Container c;
             bool ok2 = String(e, "name", ep, &c.name) && String(e, "image", ep, &c.image) &&
                        StringList(e, "command", ep, &c.command) && StringList(e, "args", ep, &c.args);
             c.unknown_fields = CollectUnknown(e, {"name", "image", "command", "args"});
             if (ok2) s->containers.push_back(std::move(c));
             return ok2;
           });
  }

  // The "conditions" array of a pod or controller status.
  bool Conditions(const json& j, const std::string& path, std::vector<PodCondition>* out) {
    return Array(j, "conditions", path, [&](const json& e, const std::string& ep) {
      PodCondition c;
      bool ok = String(e, "type", ep, &c.type) && String(e, "status", ep, &c.status) &&
                Time(e, "lastTransitionTime", ep, &c.last_transition_time) &&
                String(e, "reason", ep, &c.reason) && String(e, "message", ep, &c.message);
      c.unknown_fields = CollectUnknown(e, {"type", "status", "lastTransitionTime", "reason", "message"});
      if (ok) out->push_back(std::move(c));
      return ok;
    });
  }

  bool PodStatusFrom(const json& j, const std::string& path, PodStatus* s) {
    if (!Object(j, path)) return false;
    s->phase.clear();
    bool ok = String(j, "phase", path, &s->phase) && String(j, "hostIP", path, &s->host_ip) &&
              String(j, "podIP", path, &s->pod_ip) && String(j, "reason", path, &s->reason) &&
              String(j, "message", path, &s->message) && Time(j, "startTime", path, &s->start_time);
    if (s->phase.empty()) s->phase = phase::kPending;
    s->unknown_fields = CollectUnknown(
        j, {"phase", "conditions", "containerStatuses", "hostIP", "podIP", "reason", "message", "startTime"});
    return ok && Conditions(j, path, &s->conditions) &&
           Array(j, "containerStatuses", path, [&](const json& e, const std::string& ep) {
             ContainerStatus c;
             bool ok2 = String(e, "name", ep, &c.name) && State(e, "state", ep, &c.state) &&
                        State(e, "lastState", ep, &c.last_state) && Bool(e, "ready", ep, &c.ready) &&
                        Integer(e, "restartCount", ep, &c.restart_count) &&
                        String(e, "image", ep, &c.image) && String(e, "imageID", ep, &c.image_id) &&
                        String(e, "containerID", ep, &c.container_id) &&
                        OptionalBool(e, "started", ep, &c.started);
             c.unknown_fields = CollectUnknown(e, {"name", "state", "lastState", "ready", "restartCount",
                                                   "image", "imageID", "containerID", "started"});
             if (ok2) s->container_statuses.push_back(std::move(c));
             return ok2;
           });
  }

  bool Kind(const json& j, const char* expected) {
    std::string kind, api_version;
    if (!String(j, "kind", "", &kind) || !String(j, "apiVersion", "", &api_version)) return false;
    if (!kind.empty() && kind != expected) {
      return Fail("kind", "expected \"" + std::string(expected) + "\", got \"" + kind + "\"");
    }
    return true;
  }
};

}  // namespace

nlohmann::json ObjectMetaToJson(const ObjectMeta& m) {
  json j = json::object();
  PutIfNotEmpty(j, "name", m.name);
  PutIfNotEmpty(j, "generateName", m.generate_name);
  PutIfNotEmpty(j, "namespace", m.namespace_);
  PutIfNotEmpty(j, "uid", m.uid);
  PutIfNotEmpty(j, "resourceVersion", m.resource_version);
  if (m.generation != 0) j["generation"] = m.generation;
  if (m.creation_timestamp) j["creationTimestamp"] = FormatRfc3339(*m.creation_timestamp);
  if (m.deletion_timestamp) j["deletionTimestamp"] = FormatRfc3339(*m.deletion_timestamp);
  if (m.deletion_grace_period_seconds) j["deletionGracePeriodSeconds"] = *m.deletion_grace_period_seconds;
  if (!m.labels.empty()) j["labels"] = LabelsToJson(m.labels);
  if (!m.annotations.empty()) j["annotations"] = LabelsToJson(m.annotations);
  if (!m.owner_references.empty()) {
    json arr = json::array();
    for (const auto& r : m.owner_references) {
      json rj = {{"apiVersion", r.api_version},
                 {"kind", r.kind},
                 {"name", r.name},
                 {"uid", r.uid},
                 {"controller", r.controller},
                 {"blockOwnerDeletion", r.block_owner_deletion}};
      PutUnknown(rj, r.unknown_fields);
      arr.push_back(std::move(rj));
    }
    j["ownerReferences"] = std::move(arr);
  }
  if (!m.finalizers.empty()) j["finalizers"] = m.finalizers;
  PutUnknown(j, m.unknown_fields);
  return j;
}

nlohmann::json PodToJson(const Pod& pod) {
  json j{{"kind", "Pod"},
         {"apiVersion", "v1"},
         {"metadata", ObjectMetaToJson(pod.metadata)},
         {"spec", PodSpecToJson(pod.spec)},
         {"status", PodStatusToJson(pod.status)}};
  PutUnknown(j, pod.unknown_fields);
  return j;
}

nlohmann::json ControllerToJson(const ReplicationController& rc) {
  json spec = json::object();
  spec["replicas"] = rc.spec.replicas;
  if (rc.spec.min_ready_seconds != 0) spec["minReadySeconds"] = rc.spec.min_ready_seconds;
  spec["selector"] = LabelsToJson(rc.spec.selector);
  if (rc.spec.template_) {
    json t = {{"metadata", ObjectMetaToJson(rc.spec.template_->metadata)},
              {"spec", PodSpecToJson(rc.spec.template_->spec)}};
    PutUnknown(t, rc.spec.template_->unknown_fields);
    spec["template"] = std::move(t);
  }
  PutUnknown(spec, rc.spec.unknown_fields);
  json status = json::object();
  status["replicas"] = rc.status.replicas;
  if (rc.status.fully_labeled_replicas) status["fullyLabeledReplicas"] = rc.status.fully_labeled_replicas;
  if (rc.status.ready_replicas) status["readyReplicas"] = rc.status.ready_replicas;
  if (rc.status.available_replicas) status["availableReplicas"] = rc.status.available_replicas;
  if (rc.status.observed_generation) status["observedGeneration"] = rc.status.observed_generation;
  if (!rc.status.conditions.empty()) status["conditions"] = ConditionsToJson(rc.status.conditions);
  PutUnknown(status, rc.status.unknown_fields);
  json j{{"kind", "ReplicationController"},
         {"apiVersion", "v1"},
         {"metadata", ObjectMetaToJson(rc.metadata)},
         {"spec", std::move(spec)},
         {"status", std::move(status)}};
  PutUnknown(j, rc.unknown_fields);
  return j;
}

nlohmann::json ScaleToJson(const Scale& scale) {
  json status = {{"replicas", scale.status_replicas}};
  if (!scale.status_selector.empty()) status["selector"] = scale.status_selector;
  return json{{"kind", "Scale"},
              {"apiVersion", "autoscaling/v1"},
              {"metadata", ObjectMetaToJson(scale.metadata)},
              {"spec", {{"replicas", scale.spec_replicas}}},
              {"status", std::move(status)}};
}

int HttpCodeOf(Code code) {
  switch (code) {
    case Code::kOk: return 200;
    case Code::kNotFound: return 404;
    case Code::kAlreadyExists:
    case Code::kConflict: return 409;
    case Code::kInvalid: return 422;
    case Code::kBadRequest: return 400;
    case Code::kGone:
    case Code::kCompacted: return 410;
    case Code::kFutureRevision:
    case Code::kTimeout: return 504;
    case Code::kUnavailable: return 503;
    case Code::kUnauthorized: return 401;
    case Code::kForbidden: return 403;
    case Code::kRequestTooLarge: return 413;
    case Code::kMethodNotAllowed: return 405;
    case Code::kInternal: return 500;
  }
  return 500;
}

const char* ReasonOf(Code code) {
  switch (code) {
    case Code::kOk: return "";
    case Code::kNotFound: return "NotFound";
    case Code::kAlreadyExists: return "AlreadyExists";
    case Code::kConflict: return "Conflict";
    case Code::kInvalid: return "Invalid";
    case Code::kBadRequest: return "BadRequest";
    case Code::kGone:
    case Code::kCompacted: return "Expired";
    case Code::kFutureRevision:
    case Code::kTimeout: return "Timeout";
    case Code::kUnavailable: return "ServiceUnavailable";
    case Code::kUnauthorized: return "Unauthorized";
    case Code::kForbidden: return "Forbidden";
    case Code::kRequestTooLarge: return "RequestEntityTooLarge";
    case Code::kMethodNotAllowed: return "MethodNotAllowed";
    case Code::kInternal: return "InternalError";
  }
  return "InternalError";
}

nlohmann::json StatusToJson(const Status& status) {
  json j = {{"kind", "Status"},
            {"apiVersion", "v1"},
            {"metadata", json::object()},
            {"status", status.ok() ? "Success" : "Failure"},
            {"message", status.message()},
            {"reason", ReasonOf(status.code())},
            {"code", HttpCodeOf(status.code())}};
  if (!status.causes().empty()) {
    json causes = json::array();
    for (const auto& c : status.causes()) {
      causes.push_back({{"reason", c.reason}, {"message", c.message}, {"field", c.field}});
    }
    j["details"] = {{"causes", std::move(causes)}};
  }
  return j;
}

std::string EncodePod(const Pod& pod) { return PodToJson(pod).dump(); }
std::string EncodeController(const ReplicationController& rc) { return ControllerToJson(rc).dump(); }

Result<Pod> PodFromJson(const nlohmann::json& j) {
  Decoder d;
  Pod pod;
  if (!d.Object(j, "") || !d.Kind(j, "Pod")) return d.error;
  std::string p;
  if (const json* m = d.Child(j, "metadata", "", &p)) d.Meta(*m, p, &pod.metadata);
  if (const json* s = d.Child(j, "spec", "", &p)) d.Spec(*s, p, &pod.spec);
  if (const json* s = d.Child(j, "status", "", &p)) d.PodStatusFrom(*s, p, &pod.status);
  if (!d.error.ok()) return d.error;
  pod.unknown_fields = CollectUnknown(j, {"kind", "apiVersion", "metadata", "spec", "status"});
  return pod;
}

Result<ReplicationController> ControllerFromJson(const nlohmann::json& j) {
  Decoder d;
  ReplicationController rc;
  if (!d.Object(j, "") || !d.Kind(j, "ReplicationController")) return d.error;
  std::string p;
  if (const json* m = d.Child(j, "metadata", "", &p)) d.Meta(*m, p, &rc.metadata);
  if (const json* s = d.Child(j, "spec", "", &p)) {
    d.Integer(*s, "replicas", p, &rc.spec.replicas) &&
        d.Integer(*s, "minReadySeconds", p, &rc.spec.min_ready_seconds) &&
        d.StringMap(*s, "selector", p, &rc.spec.selector);
    std::string tp;
    if (const json* t = d.Child(*s, "template", p, &tp)) {
      PodTemplateSpec tmpl;
      std::string cp;
      if (const json* m = d.Child(*t, "metadata", tp, &cp)) d.Meta(*m, cp, &tmpl.metadata);
      if (const json* ps = d.Child(*t, "spec", tp, &cp)) d.Spec(*ps, cp, &tmpl.spec);
      tmpl.unknown_fields = CollectUnknown(*t, {"metadata", "spec"});
      rc.spec.template_ = std::move(tmpl);
    }
    rc.spec.unknown_fields = CollectUnknown(*s, {"replicas", "minReadySeconds", "selector", "template"});
  }
  if (const json* s = d.Child(j, "status", "", &p)) {
    d.Integer(*s, "replicas", p, &rc.status.replicas) &&
        d.Integer(*s, "fullyLabeledReplicas", p, &rc.status.fully_labeled_replicas) &&
        d.Integer(*s, "readyReplicas", p, &rc.status.ready_replicas) &&
        d.Integer(*s, "availableReplicas", p, &rc.status.available_replicas) &&
        d.Integer(*s, "observedGeneration", p, &rc.status.observed_generation) &&
        d.Conditions(*s, p, &rc.status.conditions);
    rc.status.unknown_fields = CollectUnknown(*s, {"replicas", "fullyLabeledReplicas", "readyReplicas",
                                                   "availableReplicas", "observedGeneration", "conditions"});
  }
  if (!d.error.ok()) return d.error;
  rc.unknown_fields = CollectUnknown(j, {"kind", "apiVersion", "metadata", "spec", "status"});
  return rc;
}

Result<Scale> ScaleFromJson(const nlohmann::json& j) {
  Decoder d;
  Scale scale;
  if (!d.Object(j, "") || !d.Kind(j, "Scale")) return d.error;
  std::string p;
  if (const json* m = d.Child(j, "metadata", "", &p)) d.Meta(*m, p, &scale.metadata);
  if (const json* s = d.Child(j, "spec", "", &p)) d.Integer(*s, "replicas", p, &scale.spec_replicas);
  if (const json* s = d.Child(j, "status", "", &p)) {
    d.Integer(*s, "replicas", p, &scale.status_replicas) &&
        d.String(*s, "selector", p, &scale.status_selector);
  }
  if (!d.error.ok()) return d.error;
  return scale;
}

Result<ObjectMeta> ObjectMetaFromJson(const nlohmann::json& j, const std::string& path) {
  Decoder d;
  ObjectMeta meta;
  if (!d.Meta(j, path, &meta)) return d.error;
  return meta;
}

Result<Pod> DecodePod(std::string_view bytes) {
  json j = ParseJson(bytes);
  if (j.is_discarded()) return Status(Code::kBadRequest, "malformed JSON");
  return PodFromJson(j);
}

Result<ReplicationController> DecodeController(std::string_view bytes) {
  json j = ParseJson(bytes);
  if (j.is_discarded()) return Status(Code::kBadRequest, "malformed JSON");
  return ControllerFromJson(j);
}

}  // namespace rcsim
