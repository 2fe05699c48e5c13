#include "apps/apiserver/apiserver_metrics.h"

#include <prometheus/text_serializer.h>

#include <array>
#include <chrono>
#include <string_view>
#include <utility>

#include "engine/mutex.h"

namespace rcsim {
namespace {

using prometheus::BuildCounter;
using prometheus::BuildGauge;
using prometheus::BuildHistogram;

// kube-apiserver's buckets for apiserver_request_duration_seconds and etcd_request_duration_seconds.
const prometheus::Histogram::BucketBoundaries& LatencyBuckets() {
  static const prometheus::Histogram::BucketBoundaries kBuckets = {
      0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60};
  return kBuckets;
}

prometheus::Labels RequestLabels(const RequestInfo& info) {
  return {{"verb", info.verb},
          {"group", info.group},
          {"version", info.version},
          {"resource", info.resource},
          {"subresource", info.subresource},
          {"scope", info.scope},
          {"component", "apiserver"}};
}

double Seconds(Duration d) { return std::chrono::duration<double>(d).count(); }

struct Prefix {
  std::string_view key;
  std::string_view type;
};
constexpr std::array<Prefix, 6> kPrefixes = {{{"/registry/pods/", "pods"},
                                              {"/registry/controllers/", "replicationcontrollers"},
                                              {"/registry/minions/", "nodes"},
                                              {"/registry/namespaces/", "namespaces"},
                                              {"/registry/events/", "events"},
                                              {"/registry/leases/", "leases.coordination.k8s.io"}}};

template <typename Fn>
auto TimedCall(ApiServerMetrics* metrics, const char* op, const std::string& key, Fn&& fn) {
  const auto start = std::chrono::steady_clock::now();
  auto r = fn();
  metrics->ObserveEtcd(op, key.empty() ? std::string() : StorageTypeOf(key),
                       std::chrono::steady_clock::now() - start, r.ok());
  return r;
}

class InstrumentedStore final : public Store {
 public:
  InstrumentedStore(Store* inner, ApiServerMetrics* metrics) : inner_(inner), metrics_(metrics) {}

  Result<RangeResponse> Range(const RangeRequest& req) override {
    const char* op = req.count_only ? "count" : req.range_end.empty() ? "get" : "list";
    return TimedCall(metrics_, op, req.key, [&] { return inner_->Range(req); });
  }
  Result<PutResponse> Put(const PutRequest& req) override {
    return TimedCall(metrics_, "update", req.key, [&] { return inner_->Put(req); });
  }
  Result<DeleteResponse> DeleteRange(const DeleteRequest& req) override {
    return TimedCall(metrics_, "delete", req.key, [&] { return inner_->DeleteRange(req); });
  }
  // What a transaction does, as the registry writes: a put guarded by "the key does not exist yet" is a
  // create, any other put an update, a delete a delete, reads only a get.
  Result<TxnResponse> Txn(const TxnRequest& req) override {
    const char* op = "get";
    std::string key = req.compare.empty() ? std::string() : req.compare.front().key;
    for (const TxnOp& o : req.success) {
      if (o.type == TxnOp::Type::kPut) {
        op = Creates(req, o.put.key) ? "create" : "update";
        key = o.put.key;
        break;
      }
      if (o.type == TxnOp::Type::kDelete) {
        op = "delete";
        key = o.del.key;
        break;
      }
      if (key.empty()) key = o.range.key;
    }
    return TimedCall(metrics_, op, key, [&] { return inner_->Txn(req); });
  }
  Result<int64_t> Compact(int64_t revision) override {
    return TimedCall(metrics_, "compact", "/registry/", [&] { return inner_->Compact(revision); });
  }
  std::unique_ptr<Watch> StartWatch(const WatchRequest& req, WatchCallback cb) override {
    return inner_->StartWatch(req, std::move(cb));
  }
  Result<LeaseGrantResponse> LeaseGrant(int64_t ttl_seconds, int64_t id) override {
    return TimedCall(metrics_, "lease-grant", "", [&] { return inner_->LeaseGrant(ttl_seconds, id); });
  }
  Status LeaseRevoke(int64_t id) override {
    const auto start = std::chrono::steady_clock::now();
    Status s = inner_->LeaseRevoke(id);
    metrics_->ObserveEtcd("lease-revoke", "", std::chrono::steady_clock::now() - start, s.ok());
    return s;
  }
  Result<int64_t> LeaseKeepAlive(int64_t id) override {
    return TimedCall(metrics_, "lease-keepalive", "", [&] { return inner_->LeaseKeepAlive(id); });
  }

