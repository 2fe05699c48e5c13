// A watch cache for one resource, as kube-apiserver's cacher: ONE store watch over the resource's whole
// prefix, fanned out to every client watch (filtered by namespace, label selector, metadata.name and
// field selectors), and the current objects kept in memory so that a list with resourceVersion=0 is
// served without the store. 1,000 HTTP watches therefore cost one etcd watch stream, not 1,000
// streams and threads. Clients whose only field selector is spec.nodeName=<node> (node agents) are
// indexed by it, as kube's cacher indexes pods for kubelets: a pod's change is offered to the agents
// of its old and new node only, not matched against every agent's selector.
//
// Semantics are ResourceRegistry::Watch's (see registry.h): "" or "0" starts with ADDED for every
// current object; a resourceVersion N replays the buffered changes after N, then live ones; an object
// that stops matching is DELETED, one that starts is ADDED. A resourceVersion whose changes the buffer
// has dropped, or one the store has compacted, gets one kError kGone event; one newer than the store's
// revision is returned kGone. A resourceVersion from before the cache started (a client that listed
// just before the cache's first use) is served by a store watch of its own (ResourceRegistry::Watch):
// the cache never saw those changes. Values that do not decode are skipped and reported
// (RegistryContext::ReportMalformed), an object turning unreadable is DELETED, as the registry's watch.
// The cache starts on first use (one list, then the watch from its revision); when its store watch
// ends (compaction, store failure) every client watch gets kError kGone and ends, and the next use
// restarts the cache.
//
// Thread-safety: every method may be called from any thread. Callbacks run with the cache's lock held,
// in revision order, never concurrently: they must not block and must not destroy their watch.
#ifndef RCSIM_REGISTRY_WATCH_CACHE_H_
#define RCSIM_REGISTRY_WATCH_CACHE_H_

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/mutex.h"
#include "registry/registry.h"

namespace rcsim {

template <typename T>
class WatchCache {
 public:
  using Ptr = std::shared_ptr<const T>;
  using EventCallback = typename ResourceRegistry<T>::EventCallback;

  // `registry` must outlive the cache; `capacity` is how many changes are kept for resuming watches.
  WatchCache(ResourceRegistry<T>* registry, Store* store, std::string prefix, std::size_t capacity = 10000);
  ~WatchCache();
  WatchCache(const WatchCache&) = delete;
  WatchCache& operator=(const WatchCache&) = delete;

  Result<std::unique_ptr<RegistryWatch>> Watch(const std::string& ns, const ListOptions& opts,
                                               const std::string& resource_version, EventCallback on_event);
  // The current objects of namespace `ns` matching `opts` (limit and continue ignored), at the cache's
  // revision: what a list with resourceVersion=0 returns.
  Result<ObjectList<T>> List(const std::string& ns, const ListOptions& opts);
  // Whether a list with `opts` is one the cache serves: resourceVersion=0 ("any version", as kube
  // serves it from its cache, limit ignored), neither an exact-revision read nor a continued list.
  static bool Serves(const ListOptions& opts) {
    return opts.resource_version == "0" && opts.resource_version_match != ResourceVersionMatch::kExact &&
           opts.continue_token.empty();
  }

  // Starts the cache now (it otherwise starts on first use): one list, then one store watch from its
  // revision. A client that listed before the cache started and watches from that list's revision gets
  // a store watch of its own (see above), so whoever owns the cache starts it before serving clients,
  // as kube-apiserver starts its cachers at startup. Fails (and is retried on first use) if the store
  // cannot be read.
  Status Start();

  // How many store watches this cache has started (1 while it stays healthy), and the client watches
  // it serves now.
  int64_t store_watches_started() const;
  std::size_t client_watches() const;

 private:
  struct Change {
    int64_t revision = 0;
    std::string key;
    Ptr object;                // null for a deletion
    Ptr prev;                  // null for a creation
    bool undecodable = false;  // the key now holds a value that does not decode (object is null)
    // `object` with its resourceVersion, made by the first client delivered an ADDED or MODIFIED
    // event and shared by the others (a resumed watch replaying the buffer too).
    mutable Ptr object_at_revision;
  };
  struct Client {
    std::string prefix;  // the namespace's key prefix
    int64_t from = 0;    // only changes after this revision (the cache may lag the client's list)
    ListOptions opts;
    std::optional<std::string> index;  // the spec.nodeName it selects, when that is its only field
    EventCallback on_event;
  };
  class ClientWatch;

  // Starts the cache if it is not running; may release mu_ while it destroys a watch that ended.
  Status EnsureStartedLocked() REQUIRES(mu_);
  void OnResponse(uint64_t generation, const WatchResponse& resp);
  void Deliver(const Client& c, const Change& ch);
  void Remove(uint64_t id);
  // Offers a change to the indexed clients of its old spec.nodeName, then of its new one (once if
  // they are the same); each in registration order.
  void DeliverIndexedLocked(const Change& ch) REQUIRES(mu_);

  ResourceRegistry<T>* const registry_;
  Store* const store_;
  const std::string prefix_;
  const std::size_t capacity_;

  mutable Mutex mu_;
  bool started_ GUARDED_BY(mu_) = false;
  uint64_t generation_ GUARDED_BY(mu_) = 0;     // bumped on every (re)start
  int64_t revision_ GUARDED_BY(mu_) = 0;        // the last revision applied
  int64_t horizon_ GUARDED_BY(mu_) = 0;         // changes after it are all in changes_
  int64_t start_revision_ GUARDED_BY(mu_) = 0;  // the revision the cache was listed at
  struct Entry {
    Ptr object;            // without resourceVersion
    int64_t revision = 0;  // its mod_revision
  };
  // By key. Hashed: every change looks its key up, while only lists and rv=0 watches iterate (and
  // sort what they return, see InPrefixLocked).
  std::unordered_map<std::string, Entry> objects_ GUARDED_BY(mu_);
  using Object = std::pair<const std::string, Entry>;
  // The objects whose keys start with `prefix`, in key order.
  std::vector<const Object*> InPrefixLocked(const std::string& prefix) const REQUIRES(mu_);
  std::deque<Change> changes_ GUARDED_BY(mu_);
  // The client watches by id: those without an index, the others by index value.
  std::map<uint64_t, Client> unindexed_ GUARDED_BY(mu_);
  std::map<std::string, std::map<uint64_t, Client>> by_index_ GUARDED_BY(mu_);
  std::map<uint64_t, std::string> index_of_ GUARDED_BY(mu_);  // an indexed client's value
  uint64_t next_id_ GUARDED_BY(mu_) = 1;
  int64_t store_watches_ GUARDED_BY(mu_) = 0;
  std::unique_ptr<rcsim::Watch> store_watch_ GUARDED_BY(mu_);  // destroyed with mu_ released
};

}  // namespace rcsim

#endif  // RCSIM_REGISTRY_WATCH_CACHE_H_
