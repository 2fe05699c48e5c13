#include "harness/real/real_bench.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <future>
#include <map>
#include <thread>
#include <vector>

#include "backends/etcd/etcd_store.h"
#include "backends/httpclient/http_api_client.h"
#include "engine/mutex.h"
#include "harness/event_injector.h"
#include "harness/real/real_stack.h"

namespace rcsim {
namespace {

using SteadyClock = std::chrono::steady_clock;

double Secs(SteadyClock::duration d) { return std::chrono::duration<double>(d).count(); }

template <typename T>
T Call(const std::function<void(const Callback<T>&)>& call) {
  auto p = std::make_shared<std::promise<T>>();
  std::future<T> f = p->get_future();
  call([p](T v) { p->set_value(std::move(v)); });
  return f.get();
}

// Counts pods as a watch of the whole cluster sees them come and go.
class PodWatch {
 public:
  explicit PodWatch(ApiClient* api) {
    watch_ = api->pods().Watch("", ListOptions{}, "", [this](const ApiWatchEvent<Pod>& e) {
      MutexLock lock(mu_);
      if (e.type == ApiWatchEvent<Pod>::Type::kAdded && e.object) {
        ++added_;
        const OwnerReference* ref = e.object->metadata.ControllerRef();
        if (ref != nullptr) ++added_by_owner_[ref->uid];
        last_added_ = SteadyClock::now();
      }
      cv_.NotifyAll();
    });
  }
  // Waits until `pred(added, added_by_owner)` or the deadline; the time of the last ADDED then.
  std::optional<SteadyClock::time_point> WaitFor(
      const std::function<bool(uint64_t, const std::map<std::string, uint64_t>&)>& pred, Duration timeout) {
    MutexLock lock(mu_);
    if (!cv_.WaitFor(mu_, timeout, [&]() REQUIRES(mu_) { return pred(added_, added_by_owner_); })) {
      return std::nullopt;
    }
    return last_added_;
  }
  uint64_t added() {
    MutexLock lock(mu_);
    return added_;
  }

 private:
  Mutex mu_;
  CondVar cv_;
  uint64_t added_ GUARDED_BY(mu_) = 0;
  std::map<std::string, uint64_t> added_by_owner_ GUARDED_BY(mu_);
  SteadyClock::time_point last_added_ GUARDED_BY(mu_){};
  std::unique_ptr<ApiWatch> watch_;
};

ControllerConfig Rc(const std::string& name, const std::string& ns, int replicas) {
  ControllerConfig c;
  c.name = name;
  c.namespace_ = ns;
  c.replicas = replicas;
  c.selector = {{"app", name}};
  c.template_.metadata.labels = c.selector;
  Container k;
  k.name = name;
  k.image = "busybox";
  k.command = {"sleep", "3600"};
  c.template_.spec.containers.push_back(k);
  return c;
}

// Runs op(thread, i) for every i < per_thread on `threads` threads at once; ops per second. A false
// from op counts one error.
double Parallel(int threads, int per_thread, const std::function<bool(int, int)>& op,
                std::atomic<int>* errors) {
  const auto start = SteadyClock::now();
  std::vector<std::thread> running;
  running.reserve(static_cast<std::size_t>(threads));
  for (int t = 0; t < threads; ++t) {
    running.emplace_back([&, t] {
      for (int i = 0; i < per_thread; ++i) {
        if (!op(t, i)) ++*errors;
      }
    });
  }
  for (std::thread& th : running) th.join();
  return threads * per_thread / Secs(SteadyClock::now() - start);
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  std::size_t rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(v.size())));
  return v[std::min(v.size() - 1, rank == 0 ? 0 : rank - 1)];
}

}  // namespace

RealBenchOptions QuickRealBenchOptions() {
  RealBenchOptions o;
  o.sequential_puts = 100;
  o.in_flight = 8;
  o.puts_per_thread = 25;
  o.big_rc = 100;
  o.small_rcs = 10;
  o.small_rc = 2;
  o.samples = 10;
  o.raw_creates = 100;
  return o;
}

