#include "fakes/mem_store.h"

#include <algorithm>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/mutex.h"

namespace rcsim {
namespace {

// etcd's largest lease TTL (MaxLeaseTTL).
constexpr int64_t kMaxLeaseTtlSeconds = 9'000'000'000;

bool IsAllKeysEnd(std::string_view end) { return end.size() == 1 && end[0] == '\0'; }

// etcd's range conventions: empty end is the single key `start`; "\0" is every key >= start.
bool InRange(std::string_view key, std::string_view start, std::string_view end) {
  if (end.empty()) return key == start;
  if (key < start) return false;
  return IsAllKeysEnd(end) || key < end;
}

struct Entry {
  Value value;
  int64_t create_revision = 0;
  int64_t mod_revision = 0;
  int64_t version = 0;
  int64_t lease = 0;
  bool tombstone = false;
};

struct KeyRecord {
  std::vector<Entry> history;  // ascending mod_revision; never empty while in the map
  bool dirty = false;          // in Core::dirty_ (has history a compaction could drop)

  const Entry* Live() const {
    const Entry& e = history.back();
    return e.tombstone ? nullptr : &e;
  }
  // The version visible at `revision`, or null if the key did not exist then.
  const Entry* At(int64_t revision) const {
    for (auto it = history.rbegin(); it != history.rend(); ++it) {
      if (it->mod_revision <= revision) return it->tombstone ? nullptr : &*it;
    }
    return nullptr;
  }
};

using KeyMap = std::map<std::string, KeyRecord, std::less<>>;

KeyValue MakeKv(const std::string& key, const Entry& e, bool keys_only = false) {
  KeyValue kv;
  kv.key = key;
  if (!keys_only) kv.value = e.value;
  kv.create_revision = e.create_revision;
  kv.mod_revision = e.mod_revision;
  kv.version = e.version;
  kv.lease = e.lease;
  return kv;
}

using ResponsePtr = std::shared_ptr<const WatchResponse>;

// One watch. Fields set at creation are immutable; the rest is guarded as noted.
struct Watcher {
  int64_t id = 0;
  std::string start;
  std::string end;
  bool prev_kv = false;
  int64_t start_revision = 0;  // events of earlier revisions are not delivered
  WatchCallback cb;
  Executor* executor = nullptr;
  // Guarded by the store's mutex (MemStore::Core::mu_, which the analysis cannot name from here): the last
  // revision this watcher was matched.
  int64_t fanout_mark = 0;

  Mutex mu;
  CondVar idle;  // signalled when delivering becomes false
  // What Drain delivers next. Vectors, swapped with `spare` so that a drain allocates nothing once warm
  // (a std::deque allocated its map and a block of 512 bytes each time Drain swapped a fresh one in).
  std::vector<ResponsePtr> queue GUARDED_BY(mu);
  std::vector<ResponsePtr> spare GUARDED_BY(mu);  // empty; its capacity is kept for the next batch
  bool drain_posted GUARDED_BY(mu) = false;       // a Drain is posted or running
  bool alive GUARDED_BY(mu) = true;
  bool delivering GUARDED_BY(mu) = false;
  std::thread::id delivering_thread GUARDED_BY(mu);

