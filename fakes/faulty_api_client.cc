#include "fakes/faulty_api_client.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "fakes/revision_timeline.h"
#include "registry/registry.h"

namespace rcsim {

uint64_t ApiFaultCounters::calls_total() const {
  uint64_t total = 0;
  for (uint64_t c : calls) total += c;
  return total;
}

namespace {

// A fault setting that switches itself off at `until`.
template <typename T>
struct Timed {
  T value{};
  std::optional<TimePoint> until;

  T Get(TimePoint now) const { return (!until || now < *until) ? value : T{}; }
  void Set(T v, std::optional<TimePoint> u) {
    value = std::move(v);
    until = u;
  }
};

struct LatencyRange {
  Duration min{0};
  Duration max{0};
};

LatencyRange MakeRange(Duration min, Duration max) {
  if (min < Duration::zero()) min = Duration::zero();
  if (max < min) max = min;
  return {min, max};
}

// Local to avoid depending on where engine's VerbName is defined.
const char* VerbLabel(Verb verb) {
  static constexpr const char* kNames[] = {"get", "list", "watch", "create", "update", "patch", "delete"};
  const int i = static_cast<int>(verb);
  return i >= 0 && i < kApiVerbCount ? kNames[i] : "unknown";
}

double Clamp01(double p) { return std::clamp(p, 0.0, 1.0); }

// What an injected error answers; the default (no message) is "injected: unavailable (<verb>)".
struct InjectedError {
  Code code = Code::kUnavailable;
  std::string message;
};

struct VerbFaults {
  Timed<LatencyRange> latency;
  Timed<double> error_rate;
  Timed<InjectedError> error;
  Timed<double> timeout_rate;
};

}  // namespace

template <typename T>
class FaultyResourceClient;

class FaultyApiClient::Core : public std::enable_shared_from_this<Core> {
 public:
  Core(ApiClient* inner, Store* history, Clock* clock, Executor* executor, Rng* rng);

  ApiClient* inner() { return inner_; }
  Clock* clock() { return clock_; }
  Executor* executor() { return executor_; }
  TimePoint Now() const { return clock_->Now(); }

  ResourceClient<Pod>& pods();
  ResourceClient<ReplicationController>& controllers();

  // The decision for one non-watch call, drawn in a fixed order.
  struct Plan {
    enum class Kind { kPass, kError, kTimeout, kPartition } kind = Kind::kPass;
    Duration latency{0};
    bool apply_on_timeout = false;
    InjectedError error;  // kError
  };
  // Counts a call that reached the API (or the faulty connection's answer in its place).
  void Sent(Verb verb) { ++counters_.calls[static_cast<int>(verb)]; }

  Plan Decide(Verb verb) {
    Plan plan;
    const TimePoint now = Now();
    if (partitioned_.Get(now)) {
      ++counters_.timeouts_injected;
      plan.kind = Plan::Kind::kPartition;
      return plan;
    }
    const VerbFaults& f = verbs_[static_cast<int>(verb)];
    const LatencyRange lat = f.latency.Get(now);
    plan.latency = lat.max > lat.min ? rng_->Uniform(lat.min, lat.max) : lat.min;
    if (rng_->Bernoulli(f.error_rate.Get(now))) {
      ++counters_.errors_injected;
      plan.kind = Plan::Kind::kError;
      plan.error = f.error.Get(now);
    } else if (rng_->Bernoulli(f.timeout_rate.Get(now))) {
      ++counters_.timeouts_injected;
      plan.kind = Plan::Kind::kTimeout;
      plan.apply_on_timeout = rng_->Bernoulli(0.5);
    }
    return plan;
  }

  // Runs fn after `delay` unless the Core is gone by then. A template, so that fn is held in the one
  // closure the executor keeps rather than in a std::function of its own.
  template <typename F>
  void After(Duration delay, F fn) {
    executor_->Schedule(delay, [weak = weak_from_this(), epoch = epoch_, fn = std::move(fn)]() mutable {
      auto self = weak.lock();
      if (self && self->epoch_ == epoch) fn();
    });
  }

