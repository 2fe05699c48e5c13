#include "tests/faults/fault_fixture.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "backends/etcd/etcd_store.h"
#include "backends/httpclient/rest_wire.h"
#include "engine/codec.h"
#include "engine/store.h"

namespace rcsim::faults {
namespace {

using nlohmann::json;

template <typename R>
R Await(const std::function<void(Callback<R>)>& start) {
  std::mutex mu;
  std::condition_variable cv;
  std::optional<R> out;
  start([&](R r) {
    std::lock_guard<std::mutex> lock(mu);
    out.emplace(std::move(r));
    cv.notify_all();
  });
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [&] { return out.has_value(); });
  return std::move(*out);
}

// Retries `attempt` (an HTTP exchange answering `want`) on 5xx, 429 and transport errors until the
// deadline; 409 on a create counts as done (an earlier attempt whose answer was lost went through).
Status Retry(Duration deadline, const std::function<Result<HttpReply>()>& attempt, int want) {
  const auto until = SteadyClock::now() + deadline;
  Status last(Code::kUnavailable, "no attempt");
  while (true) {
    Result<HttpReply> r = attempt();
    if (r.ok() && (r->status == want || (want == 201 && r->status == 409))) return Status::Ok();
    if (r.ok() && r->status < 500 && r->status != 429) {
      return Status(Code::kInternal, "HTTP " + std::to_string(r->status) + ": " + r->body);
    }
    last = r.ok() ? Status(Code::kUnavailable, "HTTP " + std::to_string(r->status) + ": " + r->body)
                  : r.status();
    if (SteadyClock::now() >= until) return last;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // retry pacing, not a wait
  }
}

// The kind stored under /registry/<resource>/...
const char* KindOfKey(const std::string& key) {
  if (key.starts_with("/registry/pods/")) return "Pod";
  if (key.starts_with("/registry/controllers/")) return "ReplicationController";
  if (key.starts_with("/registry/leases/")) return "Lease";
  return nullptr;
}

}  // namespace

bool PollUntil(Duration deadline, const std::function<bool()>& pred) {
  const auto until = SteadyClock::now() + deadline;
  while (!pred()) {
    if (SteadyClock::now() >= until) return pred();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

double MillisSince(SteadyClock::time_point start) {
  return std::chrono::duration<double, std::milli>(SteadyClock::now() - start).count();
}

Result<HttpReply> SendSync(HttpApiClient& client, const std::string& method, const std::string& target,
                           std::string body) {
  return Await<Result<HttpReply>>([&](Callback<Result<HttpReply>> done) {
    client.Send(method, target, std::move(body), std::move(done));
  });
}

std::unique_ptr<HttpApiClient> TestClient(const std::string& url, int max_connections) {
  HttpApiClientOptions o;
  o.base_url = url;
  o.max_connections = max_connections;
  o.connect_timeout = std::chrono::seconds(5);
  o.request_timeout = std::chrono::seconds(120);
  auto client = HttpApiClient::Create(o);
  return client.ok() ? std::move(client).value() : nullptr;
}

ReplicationController MakeController(const std::string& name, int replicas) {
  ReplicationController rc;
  rc.metadata.name = name;
  rc.spec.replicas = replicas;
  rc.spec.selector = {{"app", name}};
  PodTemplateSpec t;
  t.metadata.labels = {{"app", name}};
  Container c;
  c.name = "main";
  c.image = "nginx:1.7";
  t.spec.containers.push_back(c);
  rc.spec.template_ = t;
  return rc;
}

std::string PodJson(const std::string& name, const std::string& app) {
  json pod = {{"kind", "Pod"},
              {"apiVersion", "v1"},
              {"metadata", {{"name", name}, {"labels", {{"app", app}}}}},
              {"spec", {{"containers", json::array({{{"name", "main"}, {"image", "nginx:1.7"}}})}}}};
  return pod.dump();
}

Status CreateNamespace(HttpApiClient& client, const std::string& ns, Duration deadline) {
  const json body = {{"kind", "Namespace"}, {"apiVersion", "v1"}, {"metadata", {{"name", ns}}}};
  return Retry(
      deadline, [&] { return SendSync(client, "POST", "/api/v1/namespaces", body.dump()); }, 201);
}

Status CreateController(HttpApiClient& client, const std::string& ns, const ReplicationController& rc,
                        Duration deadline) {
  const std::string body = EncodeController(rc);
  const std::string path = ResourcePath("replicationcontrollers", ns, "", "");
  return Retry(
      deadline, [&] { return SendSync(client, "POST", path, body); }, 201);
}

Status ScaleController(HttpApiClient& client, const std::string& ns, const std::string& name, int replicas,
                       Duration deadline) {
  const json scale = {{"kind", "Scale"},
                      {"apiVersion", "autoscaling/v1"},
                      {"metadata", {{"name", name}, {"namespace", ns}}},
                      {"spec", {{"replicas", replicas}}}};
  const std::string path = ResourcePath("replicationcontrollers", ns, name, "scale");
  return Retry(
      deadline, [&] { return SendSync(client, "PUT", path, scale.dump()); }, 200);
}

Result<RegistrySnapshot> SnapshotRegistry(const std::string& etcd_endpoints, Duration deadline) {
  EtcdStoreOptions options;
  options.endpoints = SplitEtcdEndpoints(etcd_endpoints);
  EtcdStore store(options);
  const auto until = SteadyClock::now() + deadline;
  while (true) {
    Result<RangeResponse> r = store.GetPrefix("/registry/");
    if (r.ok()) {
      RegistrySnapshot out;
      for (const KeyValue& kv : r->kvs) out.emplace(kv.key, kv.value.bytes());
      return out;
    }
    if (SteadyClock::now() >= until) return r.status();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // retry pacing
  }
}

std::vector<std::string> LostOrChanged(const RegistrySnapshot& before, const RegistrySnapshot& after,
                                       const std::vector<std::string>& frozen_prefixes) {
  std::vector<std::string> out;
  for (const auto& [key, value] : before) {
    auto it = after.find(key);
    if (it == after.end()) {
      out.push_back("lost: " + key);
      continue;
    }
    for (const std::string& prefix : frozen_prefixes) {
      if (key.starts_with(prefix) && it->second != value) {
        out.push_back("changed: " + key + "\n  before: " + value + "\n  after:  " + it->second);
        break;
      }
    }
  }
  return out;
}

std::vector<std::string> Undecodable(const RegistrySnapshot& snapshot) {
  std::vector<std::string> out;
  for (const auto& [key, value] : snapshot) {
    const json j = json::parse(value, nullptr, /*allow_exceptions=*/false);
    const char* kind = KindOfKey(key);
    if (j.is_discarded() || !j.is_object() || (kind != nullptr && j.value("kind", "") != kind)) {
      out.push_back(key + ": " + value.substr(0, 200));
      continue;
    }
    const std::string_view k = kind == nullptr ? "" : kind;
    if (k == "Pod" && !PodFromJson(j).ok()) out.push_back(key + ": not a Pod");
    if (k == "ReplicationController" && !ControllerFromJson(j).ok()) {
      out.push_back(key + ": not a ReplicationController");
    }
  }
  return out;
}

PodTracker::PodTracker(const std::string& api_url, std::string ns)
    : ns_(std::move(ns)), client_(TestClient(api_url, 2)) {
  thread_ = std::thread([this] { Run(); });
}

PodTracker::~PodTracker() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

bool PodTracker::synced() const {
  std::lock_guard<std::mutex> lock(mu_);
  return synced_;
}
int PodTracker::active() const {
  std::lock_guard<std::mutex> lock(mu_);
  return active_;
}
int PodTracker::total() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(pods_.size());
}
int PodTracker::peak() const {
  std::lock_guard<std::mutex> lock(mu_);
  return peak_;
}
int PodTracker::relists() const {
  std::lock_guard<std::mutex> lock(mu_);
  return relists_;
}
std::set<std::string> PodTracker::ActiveNames() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::set<std::string> out;
  for (const auto& [name, is_active] : pods_) {
    if (is_active) out.insert(name);
  }
  return out;
}

