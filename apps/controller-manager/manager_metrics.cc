#include "apps/controller-manager/manager_metrics.h"

#include <prometheus/text_serializer.h>

#include <chrono>
#include <type_traits>
#include <vector>

#include "engine/codec.h"
#include "engine/mutex.h"

namespace rcsim {
namespace {

using prometheus::BuildCounter;
using prometheus::BuildGauge;
using prometheus::BuildHistogram;

prometheus::Counter& Counter(prometheus::Registry& r, const std::string& name, const std::string& help,
                             const prometheus::Labels& labels = {}) {
  return BuildCounter().Name(name).Help(help).Register(r).Add(labels);
}

prometheus::Gauge& Gauge(prometheus::Registry& r, const std::string& name, const std::string& help,
                         const prometheus::Labels& labels = {}) {
  return BuildGauge().Name(name).Help(help).Register(r).Add(labels);
}

// Adds to `c` what the engine counted since the previous scrape. A count below the previous one is a new
// manager (after a lost and regained lease) counting from zero again: all of it is new.
void Advance(prometheus::Counter& c, uint64_t now, uint64_t before) {
  if (now < before) before = 0;
  if (now > before) c.Increment(static_cast<double>(now - before));
}

prometheus::Histogram::BucketBoundaries DurationBounds() {
  return {DurationHistogram::kBounds.begin(), DurationHistogram::kBounds.end()};
}

prometheus::Histogram& Histogram(prometheus::Registry& r, const std::string& name, const std::string& help,
                                 const prometheus::Labels& labels) {
  return BuildHistogram().Name(name).Help(help).Register(r).Add(labels, DurationBounds());
}

// The same for a histogram: the observations since the previous scrape, bucket by bucket.
void Advance(prometheus::Histogram& h, const DurationHistogram& now, const DurationHistogram& before) {
  const DurationHistogram& base = now.count < before.count ? DurationHistogram{} : before;
  if (now.count == base.count) return;
  std::vector<double> increments(DurationHistogram::kBounds.size() + 1);
  for (std::size_t i = 0; i < increments.size(); ++i) {
    increments[i] = static_cast<double>(now.buckets[i] - base.buckets[i]);
  }
  h.ObserveMultiple(increments, now.sum - base.sum);
}

// The HTTP code of a call's outcome (client-go labels failed connections "<error>"; 0 here).
int CodeOf(const Status& s) {
  return s.ok()                                                           ? 200
         : (s.code() == Code::kUnavailable || s.code() == Code::kTimeout) ? 0
                                                                          : HttpCodeOf(s.code());
}

template <typename T>
class InstrumentedResource final : public ResourceClient<T> {
 public:
  using Ptr = typename ResourceClient<T>::Ptr;
  InstrumentedResource(ResourceClient<T>* inner, ManagerMetricsExporter* m, const char* resource,
                       Logger* logger)
      : inner_(inner), m_(m), resource_(resource), logger_(logger) {}

  void Get(const std::string& ns, const std::string& name, Callback<Result<Ptr>> done) override {
    inner_->Get(ns, name, Wrap<Result<Ptr>>("GET", std::move(done)));
  }
  void List(const std::string& ns, const ListOptions& opts, Callback<Result<ObjectList<T>>> done) override {
    inner_->List(ns, opts, Wrap<Result<ObjectList<T>>>("LIST", std::move(done)));
  }
  void Create(const std::string& ns, T object, Callback<Result<Ptr>> done) override {
    inner_->Create(ns, std::move(object), Logged("created", Wrap<Result<Ptr>>("POST", std::move(done))));
  }
  void Update(T object, Callback<Result<Ptr>> done) override {
    inner_->Update(std::move(object), Logged("updated", Wrap<Result<Ptr>>("PUT", std::move(done))));
  }
  void UpdateStatus(T object, Callback<Result<Ptr>> done) override {
    inner_->UpdateStatus(std::move(object),
                         Logged("wrote status of", Wrap<Result<Ptr>>("PUT", std::move(done))));
  }
  void Delete(const std::string& ns, const std::string& name, const DeleteOptions& opts,
              Callback<Result<Ptr>> done) override {
    inner_->Delete(ns, name, opts, Logged("deleted", Wrap<Result<Ptr>>("DELETE", std::move(done))));
  }
  void PatchOwnerReferences(const std::string& ns, const std::string& name, const OwnerReferencePatch& patch,
                            Callback<Result<Ptr>> done) override {
    const char* action = patch.add ? "adopted" : "released";
    inner_->PatchOwnerReferences(ns, name, patch,
                                 Logged(action, Wrap<Result<Ptr>>("PATCH", std::move(done))));
  }
  std::unique_ptr<ApiWatch> Watch(const std::string& ns, const ListOptions& opts,
                                  const std::string& resource_version,
                                  std::function<void(const ApiWatchEvent<T>&)> on_event) override {
    m_->ObserveRequest("WATCH", resource_, 200, Duration::zero());
    return inner_->Watch(ns, opts, resource_version, std::move(on_event));
  }

