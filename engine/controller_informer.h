// ControllerInformer: the manager's cache of ReplicationControllers, from one of two sources:
// - the Store (as the 2014 manager did): Range over the prefix, then Watch from the list's revision + 1;
//   on a cancelled watch (compaction or error) it re-lists and re-watches;
// - the API (ApiClient, as kube-controller-manager does, like PodInformer): List all namespaces, then
//   Watch from the list's resourceVersion; on kGone it re-lists at once, on other errors with backoff.
// Exponential backoff after failures in both. Internally an object is keyed by its store key
// (/registry/controllers/<ns>/<name>, synthesised in the API mode) and its resourceVersion number.
//
// Guarantees:
// - resourceVersion of every cached object is its store mod_revision.
// - The cache never replaces an object by an older one (mod_revision compare), and a key deleted at
//   revision D is not resurrected by a list served at a revision below D (stale reads).
// - A value that does not decode is skipped: a log line and metrics->malformed_objects, never a crash.
// - An object whose uid differs from the cached one under the same name (recreated while a delete was
//   missed or in flight) is delivered as on_delete(old) then on_add(new), never as an update.
// - The re-list backoff doubles per consecutive failure up to max_backoff and resets after a watch
//   event or, given a clock, after backoff_reset without a failure (RelistBackoff).
//
// Thread-safety: single-threaded on `executor`. Store watch callbacks hop to the executor first; none
// touches the informer after Stop() or destruction.
#ifndef RCSIM_ENGINE_CONTROLLER_INFORMER_H_
#define RCSIM_ENGINE_CONTROLLER_INFORMER_H_

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
#include "engine/store.h"
#include "engine/types.h"

namespace rcsim {

class ControllerInformer {
 public:
  struct Handlers {
    std::function<void(const ControllerPtr&)> on_add;
    std::function<void(const ControllerPtr& old_rc, const ControllerPtr& new_rc)> on_update;
    std::function<void(const ControllerPtr&)> on_delete;
    std::function<void()> on_synced;  // after every successful list
  };
  struct Options {
    std::string prefix = "/registry/controllers/";
    Duration min_backoff = std::chrono::milliseconds(100);
    Duration max_backoff = std::chrono::seconds(30);
    // With a clock, the re-list backoff resets after backoff_reset without a failure.
    const Clock* clock = nullptr;
    Duration backoff_reset = std::chrono::minutes(2);
  };

  ControllerInformer(Options options, Store* store, Executor* executor, Logger* logger,
                     ManagerMetrics* metrics, Handlers handlers)
      : ControllerInformer(std::move(options), store, nullptr, executor, logger, metrics,
                           std::move(handlers)) {}
  // Exactly one of `store` and `api` is non-null: the source.
  ControllerInformer(Options options, Store* store, ApiClient* api, Executor* executor, Logger* logger,
                     ManagerMetrics* metrics, Handlers handlers);
  ~ControllerInformer();
  ControllerInformer(const ControllerInformer&) = delete;
  ControllerInformer& operator=(const ControllerInformer&) = delete;

  // Schedules the first list on the executor.
  void Start();
  // Idempotent. Cancels the watch and timers; no handler runs afterwards.
  void Stop();
  // True once a list succeeded.
  bool HasSynced() const { return synced_; }

  // Cached controller by "namespace/name", or null.
  ControllerPtr Get(const std::string& key) const;
  // Cached controllers of `ns`, in key order.
  std::vector<ControllerPtr> InNamespace(const std::string& ns) const;
  // Every cached key, in order.
  std::vector<std::string> Keys() const;
  std::size_t size() const { return cache_.size(); }
  // Offers an object read elsewhere (e.g. a Get after a conflict) whose mod_revision is `revision`;
  // applied only if newer than the cached one.
  void Observe(const ControllerPtr& rc, int64_t revision);

 private:
  struct Entry {
    ControllerPtr rc;
    int64_t mod_revision = 0;
    std::string store_key;
  };

  void ListAndWatch();
  // The API source.
  void ListFromApi();
  void OnApiList(Result<ObjectList<ReplicationController>> result);
  void StartApiWatch(const std::string& resource_version);
  void OnApiEvent(const ApiWatchEvent<ReplicationController>& ev);
  void ApplyFromApi(const std::string& store_key, const ControllerPtr& rc, int64_t rv);
  std::string StoreKeyOf(const ObjectMeta& meta) const;
  void StartWatch(int64_t start_revision);
  void OnWatchResponse(const WatchResponse& resp);
  void ScheduleRelist(bool failure);
  void Upsert(const std::string& store_key, const Value& value, int64_t mod_revision);
  void Apply(const std::string& store_key, const ControllerPtr& rc, int64_t mod_revision);
  void Remove(const std::string& store_key, int64_t revision);

  Options options_;
  Store* store_;
  ApiClient* api_;
  Executor* executor_;
  Logger* logger_;
  ManagerMetrics* metrics_;
  Handlers handlers_;

  std::shared_ptr<int> alive_ = std::make_shared<int>(0);  // callbacks hold weak refs
  bool started_ = false;
  bool stopped_ = false;
  bool synced_ = false;
  int64_t lists_ = 0;
  RelistBackoff backoff_;
  int64_t high_revision_ = 0;        // newest revision the cache reflects
  bool high_revision_gone_ = false;  // an API list at high_revision_ answered 410: list consistently
  uint64_t watch_generation_ = 0;    // responses of older watches are ignored
  std::unique_ptr<Watch> watch_;
  std::unique_ptr<ApiWatch> api_watch_;
  bool listing_ = false;  // an API list is in flight
  TimerId relist_timer_ = 0;

  std::map<std::string, Entry> cache_;  // by "namespace/name"
  std::unordered_map<std::string, std::string> key_of_store_key_;
  std::unordered_map<std::string, int64_t> tombstones_;  // store key -> deleting revision
};

}  // namespace rcsim

#endif  // RCSIM_ENGINE_CONTROLLER_INFORMER_H_
