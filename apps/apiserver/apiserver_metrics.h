// The apiserver's /metrics, with prometheus-cpp (core + its text serializer), under kube-apiserver's
// names and labels:
// - from the HTTP server (a RequestObserver): apiserver_request_total{verb,group,version,resource,
//   subresource,scope,component,code}, apiserver_request_duration_seconds{verb,group,version,resource,
//   subresource,scope,component} (long-running requests excluded: their duration is the client's) and
//   apiserver_longrunning_requests{...the same labels} (watches and streamed logs in progress);
// - from the store seam (InstrumentedStore, wrapped around the etcd client): etcd_request_duration_seconds
//   {operation,type} and etcd_request_errors_total{operation,type}; operation is get, list, count,
//   create, update, delete, compact, lease-grant, lease-revoke or lease-keepalive; type the resource
//   the key belongs to (pods, replicationcontrollers, nodes, namespaces, events,
//   leases.coordination.k8s.io; "" for the whole of /registry/, else "other");
// - at each scrape: apiserver_storage_objects{resource} (etcd count-only ranges) and
//   apiserver_storage_malformed_values_total (values that did not decode and were skipped).
// Latency buckets are kube-apiserver's.
//
// Thread-safety: every method is thread-safe.
#ifndef RCSIM_APPS_APISERVER_APISERVER_METRICS_H_
#define RCSIM_APPS_APISERVER_APISERVER_METRICS_H_

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "backends/http/http_server.h"
#include "engine/mutex.h"
#include "engine/store.h"

namespace rcsim {

class ApiServerMetrics final : public RequestObserver {
 public:
  ApiServerMetrics();

  void OnRequest(const RequestInfo& info, int code, Duration latency) override;
  void OnLongRunning(const RequestInfo& info, int delta) override;
  // One store call (ok: it returned no error).
  void ObserveEtcd(const char* operation, const std::string& type, Duration latency, bool ok);

  // The exposition. `store` (the uninstrumented one, so scrapes do not count as API traffic) answers
  // the object counts; `malformed_values` is the registry's count.
  std::string Scrape(Store* store, uint64_t malformed_values);

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>& requests_;
  prometheus::Family<prometheus::Histogram>& latency_;
  prometheus::Family<prometheus::Gauge>& long_running_;
  prometheus::Family<prometheus::Histogram>& etcd_latency_;
  prometheus::Family<prometheus::Counter>& etcd_errors_;
  prometheus::Family<prometheus::Gauge>& objects_;
  prometheus::Counter& malformed_;

  Mutex mu_;
  uint64_t malformed_seen_ GUARDED_BY(mu_) = 0;  // the registry's count at the previous scrape
};

// The resource a store key belongs to, as etcd_request_duration_seconds' `type` label.
std::string StorageTypeOf(const std::string& key);

// Forwards every call to `inner` and times it in `metrics`. Neither is owned.
std::unique_ptr<Store> NewInstrumentedStore(Store* inner, ApiServerMetrics* metrics);

}  // namespace rcsim

#endif  // RCSIM_APPS_APISERVER_APISERVER_METRICS_H_
