// Counters of the replication manager. Written only on the engine's executor; read them there (or after
// the executor stopped).
#ifndef RCSIM_ENGINE_METRICS_H_
#define RCSIM_ENGINE_METRICS_H_

#include <array>
#include <cstdint>

#include "engine/time.h"

namespace rcsim {

// Durations counted into fixed buckets, as a Prometheus histogram is: client-go's workqueue buckets,
// 10 ns to 10 s by powers of ten (prometheus.ExponentialBuckets(10e-9, 10, 10)).
struct DurationHistogram {
  static constexpr std::array<double, 10> kBounds = {1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10};
  std::array<uint64_t, kBounds.size() + 1> buckets{};  // per bucket, not cumulative; the last is +Inf
  uint64_t count = 0;
  double sum = 0;  // seconds

  void Observe(Duration d) {
    const double seconds = ToSeconds(d);
    std::size_t i = 0;
    while (i < kBounds.size() && seconds > kBounds[i]) ++i;
    ++buckets[i];
    ++count;
    sum += seconds;
  }
};

// client-go's workqueue metrics: adds (not collapsed into a queued key), time queued, time processed.
struct WorkQueueMetrics {
  uint64_t adds = 0;
  DurationHistogram queue_duration;  // Add -> Get
  DurationHistogram work_duration;   // Get -> Done
};

struct ManagerMetrics {
  uint64_t syncs = 0;        // syncs finished (successful or not)
  uint64_t sync_errors = 0;  // syncs that failed and were requeued with backoff
  uint64_t creates = 0;      // pod creates that succeeded
  uint64_t create_errors = 0;
  uint64_t deletes = 0;  // pod deletes that succeeded (NotFound included)
  uint64_t delete_errors = 0;
  uint64_t adoptions = 0;
  uint64_t releases = 0;
  uint64_t status_updates = 0;       // successful UpdateStatus calls
  uint64_t relists = 0;              // informer lists after the first one (controllers and pods)
  uint64_t malformed_objects = 0;    // store values that did not decode and were skipped
  uint64_t requeues = 0;             // rate-limited re-adds after a failed sync
  uint64_t invalid_controllers = 0;  // syncs refused: the stored controller is invalid (InvalidForSync)
  uint64_t claim_errors = 0;         // adoptions/releases skipped after a permanent error (e.g. 413)
  WorkQueueMetrics queue;
  DurationHistogram sync_success;  // a sync's duration, from Get to its last API callback, by result
  DurationHistogram sync_error;
};

}  // namespace rcsim

#endif  // RCSIM_ENGINE_METRICS_H_
