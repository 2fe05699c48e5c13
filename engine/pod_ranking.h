// Which pods a controller deletes first when it scales down (Kubernetes' ActivePodsWithRanks order):
//  1. unscheduled (no nodeName) before scheduled;
//  2. phase Pending < Unknown < Running;
//  3. not ready before ready;
//  4. more pods of this controller on the same node first (spreads the survivors);
//  5. both ready: more recently ready first (Ready lastTransitionTime, later first; missing = newest);
//  6. more container restarts first;
//  7. newer creationTimestamp first (missing = newest);
//  8. name, for a total deterministic order.
#ifndef RCSIM_ENGINE_POD_RANKING_H_
#define RCSIM_ENGINE_POD_RANKING_H_

#include <cstddef>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/types.h"

namespace rcsim {

class PodDeletionOrder {
 public:
  // Counts, per node, the pods of `pods` (the controller's active pods) on it.
  explicit PodDeletionOrder(const std::vector<PodPtr>& pods);
  // True if `a` should be deleted before `b`. A strict weak order.
  bool operator()(const PodPtr& a, const PodPtr& b) const { return Before(*a, *b); }
  bool Before(const Pod& a, const Pod& b) const;

 private:
  int PodsOnNode(const std::string& node) const;
  std::unordered_map<std::string, int> pods_per_node_;
};

// Sorts `pods` so the pods to delete first come first.
void SortForDeletion(std::vector<PodPtr>& pods);
// Only the first `first` pods in that order, sorted, at the front (what a scale-down by `first`
// deletes); the rest follow in no particular order. O(n + first log first) after ranking each pod once.
void SortForDeletion(std::vector<PodPtr>& pods, std::size_t first);

}  // namespace rcsim

#endif  // RCSIM_ENGINE_POD_RANKING_H_
