#include "registry/watch_cache.h"

#include <utility>

namespace rcsim {
namespace {

bool Matches(const ObjectMeta& meta, const ListOptions& opts) {
  if (!opts.field_name.empty() && meta.name != opts.field_name) return false;
  return opts.label_selector.Matches(meta.labels);
}

Status TooOld(int64_t rv) { return Status(Code::kGone, "too old resource version: " + std::to_string(rv)); }

}  // namespace

template <typename T>
class WatchCache<T>::ClientWatch final : public RegistryWatch {
 public:
  ClientWatch(WatchCache* cache, uint64_t id) : cache_(cache), id_(id) {}
  ~ClientWatch() override { cache_->Remove(id_); }

 private:
  WatchCache* const cache_;
  const uint64_t id_;
};

template <typename T>
WatchCache<T>::WatchCache(ResourceRegistry<T>* registry, Store* store, std::string prefix,
                          std::size_t capacity)
    : registry_(registry), store_(store), prefix_(std::move(prefix)), capacity_(capacity) {}

template <typename T>
WatchCache<T>::~WatchCache() {
  std::unique_ptr<rcsim::Watch> w;
  {
    std::lock_guard<std::mutex> lock(mu_);
    w = std::move(store_watch_);
  }
  w.reset();  // waits for a running callback, which takes mu_
}

template <typename T>
Status WatchCache<T>::EnsureStartedLocked(std::unique_lock<std::mutex>& lock) {
  if (started_) return Status::Ok();
  if (store_watch_) {
    // The previous watch ended; destroy it without the lock its callback takes.
    std::unique_ptr<rcsim::Watch> old = std::move(store_watch_);
    lock.unlock();
    old.reset();
    lock.lock();
    if (started_) return Status::Ok();
  }
  RangeRequest req;
  req.key = prefix_;
  req.range_end = PrefixEnd(prefix_);
  auto r = store_->Range(req);
  if (!r.ok()) return r.status();
  objects_.clear();
  revisions_.clear();
  for (const KeyValue& kv : r->kvs) {
    auto obj = registry_->Stored(kv.value, kv.key);
    if (!obj.ok()) return obj.status();
    objects_[kv.key] = std::move(*obj);
    revisions_[kv.key] = kv.mod_revision;
  }
  changes_.clear();
  revision_ = r->revision;
  horizon_ = r->revision;
  const uint64_t generation = ++generation_;
  WatchRequest wreq;
  wreq.key = prefix_;
  wreq.range_end = PrefixEnd(prefix_);
  wreq.start_revision = revision_ + 1;
  store_watch_ = store_->StartWatch(
      wreq, [this, generation](const WatchResponse& resp) { OnResponse(generation, resp); });
  if (!store_watch_) return Status(Code::kUnavailable, "store is shut down");
  ++store_watches_;
  started_ = true;
  return Status::Ok();
}

template <typename T>
void WatchCache<T>::Deliver(const Client& c, const Change& ch) {
  using Type = typename ApiWatchEvent<T>::Type;
  if (ch.revision <= c.from || !ch.key.starts_with(c.prefix)) return;
  const bool was = ch.prev && Matches(ch.prev->metadata, c.opts);
  const bool is = ch.object && Matches(ch.object->metadata, c.opts);
  ApiWatchEvent<T> ev;
  if (is) {
    ev.type = was ? Type::kModified : Type::kAdded;
    ev.object = registry_->WithRevision(ch.key, ch.object, ch.revision, true);
  } else if (was) {
    ev.type = Type::kDeleted;  // deleted, or stopped matching: the last matching state
    ev.object = registry_->WithRevision(ch.key, ch.prev, ch.revision, ch.object == nullptr);
  } else {
    return;
  }
  c.on_event(ev);
}

template <typename T>
void WatchCache<T>::OnResponse(uint64_t generation, const WatchResponse& resp) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!started_ || generation != generation_) return;
  for (const WatchEvent& ev : resp.events) {
    Change ch;
    ch.revision = ev.kv.mod_revision;
    ch.key = ev.kv.key;
    if (auto it = objects_.find(ch.key); it != objects_.end()) ch.prev = it->second;
    if (ev.type == WatchEvent::Type::kPut) {
      auto obj = registry_->Stored(ev.kv.value, ev.kv.key);
      if (!obj.ok()) continue;  // an undecodable value is skipped, as a list would fail on it
      ch.object = std::move(*obj);
      objects_[ch.key] = ch.object;
      revisions_[ch.key] = ch.revision;
    } else {
      objects_.erase(ch.key);
      revisions_.erase(ch.key);
    }
    revision_ = std::max(revision_, ch.revision);
    for (const auto& [id, c] : clients_) Deliver(c, ch);
    changes_.push_back(std::move(ch));
    while (changes_.size() > capacity_) {
      horizon_ = changes_.front().revision;
      changes_.pop_front();
    }
  }
  if (resp.header_revision > revision_ && resp.events.empty()) revision_ = resp.header_revision;
  if (resp.canceled) {
    // Every client re-lists, as after a compaction; the next use restarts the cache.
    started_ = false;
    ApiWatchEvent<T> ev;
    ev.type = ApiWatchEvent<T>::Type::kError;
    ev.error = resp.compact_revision > 0 ? TooOld(resp.compact_revision)
                                         : Status(Code::kGone, "the watch cache restarted; re-list");
    for (const auto& [id, c] : clients_) c.on_event(ev);
    clients_.clear();
  }
}