  bool Covers(std::string_view key) const { return InRange(key, start, end); }
};
using WatcherPtr = std::shared_ptr<Watcher>;

// Runs on the executor: delivers what was queued when it started, then re-posts itself if more came.
void Drain(const WatcherPtr& w) {
  std::vector<ResponsePtr> batch;
  {
    MutexLock lock(w->mu);
    batch.swap(w->queue);
    w->queue.swap(w->spare);
    if (!w->alive || batch.empty()) {
      w->drain_posted = false;
      return;
    }
    w->delivering = true;
    w->delivering_thread = std::this_thread::get_id();
  }
  for (const ResponsePtr& r : batch) {
    {
      MutexLock lock(w->mu);
      if (!w->alive) break;
    }
    w->cb(*r);
  }
  batch.clear();  // the responses are released outside the lock
  bool repost = false;
  {
    MutexLock lock(w->mu);
    if (w->spare.capacity() < batch.capacity()) w->spare.swap(batch);
    w->delivering = false;
    if (w->alive && !w->queue.empty()) {
      repost = true;
    } else {
      w->drain_posted = false;
    }
  }
  w->idle.NotifyAll();
  if (repost) {
    w->executor->Post([w] { Drain(w); });
  }
}

// Stops delivery; waits for a callback running on another thread.
void Kill(Watcher& w) {
  MutexLock lock(w.mu);
  w.alive = false;
  w.queue.clear();
  if (w.delivering && w.delivering_thread != std::this_thread::get_id()) {
    w.idle.Wait(w.mu, [&w]() REQUIRES(w.mu) { return !w.delivering; });
  }
}

}  // namespace

class MemStore::Core : public std::enable_shared_from_this<MemStore::Core> {
 public:
  Core(Clock* clock, Executor* executor, MemStoreOptions options)
      : clock_(clock), executor_(executor), options_(options), lease_ids_(options.first_lease_id) {}

  // Watchers whose Drain must be posted once the mutex is released.
  using PostList = std::vector<WatcherPtr>;

  void PostDrains(const PostList& list) {
    for (const WatcherPtr& w : list) {
      executor_->Post([w] { Drain(w); });
    }
  }

  Result<RangeResponse> Range(const RangeRequest& req) {
    MutexLock lock(mu_);
    Status s = CheckRange(req);
    if (!s.ok()) return s;
    return RangeLocked(req, rev_);
  }

  Result<PutResponse> Put(const PutRequest& req) {
    if (req.key.empty()) return Status(Code::kBadRequest, "etcdserver: key is not provided");
    PostList posts;
    PutResponse resp;
    {
      MutexLock lock(mu_);
      if (req.lease != 0 && !leases_.count(req.lease)) {
        return Status(Code::kNotFound, "etcdserver: requested lease not found");
      }
      std::vector<WatchEvent> events;
      ApplyPut(req, rev_ + 1, &events, &resp);
      Commit(std::move(events), &posts);
      resp.revision = rev_;
    }
    PostDrains(posts);
    return resp;
  }

  Result<DeleteResponse> DeleteRange(const DeleteRequest& req) {
    if (req.key.empty()) return Status(Code::kBadRequest, "etcdserver: key is not provided");
    PostList posts;
    DeleteResponse resp;
    {
      MutexLock lock(mu_);
      std::vector<WatchEvent> events;
      ApplyDelete(req, rev_ + 1, &events, &resp);
      Commit(std::move(events), &posts);
      resp.revision = rev_;
    }
    PostDrains(posts);
    return resp;
  }

  Result<TxnResponse> Txn(const TxnRequest& req) {
    // etcd's default --max-txn-ops.
    constexpr size_t kMaxTxnOps = 128;
    if (req.compare.size() > kMaxTxnOps || req.success.size() > kMaxTxnOps ||
        req.failure.size() > kMaxTxnOps) {
      return Status(Code::kBadRequest, "etcdserver: too many operations in txn request");
    }
    for (const Compare& c : req.compare) {
      if (c.key.empty()) return Status(Code::kBadRequest, "etcdserver: key is not provided");
    }
    for (const auto* ops : {&req.success, &req.failure}) {
      Status s = CheckTxnOps(*ops);
      if (!s.ok()) return s;
    }
    PostList posts;
    TxnResponse resp;
    {
      MutexLock lock(mu_);
      resp.succeeded = std::all_of(req.compare.begin(), req.compare.end(),
                                   [this](const Compare& c) REQUIRES(mu_) { return Holds(c); });
      const std::vector<TxnOp>& ops = resp.succeeded ? req.success : req.failure;
      // Everything that can fail is checked before anything is applied: a Txn is all or nothing.
      for (const TxnOp& op : ops) {
        if (op.type == TxnOp::Type::kRange) {
          Status s = CheckRange(op.range);
          if (!s.ok()) return s;
        } else if (op.type == TxnOp::Type::kPut && op.put.lease != 0 && !leases_.count(op.put.lease)) {
          return Status(Code::kNotFound, "etcdserver: requested lease not found");
        }
      }
      const int64_t new_rev = rev_ + 1;
      std::vector<WatchEvent> events;
      resp.responses.reserve(ops.size());
      for (const TxnOp& op : ops) {
        TxnOpResponse& r = resp.responses.emplace_back();
        r.type = op.type;
        switch (op.type) {
          case TxnOp::Type::kRange: {
            // Reads in a Txn see the Txn's own earlier writes.
            const int64_t latest = events.empty() ? rev_ : new_rev;
            r.range = RangeLocked(op.range, latest);
            break;
          }
          case TxnOp::Type::kPut: ApplyPut(op.put, new_rev, &events, &r.put); break;
          case TxnOp::Type::kDelete: ApplyDelete(op.del, new_rev, &events, &r.del); break;
        }
      }
      Commit(std::move(events), &posts);
      resp.revision = rev_;
      for (TxnOpResponse& r : resp.responses) {
        if (r.type == TxnOp::Type::kPut) r.put.revision = rev_;
        if (r.type == TxnOp::Type::kDelete) r.del.revision = rev_;
      }
    }
    PostDrains(posts);
    return resp;
  }

