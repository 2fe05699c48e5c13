// MemStore: the in-memory etcd of the simulation, with the semantics stated in engine/store.h (MVCC
// revisions, ranges at old revisions, transactions, watch with replay, compaction, leases).
//
// Values are kept as rcsim::Value (shared, typed or bytes); the store never encodes them, except that a
// Txn compare on a value reads Value::bytes().
//
// Watch delivery: callbacks are Posted to the executor, never run inline; one watch's responses arrive in
// revision order and never concurrently. Destroying the Watch stops delivery; when it is destroyed on a
// thread other than the one running its callback, the destructor waits for that callback to return.
// Leases expire through Executor::Schedule on the given executor, measured with the given clock.
//
// History: every version of every key is kept (for Range at an old revision and watch replay) until
// Compact(); the owner must compact periodically (as the Kubernetes API server does) to bound memory.
//
// Thread-safety: thread-safe (one mutex). Callbacks and executor calls are made without the mutex held.
#ifndef RCSIM_FAKES_MEM_STORE_H_
#define RCSIM_FAKES_MEM_STORE_H_

#include <cstdint>
#include <memory>

#include "engine/executor.h"
#include "engine/store.h"
#include "engine/time.h"

namespace rcsim {

// Deterministic id allocation: ids come from a counter starting at `first`, skipping ids in use.
// Not thread-safe (the store calls it under its mutex).
class IdSequence {
 public:
  explicit IdSequence(int64_t first) : next_(first) {}
  int64_t Next() { return next_++; }
  // Makes sure a later Next() never returns `id` (for ids chosen by the caller).
  void Reserve(int64_t id) {
    if (id >= next_) next_ = id + 1;
  }

 private:
  int64_t next_;
};

struct MemStoreOptions {
  // The first lease id handed out when LeaseGrant is called with id 0.
  int64_t first_lease_id = 0x694d000000000001;
  // Granted TTLs below this are raised to it; etcd 3.4 with default flags uses 2 seconds
  // (ceil(1.5 * election timeout)).
  int64_t min_lease_ttl_seconds = 2;
};

class MemStore final : public Store {
 public:
  MemStore(Clock* clock, Executor* executor, MemStoreOptions options = {});
  // Pending callbacks are dropped; Watch objects may outlive the store (their destructor is then a no-op).
  ~MemStore() override;
  MemStore(const MemStore&) = delete;
  MemStore& operator=(const MemStore&) = delete;

  Result<RangeResponse> Range(const RangeRequest& req) override;
  Result<PutResponse> Put(const PutRequest& req) override;
  Result<DeleteResponse> DeleteRange(const DeleteRequest& req) override;
  Result<TxnResponse> Txn(const TxnRequest& req) override;
  Result<int64_t> Compact(int64_t revision) override;
  std::unique_ptr<Watch> StartWatch(const WatchRequest& req, WatchCallback cb) override;
  Result<LeaseGrantResponse> LeaseGrant(int64_t ttl_seconds, int64_t id = 0) override;
  Status LeaseRevoke(int64_t id) override;
  Result<int64_t> LeaseKeepAlive(int64_t id) override;

  // The current revision (1 for an empty store).
  int64_t revision() const;
  // The revision of the last successful Compact (0 if never compacted).
  int64_t compact_revision() const;
  // Live keys (not counting deleted ones kept for history).
  int64_t key_count() const;
  int64_t watcher_count() const;
  int64_t lease_count() const;

  class Core;  // shared with Watch handles and timers; defined in mem_store.cc

 private:
  std::shared_ptr<Core> core_;
};

}  // namespace rcsim

#endif  // RCSIM_FAKES_MEM_STORE_H_
