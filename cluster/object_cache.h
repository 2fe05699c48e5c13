// ObjectCache<T>: a list+watch cache of one resource over a ListWatchClient (a ResourceClient, or the
// LeaseClient), as client-go's reflector and store: lists, then watches from the list's resourceVersion; a
// watch that ends (kError: kGone after compaction, a dropped stream) is re-listed after `relist_delay` and
// the difference delivered as upserts and deletes, so a consumer sees every object's latest state exactly as
// if it had watched without a gap.
//
// Handlers: on_upsert(old_or_null, new) for ADDED/MODIFIED (and for objects found by a re-list),
// on_delete(last_state) for DELETED (and for objects a re-list no longer finds). One cache may serve
// several consumers (cluster/shared_caches.h): each adds its handlers, called in the order added. Objects are
// keyed by "namespace/name" ("name" for cluster-scoped kinds) in a hash map that is also searched by the
// (namespace, name) pair itself, so an event costs one hash lookup and builds no key string; objects()
// gives them in key order (deterministic iteration), sorted on each call.
//
// Thread-safety: none. Every call and every callback must run on the Executor's thread: the client's
// callbacks are expected there (the in-process client posts to the executor; production wraps its
// HTTP client so that callbacks hop onto the executor, see cluster/executor_api.h).
#ifndef RCSIM_CLUSTER_OBJECT_CACHE_H_
#define RCSIM_CLUSTER_OBJECT_CACHE_H_

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "engine/api_client.h"
#include "engine/executor.h"
#include "engine/time.h"

namespace rcsim {

template <typename T>
class ObjectCache {
 public:
  using Ptr = std::shared_ptr<const T>;
  struct Handlers {
    std::function<void(const Ptr& old_obj, const Ptr& new_obj)> on_upsert;
    std::function<void(const Ptr& obj)> on_delete;
    std::function<void()> on_synced;  // after each (re-)list has been delivered
  };

  ObjectCache(ListWatchClient<T>* client, Executor* executor, std::string ns, ListOptions opts,
              Handlers handlers, Duration relist_delay = std::chrono::seconds(1))
      : state_(std::make_shared<State>()) {
    state_->client = client;
    state_->executor = executor;
    state_->ns = std::move(ns);
    state_->opts = std::move(opts);
    if (handlers.on_upsert || handlers.on_delete || handlers.on_synced) {
      state_->handlers.push_back(std::move(handlers));
    }
    state_->relist_delay = relist_delay;
  }
  ~ObjectCache() {
    state_->alive = false;
    state_->watch.reset();
  }
  ObjectCache(const ObjectCache&) = delete;
  ObjectCache& operator=(const ObjectCache&) = delete;

  // Lists, then watches. Once: every consumer of a shared cache may call it.
  void Start() {
    if (state_->started) return;
    state_->started = true;
    Relist(state_);
  }
  // More handlers, called after those added before them. Add them before Start: what the cache has
  // already delivered is not delivered again. They stay as long as the cache: a consumer that may go
  // first makes its handlers check that it is still alive.
  void AddHandlers(Handlers handlers) { state_->handlers.push_back(std::move(handlers)); }

  // The cached object for a key ("namespace/name", or "name" when cluster-scoped), or null.
  Ptr Get(std::string_view key) const {
    auto it = state_->objects.find(key);
    return it == state_->objects.end() ? nullptr : it->second;
  }
  // The cached object named `name` in `ns` ("" when cluster-scoped), or null.
  Ptr Get(std::string_view ns, std::string_view name) const {
    auto it = state_->objects.find(KeyParts{ns, name});
    return it == state_->objects.end() ? nullptr : it->second;
  }
  // Every cached object in key order: a sorted snapshot, O(n log n); for periodic passes, not per event.
  std::vector<std::pair<std::string, Ptr>> objects() const {
    std::vector<std::pair<std::string, Ptr>> out(state_->objects.begin(), state_->objects.end());
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    return out;
  }
  // The cached objects for which `pred(const T&)` holds, in key order: O(n) to test, and only the
  // matches are copied and sorted. For periodic passes that act on few of many objects.
  template <typename Pred>
  std::vector<std::pair<std::string, Ptr>> objects(Pred pred) const {
    std::vector<std::pair<std::string, Ptr>> out;
    for (const auto& [key, obj] : state_->objects) {
      if (pred(*obj)) out.emplace_back(key, obj);
    }
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    return out;
  }
  std::size_t size() const { return state_->objects.size(); }
  bool synced() const { return state_->synced; }
  // Listed and watching: false before the first list and from a watch's end (or a failed list) until
  // the re-list that follows has been delivered. While false the cache may miss changes.
  bool live() const { return state_->live; }
  uint64_t relists() const { return state_->relists; }

  static std::string KeyOf(const T& obj) {
    if (obj.metadata.namespace_.empty()) return obj.metadata.name;
    return obj.metadata.namespace_ + "/" + obj.metadata.name;
  }