  Result<int64_t> Compact(int64_t revision) {
    MutexLock lock(mu_);
    // A never-compacted etcd accepts Compact(0) (its compacted revision starts below 0).
    if (revision < compact_rev_ || (revision == compact_rev_ && compact_rev_ > 0)) {
      return Status(Code::kCompacted, "mvcc: required revision has been compacted");
    }
    if (revision > rev_) return Status(Code::kFutureRevision, "mvcc: required revision is a future revision");
    compact_rev_ = revision;
    std::vector<KeyMap::iterator> still_dirty;
    for (KeyMap::iterator it : dirty_) {
      std::vector<Entry>& h = it->second.history;
      // Keep the newest version at or below `revision` (what a Range at `revision` sees) and all above.
      size_t keep = 0;
      for (size_t i = h.size(); i-- > 0;) {
        if (h[i].mod_revision <= revision) {
          keep = h[i].tombstone ? i + 1 : i;
          break;
        }
      }
      h.erase(h.begin(), h.begin() + static_cast<std::ptrdiff_t>(keep));
      if (h.empty()) {
        index_.erase(std::string_view(it->first));
        keys_.erase(it);
      } else if (h.size() > 1 || h.back().tombstone) {
        still_dirty.push_back(it);
      } else {
        it->second.dirty = false;
      }
    }
    dirty_.swap(still_dirty);
    while (!log_.empty() && log_.front()->header_revision < revision) log_.pop_front();
    return rev_;
  }

  std::unique_ptr<Watch> StartWatch(const WatchRequest& req, WatchCallback cb);
  void RemoveWatcher(const WatcherPtr& w);

  Result<LeaseGrantResponse> LeaseGrant(int64_t ttl_seconds, int64_t id) {
    if (ttl_seconds > kMaxLeaseTtlSeconds)
      return Status(Code::kBadRequest, "etcdserver: too large lease TTL");
    if (id < 0) return Status(Code::kBadRequest, "lease id must not be negative");
    const int64_t ttl = std::max(ttl_seconds, options_.min_lease_ttl_seconds);
    uint64_t gen = 0;
    {
      MutexLock lock(mu_);
      if (id == 0) {
        do {
          id = lease_ids_.Next();
        } while (leases_.count(id));
      } else if (leases_.count(id)) {
        return Status(Code::kAlreadyExists, "etcdserver: lease already exists");
      }
      Lease& l = leases_[id];
      l.ttl = ttl;
      l.deadline = clock_->Now() + std::chrono::seconds(ttl);
      gen = ++l.gen;
    }
    ScheduleLeaseTimer(id, gen, std::chrono::seconds(ttl));
    return LeaseGrantResponse{id, ttl};
  }

  Status LeaseRevoke(int64_t id) {
    PostList posts;
    TimerId timer = 0;
    {
      MutexLock lock(mu_);
      auto it = leases_.find(id);
      if (it == leases_.end()) return Status(Code::kNotFound, "etcdserver: requested lease not found");
      timer = it->second.timer;
      ExpireLocked(it, &posts);
    }
    if (timer != 0) executor_->Cancel(timer);
    PostDrains(posts);
    return Status::Ok();
  }

