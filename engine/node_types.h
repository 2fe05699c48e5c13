// Cluster types beside engine/types.h: core/v1 Node and Binding, and the names the garbage collector
// and the node components agree on (finalizers, taints, condition types).
//
// Like the pod types, objects travel as shared immutable values (NodePtr); to change one, copy it.
#ifndef RCSIM_ENGINE_NODE_TYPES_H_
#define RCSIM_ENGINE_NODE_TYPES_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/time.h"
#include "engine/types.h"

namespace rcsim {

// metadata.finalizers set by DELETE's propagationPolicy (kube-apiserver's names).
inline constexpr const char* kOrphanFinalizer = "orphan";
inline constexpr const char* kForegroundFinalizer = "foregroundDeletion";

// DeleteOptions.propagationPolicy values.
inline constexpr const char* kPropagationOrphan = "Orphan";
inline constexpr const char* kPropagationBackground = "Background";
inline constexpr const char* kPropagationForeground = "Foreground";

// The taints the node lifecycle controller sets.
inline constexpr const char* kTaintUnreachable = "node.kubernetes.io/unreachable";
inline constexpr const char* kTaintNotReady = "node.kubernetes.io/not-ready";

// The namespace of node heartbeat Leases.
inline constexpr const char* kNodeLeaseNamespace = "kube-node-lease";

struct Taint {
  std::string key;
  std::string value;
  std::string effect;  // "NoSchedule", "PreferNoSchedule", "NoExecute"
  std::optional<TimePoint> time_added;
  bool operator==(const Taint&) const = default;
};

struct NodeSpec {
  bool unschedulable = false;
  std::vector<Taint> taints;
  std::string pod_cidr;
  bool operator==(const NodeSpec&) const = default;
};

struct NodeCondition {
  std::string type;    // "Ready", "MemoryPressure", ...
  std::string status;  // "True", "False", "Unknown"
  std::optional<TimePoint> last_heartbeat_time;
  std::optional<TimePoint> last_transition_time;
  std::string reason;
  std::string message;
  bool operator==(const NodeCondition&) const = default;
};

struct NodeAddress {
  std::string type;  // "InternalIP", "Hostname"
  std::string address;
  bool operator==(const NodeAddress&) const = default;
};

struct NodeStatus {
  std::map<std::string, std::string> capacity;     // "pods" -> "110", "cpu" -> "2", ...
  std::map<std::string, std::string> allocatable;  // as capacity
  std::vector<NodeCondition> conditions;
  std::vector<NodeAddress> addresses;
  int32_t kubelet_port = 0;  // status.daemonEndpoints.kubeletEndpoint.Port: the node agent's; 0: none
  bool operator==(const NodeStatus&) const = default;
};

struct Node {
  ObjectMeta metadata;  // cluster-scoped: namespace_ is empty
  NodeSpec spec;
  NodeStatus status;
  bool operator==(const Node&) const = default;
};
using NodePtr = std::shared_ptr<const Node>;

// core/v1 Binding: the body of POST pods/{name}/binding.
struct Binding {
  ObjectMeta metadata;  // name (and namespace) of the pod
  std::string target_kind = "Node";
  std::string target_name;  // the node
  bool operator==(const Binding&) const = default;
};

// --- Predicates shared by the cluster components, the checkers and the tables. ---

// The condition of that type, or null.
const NodeCondition* FindNodeCondition(const NodeStatus& status, const std::string& type);
// Ready condition is True.
bool IsNodeReady(const Node& node);
// status.capacity.pods (then allocatable.pods) as a number; `fallback` when absent or malformed.
int64_t NodePodCapacity(const Node& node, int64_t fallback = 110);
// Has a taint with this key (any effect).
bool HasTaint(const Node& node, const std::string& key);

}  // namespace rcsim

#endif  // RCSIM_ENGINE_NODE_TYPES_H_