void PodTracker::OnActive(int threshold, std::function<void()> action) {
  std::lock_guard<std::mutex> lock(mu_);
  if (active_ >= threshold) {
    action();
    return;
  }
  trigger_at_ = threshold;
  trigger_ = std::move(action);
}

void PodTracker::Apply(const Pod& pod, bool deleted) {  // mu_ held
  auto it = pods_.find(pod.metadata.name);
  if (it != pods_.end() && it->second) --active_;
  if (deleted) {
    if (it != pods_.end()) pods_.erase(it);
  } else {
    const bool is_active = IsActive(pod);
    pods_[pod.metadata.name] = is_active;
    if (is_active) ++active_;
  }
  peak_ = std::max(peak_, active_);
  if (trigger_ && active_ >= trigger_at_) {
    std::function<void()> action = std::move(trigger_);
    trigger_ = nullptr;
    action();
  }
  if (!pod.metadata.resource_version.empty()) resource_version_ = pod.metadata.resource_version;
}

void PodTracker::Run() {
  bool need_list = true;
  std::unique_ptr<ApiWatch> watch;
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    if (need_list) {
      lock.unlock();
      auto list = Await<Result<ObjectList<Pod>>>(
          [&](Callback<Result<ObjectList<Pod>>> done) { client_->pods().List(ns_, {}, std::move(done)); });
      lock.lock();
      if (!list.ok()) {
        cv_.wait_for(lock, std::chrono::milliseconds(100), [this] { return stop_; });  // retry pacing
        continue;
      }
      if (synced_) ++relists_;
      pods_.clear();
      active_ = 0;
      for (const auto& pod : list->items) Apply(*pod, false);
      resource_version_ = list->resource_version;
      synced_ = true;
      need_list = false;
    }
    broken_ = false;
    gone_ = false;
    const std::string from = resource_version_;
    lock.unlock();
    watch.reset();
    watch = client_->pods().Watch(ns_, {}, from, [this](const ApiWatchEvent<Pod>& e) {
      std::lock_guard<std::mutex> l(mu_);
      switch (e.type) {
        case ApiWatchEvent<Pod>::Type::kAdded:
        case ApiWatchEvent<Pod>::Type::kModified: Apply(*e.object, false); break;
        case ApiWatchEvent<Pod>::Type::kDeleted: Apply(*e.object, true); break;
        case ApiWatchEvent<Pod>::Type::kBookmark:
          if (e.object && !e.object->metadata.resource_version.empty()) {
            resource_version_ = e.object->metadata.resource_version;
          }
          break;
        case ApiWatchEvent<Pod>::Type::kError:
          broken_ = true;
          gone_ = e.error.code() == Code::kGone;
          cv_.notify_all();
          break;
      }
    });
    lock.lock();
    cv_.wait(lock, [this] { return stop_ || broken_; });
    if (stop_) break;
    need_list = gone_;
    // A watch refused at once (the server is down) is retried at this pace.
    cv_.wait_for(lock, std::chrono::milliseconds(100), [this] { return stop_; });
  }
  lock.unlock();
  watch.reset();
}