  Result<int64_t> LeaseKeepAlive(int64_t id) {
    MutexLock lock(mu_);
    auto it = leases_.find(id);
    const TimePoint now = clock_->Now();
    if (it == leases_.end() || now >= it->second.deadline) {
      return Status(Code::kNotFound, "etcdserver: requested lease not found");
    }
    // The pending timer notices the later deadline when it fires and re-arms itself.
    it->second.deadline = now + std::chrono::seconds(it->second.ttl);
    return it->second.ttl;
  }

  void Shutdown() {
    std::vector<WatcherPtr> all;
    {
      MutexLock lock(mu_);
      for (auto& [key, ws] : key_watchers_) all.insert(all.end(), ws.begin(), ws.end());
      for (auto& [range, ws] : range_watchers_) all.insert(all.end(), ws.begin(), ws.end());
      key_watchers_.clear();
      range_watchers_.clear();
    }
    for (const WatcherPtr& w : all) Kill(*w);
  }

  int64_t revision() const {
    MutexLock lock(mu_);
    return rev_;
  }
  int64_t compact_revision() const {
    MutexLock lock(mu_);
    return compact_rev_;
  }
  int64_t key_count() const {
    MutexLock lock(mu_);
    return live_keys_;
  }
  int64_t watcher_count() const {
    MutexLock lock(mu_);
    return watchers_;
  }
  int64_t lease_count() const {
    MutexLock lock(mu_);
    return static_cast<int64_t>(leases_.size());
  }

 private:
  struct Lease {
    int64_t ttl = 0;
    TimePoint deadline;
    uint64_t gen = 0;  // identifies the one live timer; older timers are ignored
    TimerId timer = 0;
    std::set<std::string> keys;
  };
  using LeaseMap = std::map<int64_t, Lease>;

  Status CheckRange(const RangeRequest& req) const REQUIRES(mu_) {
    if (req.key.empty()) return Status(Code::kBadRequest, "etcdserver: key is not provided");
    if (req.revision > rev_)
      return Status(Code::kFutureRevision, "mvcc: required revision is a future revision");
    if (req.revision > 0 && req.revision < compact_rev_) {
      return Status(Code::kCompacted, "mvcc: required revision has been compacted");
    }
    return Status::Ok();
  }

  // etcd rejects a Txn branch that writes a key twice ("duplicate key given in txn request").
  static Status CheckTxnOps(const std::vector<TxnOp>& ops) {
    std::set<std::string_view> puts;
    for (const TxnOp& op : ops) {
      const std::string& key = op.type == TxnOp::Type::kRange ? op.range.key
                               : op.type == TxnOp::Type::kPut ? op.put.key
                                                              : op.del.key;
      if (key.empty()) return Status(Code::kBadRequest, "etcdserver: key is not provided");
      if (op.type == TxnOp::Type::kPut && !puts.insert(op.put.key).second) {
        return Status(Code::kBadRequest, "etcdserver: duplicate key given in txn request");
      }
    }
    for (const TxnOp& op : ops) {
      if (op.type != TxnOp::Type::kDelete) continue;
      for (std::string_view k : puts) {
        if (InRange(k, op.del.key, op.del.range_end)) {
          return Status(Code::kBadRequest, "etcdserver: duplicate key given in txn request");
        }
      }
    }
    return Status::Ok();
  }

  // Calls f(iterator) for every key record in [start, end) in key order.
  template <typename F>
  void ForRange(const std::string& start, const std::string& end, F&& f) REQUIRES(mu_) {
    if (end.empty()) {
      auto it = Find(start);
      if (it != keys_.end()) f(it);
      return;
    }
    const bool unbounded = IsAllKeysEnd(end);
    if (!unbounded && end <= start) return;
    auto stop = unbounded ? keys_.end() : keys_.lower_bound(end);
    for (auto it = keys_.lower_bound(start); it != stop;) {
      auto next = std::next(it);
      f(it);
      it = next;
    }
  }

