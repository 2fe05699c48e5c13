#include "engine/pod_ranking.h"

#include <algorithm>
#include <functional>
#include <optional>

namespace rcsim {
namespace {

int PhaseRank(const std::string& phase) {
  if (phase == phase::kPending) return 0;
  if (phase == phase::kUnknown) return 1;
  if (phase == phase::kRunning) return 2;
  return 3;  // terminated pods are not active; ranked last if ever given
}

std::optional<TimePoint> ReadySince(const Pod& pod) {
  for (const auto& c : pod.status.conditions) {
    if (c.type == "Ready") return c.last_transition_time;
  }
  return std::nullopt;
}

int64_t Restarts(const Pod& pod) {
  int64_t n = 0;
  for (const auto& cs : pod.status.container_statuses) n += cs.restart_count;
  return n;
}

// -1 if `a` is later than `b` (a missing time counts as the latest), 1 if earlier, 0 if equal.
int CompareLaterFirst(const std::optional<TimePoint>& a, const std::optional<TimePoint>& b) {
  if (a == b) return 0;
  if (!a) return -1;
  if (!b) return 1;
  return *a > *b ? -1 : 1;
}

}  // namespace

PodDeletionOrder::PodDeletionOrder(const std::vector<PodPtr>& pods) {
  for (const auto& p : pods) {
    if (!p->spec.node_name.empty()) ++pods_per_node_[p->spec.node_name];
  }
}

int PodDeletionOrder::PodsOnNode(const std::string& node) const {
  if (node.empty()) return 0;
  auto it = pods_per_node_.find(node);
  return it == pods_per_node_.end() ? 0 : it->second;
}

bool PodDeletionOrder::Before(const Pod& a, const Pod& b) const {
  bool a_sched = !a.spec.node_name.empty(), b_sched = !b.spec.node_name.empty();
  if (a_sched != b_sched) return !a_sched;
  int ap = PhaseRank(a.status.phase), bp = PhaseRank(b.status.phase);
  if (ap != bp) return ap < bp;
  bool a_ready = IsReady(a), b_ready = IsReady(b);
  if (a_ready != b_ready) return !a_ready;
  int an = PodsOnNode(a.spec.node_name), bn = PodsOnNode(b.spec.node_name);
  if (an != bn) return an > bn;
  if (a_ready) {
    int c = CompareLaterFirst(ReadySince(a), ReadySince(b));
    if (c != 0) return c < 0;
  }
  int64_t ar = Restarts(a), br = Restarts(b);
  if (ar != br) return ar > br;
  int c = CompareLaterFirst(a.metadata.creation_timestamp, b.metadata.creation_timestamp);
  if (c != 0) return c < 0;
  if (a.metadata.namespace_ != b.metadata.namespace_) return a.metadata.namespace_ < b.metadata.namespace_;
  return a.metadata.name < b.metadata.name;
}

void SortForDeletion(std::vector<PodPtr>& pods) {
  PodDeletionOrder order(pods);
  // By reference: std::sort copies its comparator down the recursion, and this one holds a map.
  std::sort(pods.begin(), pods.end(), std::cref(order));
}

}  // namespace rcsim
