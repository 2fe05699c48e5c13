// FaultyStore: a Store wrapper that injects the faults a real etcd (or the network to it) shows, so the
// code above runs its normal paths under fault: unavailable errors, outcome-unknown timeouts, delayed
// and dropped watches, forced compaction and stale reads. Every fault is off until its setter turns it
// on, and each can be switched off again at runtime.
//
// Faults:
// - error rate p: Range/Put/DeleteRange/Txn fail with kUnavailable before reaching the inner store.
// - timeout rate p: Put/DeleteRange/Txn are applied to the inner store, then fail with kTimeout.
// - watch delay d: every watch response is delivered d after the inner store delivered it; a watch's
//   order is preserved.
// - watch drop: DropWatches() ends every active watch with canceled=true and status kUnavailable (the
//   caller must re-watch); set_watch_drop_rate(p) does that to a watch with probability p per response
//   (instead of delivering it); set_reject_new_watches(true) cancels new watches the same way at once.
// - ForceCompaction(): compacts the inner store at its current revision.
// - stale reads with lag L (a lagging member): a Range at revision 0 is served at the newest revision
//   that was current at now - L (response revision set to it), and a watch response is delivered L
//   after its revision became current (on top of the watch delay; at once if a stale Range shows it
//   already), so a watch resumed from a stale Range's revision replays the changes since as they
//   happened, L late. The (time, revision) timeline (fakes/revision_timeline.h) is recorded by
//   watching the inner store from the moment a lag is first set; until L has passed since a lag was
//   set (after none), reads are served at the revision current when it was set: a stale read never
//   predates the start of its window.
//
// Thread-safety: the methods are thread-safe; the Rng is used under the wrapper's mutex. Watch handles
// must be destroyed on the executor's thread (the simulation has only one).
#ifndef RCSIM_FAKES_FAULTY_STORE_H_
#define RCSIM_FAKES_FAULTY_STORE_H_

#include <cstdint>
#include <memory>

#include "engine/executor.h"
#include "engine/rng.h"
#include "engine/store.h"
#include "engine/time.h"

namespace rcsim {

struct FaultyStoreCounters {
  int64_t unavailable_errors = 0;  // requests failed with kUnavailable, not applied
  int64_t timeouts = 0;            // requests applied, then failed with kTimeout
  int64_t delayed_watch_responses = 0;
  int64_t dropped_watches = 0;   // active watches ended by DropWatches or the drop rate
  int64_t rejected_watches = 0;  // new watches cancelled at once
  int64_t forced_compactions = 0;
  int64_t stale_reads = 0;  // Range served at an older revision than the latest
};

class FaultyStore final : public Store {
 public:
  // All pointers must outlive the FaultyStore; `inner` must also outlive every Watch it hands out.
  FaultyStore(Store* inner, Clock* clock, Executor* executor, Rng* rng);
  ~FaultyStore() override;
  FaultyStore(const FaultyStore&) = delete;
  FaultyStore& operator=(const FaultyStore&) = delete;

  void set_error_rate(double p);
  void set_timeout_rate(double p);
  void set_watch_delay(Duration d);
  // Watch responses that come before `until` are held and delivered at `until`, in order.
  void stall_watches_until(TimePoint until);
  void set_watch_drop_rate(double p);
  void set_reject_new_watches(bool reject);
  void set_stale_read_lag(Duration lag);
  // Switches every fault off (watches already dropped stay dropped).
  void ClearFaults();
  // Ends every active watch now (canceled, kUnavailable). Returns how many were ended.
  int64_t DropWatches();
  // Compacts the inner store at its current revision; returns that revision.
  Result<int64_t> ForceCompaction();
  FaultyStoreCounters counters() const;

  Result<RangeResponse> Range(const RangeRequest& req) override;
  Result<PutResponse> Put(const PutRequest& req) override;
  Result<DeleteResponse> DeleteRange(const DeleteRequest& req) override;
  Result<TxnResponse> Txn(const TxnRequest& req) override;
  Result<int64_t> Compact(int64_t revision) override;
  std::unique_ptr<Watch> StartWatch(const WatchRequest& req, WatchCallback cb) override;
  Result<LeaseGrantResponse> LeaseGrant(int64_t ttl_seconds, int64_t id = 0) override;
  Status LeaseRevoke(int64_t id) override;
  Result<int64_t> LeaseKeepAlive(int64_t id) override;

  class Core;  // shared with watch callbacks and timers; defined in faulty_store.cc

 private:
  Store* const inner_;
  std::shared_ptr<Core> core_;
};

}  // namespace rcsim

#endif  // RCSIM_FAKES_FAULTY_STORE_H_