struct WatchCrowd::Member {
  std::mutex mu;
  std::string resource_version;  // guarded by mu
  std::atomic<bool> broken{false};
  std::atomic<int> seen_epoch{-1};
  std::unique_ptr<ApiWatch> watch;  // touched by the crowd's thread only
};

WatchCrowd::WatchCrowd(const std::string& api_url, std::string ns, int n)
    : ns_(std::move(ns)), client_(TestClient(api_url, 1)) {
  for (int i = 0; i < n; ++i) members_.push_back(std::make_shared<Member>());
  thread_ = std::thread([this] { Run(); });
}

WatchCrowd::~WatchCrowd() {
  stop_ = true;
  thread_.join();
  for (auto& m : members_) m->watch.reset();
}

int64_t WatchCrowd::events() const { return events_.load(); }
int64_t WatchCrowd::reopened() const { return reopened_.load(); }
void WatchCrowd::MarkEpoch() { ++epoch_; }
int WatchCrowd::FreshSince() const {
  int n = 0;
  for (const auto& m : members_) n += m->seen_epoch.load() == epoch_.load() ? 1 : 0;
  return n;
}

void WatchCrowd::Run() {
  bool first = true;
  while (!stop_) {
    for (auto& m : members_) {
      if (!first && !m->broken) continue;
      if (!first) ++reopened_;
      m->watch.reset();
      m->broken = false;
      std::string from;
      {
        std::lock_guard<std::mutex> lock(m->mu);
        from = m->resource_version;
      }
      Member* raw = m.get();
      m->watch = client_->pods().Watch(ns_, {}, from, [this, raw](const ApiWatchEvent<Pod>& e) {
        if (e.type == ApiWatchEvent<Pod>::Type::kError) {
          if (e.error.code() == Code::kGone) {
            std::lock_guard<std::mutex> lock(raw->mu);
            raw->resource_version.clear();
          }
          raw->broken = true;
          return;
        }
        ++events_;
        raw->seen_epoch = epoch_.load();
        if (e.object && !e.object->metadata.resource_version.empty()) {
          std::lock_guard<std::mutex> lock(raw->mu);
          raw->resource_version = e.object->metadata.resource_version;
        }
      });
    }
    first = false;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // re-open pacing
  }
}

LatencyProbe::LatencyProbe(const std::string& api_url, std::string ns, Duration pace)
    : ns_(std::move(ns)), pace_(pace), client_(TestClient(api_url, 2)) {
  thread_ = std::thread([this] { Run(); });
}

LatencyProbe::~LatencyProbe() { Stop(); }

void LatencyProbe::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

LatencyProbe::Figures LatencyProbe::figures() const {
  std::lock_guard<std::mutex> lock(mu_);
  return figures_;
}

int LatencyProbe::count(int status) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = figures_.by_status.find(status);
  return it == figures_.by_status.end() ? 0 : it->second;
}

void LatencyProbe::Run() {
  const std::string list_path = ResourcePath("pods", ns_, "", "") + "?limit=5";
  const std::string create_path = ResourcePath("pods", ns_, "", "");
  int n = 0;
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    lock.unlock();
    const bool create = n % 2 == 1;
    const std::string name = "probe-" + std::to_string(n);
    ++n;
    const auto start = SteadyClock::now();
    Result<HttpReply> r = create ? SendSync(*client_, "POST", create_path, PodJson(name, "probe"))
                                 : SendSync(*client_, "GET", list_path);
    const double ms = MillisSince(start);
    lock.lock();
    const int status = r.ok() ? r->status : 0;
    ++figures_.requests;
    ++figures_.by_status[status];
    figures_.worst_ms = std::max(figures_.worst_ms, ms);
    if (status == 0 || status >= 500) figures_.worst_error_ms = std::max(figures_.worst_error_ms, ms);
    if (create && status == 201) figures_.acknowledged.push_back(name);
    cv_.wait_for(lock, pace_, [this] { return stop_; });  // pacing between requests
  }
}

}  // namespace rcsim::faults