  RangeResponse RangeLocked(const RangeRequest& req, int64_t latest) REQUIRES(mu_) {
    RangeResponse resp;
    resp.revision = latest;
    const int64_t at = req.revision <= 0 ? latest : req.revision;
    const bool at_latest = at >= latest;
    ForRange(req.key, req.range_end, [&](KeyMap::iterator it) REQUIRES(mu_) {
      const Entry* e = at_latest ? it->second.Live() : it->second.At(at);
      if (e == nullptr) return;
      ++resp.count;
      if (req.count_only) return;
      if (req.limit <= 0 || static_cast<int64_t>(resp.kvs.size()) < req.limit) {
        resp.kvs.push_back(MakeKv(it->first, *e, req.keys_only));
      }
    });
    resp.more = !req.count_only && resp.count > static_cast<int64_t>(resp.kvs.size());
    return resp;
  }

  bool Holds(const Compare& c) const REQUIRES(mu_) {
    auto it = Find(c.key);
    const Entry* e = it == keys_.end() ? nullptr : it->second.Live();
    int cmp = 0;
    if (c.target == Compare::Target::kValue) {
      if (e == nullptr) return false;
      const int r = e->value.bytes().compare(c.value);
      cmp = r < 0 ? -1 : (r > 0 ? 1 : 0);
    } else {
      int64_t v = 0;
      if (e != nullptr) {
        v = c.target == Compare::Target::kVersion          ? e->version
            : c.target == Compare::Target::kCreateRevision ? e->create_revision
                                                           : e->mod_revision;
      }
      cmp = v < c.number ? -1 : (v > c.number ? 1 : 0);
    }
    switch (c.result) {
      case Compare::Result::kEqual: return cmp == 0;
      case Compare::Result::kNotEqual: return cmp != 0;
      case Compare::Result::kGreater: return cmp > 0;
      case Compare::Result::kLess: return cmp < 0;
    }
    return false;
  }

  KeyMap::iterator Find(std::string_view key) REQUIRES(mu_) {
    auto it = index_.find(key);
    return it == index_.end() ? keys_.end() : it->second;
  }
  KeyMap::const_iterator Find(std::string_view key) const REQUIRES(mu_) {
    auto it = index_.find(key);
    return it == index_.end() ? keys_.end() : KeyMap::const_iterator(it->second);
  }

  void MarkDirty(KeyMap::iterator it) REQUIRES(mu_) {
    if (!it->second.dirty) {
      it->second.dirty = true;
      dirty_.push_back(it);
    }
  }

  void DetachLease(int64_t lease, const std::string& key) REQUIRES(mu_) {
    if (lease == 0) return;
    auto l = leases_.find(lease);
    if (l != leases_.end()) l->second.keys.erase(key);
  }

  void ApplyPut(const PutRequest& req, int64_t new_rev, std::vector<WatchEvent>* events, PutResponse* resp)
      REQUIRES(mu_) {
    auto it = Find(req.key);
    const bool inserted = it == keys_.end();
    if (inserted) {
      it = keys_.try_emplace(req.key).first;
      index_.emplace(std::string_view(it->first), it);
    }
    KeyRecord& rec = it->second;
    const Entry* cur = inserted ? nullptr : rec.Live();
    Entry e;
    e.value = req.value;
    e.value.StampRevision(new_rev);  // a registry's fresh object carries its version from here on
    e.mod_revision = new_rev;
    e.lease = req.lease;
    WatchEvent& ev = events->emplace_back();
    ev.type = WatchEvent::Type::kPut;
    if (cur != nullptr) {
      e.create_revision = cur->create_revision;
      e.version = cur->version + 1;
      ev.prev_kv = MakeKv(it->first, *cur);
      if (req.prev_kv) resp->prev_kv = ev.prev_kv;
      if (cur->lease != req.lease) DetachLease(cur->lease, it->first);
    } else {
      e.create_revision = new_rev;
      e.version = 1;
      ++live_keys_;
    }
    if (req.lease != 0) leases_[req.lease].keys.insert(it->first);
    ev.kv = MakeKv(it->first, e);
    rec.history.push_back(std::move(e));
    if (rec.history.size() > 1) MarkDirty(it);
  }