template <typename T>
void WatchCache<T>::Remove(uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  clients_.erase(id);
}

template <typename T>
Result<std::unique_ptr<RegistryWatch>> WatchCache<T>::Watch(const std::string& ns, const ListOptions& opts,
                                                            const std::string& resource_version,
                                                            EventCallback on_event) {
  using Type = typename ApiWatchEvent<T>::Type;
  const bool from_cache = resource_version == "0";
  const bool consistent = resource_version.empty();
  int64_t from = 0;
  if (!from_cache && !consistent) {
    auto rv = ParseResourceVersion(resource_version);
    if (!rv.ok()) return rv.status();
    from = *rv;
  }
  Client c;
  c.prefix = ns.empty() ? prefix_ : prefix_ + ns + "/";
  c.opts.label_selector = opts.label_selector;
  c.opts.field_name = opts.field_name;
  c.on_event = std::move(on_event);
  auto gone = [&](int64_t rv) {
    ApiWatchEvent<T> ev;
    ev.type = Type::kError;
    ev.error = TooOld(rv);
    c.on_event(ev);
    return std::unique_ptr<RegistryWatch>(new ClientWatch(this, 0));
  };
  // "" is the most recent state: listed from the store (consistent, as the registry's watch), then the
  // cache's changes after that list. A resourceVersion the store has compacted is Gone even while the
  // buffer still holds it.
  RangeResponse listed;
  if (consistent || from > 0) {
    RangeRequest req;
    req.key = c.prefix;
    req.range_end = PrefixEnd(c.prefix);
    if (!consistent) {
      req.revision = from + 1;
      req.count_only = true;
    }
    auto r = store_->Range(req);
    if (!r.ok()) {
      if (r.status().code() == Code::kCompacted) return gone(from);
      if (r.status().code() != Code::kFutureRevision) return r.status();
    } else {
      listed = std::move(*r);
    }
    if (consistent) from = listed.revision;
  }
  std::unique_lock<std::mutex> lock(mu_);
  if (Status s = EnsureStartedLocked(lock); !s.ok()) return s;
  if (from_cache) {
    from = revision_;
    for (auto it = objects_.lower_bound(c.prefix); it != objects_.end() && it->first.starts_with(c.prefix);
         ++it) {
      if (!Matches(it->second->metadata, c.opts)) continue;
      ApiWatchEvent<T> ev;
      ev.type = Type::kAdded;
      ev.object = registry_->WithRevision(it->first, it->second, revisions_[it->first], true);
      c.on_event(ev);
    }
  } else if (from < horizon_) {
    return gone(from);
  } else if (consistent) {
    for (const KeyValue& kv : listed.kvs) {
      auto obj = registry_->Stored(kv.value, kv.key);
      if (!obj.ok()) return obj.status();
      if (!Matches((*obj)->metadata, c.opts)) continue;
      ApiWatchEvent<T> ev;
      ev.type = Type::kAdded;
      ev.object = registry_->WithRevision(kv.key, *obj, kv.mod_revision, true);
      c.on_event(ev);
    }
  }
  c.from = from;
  for (const Change& ch : changes_) Deliver(c, ch);
  const uint64_t id = next_id_++;
  clients_.emplace(id, std::move(c));
  return std::unique_ptr<RegistryWatch>(new ClientWatch(this, id));
}

template <typename T>
Result<ObjectList<T>> WatchCache<T>::List(const std::string& ns, const ListOptions& opts) {
  std::unique_lock<std::mutex> lock(mu_);
  if (Status s = EnsureStartedLocked(lock); !s.ok()) return s;
  const std::string prefix = ns.empty() ? prefix_ : prefix_ + ns + "/";
  ObjectList<T> out;
  out.resource_version = std::to_string(revision_);
  for (auto it = objects_.lower_bound(prefix); it != objects_.end() && it->first.starts_with(prefix); ++it) {
    if (!Matches(it->second->metadata, opts)) continue;
    out.items.push_back(registry_->WithRevision(it->first, it->second, revisions_[it->first], true));
  }
  return out;
}

template <typename T>
int64_t WatchCache<T>::store_watches_started() const {
  std::lock_guard<std::mutex> lock(mu_);
  return store_watches_;
}

template <typename T>
std::size_t WatchCache<T>::client_watches() const {
  std::lock_guard<std::mutex> lock(mu_);
  return clients_.size();
}

template class WatchCache<Pod>;
template class WatchCache<ReplicationController>;

}  // namespace rcsim