  // Executes one unary call. `invoke(cb)` issues the call on the inner client.
  template <typename R>
  void Call(Verb verb, std::function<void(Callback<R>)> invoke, Callback<R> done) {
    Plan plan = Decide(verb);
    switch (plan.kind) {
      case Plan::Kind::kPartition:
        After(timeout_, [done = std::move(done), verb] {
          done(R(Status(Code::kTimeout, std::string("injected: partitioned (") + VerbLabel(verb) + ")")));
        });
        return;
      case Plan::Kind::kError:
        After(plan.latency, [this, done = std::move(done), verb, error = std::move(plan.error)] {
          Sent(verb);
          if (error.message.empty()) {
            done(R(Status(error.code,
                          std::string("injected: ") + CodeName(error.code) + " (" + VerbLabel(verb) + ")")));
          } else {
            done(R(Status(error.code, error.message)));
          }
        });
        return;
      case Plan::Kind::kTimeout:
        After(plan.latency, [this, verb, apply = plan.apply_on_timeout, invoke] {
          Sent(verb);
          if (apply) invoke([](R) {});
        });
        After(timeout_, [done = std::move(done), verb] {
          done(R(Status(Code::kTimeout, std::string("injected: timeout (") + VerbLabel(verb) + ")")));
        });
        return;
      case Plan::Kind::kPass: break;
    }
    After(plan.latency,
          [this, verb, crash = crash_epoch_, invoke = std::move(invoke), done = std::move(done)]() mutable {
            Sent(verb);
            if (crash != crash_epoch_) {
              const bool write = verb == Verb::kCreate || verb == Verb::kUpdate || verb == Verb::kPatch ||
                                 verb == Verb::kDelete;
              done(R(Status(write ? Code::kTimeout : Code::kUnavailable, crash_why_)));
              return;
            }
            invoke([weak = weak_from_this(), epoch = epoch_, done = std::move(done)](R r) mutable {
              auto self = weak.lock();
              if (!self || self->epoch_ != epoch) return;
              done(std::move(r));
            });
          });
  }

  // During a stale window, pins a list that may be served from a cache (resourceVersion "0", or N not
  // older than N) to the revision current `lag` ago, never before the window opened nor older than N:
  // resourceVersionMatch=Exact. False (opts unchanged) if the list is to be served fresh: no window, a
  // consistent read (resourceVersion ""), nothing newer happened since, or the caller chose its exact
  // revision or continues a list.
  bool PinStaleList(ListOptions* opts) {
    if (stale_lag_.Get(Now()) <= Duration::zero() || !rcsim::PinStaleList(timeline_, opts)) return false;
    ++counters_.stale_lists;
    return true;
  }

  // The delay of a watch event of `revision` (0: none, as an error): the watch delay draw plus, in a
  // stale window, what is left of `lag` since the revision became current.
  Duration WatchEventDelay(int64_t revision) {
    const TimePoint now = Now();
    const LatencyRange d = watch_delay_.Get(now);
    Duration delay = d.max > d.min ? rng_->Uniform(d.min, d.max) : d.min;
    if (now < stall_until_) delay += stall_until_ - now;
    const Duration lag = stale_lag_.Get(now);
    if (lag <= Duration::zero()) return delay;
    const std::optional<TimePoint> happened = revision > 0 ? timeline_.BecameCurrent(revision) : now;
    if (!happened) return delay;  // a stale view shows it already
    return delay + std::max(Duration::zero(), *happened + lag - now);
  }

  void SetStaleLag(Duration lag, std::optional<TimePoint> until) {
    const bool open =
        lag > Duration::zero() && (stale_lag_.Get(Now()) <= Duration::zero() || !timeline_.recording());
    stale_lag_.Set(lag, until);
    timeline_.set_lag(lag);
    // A new window never shows the world as it was before the window began.
    if (open) timeline_.OpenWindow();
  }

