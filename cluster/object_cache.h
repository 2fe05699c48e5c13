// ObjectCache<T>: a list+watch cache of one resource over a ListWatchClient (a ResourceClient, or the
// LeaseClient), as client-go's reflector and store: lists, then watches from the list's resourceVersion; a
// watch that ends (kError: kGone after compaction, a dropped stream) is re-listed after `relist_delay` and
// the difference delivered as upserts and deletes, so a consumer sees every object's latest state exactly as
// if it had watched without a gap.
//
// Handlers: on_upsert(old_or_null, new) for ADDED/MODIFIED (and for objects found by a re-list),
// on_delete(last_state) for DELETED (and for objects a re-list no longer finds). One cache may serve
// several consumers (cluster/shared_caches.h): each adds its handlers, called in the order added. Objects are
// keyed by "namespace/name" ("name" for cluster-scoped kinds), read from the objects themselves: the cache is
// a hash set of the objects, searched by a key string or by the (namespace, name) pair, so it stores no key
// string and an event costs one hash lookup; objects() gives them in key order (deterministic iteration),
// sorted on each call.
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
    return it == state_->objects.end() ? nullptr : it->obj;
  }
  // The cached object named `name` in `ns` ("" when cluster-scoped), or null.
  Ptr Get(std::string_view ns, std::string_view name) const {
    auto it = state_->objects.find(KeyParts{ns, name});
    return it == state_->objects.end() ? nullptr : it->obj;
  }
  // Every cached object in key order: a sorted snapshot, O(n log n); for periodic passes, not per event.
  std::vector<std::pair<std::string, Ptr>> objects() const {
    std::vector<std::pair<std::string, Ptr>> out;
    out.reserve(state_->objects.size());
    for (const Entry& e : state_->objects) out.emplace_back(KeyOf(*e.obj), e.obj);
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    return out;
  }
  // The cached objects for which `pred(const T&)` holds, in key order: O(n) to test, and only the
  // matches are copied and sorted. For periodic passes that act on few of many objects.
  template <typename Pred>
  std::vector<std::pair<std::string, Ptr>> objects(Pred pred) const {
    std::vector<std::pair<std::string, Ptr>> out;
    for (const Entry& e : state_->objects) {
      if (pred(*e.obj)) out.emplace_back(KeyOf(*e.obj), e.obj);
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
  static KeyParts PartsOf(const T& obj) { return KeyParts{obj.metadata.namespace_, obj.metadata.name}; }
  // An element of the cache: the object is its own key. `obj` is mutable so that a new version of the object
  // (the same namespace and name: the same hash and key) replaces the old one in place.
  struct Entry {
    mutable Ptr obj;
  };
  // Whether two keys given as parts are the same key string. Namespaces and names hold no '/' (the
  // registry validates them), so this is comparing the parts; the general case joins them.
  static bool SameKey(const KeyParts& a, const KeyParts& b) {
    if (a.ns == b.ns && a.name == b.name) return true;
    const auto slashless = [](const KeyParts& k) {
      return k.ns.find('/') == std::string_view::npos && k.name.find('/') == std::string_view::npos;
    };
    if (slashless(a) && slashless(b)) return false;
    return Joined(a) == Joined(b);
  }
  static std::string Joined(const KeyParts& k) {
    if (k.ns.empty()) return std::string(k.name);
    return std::string(k.ns) + "/" + std::string(k.name);
  }
  // Whether `key` is the key string of `k`, without building it.
  static bool KeyIs(std::string_view key, const KeyParts& k) {
    if (k.ns.empty()) return key == k.name;
    return key.size() == k.ns.size() + 1 + k.name.size() && key.starts_with(k.ns) &&
           key[k.ns.size()] == '/' && key.ends_with(k.name);
  }
  // The parts of a key string, split at its first '/'.
  static KeyParts Split(std::string_view key) {
    const std::size_t slash = key.find('/');
    if (slash == std::string_view::npos) return KeyParts{{}, key};
    return KeyParts{key.substr(0, slash), key.substr(slash + 1)};
  }
  // Hashes a key by its two parts (split at its first '/'), so that an object, its key string and its
  // KeyParts hash alike.
  struct KeyHash {
    using is_transparent = void;
    static std::size_t Parts(std::string_view ns, std::string_view name) {
      const std::size_t a = std::hash<std::string_view>{}(ns);
      return a ^ (std::hash<std::string_view>{}(name) + 0x9e3779b97f4a7c15ULL + (a << 6) + (a >> 2));
    }
    std::size_t operator()(std::string_view key) const {
      const KeyParts k = Split(key);
      return Parts(k.ns, k.name);
    }
    std::size_t operator()(const std::string& key) const { return (*this)(std::string_view(key)); }
    std::size_t operator()(const KeyParts& k) const {
      if (k.ns.empty()) return (*this)(k.name);
      if (k.ns.find('/') == std::string_view::npos) return Parts(k.ns, k.name);
      return (*this)(Joined(k));  // not a valid namespace; rare
    }
    std::size_t operator()(const Entry& e) const { return (*this)(PartsOf(*e.obj)); }
  };
  struct KeyEqual {
    using is_transparent = void;
    bool operator()(const Entry& a, const Entry& b) const {
      return SameKey(PartsOf(*a.obj), PartsOf(*b.obj));
    }
    bool operator()(const KeyParts& a, const KeyParts& b) const { return SameKey(a, b); }
    bool operator()(const Entry& e, const KeyParts& k) const { return SameKey(PartsOf(*e.obj), k); }
    bool operator()(const KeyParts& k, const Entry& e) const { return SameKey(k, PartsOf(*e.obj)); }
    bool operator()(const Entry& e, std::string_view key) const { return KeyIs(key, PartsOf(*e.obj)); }
    bool operator()(std::string_view key, const Entry& e) const { return KeyIs(key, PartsOf(*e.obj)); }
    bool operator()(const Entry& e, const std::string& key) const {
      return (*this)(e, std::string_view(key));
    }
    bool operator()(const std::string& key, const Entry& e) const {
      return (*this)(std::string_view(key), e);
    }
  };

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
    std::unordered_set<Entry, KeyHash, KeyEqual> objects;  // keyed by the objects' namespace and name
    std::unique_ptr<ApiWatch> watch;
  };

  static void Upsert(State& s, const Ptr& obj) {
    Ptr old;
    if (auto it = s.objects.find(PartsOf(*obj)); it != s.objects.end()) {
      old = std::exchange(it->obj, obj);  // the same key: replaced in place
    } else {
      s.objects.insert(Entry{obj});
    }
    for (std::size_t i = 0; i < s.handlers.size() && s.alive; ++i) {  // a handler may add or destroy
      if (s.handlers[i].on_upsert) s.handlers[i].on_upsert(old, obj);
    }
  }
  template <typename Key>
  static void Remove(State& s, const Key& key) {
    auto it = s.objects.find(key);
    if (it == s.objects.end()) return;
    Ptr last = it->obj;
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
      std::unordered_set<KeyParts, KeyHash, KeyEqual> listed;  // views of the listed objects' names
      for (const Ptr& obj : r->items) listed.insert(PartsOf(*obj));
      std::vector<std::string> gone;
      for (const Entry& e : s->objects) {
        if (!listed.contains(PartsOf(*e.obj))) gone.push_back(KeyOf(*e.obj));
      }
      std::sort(gone.begin(), gone.end());  // deletes delivered in key order
      for (const std::string& key : gone) Remove(*s, key);
      for (const Ptr& obj : r->items) {
        auto cur = s->objects.find(PartsOf(*obj));
        if (cur != s->objects.end() &&
            cur->obj->metadata.resource_version == obj->metadata.resource_version) {
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
