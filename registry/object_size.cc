#include "registry/object_size.h"

#include <string>
#include <vector>

namespace rcsim {
namespace {

constexpr std::size_t kNodeOverhead = 64;  // a map node or a heap block, roughly

std::size_t Bytes(const std::string& s) { return s.capacity() > 15 ? s.capacity() + 1 : 0; }

std::size_t Bytes(const Labels& m) {
  std::size_t n = 0;
  for (const auto& [k, v] : m) n += kNodeOverhead + Bytes(k) + Bytes(v);
  return n;
}

std::size_t Bytes(const std::vector<std::string>& v) {
  std::size_t n = v.capacity() * sizeof(std::string);
  for (const std::string& s : v) n += Bytes(s);
  return n;
}

std::size_t Bytes(const ObjectMeta& m) {
  std::size_t n = Bytes(m.name) + Bytes(m.generate_name) + Bytes(m.namespace_) + Bytes(m.uid) +
                  Bytes(m.resource_version) + Bytes(m.labels) + Bytes(m.annotations) + Bytes(m.finalizers);
  for (const OwnerReference& o : m.owner_references) {
    n += sizeof(o) + Bytes(o.api_version) + Bytes(o.kind) + Bytes(o.name) + Bytes(o.uid);
  }
  return n;
}

std::size_t Bytes(const PodSpec& s) {
  std::size_t n = Bytes(s.node_name) + Bytes(s.restart_policy);
  for (const Container& c : s.containers) {
    n += sizeof(c) + Bytes(c.name) + Bytes(c.image) + Bytes(c.command) + Bytes(c.args);
  }
  return n;
}

std::size_t Bytes(const PodStatus& s) {
  std::size_t n = Bytes(s.phase) + Bytes(s.host_ip) + Bytes(s.pod_ip) + Bytes(s.reason) + Bytes(s.message);
  for (const PodCondition& c : s.conditions) {
    n += sizeof(c) + Bytes(c.type) + Bytes(c.status) + Bytes(c.reason) + Bytes(c.message);
  }
  for (const ContainerStatus& c : s.container_statuses) n += sizeof(c) + Bytes(c.name);
  return n;
}

}  // namespace

std::size_t ApproxObjectBytes(const Pod& pod) {
  return sizeof(Pod) + Bytes(pod.metadata) + Bytes(pod.spec) + Bytes(pod.status);
}

std::size_t ApproxObjectBytes(const ReplicationController& rc) {
  std::size_t n = sizeof(ReplicationController) + Bytes(rc.metadata) + Bytes(rc.spec.selector);
  if (rc.spec.template_) n += Bytes(rc.spec.template_->metadata) + Bytes(rc.spec.template_->spec);
  return n;
}

}  // namespace rcsim