  // Enders take `silent`: end without delivering the kError event.
  uint64_t RegisterWatch(std::function<void(bool)> ender) {
    const uint64_t id = next_watch_id_++;
    watch_enders_.emplace(id, std::move(ender));
    return id;
  }
  void UnregisterWatch(uint64_t id) { watch_enders_.erase(id); }

  void DropWatches(bool silent) {
    // Enders unregister themselves; iterate over a copy.
    std::vector<std::function<void(bool)>> enders;
    enders.reserve(watch_enders_.size());
    for (auto& [id, ender] : watch_enders_) enders.push_back(ender);
    for (auto& ender : enders) ender(silent);
  }

  std::array<VerbFaults, kApiVerbCount> verbs_;
  Timed<LatencyRange> watch_delay_;
  TimePoint stall_until_{};
  Timed<Duration> stale_lag_;
  RevisionTimeline timeline_;  // when each revision of `history` became current (stale reads)
  Timed<bool> partitioned_;
  Duration timeout_ = std::chrono::seconds(1);
  ApiFaultCounters counters_;
  std::map<uint64_t, std::function<void(bool)>> watch_enders_;
  uint64_t crash_epoch_ = 0;  // bumped by FailInFlight: calls sent in an older one fail on arrival
  std::string crash_why_;
  uint64_t epoch_ = 0;  // bumped by AbandonPending; pending work of an older epoch is dropped

 private:
  ApiClient* const inner_;
  Clock* const clock_;
  Executor* const executor_;
  Rng* const rng_;
  uint64_t next_watch_id_ = 1;
  std::unique_ptr<FaultyResourceClient<Pod>> pods_;
  std::unique_ptr<FaultyResourceClient<ReplicationController>> controllers_;
};

namespace {

template <typename T>
ResourceClient<T>& InnerOf(ApiClient* api);
template <>
ResourceClient<Pod>& InnerOf<Pod>(ApiClient* api) {
  return api->pods();
}
template <>
ResourceClient<ReplicationController>& InnerOf<ReplicationController>(ApiClient* api) {
  return api->controllers();
}

// The state of one watch, shared by the handle, the inner watch's callback and pending deliveries.
template <typename T>
struct WatchState {
  std::function<void(const ApiWatchEvent<T>&)> on_event;
  std::unique_ptr<ApiWatch> inner;
  bool ended = false;   // no further event is delivered (error, drop, or inner watch end)
  bool closed = false;  // the handle was destroyed: nothing at all is delivered
  TimePoint last_delivery;
  uint64_t id = 0;
};

}  // namespace

template <typename T>
class FaultyResourceClient final : public ResourceClient<T> {
 public:
  using Ptr = std::shared_ptr<const T>;
  using Core = FaultyApiClient::Core;

  explicit FaultyResourceClient(Core* core) : core_(core) {}