  void DeleteKey(KeyMap::iterator it, int64_t new_rev, std::vector<WatchEvent>* events,
                 std::vector<KeyValue>* prev_kvs) REQUIRES(mu_) {
    KeyRecord& rec = it->second;
    const Entry* cur = rec.Live();
    if (cur == nullptr) return;
    WatchEvent& ev = events->emplace_back();
    ev.type = WatchEvent::Type::kDelete;
    ev.kv.key = it->first;
    ev.kv.mod_revision = new_rev;
    ev.prev_kv = MakeKv(it->first, *cur);
    if (prev_kvs != nullptr) prev_kvs->push_back(*ev.prev_kv);
    DetachLease(cur->lease, it->first);
    Entry tomb;
    tomb.mod_revision = new_rev;
    tomb.tombstone = true;
    rec.history.push_back(std::move(tomb));
    --live_keys_;
    MarkDirty(it);
  }

  void ApplyDelete(const DeleteRequest& req, int64_t new_rev, std::vector<WatchEvent>* events,
                   DeleteResponse* resp) REQUIRES(mu_) {
    const size_t before = events->size();
    ForRange(req.key, req.range_end, [&](KeyMap::iterator it) REQUIRES(mu_) {
      DeleteKey(it, new_rev, events, req.prev_kv ? &resp->prev_kvs : nullptr);
    });
    resp->deleted = static_cast<int64_t>(events->size() - before);
  }

  // Ends a write: if it changed anything, takes the next revision, logs the events and queues them to
  // every watcher whose range holds one of them.
  void Commit(std::vector<WatchEvent> events, PostList* posts) REQUIRES(mu_) {
    if (events.empty()) return;
    ++rev_;
    auto full = std::make_shared<WatchResponse>();
    full->header_revision = rev_;
    full->events = std::move(events);
    ResponsePtr resp = std::move(full);
    log_.push_back(resp);
    if (watchers_ == 0) return;
    ResponsePtr stripped;  // all events without prev_kv, built on first need
    auto deliver = [&](const WatcherPtr& w) REQUIRES(mu_) {
      if (w->fanout_mark == rev_ || rev_ < w->start_revision) return;
      w->fanout_mark = rev_;
      Enqueue(w, Adapt(resp, *w, &stripped), posts);
    };
    for (const WatchEvent& ev : resp->events) {
      const std::string& key = ev.kv.key;
      if (!key_watchers_.empty()) {
        auto kw = key_watchers_.find(key);
        if (kw != key_watchers_.end()) {
          for (const WatcherPtr& w : kw->second) deliver(w);
        }
      }
      for (auto rw = range_watchers_.begin(); rw != range_watchers_.end() && rw->first.first <= key; ++rw) {
        if (!InRange(key, rw->first.first, rw->first.second)) continue;
        for (const WatcherPtr& w : rw->second) deliver(w);
      }
    }
  }

  // The response `w` receives for `resp`: only the events in its range, prev_kv only if asked.
  static ResponsePtr Adapt(const ResponsePtr& resp, const Watcher& w, ResponsePtr* stripped_cache) {
    bool all_in = true;
    if (resp->events.size() > 1) {
      for (const WatchEvent& ev : resp->events) {
        if (!w.Covers(ev.kv.key)) {
          all_in = false;
          break;
        }
      }
    }
    if (all_in && w.prev_kv) return resp;
    if (all_in && *stripped_cache) return *stripped_cache;
    auto out = std::make_shared<WatchResponse>();
    out->header_revision = resp->header_revision;
    for (const WatchEvent& ev : resp->events) {
      if (!all_in && !w.Covers(ev.kv.key)) continue;
      WatchEvent& e = out->events.emplace_back();
      e.type = ev.type;
      e.kv = ev.kv;
      if (w.prev_kv) e.prev_kv = ev.prev_kv;
    }
    if (all_in) *stripped_cache = out;
    return out;
  }

