#include "registry/object_size.h"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace rcsim {
namespace {

constexpr std::size_t kNodeOverhead = 64;  // a map node or a heap block, roughly

std::size_t Bytes(const std::string& s) { return s.capacity() > 15 ? s.capacity() + 1 : 0; }
// A constant is shared by every object; any other value is a block (a count and a std::string) that
// copies share, counted in full as unknown_fields are.
std::size_t Bytes(const SharedString& s) {
  return s.empty() || s.is_constant() ? 0 : 2 * sizeof(std::string) + Bytes(s.str());
}

std::size_t Bytes(const Labels::Map& m) {
  std::size_t n = 0;
  for (const auto& [k, v] : m) n += kNodeOverhead + Bytes(k) + Bytes(v);
  return n;
}
// A map that copies share, counted in full as unknown_fields are.
std::size_t Bytes(const Labels& m) { return Bytes(m.map()); }

std::size_t Bytes(const std::vector<std::string>& v) {
  std::size_t n = v.capacity() * sizeof(std::string);
  for (const std::string& s : v) n += Bytes(s);
  return n;
}

// The members the engine does not model, walked once. A copy of an object shares them with the
// original; each copy is counted in full, which over-counts rather than under-counts.
std::size_t Bytes(const nlohmann::json& j) {
  std::size_t n = sizeof(nlohmann::json);
  switch (j.type()) {
    case nlohmann::json::value_t::string: n += kNodeOverhead + Bytes(j.get_ref<const std::string&>()); break;
    case nlohmann::json::value_t::object:
      n += kNodeOverhead;
      for (const auto& [k, v] : j.items()) n += kNodeOverhead + Bytes(k) + Bytes(v);
      break;
    case nlohmann::json::value_t::array:
      n += kNodeOverhead;
      for (const nlohmann::json& v : j) n += Bytes(v);
      break;
    default: break;
  }
  return n;
}

std::size_t Bytes(const UnknownFields& u) { return u.empty() ? 0 : Bytes(*u.get()); }

std::size_t Bytes(const ObjectMeta& m) {
  std::size_t n = Bytes(m.name) + Bytes(m.generate_name) + Bytes(m.namespace_) + Bytes(m.uid) +
                  Bytes(m.resource_version) + Bytes(m.labels) + Bytes(m.annotations) + Bytes(m.finalizers) +
                  Bytes(m.unknown_fields);
  for (const OwnerReference& o : m.owner_references) {
    n += sizeof(o) + Bytes(o.api_version) + Bytes(o.kind) + Bytes(o.name) + Bytes(o.uid) +
         Bytes(o.unknown_fields);
  }
  return n;
}

std::size_t Bytes(const PodSpec& s) {
  std::size_t n = Bytes(s.node_name) + Bytes(s.restart_policy) + Bytes(s.unknown_fields);
  for (const Container& c : s.containers) {
    n += sizeof(c) + Bytes(c.name) + Bytes(c.image) + Bytes(c.command) + Bytes(c.args) +
         Bytes(c.unknown_fields);
  }
  return n;
}

std::size_t Bytes(const ContainerState& s) {
  std::size_t n = Bytes(s.unknown_fields);
  if (s.waiting) n += Bytes(s.waiting->reason) + Bytes(s.waiting->message) + Bytes(s.waiting->unknown_fields);
  if (s.running) n += Bytes(s.running->unknown_fields);
  if (s.terminated) {
    n += Bytes(s.terminated->reason) + Bytes(s.terminated->message) + Bytes(s.terminated->container_id) +
         Bytes(s.terminated->unknown_fields);
  }
  return n;
}

std::size_t Bytes(const PodStatus& s) {
  std::size_t n = Bytes(s.phase) + Bytes(s.host_ip) + Bytes(s.pod_ip) + Bytes(s.reason) + Bytes(s.message) +
                  Bytes(s.unknown_fields);
  for (const PodCondition& c : s.conditions) {
    n += sizeof(c) + Bytes(c.type) + Bytes(c.status) + Bytes(c.reason) + Bytes(c.message) +
         Bytes(c.unknown_fields);
  }
  for (const ContainerStatus& c : s.container_statuses) {
    n += sizeof(c) + Bytes(c.name) + Bytes(c.state) + Bytes(c.last_state) + Bytes(c.image) +
         Bytes(c.image_id) + Bytes(c.container_id) + Bytes(c.unknown_fields);
  }
  return n;
}

}  // namespace

std::size_t ApproxObjectBytes(const Pod& pod) {
  return sizeof(Pod) + Bytes(pod.metadata) + Bytes(pod.spec) + Bytes(pod.status) + Bytes(pod.unknown_fields);
}

std::size_t ApproxObjectBytes(const ReplicationController& rc) {
  std::size_t n = sizeof(ReplicationController) + Bytes(rc.metadata) + Bytes(rc.spec.selector) +
                  Bytes(rc.spec.unknown_fields) + Bytes(rc.status.unknown_fields) + Bytes(rc.unknown_fields);
  if (rc.spec.template_) {
    n += Bytes(rc.spec.template_->metadata) + Bytes(rc.spec.template_->spec) +
         Bytes(rc.spec.template_->unknown_fields);
  }
  return n;
}

std::size_t ApproxObjectBytes(const Node& node) {
  std::size_t n = sizeof(Node) + Bytes(node.metadata) + Bytes(node.spec.pod_cidr) +
                  Bytes(node.status.capacity) + Bytes(node.status.allocatable);
  for (const Taint& t : node.spec.taints) n += sizeof(t) + Bytes(t.key) + Bytes(t.value) + Bytes(t.effect);
  for (const NodeCondition& c : node.status.conditions) {
    n += sizeof(c) + Bytes(c.type) + Bytes(c.status) + Bytes(c.reason) + Bytes(c.message);
  }
  for (const NodeAddress& a : node.status.addresses) n += sizeof(a) + Bytes(a.type) + Bytes(a.address);
  return n;
}

}  // namespace rcsim