  void Get(const std::string& ns, const std::string& name, Callback<Result<Ptr>> done) override {
    core_->Call<Result<Ptr>>(
        Verb::kGet,
        [core = core_, ns, name](Callback<Result<Ptr>> cb) { Inner(core).Get(ns, name, std::move(cb)); },
        std::move(done));
  }
  void List(const std::string& ns, const ListOptions& opts, Callback<Result<ObjectList<T>>> done) override {
    core_->Call<Result<ObjectList<T>>>(
        Verb::kList,
        [core = core_, ns, opts](Callback<Result<ObjectList<T>>> cb) {
          ListOptions at = opts;
          if (!core->PinStaleList(&at)) {
            Inner(core).List(ns, opts, std::move(cb));
            return;
          }
          // Compacted past the stale revision: served fresh, as a cache that caught up would.
          Inner(core).List(ns, at,
                           [weak = core->weak_from_this(), ns, opts, cb](Result<ObjectList<T>> r) mutable {
                             auto c = weak.lock();
                             if (c && !r.ok() && r.status().code() == Code::kGone) {
                               Inner(c.get()).List(ns, opts, std::move(cb));
                               return;
                             }
                             cb(std::move(r));
                           });
        },
        std::move(done));
  }
  void Create(const std::string& ns, T object, Callback<Result<Ptr>> done) override {
    core_->Call<Result<Ptr>>(
        Verb::kCreate,
        [core = core_, ns, obj = std::make_shared<const T>(std::move(object))](Callback<Result<Ptr>> cb) {
          Inner(core).Create(ns, *obj, std::move(cb));
        },
        std::move(done));
  }
  void Update(T object, Callback<Result<Ptr>> done) override {
    core_->Call<Result<Ptr>>(
        Verb::kUpdate,
        [core = core_, obj = std::make_shared<const T>(std::move(object))](Callback<Result<Ptr>> cb) {
          Inner(core).Update(*obj, std::move(cb));
        },
        std::move(done));
  }
  void UpdateStatus(T object, Callback<Result<Ptr>> done) override {
    core_->Call<Result<Ptr>>(
        Verb::kUpdate,
        [core = core_, obj = std::make_shared<const T>(std::move(object))](Callback<Result<Ptr>> cb) {
          Inner(core).UpdateStatus(*obj, std::move(cb));
        },
        std::move(done));
  }
  void Delete(const std::string& ns, const std::string& name, const DeleteOptions& opts,
              Callback<Result<Ptr>> done) override {
    core_->Call<Result<Ptr>>(
        Verb::kDelete,
        [core = core_, ns, name, opts](Callback<Result<Ptr>> cb) {
          Inner(core).Delete(ns, name, opts, std::move(cb));
        },
        std::move(done));
  }
  void PatchOwnerReferences(const std::string& ns, const std::string& name, const OwnerReferencePatch& patch,
                            Callback<Result<Ptr>> done) override {
    core_->Call<Result<Ptr>>(
        Verb::kPatch,
        [core = core_, ns, name, patch](Callback<Result<Ptr>> cb) {
          Inner(core).PatchOwnerReferences(ns, name, patch, std::move(cb));
        },
        std::move(done));
  }

  std::unique_ptr<ApiWatch> Watch(const std::string& ns, const ListOptions& opts,
                                  const std::string& resource_version,
                                  std::function<void(const ApiWatchEvent<T>&)> on_event) override {
    auto state = std::make_shared<WatchState<T>>();
    state->on_event = std::move(on_event);
    state->last_delivery = core_->Now();
    const Core::Plan plan = core_->Decide(Verb::kWatch);
    if (plan.kind != Core::Plan::Kind::kPartition) core_->Sent(Verb::kWatch);
    auto handle = std::make_unique<Handle>(state, core_->weak_from_this());
    std::weak_ptr<WatchState<T>> weak_state = state;
    switch (plan.kind) {
      case Core::Plan::Kind::kPartition:
        End(core_, weak_state, Code::kUnavailable, "injected: partitioned (watch)", core_->timeout_);
        return handle;
      case Core::Plan::Kind::kError:
        End(core_, weak_state, Code::kUnavailable, "injected: unavailable (watch)", plan.latency);
        return handle;
      case Core::Plan::Kind::kTimeout:
        End(core_, weak_state, Code::kUnavailable, "injected: timeout (watch)", core_->timeout_);
        return handle;
      case Core::Plan::Kind::kPass: break;
    }
    state->id = core_->RegisterWatch([core = core_, weak_state](bool silent) {
      auto st = weak_state.lock();
      if (!st || st->ended) return;
      if (silent) {
        st->ended = true;
        st->closed = true;
        core->UnregisterWatch(st->id);
        core->After(Duration::zero(), [weak_state] {
          if (auto s = weak_state.lock()) s->inner.reset();
        });
        return;
      }
      ++core->counters_.watches_dropped;
      End(core, weak_state, Code::kUnavailable, "injected: watch dropped", Duration::zero());
    });
    core_->After(plan.latency, [core = core_, weak_state, ns, opts, resource_version] {
      auto st = weak_state.lock();
      if (!st || st->ended) return;
      st->inner =
          Inner(core).Watch(ns, opts, resource_version,
                            [weak_core = core->weak_from_this(), weak_state](const ApiWatchEvent<T>& ev) {
                              auto c = weak_core.lock();
                              auto s = weak_state.lock();
                              if (!c || !s || s->ended) return;
                              const bool last = ev.type == ApiWatchEvent<T>::Type::kError;
                              if (last) {
                                s->ended = true;
                                c->UnregisterWatch(s->id);
                              }
                              Deliver(c.get(), s, ev, c->WatchEventDelay(RevisionOf(ev)));
                            });
      if (!st->inner) {
        End(core, weak_state, Code::kUnavailable, "inner client refused the watch", Duration::zero());
      }
    });
    return handle;
  }