  static void Enqueue(const WatcherPtr& w, ResponsePtr r, PostList* posts) {
    MutexLock lock(w->mu);
    if (!w->alive) return;
    w->queue.push_back(std::move(r));
    if (!w->drain_posted) {
      w->drain_posted = true;
      posts->push_back(w);
    }
  }

  // Deletes the lease's keys at one revision and forgets the lease.
  void ExpireLocked(LeaseMap::iterator it, PostList* posts) REQUIRES(mu_) {
    std::set<std::string> keys = std::move(it->second.keys);
    leases_.erase(it);
    std::vector<WatchEvent> events;
    for (const std::string& key : keys) {
      auto k = Find(key);
      if (k != keys_.end()) DeleteKey(k, rev_ + 1, &events, nullptr);
    }
    Commit(std::move(events), posts);
  }

  void ScheduleLeaseTimer(int64_t id, uint64_t gen, Duration delay) {
    std::weak_ptr<Core> weak = weak_from_this();
    TimerId timer = executor_->Schedule(delay, [weak, id, gen] {
      if (auto core = weak.lock()) core->OnLeaseTimer(id, gen);
    });
    MutexLock lock(mu_);
    auto it = leases_.find(id);
    if (it != leases_.end() && it->second.gen == gen) it->second.timer = timer;
  }

  void OnLeaseTimer(int64_t id, uint64_t gen) {
    PostList posts;
    Duration remaining{};
    uint64_t next_gen = 0;
    {
      MutexLock lock(mu_);
      auto it = leases_.find(id);
      if (it == leases_.end() || it->second.gen != gen) return;
      const TimePoint now = clock_->Now();
      if (now < it->second.deadline) {
        remaining = it->second.deadline - now;
        next_gen = ++it->second.gen;
        it->second.timer = 0;
      } else {
        ExpireLocked(it, &posts);
      }
    }
    if (next_gen != 0) ScheduleLeaseTimer(id, next_gen, remaining);
    PostDrains(posts);
  }

  Clock* const clock_;
  Executor* const executor_;
  const MemStoreOptions options_;

  mutable Mutex mu_;
  int64_t rev_ GUARDED_BY(mu_) = 1;
  int64_t compact_rev_ GUARDED_BY(mu_) = 0;
  KeyMap keys_ GUARDED_BY(mu_);
  // Point lookups without walking the tree: views of keys_'s node keys, which are stable.
  std::unordered_map<std::string_view, KeyMap::iterator> index_ GUARDED_BY(mu_);
  int64_t live_keys_ GUARDED_BY(mu_) = 0;
  // Records with droppable history; each once (KeyRecord::dirty).
  std::vector<KeyMap::iterator> dirty_ GUARDED_BY(mu_);
  // Every write revision >= compact_rev_, ascending, with prev_kv.
  std::deque<ResponsePtr> log_ GUARDED_BY(mu_);
  // Watchers of a single key, and of ranges keyed by (start, end); vectors in creation order.
  std::unordered_map<std::string, std::vector<WatcherPtr>> key_watchers_ GUARDED_BY(mu_);
  std::map<std::pair<std::string, std::string>, std::vector<WatcherPtr>> range_watchers_ GUARDED_BY(mu_);
  int64_t watchers_ GUARDED_BY(mu_) = 0;
  IdSequence watch_ids_ GUARDED_BY(mu_){1};
  LeaseMap leases_ GUARDED_BY(mu_);
  IdSequence lease_ids_ GUARDED_BY(mu_);
};

namespace {

class MemWatch final : public Watch {
 public:
  MemWatch(std::weak_ptr<MemStore::Core> core, WatcherPtr w) : core_(std::move(core)), w_(std::move(w)) {}
  ~MemWatch() override {
    if (auto core = core_.lock()) core->RemoveWatcher(w_);
    Kill(*w_);
  }