 private:
  static bool Creates(const TxnRequest& req, const std::string& key) {
    for (const Compare& c : req.compare) {
      if (c.key == key && c.result == Compare::Result::kEqual && c.number == 0 &&
          c.target != Compare::Target::kValue) {
        return true;
      }
    }
    return false;
  }

  Store* const inner_;
  ApiServerMetrics* const metrics_;
};

}  // namespace

std::string StorageTypeOf(const std::string& key) {
  for (const Prefix& p : kPrefixes) {
    if (std::string_view(key).substr(0, p.key.size()) == p.key) return std::string(p.type);
  }
  return key == "/registry/" ? std::string() : "other";
}

ApiServerMetrics::ApiServerMetrics()
    : registry_(std::make_shared<prometheus::Registry>()),
      requests_(BuildCounter()
                    .Name("apiserver_request_total")
                    .Help("Counter of apiserver requests broken out for each verb, group, version, resource, "
                          "scope, component, and HTTP response code.")
                    .Register(*registry_)),
      latency_(BuildHistogram()
                   .Name("apiserver_request_duration_seconds")
                   .Help("Response latency distribution in seconds for each verb, group, version, resource, "
                         "subresource, scope and component.")
                   .Register(*registry_)),
      long_running_(
          BuildGauge()
              .Name("apiserver_longrunning_requests")
              .Help("Gauge of all active long-running apiserver requests broken out by verb, group, "
                    "version, resource, scope and component.")
              .Register(*registry_)),
      etcd_latency_(BuildHistogram()
                        .Name("etcd_request_duration_seconds")
                        .Help("Etcd request latency in seconds for each operation and object type.")
                        .Register(*registry_)),
      etcd_errors_(BuildCounter()
                       .Name("etcd_request_errors_total")
                       .Help("Etcd failed request counts for each operation and object type.")
                       .Register(*registry_)),
      objects_(BuildGauge()
                   .Name("apiserver_storage_objects")
                   .Help("Number of stored objects at the time of last check split by kind.")
                   .Register(*registry_)),
      malformed_(BuildCounter()
                     .Name("apiserver_storage_malformed_values_total")
                     .Help("Stored values under /registry/ that did not decode and were skipped.")
                     .Register(*registry_)
                     .Add({})) {}

void ApiServerMetrics::OnRequest(const RequestInfo& info, int code, Duration latency) {
  prometheus::Labels labels = RequestLabels(info);
  if (!info.long_running) latency_.Add(labels, LatencyBuckets()).Observe(Seconds(latency));
  labels.emplace("code", std::to_string(code));
  requests_.Add(labels).Increment();
}

void ApiServerMetrics::OnLongRunning(const RequestInfo& info, int delta) {
  long_running_.Add(RequestLabels(info)).Increment(delta);
}

void ApiServerMetrics::ObserveEtcd(const char* operation, const std::string& type, Duration latency,
                                   bool ok) {
  const prometheus::Labels labels = {{"operation", operation}, {"type", type}};
  etcd_latency_.Add(labels, LatencyBuckets()).Observe(Seconds(latency));
  if (!ok) etcd_errors_.Add(labels).Increment();
}

std::string ApiServerMetrics::Scrape(Store* store, uint64_t malformed_values) {
  {
    MutexLock lock(mu_);
    if (malformed_values > malformed_seen_) {
      malformed_.Increment(static_cast<double>(malformed_values - malformed_seen_));
      malformed_seen_ = malformed_values;
    }
  }
  for (const Prefix& p : kPrefixes) {
    RangeRequest count;
    count.key = std::string(p.key);
    count.range_end = PrefixEnd(p.key);
    count.count_only = true;
    // An unreachable etcd leaves the last count (kube-apiserver keeps its last observation too).
    if (Result<RangeResponse> r = store->Range(count); r.ok()) {
      objects_.Add({{"resource", std::string(p.type)}}).Set(static_cast<double>(r->count));
    }
  }
  return prometheus::TextSerializer().Serialize(registry_->Collect());
}

std::unique_ptr<Store> NewInstrumentedStore(Store* inner, ApiServerMetrics* metrics) {
  return std::make_unique<InstrumentedStore>(inner, metrics);
}

}  // namespace rcsim