 private:
  class Handle final : public ApiWatch {
   public:
    Handle(std::shared_ptr<WatchState<T>> state, std::weak_ptr<Core> core)
        : state_(std::move(state)), core_(std::move(core)) {}
    ~Handle() override {
      state_->closed = true;
      state_->ended = true;
      state_->inner.reset();
      if (auto c = core_.lock()) c->UnregisterWatch(state_->id);
    }

   private:
    std::shared_ptr<WatchState<T>> state_;
    std::weak_ptr<Core> core_;
  };

  static ResourceClient<T>& Inner(Core* core) { return InnerOf<T>(core->inner()); }

  // The revision an event happened at (its object's resourceVersion), 0 if it has none.
  static int64_t RevisionOf(const ApiWatchEvent<T>& ev) {
    if (ev.object == nullptr) return 0;
    Result<int64_t> rv = ParseResourceVersion(ev.object->metadata.resource_version);
    return rv.ok() ? *rv : 0;
  }

  // Delivers `ev` after `delay`, never before the watch's previous delivery (order preserved).
  static void Deliver(Core* core, const std::shared_ptr<WatchState<T>>& st, const ApiWatchEvent<T>& ev,
                      Duration delay) {
    const TimePoint now = core->Now();
    TimePoint due = std::max(now + delay, st->last_delivery);
    st->last_delivery = due;
    core->After(due - now, [weak_state = std::weak_ptr<WatchState<T>>(st), ev] {
      auto s = weak_state.lock();
      if (!s || s->closed) return;
      // Events queued before the watch was ended by a fault are lost with the connection.
      if (s->ended && ev.type != ApiWatchEvent<T>::Type::kError) return;
      s->on_event(ev);
    });
  }

  // Ends the watch: no more events, the inner watch released, one kError delivered after `delay`.
  static void End(Core* core, const std::weak_ptr<WatchState<T>>& weak_state, Code code,
                  const std::string& message, Duration delay) {
    auto st = weak_state.lock();
    if (!st || st->ended) return;
    st->ended = true;
    core->UnregisterWatch(st->id);
    // Released from a task of its own: End may run inside the inner watch's callback.
    core->After(Duration::zero(), [weak_state] {
      if (auto s = weak_state.lock()) s->inner.reset();
    });
    ApiWatchEvent<T> ev;
    ev.type = ApiWatchEvent<T>::Type::kError;
    ev.error = Status(code, message);
    const TimePoint now = core->Now();
    st->last_delivery = now + delay;
    core->After(delay, [weak_state, ev] {
      auto s = weak_state.lock();
      if (!s || s->closed) return;
      s->on_event(ev);
    });
  }