 private:
  template <typename R>
  Callback<R> Wrap(const char* verb, Callback<R> done) {
    const auto start = std::chrono::steady_clock::now();
    return [this, verb, start, done = std::move(done)](R r) {
      m_->ObserveRequest(verb, resource_, CodeOf(r.status()), std::chrono::steady_clock::now() - start);
      done(std::move(r));
    };
  }
  // One log line per write the manager made (its actions), with the owning controller for pods.
  Callback<Result<Ptr>> Logged(const char* what, Callback<Result<Ptr>> done) {
    if (logger_ == nullptr) return done;
    return [this, what, done = std::move(done)](Result<Ptr> r) {
      if (r.ok() && *r != nullptr) {
        const ObjectMeta& m = (*r)->metadata;
        std::string line = std::string(what) + " " +
                           (resource_[0] == 'p' ? "pod " : "replicationcontroller ") + m.namespace_ + "/" +
                           m.name;
        if (const OwnerReference* owner = m.ControllerRef(); owner != nullptr) {
          line += " (controller " + owner->name + ")";
        }
        if constexpr (std::is_same_v<T, ReplicationController>) {
          line += " replicas=" + std::to_string((*r)->status.replicas);
        }
        logger_->Log(LogLevel::kInfo, line);
      }
      done(std::move(r));
    };
  }

  ResourceClient<T>* inner_;
  ManagerMetricsExporter* m_;
  const char* resource_;
  Logger* logger_;
};

class InstrumentedApiClient final : public ApiClient {
 public:
  InstrumentedApiClient(ApiClient* inner, ManagerMetricsExporter* m, Logger* logger)
      : pods_(&inner->pods(), m, "pods", logger),
        controllers_(&inner->controllers(), m, "replicationcontrollers", logger) {}
  ResourceClient<Pod>& pods() override { return pods_; }
  ResourceClient<ReplicationController>& controllers() override { return controllers_; }