 private:
  // The key ns + "/" + name (name alone when ns is empty), not built.
  struct KeyParts {
    std::string_view ns;
    std::string_view name;
  };
  // Hashes a key by its two parts (split at its first '/'), so that a key and its KeyParts hash alike.
  struct KeyHash {
    using is_transparent = void;
    static std::size_t Parts(std::string_view ns, std::string_view name) {
      const std::size_t a = std::hash<std::string_view>{}(ns);
      return a ^ (std::hash<std::string_view>{}(name) + 0x9e3779b97f4a7c15ULL + (a << 6) + (a >> 2));
    }
    std::size_t operator()(std::string_view key) const {
      const std::size_t slash = key.find('/');
      if (slash == std::string_view::npos) return Parts({}, key);
      return Parts(key.substr(0, slash), key.substr(slash + 1));
    }
    std::size_t operator()(const std::string& key) const { return (*this)(std::string_view(key)); }
    std::size_t operator()(const KeyParts& k) const {
      if (k.ns.empty()) return (*this)(k.name);
      if (k.ns.find('/') == std::string_view::npos) return Parts(k.ns, k.name);
      return (*this)(std::string(k.ns) + "/" + std::string(k.name));  // not a valid namespace; rare
    }
  };
  struct KeyEqual {
    using is_transparent = void;
    bool operator()(std::string_view a, std::string_view b) const { return a == b; }
    bool operator()(std::string_view key, const KeyParts& k) const {
      if (k.ns.empty()) return key == k.name;
      return key.size() == k.ns.size() + 1 + k.name.size() && key.starts_with(k.ns) &&
             key[k.ns.size()] == '/' && key.ends_with(k.name);
    }
    bool operator()(const KeyParts& k, std::string_view key) const { return (*this)(key, k); }
  };
  static KeyParts PartsOf(const T& obj) { return KeyParts{obj.metadata.namespace_, obj.metadata.name}; }

  struct State {
    ListWatchClient<T>* client = nullptr;
    Executor* executor = nullptr;
    std::string ns;
    ListOptions opts;
    std::vector<Handlers> handlers;
    Duration relist_delay{};
    bool alive = true;
    bool started = false;
    bool synced = false;
    bool live = false;
    uint64_t relists = 0;
    uint64_t generation = 0;  // bumped per (re-)list; stale watch callbacks are ignored
    std::unordered_map<std::string, Ptr, KeyHash, KeyEqual> objects;
    std::unique_ptr<ApiWatch> watch;
  };

  static void Upsert(State& s, const Ptr& obj) {
    Ptr old;
    if (auto it = s.objects.find(PartsOf(*obj)); it != s.objects.end()) {
      old = std::exchange(it->second, obj);
    } else {
      s.objects.emplace(KeyOf(*obj), obj);
    }
    for (std::size_t i = 0; i < s.handlers.size() && s.alive; ++i) {  // a handler may add or destroy
      if (s.handlers[i].on_upsert) s.handlers[i].on_upsert(old, obj);
    }
  }
  template <typename Key>
  static void Remove(State& s, const Key& key) {
    auto it = s.objects.find(key);
    if (it == s.objects.end()) return;
    Ptr last = std::move(it->second);
    s.objects.erase(it);
    for (std::size_t i = 0; i < s.handlers.size() && s.alive; ++i) {
      if (s.handlers[i].on_delete) s.handlers[i].on_delete(last);
    }
  }

  static void Relist(const std::shared_ptr<State>& s) {
    s->watch.reset();
    const uint64_t gen = ++s->generation;
    std::weak_ptr<State> weak = s;
    s->client->List(s->ns, s->opts, [weak, gen](Result<ObjectList<T>> r) {
      auto s = weak.lock();
      if (!s || !s->alive || s->generation != gen) return;
      if (!r.ok()) {
        RelistLater(s);
        return;
      }
      std::unordered_set<std::string> listed;
      for (const Ptr& obj : r->items) listed.insert(KeyOf(*obj));
      std::vector<std::string> gone;
      for (const auto& [key, obj] : s->objects) {
        if (!listed.count(key)) gone.push_back(key);
      }
      std::sort(gone.begin(), gone.end());  // deletes delivered in key order
      for (const std::string& key : gone) Remove(*s, key);
      for (const Ptr& obj : r->items) {
        auto cur = s->objects.find(PartsOf(*obj));
        if (cur != s->objects.end() &&
            cur->second->metadata.resource_version == obj->metadata.resource_version) {
          continue;
        }
        Upsert(*s, obj);
      }
      s->synced = true;
      s->live = true;
      for (std::size_t i = 0; i < s->handlers.size() && s->alive; ++i) {
        if (s->handlers[i].on_synced) s->handlers[i].on_synced();
      }
      if (!s->alive) return;
      s->watch =
          s->client->Watch(s->ns, s->opts, r->resource_version, [weak, gen](const ApiWatchEvent<T>& ev) {
            auto s = weak.lock();
            if (!s || !s->alive || s->generation != gen) return;
            using E = typename ApiWatchEvent<T>::Type;
            switch (ev.type) {
              case E::kAdded:
              case E::kModified: Upsert(*s, ev.object); return;
              case E::kDeleted: Remove(*s, PartsOf(*ev.object)); return;
              case E::kBookmark: return;
              case E::kError:
                ++s->generation;  // ignore anything else this watch delivers
                RelistLater(s);
                return;
            }
          });
    });
  }

  static void RelistLater(const std::shared_ptr<State>& s) {
    s->live = false;
    ++s->relists;
    std::weak_ptr<State> weak = s;
    s->executor->Schedule(s->relist_delay, [weak] {
      if (auto s = weak.lock(); s && s->alive) Relist(s);
    });
  }

  std::shared_ptr<State> state_;
};

}  // namespace rcsim

#endif  // RCSIM_CLUSTER_OBJECT_CACHE_H_
