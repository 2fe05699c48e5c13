// The controller-manager's /metrics, with prometheus-cpp (core + its text serializer):
// - API requests, recorded as they complete by InstrumentedApiClient (a decorator over the real
//   client): rest_client_requests_total{verb,resource,code} and
//   rest_client_request_duration_seconds{verb,resource} (client-go's names);
// - the manager's state, copied from the engine (on its executor) at every scrape: workqueue_depth and
//   workqueue_retries_total, workqueue_adds_total, workqueue_queue_duration_seconds,
//   workqueue_work_duration_seconds, workqueue_unfinished_work_seconds and
//   workqueue_longest_running_processor_seconds, all {name="replicationmanager"} (client-go's workqueue
//   names and buckets), replication_controller_sync_duration_seconds{result},
//   replication_controller_syncs_total{result}, ..._pod_operations_total{operation,result},
//   ..._adoptions_total, ..._releases_total, ..._status_updates_total, informer_relists_total,
//   informer_malformed_objects_total, expectations_pending, informers_synced, and
//   leader_election_master_status{name} (client-go's leader election gauge).
//
// Thread-safety: every method is thread-safe.
#ifndef RCSIM_APPS_CONTROLLER_MANAGER_MANAGER_METRICS_H_
#define RCSIM_APPS_CONTROLLER_MANAGER_MANAGER_METRICS_H_

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <cstdint>
#include <memory>
#include <string>

#include "engine/api_client.h"
#include "engine/log.h"
#include "engine/metrics.h"
#include "engine/mutex.h"
#include "engine/time.h"

namespace rcsim {

// What a scrape copies from the engine.
struct ManagerSnapshot {
  ManagerMetrics counters;
  std::size_t queue_depth = 0;
  double unfinished_work_seconds = 0;  // the syncs in progress: seconds since each began, summed
  double longest_running_seconds = 0;  // and the longest
  int64_t expectations_pending = 0;
  bool synced = false;
  bool leader = false;
  bool standby_healthy = false;  // not leading, but the lease could be read (a holder is known)
};

class ManagerMetricsExporter {
 public:
  explicit ManagerMetricsExporter(std::string lease_name);

  // One completed API call (code: the HTTP code, or 0 when there was no response).
  void ObserveRequest(const char* verb, const char* resource, int code, Duration latency);
  // Updates the state metrics from `s` and returns the whole exposition.
  std::string Scrape(const ManagerSnapshot& s);

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>& requests_;
  prometheus::Family<prometheus::Histogram>& latency_;
  prometheus::Gauge& depth_;
  prometheus::Counter& retries_;
  prometheus::Counter& syncs_ok_;
  prometheus::Counter& syncs_error_;
  prometheus::Counter& creates_ok_;
  prometheus::Counter& creates_error_;
  prometheus::Counter& deletes_ok_;
  prometheus::Counter& deletes_error_;
  prometheus::Counter& adoptions_;
  prometheus::Counter& releases_;
  prometheus::Counter& status_updates_;
  prometheus::Counter& relists_;
  prometheus::Counter& malformed_;
  prometheus::Gauge& expectations_;
  prometheus::Gauge& synced_;
  prometheus::Counter& queue_adds_;
  prometheus::Histogram& queue_duration_;
  prometheus::Histogram& work_duration_;
  prometheus::Gauge& unfinished_;
  prometheus::Gauge& longest_;
  prometheus::Histogram& sync_ok_;
  prometheus::Histogram& sync_error_;
  prometheus::Gauge& leader_;

  Mutex mu_;
  ManagerMetrics last_ GUARDED_BY(mu_);  // the counters at the previous scrape
};

// Forwards every call to `inner` and records it in `metrics`; with a `logger` (thread-safe), also one
// info line per successful write (created/deleted pod, updated pod: adoption or release, wrote status).
// None is owned.
std::unique_ptr<ApiClient> NewInstrumentedApiClient(ApiClient* inner, ManagerMetricsExporter* metrics,
                                                    Logger* logger = nullptr);

}  // namespace rcsim

#endif  // RCSIM_APPS_CONTROLLER_MANAGER_MANAGER_METRICS_H_
