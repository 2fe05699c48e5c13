// FaultyApiClient: wraps an ApiClient and injects the faults of a real API server connection, so that
// the manager runs its normal code under fault. All randomness comes from the given Rng and all delays
// from the given Executor, so a seeded run is reproducible.
//
// Faults (each settable at runtime; `until` = the virtual time the fault switches itself off, nullopt =
// until changed). Faults are checked when a call is made, in this order:
// - Partition: every call made while partitioned times out: nothing reaches the inner client and the
//   caller gets kTimeout after timeout(). Starting a partition ends every active watch (kError with
//   kUnavailable); a watch started while partitioned ends the same way after timeout().
// - Error rate (per verb): the call is not applied; the caller gets kUnavailable after the latency.
// - Timeout rate (per verb): the outcome is unknown: with probability 1/2 the call is applied (its
//   reply is discarded), and the caller gets kTimeout after timeout() (default 1s).
// - Latency (per verb, uniform [min, max]): the call reaches the inner client after the drawn delay;
//   its reply is delivered as the inner client delivers it. Calls may therefore be reordered.
// - Watch delay (uniform [min, max] per event): each watch event is delivered later, never reordered
//   within one watch (an event is never delivered before the one before it).
// - Stale reads with lag L (a lagging watch cache in the API server): from the moment a window opens,
//   the `history` store's revisions are timed (fakes/revision_timeline.h). A List is a snapshot read:
//   it is served at the revision current at max(now - L, window start) (resourceVersionMatch=Exact; the
//   list's resourceVersion says which), so a caller that lists inside the window, a restarted one
//   included, sees the world as it was L ago. A watch event is delivered L after its revision became
//   current (on top of the watch delay), so a watch started from that list's resourceVersion replays
//   the last L of changes as they happened, L late; an event the stale view already shows (before the
//   window, or more than L ago) comes at once. A list whose revision was compacted meanwhile is served
//   fresh (a cache that caught up). Gets are fresh: without a resourceVersion they are quorum reads
//   from etcd in Kubernetes (the manager's canAdopt re-read relies on it). A continued list keeps the
//   revision of its first page; a list that names its own revision is served as asked.
// - Stalled watches until T (StallWatches): the streams stay open, and every watch event that comes
//   before T is held and delivered at T (on top of the watch delay, in order), as a stalled
//   connection that catches up.
// - DropWatches(): ends every active watch now with one kError event (kUnavailable), as when the
//   connection to the API server breaks; the caller must re-list and re-watch.
// - FailInFlight(): the store behind the API server crashed under the calls still waiting out their
//   request latency: each fails when it arrives, not applied; a write (create, update, patch, delete)
//   with kTimeout, as the API server answers 504 for a write its etcd connection lost after sending it
//   (the outcome is unknown to the caller), a read with kUnavailable. Calls made afterwards are not
//   affected (the other faults say what they get).
//
// Counters: calls per verb that reached the API: counted when sent, after the request latency (an
// injected error or timeout counts too: the connection answered in the API's place; UpdateStatus
// counts as kUpdate). Calls made while partitioned and calls a crashed caller never sent
// (AbandonPending) do not count. Also errors injected, timeouts injected (partition included),
// watches dropped.
//
// Thread-safety: none; calls, callbacks and setters run on the Executor's (simulation) thread. The
// inner client's callbacks must arrive on that thread too (the in-process client posts to it).
// Callbacks still pending when the FaultyApiClient is destroyed are dropped.
#ifndef RCSIM_FAKES_FAULTY_API_CLIENT_H_
#define RCSIM_FAKES_FAULTY_API_CLIENT_H_

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "engine/api_client.h"
#include "engine/executor.h"
#include "engine/rng.h"
#include "engine/store.h"
#include "engine/time.h"

namespace rcsim {

inline constexpr int kApiVerbCount = 7;  // Verb::kGet .. Verb::kDelete

struct ApiFaultCounters {
  std::array<uint64_t, kApiVerbCount> calls{};  // indexed by static_cast<int>(Verb)
  uint64_t errors_injected = 0;
  uint64_t timeouts_injected = 0;
  uint64_t watches_dropped = 0;
  uint64_t stale_lists = 0;  // lists served at an older revision than the latest
  uint64_t calls_total() const;
};

class FaultyApiClient final : public ApiClient {
 public:
  // None of the pointers is owned; all must outlive this object. `history` is the store behind the
  // API server (its revisions are the API's resourceVersions): the stale reads' timeline.
  FaultyApiClient(ApiClient* inner, Store* history, Clock* clock, Executor* executor, Rng* rng);
  ~FaultyApiClient() override;
  FaultyApiClient(const FaultyApiClient&) = delete;
  FaultyApiClient& operator=(const FaultyApiClient&) = delete;

  ResourceClient<Pod>& pods() override;
  ResourceClient<ReplicationController>& controllers() override;

  // Rates are probabilities in [0, 1] (clamped). Durations below zero count as zero; max < min is
  // raised to min.
  void SetLatency(Verb verb, Duration min, Duration max, std::optional<TimePoint> until = {});
  void SetLatencyAll(Duration min, Duration max, std::optional<TimePoint> until = {});
  void SetErrorRate(Verb verb, double rate, std::optional<TimePoint> until = {});
  void SetErrorRateAll(double rate, std::optional<TimePoint> until = {});
  // What the injected errors of `verb` answer until `until` (default: kUnavailable, "injected:
  // unavailable (<verb>)"); an empty message gives that default text with the code's name.
  void SetErrorStatus(Verb verb, Code code, std::string message, std::optional<TimePoint> until = {});
  void SetTimeoutRate(Verb verb, double rate, std::optional<TimePoint> until = {});
  void SetTimeoutRateAll(double rate, std::optional<TimePoint> until = {});
  void SetWatchDelay(Duration min, Duration max, std::optional<TimePoint> until = {});
  void SetStaleLag(Duration lag, std::optional<TimePoint> until = {});
  void StallWatches(TimePoint until);
  void SetPartitioned(bool partitioned, std::optional<TimePoint> until = {});
  // How long a timed-out call takes to fail (default 1s).
  void set_timeout(Duration d);
  Duration timeout() const;
  // Ends every active watch now (see above).
  void DropWatches();
  // The calls in flight now fail when they arrive (see above); `why` is their error message.
  void FailInFlight(const std::string& why);
  // The caller crashed: every reply and watch event still pending is dropped and every active watch
  // ends silently. Calls still waiting out their request latency are dropped (never sent); calls
  // already sent to the inner client still apply (their outcome is just lost).
  void AbandonPending();
  // Clears every fault (latencies and watch delay back to zero); counters are kept.
  void ClearFaults();

  bool partitioned() const;
  int active_watches() const;
  const ApiFaultCounters& counters() const;

  class Core;  // shared with pending callbacks and watch handles; defined in the .cc

 private:
  std::shared_ptr<Core> core_;
};

}  // namespace rcsim

#endif  // RCSIM_FAKES_FAULTY_API_CLIENT_H_
