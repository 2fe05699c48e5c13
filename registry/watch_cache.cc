#include "registry/watch_cache.h"

#include <algorithm>
#include <optional>
#include <string_view>
#include <utility>

#include "engine/mutex.h"
#include "engine/node_types.h"

namespace rcsim {
namespace {

// The field the clients of a watch cache are indexed by, as kube-apiserver's cacher indexes pods by
// spec.nodeName: a node agent's watch is offered only the changes of pods bound to its node.
constexpr std::string_view kIndexField = "spec.nodeName";

// The index value a client selects: `kIndexField=<value>` as its only field requirement.
template <typename T>
std::optional<std::string> IndexOf(const ListOptions& opts) {
  static const bool kIndexed = ResourceRegistry<T>::Field(T{}, kIndexField).has_value();
  if (!kIndexed || opts.fields.size() != 1) return std::nullopt;
  const FieldRequirement& r = opts.fields.front();
  if (r.field != kIndexField || !r.equal) return std::nullopt;
  return r.value;
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
    MutexLock lock(mu_);
    w = std::move(store_watch_);
  }
  w.reset();  // waits for a running callback, which takes mu_
}

template <typename T>
Status WatchCache<T>::EnsureStartedLocked() {
  if (started_) return Status::Ok();
  if (store_watch_) {
    // The previous watch ended; destroy it without the lock its callback takes.
    std::unique_ptr<rcsim::Watch> old = std::move(store_watch_);
    mu_.Unlock();
    old.reset();
    mu_.Lock();
    if (started_) return Status::Ok();
  }
  RangeRequest req;
  req.key = prefix_;
  req.range_end = PrefixEnd(prefix_);
  auto r = store_->Range(req);
  if (!r.ok()) return r.status();
  objects_.clear();
  for (const KeyValue& kv : r->kvs) {
    auto obj = registry_->StoredAt(kv);
    if (!obj.ok()) {  // left out, as a list leaves it out
      registry_->context()->ReportMalformed(kv.key, obj.status());
      continue;
    }
    objects_.emplace(kv.key, Entry{std::move(*obj), kv.mod_revision});
  }
  changes_.clear();
  revision_ = r->revision;
  horizon_ = r->revision;
  start_revision_ = r->revision;
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
  const bool was = ch.prev && ResourceRegistry<T>::Matches(*ch.prev, c.opts);
  const bool is = ch.object && ResourceRegistry<T>::Matches(*ch.object, c.opts);
  ApiWatchEvent<T> ev;
  if (is) {
    ev.type = was ? Type::kModified : Type::kAdded;
    if (!ch.object_at_revision)
      ch.object_at_revision = registry_->WithRevision(ch.key, ch.object, ch.revision, true);
    ev.object = ch.object_at_revision;
  } else if (was) {
    ev.type = Type::kDeleted;  // deleted, or stopped matching: the last matching state
    // Only a real deletion's last state is what the key held at this revision (cacheable).
    ev.object =
        registry_->WithRevision(ch.key, ch.prev, ch.revision, ch.object == nullptr && !ch.undecodable);
  } else {
    return;
  }
  c.on_event(ev);
}

template <typename T>
void WatchCache<T>::OnResponse(uint64_t generation, const WatchResponse& resp) {
  MutexLock lock(mu_);
  if (!started_ || generation != generation_) return;
  for (const WatchEvent& ev : resp.events) {
    Change ch;
    ch.revision = ev.kv.mod_revision;
    ch.key = ev.kv.key;
    auto known = objects_.find(ch.key);
    if (known != objects_.end()) ch.prev = known->second.object;
    auto obj = ev.type == WatchEvent::Type::kPut ? registry_->StoredAt(ev.kv) : Result<Ptr>(Ptr());
    if (!obj.ok()) {
      // As the registry's watch: an object that turns unreadable is reported and, if a client saw it,
      // DELETED there (its last good state); a list leaves it out from now on.
      registry_->context()->ReportMalformed(ev.kv.key, obj.status());
      ch.undecodable = true;
    }
    if (obj.ok() && *obj != nullptr) {
      ch.object = std::move(*obj);
      if (known != objects_.end()) {
        known->second = Entry{ch.object, ch.revision};
      } else {
        objects_.emplace(ch.key, Entry{ch.object, ch.revision});
      }
    } else if (known != objects_.end()) {
      objects_.erase(known);
    }
    revision_ = std::max(revision_, ch.revision);
    for (const auto& [id, c] : unindexed_) Deliver(c, ch);
    DeliverIndexedLocked(ch);
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
    for (const auto& [id, c] : unindexed_) c.on_event(ev);
    for (const auto& [value, bucket] : by_index_) {
      for (const auto& [id, c] : bucket) c.on_event(ev);
    }
    unindexed_.clear();
    by_index_.clear();
    index_of_.clear();
  }
}

template <typename T>
void WatchCache<T>::Remove(uint64_t id) {
  MutexLock lock(mu_);
  auto indexed = index_of_.find(id);
  if (indexed == index_of_.end()) {
    unindexed_.erase(id);
    return;
  }
  auto bucket = by_index_.find(indexed->second);
  bucket->second.erase(id);
  if (bucket->second.empty()) by_index_.erase(bucket);
  index_of_.erase(indexed);
}

template <typename T>
void WatchCache<T>::DeliverIndexedLocked(const Change& ch) {
  if (by_index_.empty()) return;
  std::optional<std::string> before;
  for (const Ptr* obj : {&ch.prev, &ch.object}) {
    if (!*obj) continue;
    std::string value = ResourceRegistry<T>::Field(**obj, kIndexField).value_or("");
    if (before == value) continue;  // the same clients: offered the change once
    auto bucket = by_index_.find(value);
    if (bucket != by_index_.end()) {
      for (const auto& [id, c] : bucket->second) Deliver(c, ch);
    }
    before = std::move(value);
  }
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
  if (Status s = ResourceRegistry<T>::CheckFieldSelector(opts); !s.ok()) return s;
  Client c;
  c.prefix = ns.empty() ? prefix_ : prefix_ + ns + "/";
  c.opts.label_selector = opts.label_selector;
  c.opts.field_name = opts.field_name;
  c.opts.fields = opts.fields;
  c.index = IndexOf<T>(opts);
  c.on_event = std::move(on_event);
  auto gone = [&](int64_t rv) {
    ApiWatchEvent<T> ev;
    ev.type = Type::kError;
    ev.error = TooOld(rv);
    c.on_event(ev);
    return std::unique_ptr<RegistryWatch>(new ClientWatch(this, 0));
  };
  // Started first, so that a list made below is never older than what the cache has seen.
  {
    MutexLock lock(mu_);
    if (Status s = EnsureStartedLocked(); !s.ok()) return s;
  }
  // "" is the most recent state: listed from the store (consistent, as the registry's watch), then the
  // cache's changes after that list. A given resourceVersion must be neither compacted (Gone even while
  // the buffer still holds it) nor newer than the store's revision (Gone: no list returned it).
  RangeResponse listed;
  if (consistent) {
    RangeRequest req;
    req.key = c.prefix;
    req.range_end = PrefixEnd(c.prefix);
    auto r = store_->Range(req);
    if (!r.ok()) return r.status();
    listed = std::move(*r);
    from = listed.revision;
  } else if (!from_cache) {
    RangeRequest now;  // one key, for the store's revision: O(1)
    now.key = c.prefix;
    now.keys_only = true;
    auto cur = store_->Range(now);
    if (!cur.ok()) return cur.status();
    if (from > cur->revision) {
      return Status(Code::kGone, "too large resource version: " + resource_version +
                                     ", current: " + std::to_string(cur->revision));
    }
    if (from < cur->revision) {
      RangeRequest at = now;  // a read at the watch's first revision fails as the watch would
      at.revision = from + 1;
      auto r = store_->Range(at);
      if (!r.ok()) {
        if (r.status().code() == Code::kCompacted) return gone(from);
        return r.status();
      }
    }
  }
  MutexLock lock(mu_);
  if (Status s = EnsureStartedLocked(); !s.ok()) return s;  // it may have restarted meanwhile
  if (from_cache) {
    from = revision_;
    for (const Object* it : InPrefixLocked(c.prefix)) {
      if (!ResourceRegistry<T>::Matches(*it->second.object, c.opts)) continue;
      ApiWatchEvent<T> ev;
      ev.type = Type::kAdded;
      ev.object = registry_->WithRevision(it->first, it->second.object, it->second.revision, true);
      c.on_event(ev);
    }
  } else if (from < start_revision_) {
    // Changes from before the cache started (a list made just before its first use, or before a
    // restart) were never seen here: the store still has them, so this client gets its own store
    // watch, as if there were no cache. Rare; the HTTP server's watch cap bounds it.
    lock.Unlock();
    return registry_->Watch(ns, opts, consistent ? "" : resource_version, std::move(c.on_event));
  } else if (from < horizon_) {
    return gone(from);  // seen, but dropped from the buffer: the client re-lists, as kube's cacher
  } else if (consistent) {
    for (const KeyValue& kv : listed.kvs) {
      auto obj = registry_->StoredAt(kv);
      if (!obj.ok()) {
        registry_->context()->ReportMalformed(kv.key, obj.status());
        continue;
      }
      if (!ResourceRegistry<T>::Matches(**obj, c.opts)) continue;
      ApiWatchEvent<T> ev;
      ev.type = Type::kAdded;
      ev.object = registry_->WithRevision(kv.key, *obj, kv.mod_revision, true);
      c.on_event(ev);
    }
  }
  c.from = from;
  for (const Change& ch : changes_) Deliver(c, ch);
  const uint64_t id = next_id_++;
  if (c.index) {
    index_of_.emplace(id, *c.index);
    by_index_[*c.index].emplace(id, std::move(c));
  } else {
    unindexed_.emplace(id, std::move(c));
  }
  return std::unique_ptr<RegistryWatch>(new ClientWatch(this, id));
}

template <typename T>
Result<ObjectList<T>> WatchCache<T>::List(const std::string& ns, const ListOptions& opts) {
  if (Status s = ResourceRegistry<T>::CheckFieldSelector(opts); !s.ok()) return s;
  MutexLock lock(mu_);
  if (Status s = EnsureStartedLocked(); !s.ok()) return s;
  const std::string prefix = ns.empty() ? prefix_ : prefix_ + ns + "/";
  ObjectList<T> out;
  out.resource_version = std::to_string(revision_);
  for (const Object* it : InPrefixLocked(prefix)) {
    if (!ResourceRegistry<T>::Matches(*it->second.object, opts)) continue;
    out.items.push_back(registry_->WithRevision(it->first, it->second.object, it->second.revision, true));
  }
  return out;
}

template <typename T>
std::vector<const typename WatchCache<T>::Object*> WatchCache<T>::InPrefixLocked(
    const std::string& prefix) const {
  std::vector<const Object*> out;
  for (const Object& o : objects_) {
    if (o.first.starts_with(prefix)) out.push_back(&o);
  }
  std::sort(out.begin(), out.end(), [](const Object* a, const Object* b) { return a->first < b->first; });
  return out;
}

template <typename T>
Status WatchCache<T>::Start() {
  MutexLock lock(mu_);
  return EnsureStartedLocked();
}

template <typename T>
int64_t WatchCache<T>::store_watches_started() const {
  MutexLock lock(mu_);
  return store_watches_;
}

template <typename T>
std::size_t WatchCache<T>::client_watches() const {
  MutexLock lock(mu_);
  return unindexed_.size() + index_of_.size();
}

template class WatchCache<Pod>;
template class WatchCache<ReplicationController>;
template class WatchCache<Node>;  // never constructed: nodes are served by the registry (api_handler.cc)

}  // namespace rcsim