 private:
  InstrumentedResource<Pod> pods_;
  InstrumentedResource<ReplicationController> controllers_;
};

}  // namespace

ManagerMetricsExporter::ManagerMetricsExporter(std::string lease_name)
    : registry_(std::make_shared<prometheus::Registry>()),
      requests_(BuildCounter()
                    .Name("rest_client_requests_total")
                    .Help("Number of HTTP requests to the API server, by verb, resource and status code (0: "
                          "no response)")
                    .Register(*registry_)),
      latency_(BuildHistogram()
                   .Name("rest_client_request_duration_seconds")
                   .Help("Request latency in seconds, by verb and resource")
                   .Register(*registry_)),
      depth_(Gauge(*registry_, "workqueue_depth", "Current depth of workqueue",
                   {{"name", "replicationmanager"}})),
      retries_(Counter(*registry_, "workqueue_retries_total", "Total number of retries handled by workqueue",
                       {{"name", "replicationmanager"}})),
      syncs_ok_(Counter(*registry_, "replication_controller_syncs_total", "Controller syncs by result",
                        {{"result", "success"}})),
      syncs_error_(BuildCounter()
                       .Name("replication_controller_syncs_total")
                       .Help("Controller syncs by result")
                       .Register(*registry_)
                       .Add({{"result", "error"}})),
      creates_ok_(Counter(*registry_, "replication_controller_pod_operations_total",
                          "Pod creates and deletes by result",
                          {{"operation", "create"}, {"result", "success"}})),
      creates_error_(BuildCounter()
                         .Name("replication_controller_pod_operations_total")
                         .Help("Pod creates and deletes by result")
                         .Register(*registry_)
                         .Add({{"operation", "create"}, {"result", "error"}})),
      deletes_ok_(BuildCounter()
                      .Name("replication_controller_pod_operations_total")
                      .Help("Pod creates and deletes by result")
                      .Register(*registry_)
                      .Add({{"operation", "delete"}, {"result", "success"}})),
      deletes_error_(BuildCounter()
                         .Name("replication_controller_pod_operations_total")
                         .Help("Pod creates and deletes by result")
                         .Register(*registry_)
                         .Add({{"operation", "delete"}, {"result", "error"}})),
      adoptions_(Counter(*registry_, "replication_controller_adoptions_total", "Orphan pods adopted")),
      releases_(Counter(*registry_, "replication_controller_releases_total", "Owned pods released")),
      status_updates_(Counter(*registry_, "replication_controller_status_updates_total", "Status writes")),
      relists_(Counter(*registry_, "informer_relists_total", "Informer lists after the first one")),
      malformed_(Counter(*registry_, "informer_malformed_objects_total",
                         "Objects skipped because they do not decode")),
      expectations_(Gauge(*registry_, "replication_controller_expectations_pending",
                          "Pod creations and deletions the manager still expects to observe")),
      synced_(Gauge(*registry_, "informers_synced", "1 once the controller and pod informers have listed")),
      queue_adds_(Counter(*registry_, "workqueue_adds_total", "Total number of adds handled by workqueue",
                          {{"name", "replicationmanager"}})),
      queue_duration_(Histogram(*registry_, "workqueue_queue_duration_seconds",
                                "How long in seconds an item stays in workqueue before being requested.",
                                {{"name", "replicationmanager"}})),
      work_duration_(Histogram(*registry_, "workqueue_work_duration_seconds",
                               "How long in seconds processing an item from workqueue takes.",
                               {{"name", "replicationmanager"}})),
      unfinished_(Gauge(*registry_, "workqueue_unfinished_work_seconds",
                        "How many seconds of work has done that is in progress and hasn't been observed by "
                        "work_duration. Large values indicate stuck threads.",
                        {{"name", "replicationmanager"}})),
      longest_(Gauge(*registry_, "workqueue_longest_running_processor_seconds",
                     "How many seconds has the longest running processor for workqueue been running.",
                     {{"name", "replicationmanager"}})),
      sync_ok_(Histogram(*registry_, "replication_controller_sync_duration_seconds",
                         "Duration of a controller sync, from leaving the queue to its last API reply, by "
                         "result",
                         {{"result", "success"}})),
      sync_error_(Histogram(*registry_, "replication_controller_sync_duration_seconds",
                            "Duration of a controller sync, from leaving the queue to its last API reply, by "
                            "result",
                            {{"result", "error"}})),
      leader_(Gauge(*registry_, "leader_election_master_status",
                    "1 if this process holds the leader lease, 0 otherwise",
                    {{"name", std::move(lease_name)}})) {}

void ManagerMetricsExporter::ObserveRequest(const char* verb, const char* resource, int code,
                                            Duration latency) {
  requests_.Add({{"verb", verb}, {"resource", resource}, {"code", std::to_string(code)}}).Increment();
  if (latency > Duration::zero()) {
    static const prometheus::Histogram::BucketBoundaries kBuckets = {0.005, 0.025, 0.1, 0.25, 0.5, 1,
                                                                     2,     4,     8,   15,   30,  60};
    latency_.Add({{"verb", verb}, {"resource", resource}}, kBuckets).Observe(ToSeconds(latency));
  }
}

std::string ManagerMetricsExporter::Scrape(const ManagerSnapshot& s) {
  {
    MutexLock lock(mu_);
    const ManagerMetrics& c = s.counters;
    Advance(retries_, c.requeues, last_.requeues);
    Advance(syncs_ok_, c.syncs - c.sync_errors, last_.syncs - last_.sync_errors);
    Advance(syncs_error_, c.sync_errors, last_.sync_errors);
    Advance(creates_ok_, c.creates, last_.creates);
    Advance(creates_error_, c.create_errors, last_.create_errors);
    Advance(deletes_ok_, c.deletes, last_.deletes);
    Advance(deletes_error_, c.delete_errors, last_.delete_errors);
    Advance(adoptions_, c.adoptions, last_.adoptions);
    Advance(releases_, c.releases, last_.releases);
    Advance(status_updates_, c.status_updates, last_.status_updates);
    Advance(relists_, c.relists, last_.relists);
    Advance(malformed_, c.malformed_objects, last_.malformed_objects);
    Advance(queue_adds_, c.queue.adds, last_.queue.adds);
    Advance(queue_duration_, c.queue.queue_duration, last_.queue.queue_duration);
    Advance(work_duration_, c.queue.work_duration, last_.queue.work_duration);
    Advance(sync_ok_, c.sync_success, last_.sync_success);
    Advance(sync_error_, c.sync_error, last_.sync_error);
    unfinished_.Set(s.unfinished_work_seconds);
    longest_.Set(s.longest_running_seconds);
    // A new manager (after a lost and regained lease) starts its counters again: keep them monotonic.
    last_ = c;
    depth_.Set(static_cast<double>(s.queue_depth));
    expectations_.Set(static_cast<double>(s.expectations_pending));
    synced_.Set(s.synced ? 1 : 0);
    leader_.Set(s.leader ? 1 : 0);
  }
  return prometheus::TextSerializer().Serialize(registry_->Collect());
}

std::unique_ptr<ApiClient> NewInstrumentedApiClient(ApiClient* inner, ManagerMetricsExporter* metrics,
                                                    Logger* logger) {
  return std::make_unique<InstrumentedApiClient>(inner, metrics, logger);
}

}  // namespace rcsim
