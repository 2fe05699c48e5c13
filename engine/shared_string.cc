#include "engine/shared_string.h"

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>
#include <ostream>

namespace rcsim {
namespace {

// The values of pod and controller conditions that the kubelet, the scheduler, the node lifecycle
// controller and the replication manager write (and every client echoes back), the pod phases, and the
// kinds and API versions of ownerReferences.
// clang-format off
constexpr std::array<std::string_view, 25> kConstants = {
    "True", "False", "Unknown",
    "Ready", "Initialized", "ContainersReady", "PodScheduled", "PodReadyToStartContainers", "DisruptionTarget",
    "ReplicaFailure", "ContainersNotReady", "PodCompleted", "Unschedulable", "NodeLost", "FailedCreate",
    "FailedDelete",
    "Pending", "Running", "Succeeded", "Failed",
    "v1", "apps/v1", "ReplicationController", "ReplicaSet", "Node",
};
// clang-format on
constexpr std::size_t kLongestConstant = [] {
  std::size_t n = 0;
  for (std::string_view c : kConstants) n = std::max(n, c.size());
  return n;
}();

}  // namespace

SharedString::SharedString(std::string_view s) {
  if (s.empty()) return;
  rep_ = Constant(s);
  if (rep_ == nullptr) {
    rep_ = new Rep;  // NOLINT(cppcoreguidelines-owning-memory): owned by the reference count
    rep_->value.assign(s);
  }
}

const std::string& SharedString::Empty() noexcept {
  static const std::string empty;
  return empty;
}

SharedString::Rep* SharedString::Constant(std::string_view s) {
  // Built once, never freed: constants are shared by every thread and never counted.
  static std::array<Rep, kConstants.size()>* const reps = [] {
    auto* r = new std::array<Rep, kConstants.size()>;  // NOLINT(cppcoreguidelines-owning-memory)
    for (std::size_t i = 0; i < kConstants.size(); ++i) {
      (*r)[i].constant = true;
      (*r)[i].value.assign(kConstants[i]);
    }
    return r;
  }();
  if (s.size() > kLongestConstant) return nullptr;  // uids and most messages: longer than any constant
  for (std::size_t i = 0; i < kConstants.size(); ++i) {
    if (kConstants[i] == s) return &(*reps)[i];
  }
  return nullptr;
}

std::ostream& operator<<(std::ostream& os, const SharedString& s) { return os << s.str(); }

void to_json(nlohmann::json& j, const SharedString& s) { j = s.str(); }

}  // namespace rcsim
