// PodInformer: the manager's cache of pods, read through the ApiClient: List (all namespaces), then
// Watch from the list's resourceVersion; on kGone (compacted) it re-lists at once, on other errors it
// re-lists with exponential backoff.
//
// Indexes: by key ("namespace/name"), by controller owner uid, and orphans (no controller ref) by
// namespace, so that one controller's sync costs O(its pods + its namespace's orphans).
// An update is applied only if its resourceVersion is not older than the cached one.
//
// Thread-safety: single-threaded on `executor`. ApiClient callbacks hop to the executor first; none
// touches the informer after Stop() or destruction.
#ifndef RCSIM_ENGINE_POD_INFORMER_H_
#define RCSIM_ENGINE_POD_INFORMER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/api_client.h"
#include "engine/executor.h"
#include "engine/log.h"
#include "engine/metrics.h"
#include "engine/relist_backoff.h"
#include "engine/types.h"

namespace rcsim {

class PodInformer {
 public:
  struct Handlers {
    std::function<void(const PodPtr&)> on_add;
    std::function<void(const PodPtr& old_pod, const PodPtr& new_pod)> on_update;
    std::function<void(const PodPtr&)> on_delete;
    std::function<void()> on_synced;  // after every successful list
  };
  struct Options {
    Duration min_backoff = std::chrono::milliseconds(100);
    Duration max_backoff = std::chrono::seconds(30);
    // With a clock, the re-list backoff resets after backoff_reset without a failure.
    const Clock* clock = nullptr;
    Duration backoff_reset = std::chrono::minutes(2);
  };
  using PodMap = std::map<std::string, PodPtr>;  // by key, ordered for deterministic iteration

  PodInformer(Options options, ApiClient* api, Executor* executor, Logger* logger, ManagerMetrics* metrics,
              Handlers handlers);
  ~PodInformer();
  PodInformer(const PodInformer&) = delete;
  PodInformer& operator=(const PodInformer&) = delete;

  void Start();
  // Idempotent. Stops the watch and timers; no handler runs afterwards.
  void Stop();
  bool HasSynced() const { return synced_; }

  PodPtr Get(const std::string& key) const;
  // Pods whose controller ref has `uid`; null if none.
  const PodMap* OwnedBy(const std::string& uid) const;
  // Pods of `ns` without a controller ref; null if none.
  const PodMap* OrphansIn(const std::string& ns) const;
  std::size_t size() const { return pods_.size(); }

 private:
  void List();
  void OnList(Result<ObjectList<Pod>> result);
  void StartWatch(const std::string& resource_version);
  void OnWatchEvent(const ApiWatchEvent<Pod>& ev);
  void ScheduleRelist(bool failure);
  void Upsert(const PodPtr& pod);
  void Remove(const std::string& key);
  void Index(const PodPtr& pod);
  void Unindex(const PodPtr& pod);

  Options options_;
  ApiClient* api_;
  Executor* executor_;
  Logger* logger_;
  ManagerMetrics* metrics_;
  Handlers handlers_;

  std::shared_ptr<int> alive_ = std::make_shared<int>(0);
  bool started_ = false;
  bool stopped_ = false;
  bool synced_ = false;
  bool listing_ = false;
  int64_t lists_ = 0;
  RelistBackoff backoff_;
  uint64_t generation_ = 0;  // events of older lists/watches are ignored
  std::unique_ptr<ApiWatch> watch_;
  TimerId relist_timer_ = 0;

  std::unordered_map<std::string, PodPtr> pods_;
  std::unordered_map<std::string, PodMap> by_owner_;  // controller ref uid -> pods
  std::unordered_map<std::string, PodMap> orphans_;   // namespace -> pods without controller ref
};

// The numeric value of a resourceVersion, or nullopt if it is not a decimal number.
std::optional<int64_t> ResourceVersionNumber(const std::string& rv);

}  // namespace rcsim

#endif  // RCSIM_ENGINE_POD_INFORMER_H_