Result<nlohmann::json> RunRealBench(const RealBenchOptions& o) {
  RealStackOptions so;
  so.etcd_binary = o.etcd_binary;
  so.apiserver_binary = o.apiserver_binary;
  so.controller_manager_binary = o.controller_manager_binary;
  so.manager_flags = {"--concurrent-rc-syncs=" + std::to_string(o.workers)};
  Result<std::unique_ptr<RealStack>> stack = RealStack::Start(so);
  if (!stack.ok()) return stack.status();
  nlohmann::json out;
  out["sizes"] = {{"sequential_puts", o.sequential_puts},
                  {"in_flight", o.in_flight},
                  {"puts_per_thread", o.puts_per_thread},
                  {"big_rc", o.big_rc},
                  {"small_rcs", o.small_rcs},
                  {"small_rc", o.small_rc},
                  {"samples", o.samples},
                  {"raw_creates", o.raw_creates},
                  {"workers", o.workers}};

  // Raw etcd puts, from our gRPC client, with a pod-sized value.
  EtcdStoreOptions eo;
  eo.endpoints = {(*stack)->etcd_url()};
  Result<std::unique_ptr<EtcdStore>> etcd = EtcdStore::Create(eo);
  if (!etcd.ok()) return etcd.status();
  const std::string value(600, 'x');
  auto start = SteadyClock::now();
  for (int i = 0; i < o.sequential_puts; ++i) {
    PutRequest put;
    put.key = "/bench/seq/" + std::to_string(i);
    put.value = Value(value);
    if (Result<PutResponse> r = (*etcd)->Put(put); !r.ok()) return r.status();
  }
  const double seq = o.sequential_puts / Secs(SteadyClock::now() - start);
  std::atomic<int> errors{0};
  std::atomic<int> txn_errors{0};
  const double par = Parallel(
      o.in_flight, o.puts_per_thread,
      [&](int t, int i) {
        PutRequest put;
        put.key = "/bench/par/" + std::to_string(t) + "/" + std::to_string(i);
        put.value = Value(value);
        return (*etcd)->Put(put).ok();
      },
      &errors);
  // The primitive of every API create: create-if-absent (a Txn comparing the key's create revision
  // with 0, then a put), under a watch of the prefix with previous values, as the API server's watch
  // cache holds one. etcd serves these markedly slower than plain puts (0.5-0.6 of their rate on the
  // 2-core machine), so this is the ceiling the API server, and the manager behind it, work under.
  WatchRequest wr;
  wr.key = "/bench/txn/";
  wr.range_end = PrefixEnd(wr.key);
  wr.prev_kv = true;
  std::unique_ptr<Watch> txn_watch = (*etcd)->StartWatch(wr, [](const WatchResponse&) {});
  const double txn = Parallel(
      o.in_flight, o.puts_per_thread,
      [&](int t, int i) {
        TxnRequest create;
        std::string key = wr.key + std::to_string(t) + "/" + std::to_string(i);
        create.compare.push_back(Compare::CreateRevision(key, Compare::Result::kEqual, 0));
        PutRequest put;
        put.key = std::move(key);
        put.value = Value(value);
        create.success.push_back(TxnOp::Put(std::move(put)));
        Result<TxnResponse> r = (*etcd)->Txn(create);
        return r.ok() && r->succeeded;
      },
      &txn_errors);
  txn_watch.reset();
  out["put_seq_per_s"] = seq;
  out["put_parallel_per_s"] = par;
  out["put_parallel_in_flight"] = o.in_flight;
  out["txn_create_parallel_per_s"] = txn;
  out["put_errors"] = errors.load();
  out["txn_create_errors"] = txn_errors.load();

  HttpApiClientOptions ao;
  ao.base_url = (*stack)->api_url();
  Result<std::unique_ptr<HttpApiClient>> api = HttpApiClient::Create(ao);
  if (!api.ok()) return api.status();
  ApiClient& c = **api;
  PodWatch watch(&c);
  auto create = [&](const ControllerConfig& cfg) -> Result<ControllerPtr> {
    return Call<Result<ControllerPtr>>([&](const Callback<Result<ControllerPtr>>& cb) {
      c.controllers().Create(cfg.namespace_, ControllerFromConfig(cfg), cb);
    });
  };
  const Duration phase_timeout = std::chrono::minutes(3);

  // One RC of big_rc.
  start = SteadyClock::now();
  if (Result<ControllerPtr> r = create(Rc("big", "default", o.big_rc)); !r.ok()) return r.status();
  const uint64_t big_target = static_cast<uint64_t>(o.big_rc);
  std::optional<SteadyClock::time_point> done =
      watch.WaitFor([&](uint64_t n, const auto&) { return n >= big_target; }, phase_timeout);
  if (!done)
    return Status(Code::kTimeout, "1 RC: only " + std::to_string(watch.added()) + " pods after 3 min");
  out["pods_per_s_1x" + std::to_string(o.big_rc)] = o.big_rc / Secs(*done - start);

  // small_rcs RCs of small_rc.
  const uint64_t before = watch.added();
  const uint64_t small_target =
      before + static_cast<uint64_t>(o.small_rcs) * static_cast<uint64_t>(o.small_rc);
  start = SteadyClock::now();
  std::string sample_uid;
  for (int i = 0; i < o.small_rcs; ++i) {
    Result<ControllerPtr> r = create(Rc("small-" + std::to_string(i), "default", o.small_rc));
    if (!r.ok()) return r.status();
    if (i == 0) sample_uid = (*r)->metadata.uid;
  }
  done = watch.WaitFor([&](uint64_t n, const auto&) { return n >= small_target; }, phase_timeout);
  if (!done)
    return Status(Code::kTimeout, "100 RCs: only " + std::to_string(watch.added() - before) + " pods");
  out["pods_per_s_" + std::to_string(o.small_rcs) + "x" + std::to_string(o.small_rc)] =
      o.small_rcs * o.small_rc / Secs(*done - start);

  // Delete -> replacement, on small-0.
  std::vector<double> latencies;
  for (int i = 0; i < o.samples; ++i) {
    ListOptions lo;
    lo.label_selector = LabelSelector::FromMap({{"app", "small-0"}});
    Result<ObjectList<Pod>> pods = Call<Result<ObjectList<Pod>>>(
        [&](const Callback<Result<ObjectList<Pod>>>& cb) { c.pods().List("default", lo, cb); });
    if (!pods.ok() || pods->items.empty()) return Status(Code::kInternal, "no pod of small-0 to delete");
    uint64_t owned_before = 0;
    watch.WaitFor(
        [&](uint64_t, const std::map<std::string, uint64_t>& by) {
          auto it = by.find(sample_uid);
          owned_before = it == by.end() ? 0 : it->second;
          return true;
        },
        Duration::zero());
    const std::string victim = pods->items.front()->metadata.name;
    const auto t0 = SteadyClock::now();
    Result<PodPtr> del = Call<Result<PodPtr>>(
        [&](const Callback<Result<PodPtr>>& cb) { c.pods().Delete("default", victim, {}, cb); });
    if (!del.ok()) return del.status();
    std::optional<SteadyClock::time_point> replaced = watch.WaitFor(
        [&](uint64_t, const std::map<std::string, uint64_t>& by) {
          auto it = by.find(sample_uid);
          return it != by.end() && it->second > owned_before;
        },
        std::chrono::seconds(30));
    if (!replaced) return Status(Code::kTimeout, "no replacement within 30 s");
    latencies.push_back(Secs(*replaced - t0) * 1000.0);
  }
  out["replacement_samples"] = latencies.size();
  out["replacement_p50_ms"] = Percentile(latencies, 0.50);
  out["replacement_p99_ms"] = Percentile(latencies, 0.99);
  // The ceiling the manager works under: pods created straight through the API, all issued at once (the
  // client's connection pool decides how many are in flight), unlabelled so that no RC selects them,
  // after every phase above so that their watch events disturb none of them.
  if (o.raw_creates > 0) {
    std::atomic<int> left{o.raw_creates};
    std::atomic<int> create_errors{0};
    std::promise<void> all_done;
    const auto t0 = SteadyClock::now();
    for (int i = 0; i < o.raw_creates; ++i) {
      Pod pod;
      pod.metadata.name = "raw-" + std::to_string(i);
      pod.metadata.namespace_ = "default";
      Container k;
      k.name = "raw";
      k.image = "busybox";
      pod.spec.containers.push_back(k);
      c.pods().Create("default", std::move(pod), [&](const Result<PodPtr>& r) {
        if (!r.ok()) ++create_errors;
        if (--left == 0) all_done.set_value();
      });
    }
    all_done.get_future().wait();
    out["api_creates_per_s"] = o.raw_creates / Secs(SteadyClock::now() - t0);
    out["api_create_errors"] = create_errors.load();
  }
  const double big_rate = out["pods_per_s_1x" + std::to_string(o.big_rc)].get<double>();
  const double small_rate =
      out["pods_per_s_" + std::to_string(o.small_rcs) + "x" + std::to_string(o.small_rc)].get<double>();
  out["ratio_pods_1rc_to_seq_puts"] = big_rate / seq;
  out["ratio_pods_100rc_to_seq_puts"] = small_rate / seq;
  out["ratio_pods_1rc_to_parallel_puts"] = big_rate / par;
  out["ratio_parallel_txn_creates_to_parallel_puts"] = txn / par;
  out["ratio_pods_1rc_to_parallel_txn_creates"] = big_rate / txn;
  if (out.contains("api_creates_per_s")) {
    out["ratio_pods_1rc_to_api_creates"] = big_rate / out["api_creates_per_s"].get<double>();
    out["ratio_api_creates_to_parallel_puts"] = out["api_creates_per_s"].get<double>() / par;
    out["ratio_api_creates_to_parallel_txn_creates"] = out["api_creates_per_s"].get<double>() / txn;
  }
  (*stack)->Stop();
  return out;
}

}  // namespace rcsim
