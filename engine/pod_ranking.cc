#include "engine/pod_ranking.h"

#include <algorithm>
#include <optional>
#include <string_view>
#include <unordered_map>

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

namespace {

// A pod's rank keys, computed once per pod (a comparison then reads no condition list and does no
// lookup): the same order as PodDeletionOrder::Before.
struct Ranked {
  const Pod* pod;
  std::size_t index;  // in the input
  bool scheduled;
  int phase;
  bool ready;
  int on_node;
  std::optional<TimePoint> ready_since;
  int64_t restarts;
};

bool RankedBefore(const Ranked& a, const Ranked& b) {
  if (a.scheduled != b.scheduled) return !a.scheduled;
  if (a.phase != b.phase) return a.phase < b.phase;
  if (a.ready != b.ready) return !a.ready;
  if (a.on_node != b.on_node) return a.on_node > b.on_node;
  if (a.ready) {
    int c = CompareLaterFirst(a.ready_since, b.ready_since);
    if (c != 0) return c < 0;
  }
  if (a.restarts != b.restarts) return a.restarts > b.restarts;
  const ObjectMeta& am = a.pod->metadata;
  const ObjectMeta& bm = b.pod->metadata;
  int c = CompareLaterFirst(am.creation_timestamp, bm.creation_timestamp);
  if (c != 0) return c < 0;
  if (am.namespace_ != bm.namespace_) return am.namespace_ < bm.namespace_;
  return am.name < bm.name;
}

}  // namespace

void SortForDeletion(std::vector<PodPtr>& pods, std::size_t first) {
  std::unordered_map<std::string_view, int> per_node;
  per_node.reserve(pods.size());
  for (const auto& p : pods) {
    if (!p->spec.node_name.empty()) ++per_node[p->spec.node_name];
  }
  std::vector<Ranked> ranked;
  ranked.reserve(pods.size());
  for (std::size_t i = 0; i < pods.size(); ++i) {
    const Pod& p = *pods[i];
    Ranked r{&p,           i,          !p.spec.node_name.empty(), PhaseRank(p.status.phase), false, 0,
             std::nullopt, Restarts(p)};
    for (const auto& c : p.status.conditions) {
      if (c.type != "Ready") continue;
      r.ready = c.status == "True";
      r.ready_since = c.last_transition_time;
      break;
    }
    if (r.scheduled) r.on_node = per_node[p.spec.node_name];
    ranked.push_back(r);
  }
  if (first < ranked.size()) {
    // The first `first` of a total order: the same pods, in the same order, as a full sort's.
    auto mid = ranked.begin() + static_cast<std::ptrdiff_t>(first);
    std::nth_element(ranked.begin(), mid, ranked.end(), RankedBefore);
    std::sort(ranked.begin(), mid, RankedBefore);
  } else {
    std::sort(ranked.begin(), ranked.end(), RankedBefore);
  }
  std::vector<PodPtr> out;
  out.reserve(pods.size());
  for (const Ranked& r : ranked) out.push_back(std::move(pods[r.index]));
  pods = std::move(out);
}

void SortForDeletion(std::vector<PodPtr>& pods) { SortForDeletion(pods, pods.size()); }

}  // namespace rcsim