 private:
  std::weak_ptr<MemStore::Core> core_;
  WatcherPtr w_;
};

}  // namespace

std::unique_ptr<Watch> MemStore::Core::StartWatch(const WatchRequest& req, WatchCallback cb) {
  auto w = std::make_shared<Watcher>();
  w->start = req.key;
  w->end = req.range_end;
  w->prev_kv = req.prev_kv;
  w->cb = std::move(cb);
  w->executor = executor_;
  PostList posts;
  {
    MutexLock lock(mu_);
    w->id = watch_ids_.Next();
    const int64_t start = req.start_revision == 0 ? rev_ + 1 : req.start_revision;
    w->start_revision = start;
    if (req.start_revision < 0 || (req.start_revision != 0 && start < compact_rev_)) {
      auto r = std::make_shared<WatchResponse>();
      r->header_revision = rev_;
      r->canceled = true;
      if (req.start_revision < 0) {
        r->status = Status(Code::kBadRequest, "negative start revision");
      } else {
        r->compact_revision = compact_rev_;
        r->status = Status(Code::kCompacted, "mvcc: required revision has been compacted");
      }
      Enqueue(w, std::move(r), &posts);
    } else {
      auto first = std::lower_bound(log_.begin(), log_.end(), start, [](const ResponsePtr& r, int64_t rev) {
        return r->header_revision < rev;
      });
      ResponsePtr unused_cache;
      for (auto it = first; it != log_.end(); ++it) {
        const ResponsePtr& r = *it;
        if (std::any_of(r->events.begin(), r->events.end(),
                        [&w](const WatchEvent& ev) { return w->Covers(ev.kv.key); })) {
          unused_cache.reset();
          Enqueue(w, Adapt(r, *w, &unused_cache), &posts);
        }
      }
      if (w->end.empty()) {
        key_watchers_[w->start].push_back(w);
      } else {
        range_watchers_[{w->start, w->end}].push_back(w);
      }
      ++watchers_;
    }
  }
  PostDrains(posts);
  return std::make_unique<MemWatch>(weak_from_this(), std::move(w));
}

void MemStore::Core::RemoveWatcher(const WatcherPtr& w) {
  MutexLock lock(mu_);
  auto erase_from = [&w, this](std::vector<WatcherPtr>& v) REQUIRES(mu_) {
    auto it = std::find(v.begin(), v.end(), w);
    if (it == v.end()) return false;
    v.erase(it);
    --watchers_;
    return v.empty();
  };
  if (w->end.empty()) {
    auto it = key_watchers_.find(w->start);
    if (it != key_watchers_.end() && erase_from(it->second)) key_watchers_.erase(it);
  } else {
    auto it = range_watchers_.find({w->start, w->end});
    if (it != range_watchers_.end() && erase_from(it->second)) range_watchers_.erase(it);
  }
}

MemStore::MemStore(Clock* clock, Executor* executor, MemStoreOptions options)
    : core_(std::make_shared<Core>(clock, executor, options)) {}

MemStore::~MemStore() { core_->Shutdown(); }

Result<RangeResponse> MemStore::Range(const RangeRequest& req) { return core_->Range(req); }
Result<PutResponse> MemStore::Put(const PutRequest& req) { return core_->Put(req); }
Result<DeleteResponse> MemStore::DeleteRange(const DeleteRequest& req) { return core_->DeleteRange(req); }
Result<TxnResponse> MemStore::Txn(const TxnRequest& req) { return core_->Txn(req); }
Result<int64_t> MemStore::Compact(int64_t revision) { return core_->Compact(revision); }
std::unique_ptr<Watch> MemStore::StartWatch(const WatchRequest& req, WatchCallback cb) {
  return core_->StartWatch(req, std::move(cb));
}
Result<LeaseGrantResponse> MemStore::LeaseGrant(int64_t ttl_seconds, int64_t id) {
  return core_->LeaseGrant(ttl_seconds, id);
}
Status MemStore::LeaseRevoke(int64_t id) { return core_->LeaseRevoke(id); }
Result<int64_t> MemStore::LeaseKeepAlive(int64_t id) { return core_->LeaseKeepAlive(id); }
int64_t MemStore::revision() const { return core_->revision(); }
int64_t MemStore::compact_revision() const { return core_->compact_revision(); }
int64_t MemStore::key_count() const { return core_->key_count(); }
int64_t MemStore::watcher_count() const { return core_->watcher_count(); }
int64_t MemStore::lease_count() const { return core_->lease_count(); }

}  // namespace rcsim
