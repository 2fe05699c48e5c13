// RevisionTimeline: when each revision of a Store became current, recorded by watching the store, so
// that a fault wrapper can serve reads as the world was `lag` ago (stale reads) and tell when an
// event it replays happened. Used by FaultyStore (a lagging etcd member) and FaultyApiClient (a
// lagging API watch cache): both answer "the revision current at max(now - lag, window start)".
//
// Recording starts with the first OpenWindow() and goes on until destruction (one store watch; an
// entry per revision, pruned to the newest one at or before now - lag, so a lag of zero keeps one).
// OpenWindow() also forgets what came before: no answer predates the moment the window opened.
//
// Thread-safety: the methods are thread-safe; the store's watch callback may run on any thread.
#ifndef RCSIM_FAKES_REVISION_TIMELINE_H_
#define RCSIM_FAKES_REVISION_TIMELINE_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <utility>

#include "engine/api_client.h"
#include "engine/mutex.h"
#include "engine/store.h"
#include "engine/time.h"

namespace rcsim {

// The store's current revision (the header of a single-key Range).
Result<int64_t> CurrentRevision(Store* store);

class RevisionTimeline {
 public:
  // Both pointers must outlive the timeline; `store` must also outlive its watch (destroyed with it).
  RevisionTimeline(Store* store, Clock* clock);
  ~RevisionTimeline();
  RevisionTimeline(const RevisionTimeline&) = delete;
  RevisionTimeline& operator=(const RevisionTimeline&) = delete;

  // Opens a window now: starts recording on the first call, and makes the revision current now the
  // oldest any answer gives. False (nothing recorded) if the store could not say its revision.
  bool OpenWindow();
  // The lag the answers are for (also how much history is kept); zero or less: no stale reads.
  void set_lag(Duration lag);
  bool recording() const;

  // The revision current at max(now - lag, window start); 0 when the lag is zero or nothing was
  // recorded.
  int64_t StaleRevision();
  // True if no revision newer than `revision` was recorded (a read at it is not stale).
  bool IsLatest(int64_t revision) const;
  // When `revision` became current: nullopt if a stale read shows it already (at or before the
  // revision StaleRevision() gives, or nothing recorded); now if it was not recorded yet.
  std::optional<TimePoint> BecameCurrent(int64_t revision);

 private:
  // Drops entries no answer can need: keeps the newest one at or before now - lag.
  void Prune() REQUIRES(mu_);

  Store* const store_;
  Clock* const clock_;
  mutable Mutex mu_;
  Duration lag_ GUARDED_BY(mu_){};
  bool recording_ GUARDED_BY(mu_) = false;
  // (time seen, revision), ascending.
  std::deque<std::pair<TimePoint, int64_t>> timeline_ GUARDED_BY(mu_);
  std::unique_ptr<Watch> watch_ GUARDED_BY(mu_);  // destroyed (outside mu_) before the rest
};

// Pins a list that a cache may serve (resourceVersion "0", or N read as "not older than N") to the
// revision current `lag` ago (StaleRevision), never older than N: resourceVersionMatch=Exact. False
// (opts unchanged) if the list is to be served fresh: no lag or nothing recorded, a consistent read
// (resourceVersion ""), nothing newer happened since, or the caller chose its exact revision or
// continues a list. One rule for FaultyApiClient and real mode's fault proxy.
bool PinStaleList(RevisionTimeline& timeline, ListOptions* opts);

}  // namespace rcsim

#endif  // RCSIM_FAKES_REVISION_TIMELINE_H_
