#include "engine/node_types.h"

#include <charconv>

namespace rcsim {

const NodeCondition* FindNodeCondition(const NodeStatus& status, const std::string& type) {
  for (const NodeCondition& c : status.conditions) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

bool IsNodeReady(const Node& node) {
  const NodeCondition* c = FindNodeCondition(node.status, "Ready");
  return c != nullptr && c->status == "True";
}

int64_t NodePodCapacity(const Node& node, int64_t fallback) {
  for (const auto* m : {&node.status.capacity, &node.status.allocatable}) {
    auto it = m->find("pods");
    if (it == m->end()) continue;
    int64_t v = 0;
    const std::string& s = it->second;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc() && p == s.data() + s.size() && v >= 0) return v;
  }
  return fallback;
}

bool HasTaint(const Node& node, const std::string& key) {
  for (const Taint& t : node.spec.taints) {
    if (t.key == key) return true;
  }
  return false;
}

}  // namespace rcsim
