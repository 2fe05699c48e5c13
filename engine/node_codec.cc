#include "engine/node_codec.h"

#include <utility>

#include "engine/codec.h"
#include "engine/json_parse.h"

namespace rcsim {
namespace {

using json = nlohmann::json;

Status Bad(const std::string& path, const std::string& what) {
  return Status(Code::kBadRequest, path + ": " + what);
}

// metadata through the pod codec, so that a node's metadata decodes exactly as a pod's does.
Status MetaFromJson(const json& m, ObjectMeta* out) {
  json wrapper = {{"metadata", m}};
  Result<Pod> p = PodFromJson(wrapper);
  if (!p.ok()) return p.status();
  *out = std::move(p->metadata);
  return Status::Ok();
}

const json* Member(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return nullptr;
  return &*it;
}

Status GetString(const json& j, const char* key, const std::string& path, std::string* out) {
  const json* v = Member(j, key);
  if (v == nullptr) return Status::Ok();
  if (!v->is_string()) return Bad(path + "." + key, "expected string");
  *out = v->get<std::string>();
  return Status::Ok();
}

Status GetTime(const json& j, const char* key, const std::string& path, std::optional<TimePoint>* out) {
  std::string s;
  if (Status st = GetString(j, key, path, &s); !st.ok()) return st;
  if (s.empty()) return Status::Ok();
  auto t = ParseRfc3339(s);
  if (!t) return Bad(path + "." + key, "expected RFC 3339 time");
  *out = *t;
  return Status::Ok();
}

// Quantities ("110", "2", "4Gi"): strings on the wire; numbers are accepted and kept as text.
Status GetQuantities(const json& j, const char* key, const std::string& path,
                     std::map<std::string, std::string>* out) {
  const json* v = Member(j, key);
  if (v == nullptr) return Status::Ok();
  if (!v->is_object()) return Bad(path + "." + key, "expected object");
  for (const auto& [k, q] : v->items()) {
    if (q.is_string()) {
      (*out)[k] = q.get<std::string>();
    } else if (q.is_number_integer()) {
      (*out)[k] = std::to_string(q.get<int64_t>());
    } else {
      return Bad(path + "." + key + "." + k, "expected quantity");
    }
  }
  return Status::Ok();
}

// Calls fn(element, path) for each object of the array at key.
template <typename Fn>
Status ForEach(const json& j, const char* key, const std::string& path, Fn fn) {
  const json* v = Member(j, key);
  if (v == nullptr) return Status::Ok();
  const std::string p = path + "." + key;
  if (!v->is_array()) return Bad(p, "expected array");
  for (std::size_t i = 0; i < v->size(); ++i) {
    const std::string ep = p + "[" + std::to_string(i) + "]";
    if (!(*v)[i].is_object()) return Bad(ep, "expected object");
    if (Status s = fn((*v)[i], ep); !s.ok()) return s;
  }
  return Status::Ok();
}

void PutIfNotEmpty(json& j, const char* key, const std::string& v) {
  if (!v.empty()) j[key] = v;
}

}  // namespace

json NodeToJson(const Node& node) {
  json j = {{"kind", "Node"}, {"apiVersion", "v1"}, {"metadata", ObjectMetaToJson(node.metadata)}};
  json spec = json::object();
  if (node.spec.unschedulable) spec["unschedulable"] = true;
  PutIfNotEmpty(spec, "podCIDR", node.spec.pod_cidr);
  if (!node.spec.taints.empty()) {
    json taints = json::array();
    for (const Taint& t : node.spec.taints) {
      json tj = {{"key", t.key}, {"effect", t.effect}};
      PutIfNotEmpty(tj, "value", t.value);
      if (t.time_added) tj["timeAdded"] = FormatRfc3339(*t.time_added);
      taints.push_back(std::move(tj));
    }
    spec["taints"] = std::move(taints);
  }
  j["spec"] = std::move(spec);
  json status = json::object();
  if (!node.status.capacity.empty()) status["capacity"] = node.status.capacity;
  if (!node.status.allocatable.empty()) status["allocatable"] = node.status.allocatable;
  if (!node.status.conditions.empty()) {
    json conds = json::array();
    for (const NodeCondition& c : node.status.conditions) {
      json cj = {{"type", c.type}, {"status", c.status}};
      if (c.last_heartbeat_time) cj["lastHeartbeatTime"] = FormatRfc3339(*c.last_heartbeat_time);
      if (c.last_transition_time) cj["lastTransitionTime"] = FormatRfc3339(*c.last_transition_time);
      PutIfNotEmpty(cj, "reason", c.reason);
      PutIfNotEmpty(cj, "message", c.message);
      conds.push_back(std::move(cj));
    }
    status["conditions"] = std::move(conds);
  }
  if (!node.status.addresses.empty()) {
    json addrs = json::array();
    for (const NodeAddress& a : node.status.addresses) {
      addrs.push_back({{"type", a.type}, {"address", a.address}});
    }
    status["addresses"] = std::move(addrs);
  }
  if (node.status.kubelet_port > 0) {
    status["daemonEndpoints"] = {{"kubeletEndpoint", {{"Port", node.status.kubelet_port}}}};
  }
  j["status"] = std::move(status);
  return j;
}

Result<Node> NodeFromJson(const json& j) {
  if (!j.is_object()) return Status(Code::kBadRequest, "expected object");
  std::string kind;
  if (Status s = GetString(j, "kind", "", &kind); !s.ok()) return s;
  if (!kind.empty() && kind != "Node") return Bad("kind", "expected \"Node\", got \"" + kind + "\"");
  Node node;
  if (const json* m = Member(j, "metadata")) {
    if (!m->is_object()) return Bad("metadata", "expected object");
    if (Status s = MetaFromJson(*m, &node.metadata); !s.ok()) return s;
  }
  if (const json* spec = Member(j, "spec")) {
    if (!spec->is_object()) return Bad("spec", "expected object");
    if (const json* u = Member(*spec, "unschedulable")) {
      if (!u->is_boolean()) return Bad("spec.unschedulable", "expected boolean");
      node.spec.unschedulable = u->get<bool>();
    }
    if (Status s = GetString(*spec, "podCIDR", "spec", &node.spec.pod_cidr); !s.ok()) return s;
    Status s = ForEach(*spec, "taints", "spec", [&](const json& e, const std::string& ep) {
      Taint t;
      Status st = GetString(e, "key", ep, &t.key);
      if (st.ok()) st = GetString(e, "value", ep, &t.value);
      if (st.ok()) st = GetString(e, "effect", ep, &t.effect);
      if (st.ok()) st = GetTime(e, "timeAdded", ep, &t.time_added);
      if (st.ok()) node.spec.taints.push_back(std::move(t));
      return st;
    });
    if (!s.ok()) return s;
  }
  if (const json* st = Member(j, "status")) {
    if (!st->is_object()) return Bad("status", "expected object");
    if (Status s = GetQuantities(*st, "capacity", "status", &node.status.capacity); !s.ok()) return s;
    if (Status s = GetQuantities(*st, "allocatable", "status", &node.status.allocatable); !s.ok()) return s;
    Status s = ForEach(*st, "conditions", "status", [&](const json& e, const std::string& ep) {
      NodeCondition c;
      Status x = GetString(e, "type", ep, &c.type);
      if (x.ok()) x = GetString(e, "status", ep, &c.status);
      if (x.ok()) x = GetTime(e, "lastHeartbeatTime", ep, &c.last_heartbeat_time);
      if (x.ok()) x = GetTime(e, "lastTransitionTime", ep, &c.last_transition_time);
      if (x.ok()) x = GetString(e, "reason", ep, &c.reason);
      if (x.ok()) x = GetString(e, "message", ep, &c.message);
      if (x.ok()) node.status.conditions.push_back(std::move(c));
      return x;
    });
    if (!s.ok()) return s;
    s = ForEach(*st, "addresses", "status", [&](const json& e, const std::string& ep) {
      NodeAddress a;
      Status x = GetString(e, "type", ep, &a.type);
      if (x.ok()) x = GetString(e, "address", ep, &a.address);
      if (x.ok()) node.status.addresses.push_back(std::move(a));
      return x;
    });
    if (!s.ok()) return s;
    // daemonEndpoints.kubeletEndpoint.Port (capitalised on the wire, as core/v1 has it).
    const auto endpoints = st->find("daemonEndpoints");
    if (endpoints != st->end() && endpoints->is_object()) {
      const auto kubelet = endpoints->find("kubeletEndpoint");
      if (kubelet != endpoints->end() && kubelet->is_object()) {
        const auto port = kubelet->find("Port");
        if (port != kubelet->end() && !port->is_null()) {
          if (!port->is_number_integer() || port->get<int64_t>() < 0 || port->get<int64_t>() > 65535) {
            return Status(Code::kBadRequest,
                          "status.daemonEndpoints.kubeletEndpoint.Port: must be a port number (0-65535)");
          }
          node.status.kubelet_port = port->get<int32_t>();
        }
      }
    }
  }
  return node;
}

std::string EncodeNode(const Node& node) { return NodeToJson(node).dump(); }

Result<Node> DecodeNode(std::string_view bytes) {
  json j = ParseJson(bytes);
  if (j.is_discarded()) return Status(Code::kBadRequest, "malformed JSON");
  return NodeFromJson(j);
}

json BindingToJson(const Binding& b) {
  return {{"kind", "Binding"},
          {"apiVersion", "v1"},
          {"metadata", ObjectMetaToJson(b.metadata)},
          {"target", {{"kind", b.target_kind}, {"name", b.target_name}}}};
}

Result<Binding> BindingFromJson(const json& j) {
  if (!j.is_object()) return Status(Code::kBadRequest, "expected object");
  std::string kind;
  if (Status s = GetString(j, "kind", "", &kind); !s.ok()) return s;
  if (!kind.empty() && kind != "Binding") return Bad("kind", "expected \"Binding\", got \"" + kind + "\"");
  Binding b;
  if (const json* m = Member(j, "metadata")) {
    if (!m->is_object()) return Bad("metadata", "expected object");
    if (Status s = MetaFromJson(*m, &b.metadata); !s.ok()) return s;
  }
  const json* t = Member(j, "target");
  if (t == nullptr) return Bad("target", "required");
  if (!t->is_object()) return Bad("target", "expected object");
  b.target_kind.clear();
  if (Status s = GetString(*t, "kind", "target", &b.target_kind); !s.ok()) return s;
  if (b.target_kind.empty()) b.target_kind = "Node";
  if (Status s = GetString(*t, "name", "target", &b.target_name); !s.ok()) return s;
  return b;
}

}  // namespace rcsim
