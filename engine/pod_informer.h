// PodInformer: the manager's cache of pods, read through the ApiClient: List (all namespaces), then
// Watch from the list's resourceVersion; on kGone (compacted) it re-lists at once, on other errors it
// re-lists with exponential backoff.
//
// Indexes: by key ("namespace/name"), by controller owner uid, and orphans (no controller ref) by
// namespace, so that one controller's sync costs O(its pods + its namespace's orphans). For the common
// sync (nothing to adopt, release or delete) TallyOf keeps a controller's counts up to date as events
// arrive, so that such a sync costs O(1) however many pods the controller has.
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
#include <optional>
#include <string>
#include <string_view>
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
  // By key, ordered for deterministic iteration. The key is a view of the one the informer's pod map
  // holds (a hash map's keys stay where they are until erased, and a pod leaves its bucket first).
  using PodMap = std::map<std::string_view, PodPtr>;
  // What a controller claims of the pods that name it as controller: those of its namespace that its
  // selector matches (an empty selector matches all). template_labels: its template's, if it has one.
  struct ClaimSpec {
    std::string namespace_;
    Labels selector;
    std::optional<Labels> template_labels;
    bool operator==(const ClaimSpec&) const = default;
  };
  // Counts over the pods owned by one uid, under a ClaimSpec. Claimed pods count in active (not
  // terminated, not being deleted), ready (active and Ready) and fully_labeled (active and matching
  // the template's labels); unclaimed: owned pods of its namespace that the selector does not match and
  // that are not being deleted (the ones a sync would release).
  struct Tally {
    int64_t active = 0;
    int64_t ready = 0;
    int64_t fully_labeled = 0;
    int64_t unclaimed = 0;
    bool operator==(const Tally&) const = default;
  };

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
  // The Tally of the pods owned by `uid` under `spec`: O(1) when asked with the same spec as last time
  // (kept up to date by every event since), O(owned pods) when the spec changed or on the first call.
  Tally TallyOf(const std::string& uid, const ClaimSpec& spec);

 private:
  void List();
  void OnList(Result<ObjectList<Pod>> result);
  void StartWatch(const std::string& resource_version);
  void OnWatchEvent(const ApiWatchEvent<Pod>& ev);
  void ScheduleRelist(bool failure);
  struct Tracked {
    ClaimSpec spec;
    Tally tally;
  };
  // The pods of one controller owner (by_owner_) or the orphans of one namespace (orphans_), and for an
  // owner the Tally last asked for, kept up to date while it owns pods.
  struct Bucket {
    PodMap pods;
    std::optional<Tracked> tracked;
  };
  // A cached pod and where Index put it, so that an update or a removal finds its bucket entry without
  // a search. Elements of the hash maps and entries of a PodMap stay where they are until erased.
  struct Cached {
    PodPtr pod;
    Bucket* bucket = nullptr;
    PodMap::iterator slot;
  };
  void Upsert(const PodPtr& pod);
  void Remove(const std::string& key);
  // Puts the pod in its bucket under `key`, the pod map's own key (the bucket keeps a view of it).
  void Index(const std::string& key, Cached& cached);
  void Unindex(const Cached& cached);
  // An update that keeps the pod in its bucket (same controller ref uid, or still an orphan), in place:
  // false (nothing done) when it moves.
  bool Reindex(Cached& cached, const PodPtr& old);
  static void Count(const Pod& pod, const ClaimSpec& spec, int64_t sign, Tally& tally);

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
  int64_t synced_revision_ = 0;        // newest revision of a list or watch event; 0: none yet
  bool synced_revision_gone_ = false;  // a list at synced_revision_ answered 410: list consistently
  RelistBackoff backoff_;
  uint64_t generation_ = 0;  // events of older lists/watches are ignored
  std::unique_ptr<ApiWatch> watch_;
  TimerId relist_timer_ = 0;

  std::unordered_map<std::string, Cached> pods_;      // by key
  std::unordered_map<std::string, Bucket> by_owner_;  // controller ref uid -> its pods
  std::unordered_map<std::string, Bucket> orphans_;   // namespace -> pods without controller ref
};

// The numeric value of a resourceVersion, or nullopt if it is not a decimal number.
std::optional<int64_t> ResourceVersionNumber(const std::string& rv);

// The options of an informer's list: "" (a consistent read, a quorum read from etcd upstream) before
// the informer synced anything; its last synced revision (a state not older than what it has seen)
// afterwards, as client-go's reflector re-lists, so a re-list never goes back in time; and "" again once
// a list at that revision failed with 410 Gone. client-go's reflector makes its first list at "0" (any
// state, possibly a lagging watch cache's), so a controller restarted behind a lagging cache goes back
// in time and acts on it (kubernetes#59848: a restarted manager created again the pods its predecessor
// had just created); a consistent first list, as the streaming watch-list's initial state is, cannot.
ListOptions InformerListOptions(int64_t last_synced_revision, bool last_synced_gone);

}  // namespace rcsim

#endif  // RCSIM_ENGINE_POD_INFORMER_H_