  Core* const core_;
};

FaultyApiClient::Core::Core(ApiClient* inner, Store* history, Clock* clock, Executor* executor, Rng* rng)
    : timeline_(history, clock), inner_(inner), clock_(clock), executor_(executor), rng_(rng) {}

ResourceClient<Pod>& FaultyApiClient::Core::pods() {
  if (!pods_) pods_ = std::make_unique<FaultyResourceClient<Pod>>(this);
  return *pods_;
}
ResourceClient<ReplicationController>& FaultyApiClient::Core::controllers() {
  if (!controllers_) controllers_ = std::make_unique<FaultyResourceClient<ReplicationController>>(this);
  return *controllers_;
}

FaultyApiClient::FaultyApiClient(ApiClient* inner, Store* history, Clock* clock, Executor* executor, Rng* rng)
    : core_(std::make_shared<Core>(inner, history, clock, executor, rng)) {
  core_->pods();
  core_->controllers();
}

FaultyApiClient::~FaultyApiClient() = default;

ResourceClient<Pod>& FaultyApiClient::pods() { return core_->pods(); }
ResourceClient<ReplicationController>& FaultyApiClient::controllers() { return core_->controllers(); }

void FaultyApiClient::SetLatency(Verb verb, Duration min, Duration max, std::optional<TimePoint> until) {
  core_->verbs_[static_cast<int>(verb)].latency.Set(MakeRange(min, max), until);
}
void FaultyApiClient::SetLatencyAll(Duration min, Duration max, std::optional<TimePoint> until) {
  for (auto& v : core_->verbs_) v.latency.Set(MakeRange(min, max), until);
}
void FaultyApiClient::SetErrorRate(Verb verb, double rate, std::optional<TimePoint> until) {
  core_->verbs_[static_cast<int>(verb)].error_rate.Set(Clamp01(rate), until);
}
void FaultyApiClient::SetErrorStatus(Verb verb, Code code, std::string message,
                                     std::optional<TimePoint> until) {
  core_->verbs_[static_cast<int>(verb)].error.Set(InjectedError{code, std::move(message)}, until);
}
void FaultyApiClient::SetErrorRateAll(double rate, std::optional<TimePoint> until) {
  for (auto& v : core_->verbs_) v.error_rate.Set(Clamp01(rate), until);
}
void FaultyApiClient::SetTimeoutRate(Verb verb, double rate, std::optional<TimePoint> until) {
  core_->verbs_[static_cast<int>(verb)].timeout_rate.Set(Clamp01(rate), until);
}
void FaultyApiClient::SetTimeoutRateAll(double rate, std::optional<TimePoint> until) {
  for (auto& v : core_->verbs_) v.timeout_rate.Set(Clamp01(rate), until);
}
void FaultyApiClient::SetWatchDelay(Duration min, Duration max, std::optional<TimePoint> until) {
  core_->watch_delay_.Set(MakeRange(min, max), until);
}
void FaultyApiClient::StallWatches(TimePoint until) { core_->stall_until_ = until; }
void FaultyApiClient::SetStaleLag(Duration lag, std::optional<TimePoint> until) {
  core_->SetStaleLag(std::max(lag, Duration::zero()), until);
}
void FaultyApiClient::SetPartitioned(bool partitioned, std::optional<TimePoint> until) {
  core_->partitioned_.Set(partitioned, until);
  if (partitioned) core_->DropWatches(/*silent=*/false);
}
void FaultyApiClient::set_timeout(Duration d) { core_->timeout_ = std::max(d, Duration::zero()); }
Duration FaultyApiClient::timeout() const { return core_->timeout_; }
void FaultyApiClient::DropWatches() { core_->DropWatches(/*silent=*/false); }
void FaultyApiClient::FailInFlight(const std::string& why) {
  ++core_->crash_epoch_;
  core_->crash_why_ = why;
}
void FaultyApiClient::AbandonPending() {
  // Bump first: the inner watches are released by tasks that must belong to the new epoch.
  ++core_->epoch_;
  core_->DropWatches(/*silent=*/true);
}
void FaultyApiClient::ClearFaults() {
  for (auto& v : core_->verbs_) v = VerbFaults{};
  core_->watch_delay_ = {};
  core_->stall_until_ = {};
  core_->stale_lag_ = {};
  core_->timeline_.set_lag(Duration::zero());
  core_->partitioned_ = {};
}
bool FaultyApiClient::partitioned() const { return core_->partitioned_.Get(core_->Now()); }
int FaultyApiClient::active_watches() const { return static_cast<int>(core_->watch_enders_.size()); }
const ApiFaultCounters& FaultyApiClient::counters() const { return core_->counters_; }

}  // namespace rcsim
