#include "engine/controller_informer.h"

#include <algorithm>
#include <string>
#include <unordered_set>

#include "engine/codec.h"
#include "engine/pod_informer.h"

namespace rcsim {

ControllerInformer::ControllerInformer(Options options, Store* store, ApiClient* api, Executor* executor,
                                       Logger* logger, ManagerMetrics* metrics, Handlers handlers)
    : options_(std::move(options)),
      store_(store),
      api_(api),
      executor_(executor),
      logger_(logger),
      metrics_(metrics),
      handlers_(std::move(handlers)),
      backoff_(options_.clock, options_.min_backoff, options_.max_backoff, options_.backoff_reset) {}

ControllerInformer::~ControllerInformer() { Stop(); }

void ControllerInformer::Start() {
  if (started_ || stopped_) return;
  started_ = true;
  std::weak_ptr<int> alive = alive_;
  executor_->Post([this, alive] {
    if (alive.expired()) return;
    ListAndWatch();
  });
}

void ControllerInformer::Stop() {
  if (stopped_) return;
  stopped_ = true;
  alive_.reset();
  ++watch_generation_;
  watch_.reset();
  api_watch_.reset();
  if (relist_timer_ != 0) executor_->Cancel(relist_timer_);
  relist_timer_ = 0;
}

ControllerPtr ControllerInformer::Get(const std::string& key) const {
  auto it = cache_.find(key);
  return it == cache_.end() ? nullptr : it->second.rc;
}

std::vector<ControllerPtr> ControllerInformer::InNamespace(const std::string& ns) const {
  std::vector<ControllerPtr> out;
  std::string prefix = ns + "/";
  for (auto it = cache_.lower_bound(prefix); it != cache_.end(); ++it) {
    if (it->first.compare(0, prefix.size(), prefix) != 0) break;
    out.push_back(it->second.rc);
  }
  return out;
}

std::vector<std::string> ControllerInformer::Keys() const {
  std::vector<std::string> keys;
  keys.reserve(cache_.size());
  for (const auto& [k, e] : cache_) keys.push_back(k);
  return keys;
}

void ControllerInformer::ListAndWatch() {
  relist_timer_ = 0;
  if (stopped_) return;
  if (api_ != nullptr) {
    ListFromApi();
    return;
  }
  ++watch_generation_;
  watch_.reset();
  Result<RangeResponse> r = store_->GetPrefix(options_.prefix);
  if (!r.ok()) {
    logger_->Log(LogLevel::kWarning, "controller informer: list failed: " + r.status().ToString());
    ScheduleRelist(/*failure=*/true);
    return;
  }
  if (lists_++ > 0) ++metrics_->relists;
  const RangeResponse& list = *r;
  bool fresh = list.revision >= high_revision_;
  std::unordered_set<std::string> listed;
  for (const KeyValue& kv : list.kvs) {
    listed.insert(kv.key);
    Upsert(kv.key, kv.value, kv.mod_revision);
  }
  // Keys absent from the list were deleted at or before its revision, unless the cache saw them
  // change after it (the list is stale).
  std::vector<std::string> gone;
  for (const auto& [store_key, key] : key_of_store_key_) {
    if (listed.count(store_key) != 0) continue;
    auto it = cache_.find(key);
    if (it != cache_.end() && it->second.mod_revision <= list.revision) gone.push_back(store_key);
  }
  std::sort(gone.begin(), gone.end());
  for (const auto& store_key : gone) Remove(store_key, list.revision);
  if (fresh) {
    std::erase_if(tombstones_, [&](const auto& t) { return t.second <= list.revision; });
  }
  high_revision_ = std::max(high_revision_, list.revision);
  synced_ = true;
  StartWatch(list.revision + 1);
  if (handlers_.on_synced) handlers_.on_synced();
}

std::string ControllerInformer::StoreKeyOf(const ObjectMeta& meta) const {
  return options_.prefix + meta.namespace_ + "/" + meta.name;
}

void ControllerInformer::ListFromApi() {
  if (listing_) return;
  listing_ = true;
  const uint64_t generation = ++watch_generation_;
  api_watch_.reset();
  std::weak_ptr<int> alive = alive_;
  Executor* executor = executor_;
  api_->controllers().List("", InformerListOptions(high_revision_, high_revision_gone_),
                           [this, alive, executor, generation](Result<ObjectList<ReplicationController>> r) {
                             executor->Post([this, alive, generation, r = std::move(r)]() mutable {
                               if (alive.expired() || generation != watch_generation_) return;
                               listing_ = false;
                               OnApiList(std::move(r));
                             });
                           });
}

void ControllerInformer::OnApiList(Result<ObjectList<ReplicationController>> result) {
  if (!result.ok()) {
    logger_->Log(LogLevel::kWarning, "controller informer: list failed: " + result.status().ToString());
    if (result.status().code() == Code::kGone) high_revision_gone_ = true;
    ScheduleRelist(/*failure=*/true);
    return;
  }
  if (lists_++ > 0) ++metrics_->relists;
  high_revision_gone_ = false;
  const std::optional<int64_t> list_rv = ResourceVersionNumber(result->resource_version);
  if (!list_rv) {
    logger_->Log(LogLevel::kWarning,
                 "controller informer: list has a malformed resourceVersion " + result->resource_version);
    ScheduleRelist(/*failure=*/true);
    return;
  }
  std::unordered_set<std::string> listed;
  for (const ControllerPtr& rc : result->items) {
    if (rc == nullptr) continue;
    const std::optional<int64_t> rv = ResourceVersionNumber(rc->metadata.resource_version);
    if (!rv || rc->metadata.name.empty()) {
      ++metrics_->malformed_objects;
      continue;
    }
    const std::string store_key = StoreKeyOf(rc->metadata);
    listed.insert(store_key);
    ApplyFromApi(store_key, rc, *rv);
  }
  std::vector<std::string> gone;
  for (const auto& [store_key, key] : key_of_store_key_) {
    if (listed.count(store_key) != 0) continue;
    auto it = cache_.find(key);
    if (it != cache_.end() && it->second.mod_revision <= *list_rv) gone.push_back(store_key);
  }
  std::sort(gone.begin(), gone.end());
  for (const auto& store_key : gone) Remove(store_key, *list_rv);
  std::erase_if(tombstones_, [&](const auto& t) { return t.second <= *list_rv; });
  high_revision_ = std::max(high_revision_, *list_rv);
  synced_ = true;
  StartApiWatch(result->resource_version);
  if (handlers_.on_synced) handlers_.on_synced();
}

void ControllerInformer::ApplyFromApi(const std::string& store_key, const ControllerPtr& rc, int64_t rv) {
  auto tomb = tombstones_.find(store_key);
  if (tomb != tombstones_.end()) {
    if (tomb->second >= rv) return;  // deleted after this version (a stale list)
    tombstones_.erase(tomb);
  }
  Apply(store_key, rc, rv);
}

void ControllerInformer::StartApiWatch(const std::string& resource_version) {
  const uint64_t generation = ++watch_generation_;
  std::weak_ptr<int> alive = alive_;
  Executor* executor = executor_;
  api_watch_ = api_->controllers().Watch(
      "", ListOptions{}, resource_version,
      [this, alive, executor, generation](const ApiWatchEvent<ReplicationController>& ev) {
        executor->Post([this, alive, generation, ev] {
          if (alive.expired() || generation != watch_generation_) return;
          OnApiEvent(ev);
        });
      });
  if (api_watch_ == nullptr) ScheduleRelist(/*failure=*/true);
}

void ControllerInformer::OnApiEvent(const ApiWatchEvent<ReplicationController>& ev) {
  using Type = ApiWatchEvent<ReplicationController>::Type;
  if (ev.type == Type::kBookmark) return;
  if (ev.type != Type::kError) {
    if (ev.object == nullptr) return;
    const std::optional<int64_t> rv = ResourceVersionNumber(ev.object->metadata.resource_version);
    if (!rv || ev.object->metadata.name.empty()) {
      ++metrics_->malformed_objects;
      logger_->Log(LogLevel::kWarning,
                   "controller informer: skipping a watch event without name or "
                   "resourceVersion");
      return;
    }
    backoff_.Reset();
    const std::string store_key = StoreKeyOf(ev.object->metadata);
    if (ev.type == Type::kDeleted) {
      Remove(store_key, *rv);
    } else {
      ApplyFromApi(store_key, ev.object, *rv);
    }
    high_revision_ = std::max(high_revision_, *rv);
    return;
  }
  ++watch_generation_;
  api_watch_.reset();
  if (ev.error.code() == Code::kGone) {
    logger_->Log(LogLevel::kInfo, "controller informer: watch expired (410), re-listing");
    ScheduleRelist(/*failure=*/false);
  } else {
    logger_->Log(LogLevel::kWarning, "controller informer: watch ended: " + ev.error.ToString());
    ScheduleRelist(/*failure=*/true);
  }
}

void ControllerInformer::StartWatch(int64_t start_revision) {
  uint64_t generation = ++watch_generation_;
  std::weak_ptr<int> alive = alive_;
  WatchRequest req;
  req.key = options_.prefix;
  req.range_end = PrefixEnd(options_.prefix);
  req.start_revision = start_revision;
  Executor* executor = executor_;
  watch_ = store_->StartWatch(req, [this, alive, executor, generation](const WatchResponse& resp) {
    // May run on a store thread: only the executor hop happens here.
    executor->Post([this, alive, generation, resp] {
      if (alive.expired() || generation != watch_generation_) return;
      OnWatchResponse(resp);
    });
  });
  if (watch_ == nullptr) {
    logger_->Log(LogLevel::kWarning, "controller informer: store refused the watch");
    ScheduleRelist(/*failure=*/true);
  }
}

void ControllerInformer::OnWatchResponse(const WatchResponse& resp) {
  for (const WatchEvent& ev : resp.events) {
    if (ev.type == WatchEvent::Type::kPut) {
      Upsert(ev.kv.key, ev.kv.value, ev.kv.mod_revision);
    } else {
      Remove(ev.kv.key, ev.kv.mod_revision);
    }
    high_revision_ = std::max(high_revision_, ev.kv.mod_revision);
  }
  if (!resp.events.empty()) backoff_.Reset();
  if (!resp.canceled) return;
  ++watch_generation_;
  watch_.reset();
  if (resp.compact_revision > 0) {
    logger_->Log(LogLevel::kInfo, "controller informer: watch compacted at " +
                                      std::to_string(resp.compact_revision) + ", re-listing");
    ScheduleRelist(/*failure=*/false);
  } else {
    logger_->Log(LogLevel::kWarning, "controller informer: watch ended: " + resp.status.ToString());
    ScheduleRelist(/*failure=*/true);
  }
}

void ControllerInformer::ScheduleRelist(bool failure) {
  if (stopped_ || relist_timer_ != 0) return;
  Duration delay = Duration::zero();
  if (failure) {
    delay = backoff_.Failure();
  }
  std::weak_ptr<int> alive = alive_;
  relist_timer_ = executor_->Schedule(delay, [this, alive] {
    if (alive.expired()) return;
    ListAndWatch();
  });
}

void ControllerInformer::Upsert(const std::string& store_key, const Value& value, int64_t mod_revision) {
  auto tomb = tombstones_.find(store_key);
  if (tomb != tombstones_.end()) {
    if (tomb->second >= mod_revision) return;
    tombstones_.erase(tomb);
  }
  auto known = key_of_store_key_.find(store_key);
  if (known != key_of_store_key_.end()) {
    auto it = cache_.find(known->second);
    if (it != cache_.end() && it->second.mod_revision >= mod_revision) return;
  }
  ControllerPtr rc = value.controller();
  if (rc == nullptr) {
    Result<ReplicationController> decoded = DecodeController(value.bytes());
    if (!decoded.ok()) {
      ++metrics_->malformed_objects;
      logger_->Log(LogLevel::kWarning, "controller informer: skipping malformed value at " + store_key +
                                           ": " + decoded.status().ToString());
      return;
    }
    rc = std::make_shared<const ReplicationController>(std::move(decoded).value());
  }
  if (rc->metadata.name.empty()) {
    ++metrics_->malformed_objects;
    logger_->Log(LogLevel::kWarning, "controller informer: skipping nameless controller at " + store_key);
    return;
  }
  std::string rv = std::to_string(mod_revision);
  if (rc->metadata.resource_version != rv) {
    auto copy = std::make_shared<ReplicationController>(*rc);
    copy->metadata.resource_version = std::move(rv);
    rc = std::move(copy);
  }
  Apply(store_key, rc, mod_revision);
}

void ControllerInformer::Apply(const std::string& store_key, const ControllerPtr& rc, int64_t mod_revision) {
  std::string key = KeyOf(rc->metadata);
  auto known = key_of_store_key_.find(store_key);
  if (known != key_of_store_key_.end() && known->second != key) {
    // The object at this store key was renamed: drop the old cache entry first.
    Remove(store_key, mod_revision - 1);
    tombstones_.erase(store_key);
  }
  auto [it, inserted] = cache_.try_emplace(key);
  if (!inserted && it->second.mod_revision >= mod_revision) return;
  ControllerPtr old = it->second.rc;
  it->second = Entry{rc, mod_revision, store_key};
  key_of_store_key_[store_key] = key;
  if (!inserted && old != nullptr && old->metadata.uid != rc->metadata.uid) {
    // A new controller under a known name (its predecessor's delete was missed or is still in
    // flight): the predecessor is gone; handlers see a delete and an add, never an update.
    if (handlers_.on_delete) handlers_.on_delete(old);
    if (handlers_.on_add) handlers_.on_add(rc);
    return;
  }
  if (inserted) {
    if (handlers_.on_add) handlers_.on_add(rc);
  } else if (handlers_.on_update) {
    handlers_.on_update(old, rc);
  }
}

void ControllerInformer::Remove(const std::string& store_key, int64_t revision) {
  int64_t& tomb = tombstones_[store_key];
  tomb = std::max(tomb, revision);
  auto known = key_of_store_key_.find(store_key);
  if (known == key_of_store_key_.end()) return;
  auto it = cache_.find(known->second);
  if (it != cache_.end() && it->second.mod_revision >= revision) return;
  ControllerPtr old = it != cache_.end() ? it->second.rc : nullptr;
  if (it != cache_.end()) cache_.erase(it);
  key_of_store_key_.erase(known);
  if (old != nullptr && handlers_.on_delete) handlers_.on_delete(old);
}

void ControllerInformer::Observe(const ControllerPtr& rc, int64_t revision) {
  if (rc == nullptr || stopped_) return;
  std::string key = KeyOf(rc->metadata);
  auto it = cache_.find(key);
  if (it == cache_.end() || it->second.mod_revision >= revision) return;
  std::string store_key = it->second.store_key;
  Apply(store_key, rc, revision);
}

}  // namespace rcsim
