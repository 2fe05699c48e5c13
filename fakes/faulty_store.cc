#include "fakes/faulty_store.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "engine/mutex.h"
#include "fakes/revision_timeline.h"

namespace rcsim {
namespace {

// One watch handed out by the wrapper. cb is immutable; the rest is guarded by mu.
struct WatchState {
  explicit WatchState(WatchCallback callback) : cb(std::move(callback)) {}

  const WatchCallback cb;
  Mutex mu;
  std::unique_ptr<Watch> inner GUARDED_BY(mu);
  bool alive GUARDED_BY(mu) = true;  // the handle exists
  // Cancelled (dropped, rejected or by the inner store): nothing more is delivered.
  bool ended GUARDED_BY(mu) = false;
  // Due time of the latest delayed response; later ones are never due earlier.
  TimePoint last_due GUARDED_BY(mu);
  int64_t pending GUARDED_BY(mu) = 0;  // delayed responses not yet run
};
using WatchStatePtr = std::shared_ptr<WatchState>;

WatchResponse Unavailable() {
  WatchResponse r;
  r.canceled = true;
  r.status = Status(Code::kUnavailable, "injected fault: watch dropped");
  return r;
}

// Delivers r unless the watch was destroyed or has ended.
void Deliver(const WatchStatePtr& s, const WatchResponse& r) {
  {
    MutexLock lock(s->mu);
    if (!s->alive || s->ended) return;
    if (r.canceled) s->ended = true;
  }
  s->cb(r);
}

// Ends the watch with an Unavailable cancellation, posted. False if it had already ended.
bool EndWatch(const WatchStatePtr& s, Executor* executor) {
  std::unique_ptr<Watch> inner;
  {
    MutexLock lock(s->mu);
    if (!s->alive || s->ended) return false;
    s->ended = true;
    inner = std::move(s->inner);
  }
  inner.reset();
  executor->Post([s] {
    {
      MutexLock lock(s->mu);
      if (!s->alive) return;
    }
    s->cb(Unavailable());
  });
  return true;
}

class FaultyWatch final : public Watch {
 public:
  explicit FaultyWatch(WatchStatePtr s) : s_(std::move(s)) {}
  ~FaultyWatch() override {
    std::unique_ptr<Watch> inner;
    {
      MutexLock lock(s_->mu);
      s_->alive = false;
      inner = std::move(s_->inner);
    }
  }

 private:
  WatchStatePtr s_;
};

}  // namespace

class FaultyStore::Core : public std::enable_shared_from_this<FaultyStore::Core> {
 public:
  Core(Store* inner, Clock* clock, Executor* executor, Rng* rng)
      : inner_(inner), clock_(clock), executor_(executor), rng_(rng) {}

  // True (and counted) if a fault of probability `rate` strikes now.
  bool Strike(double FaultyStore::Core::*rate, int64_t FaultyStoreCounters::*counter) {
    MutexLock lock(mu_);
    if (!rng_->Bernoulli(this->*rate)) return false;
    ++(counters_.*counter);
    return true;
  }

  // The revision a Range at revision 0 is served at, or 0 when reads are not stale.
  int64_t StaleRevision() { return timeline_ ? timeline_->StaleRevision() : 0; }
  bool IsLatest(int64_t revision) { return !timeline_ || timeline_->IsLatest(revision); }
  void CountStaleRead() {
    MutexLock lock(mu_);
    ++counters_.stale_reads;
  }

  // What is left of `lag` since the revision of `r` became current: a response is delivered lag after
  // it happened (one the stale reads show already, at once).
  Duration LagLeft(const WatchResponse& r, Duration lag) {
    if (r.events.empty() || !timeline_) return lag;
    const std::optional<TimePoint> happened = timeline_->BecameCurrent(r.events.back().kv.mod_revision);
    if (!happened) return Duration::zero();
    return std::max(Duration::zero(), *happened + lag - clock_->Now());
  }

  void SetStaleLag(Duration lag) {
    bool open = false;
    {
      MutexLock lock(mu_);
      // A new stale window never serves a revision older than the one current when it began.
      open = lag > Duration::zero() && stale_lag_ <= Duration::zero();
      stale_lag_ = lag;
    }
    if (!timeline_) return;
    open = open || (lag > Duration::zero() && !timeline_->recording());
    timeline_->set_lag(lag);
    if (open) timeline_->OpenWindow();
  }

  std::unique_ptr<Watch> StartWatch(const WatchRequest& req, WatchCallback cb) {
    auto s = std::make_shared<WatchState>(std::move(cb));
    bool reject = false;
    {
      MutexLock lock(mu_);
      reject = reject_new_watches_;
      if (reject) ++counters_.rejected_watches;
    }
    if (reject) {
      EndWatch(s, executor_);
      return std::make_unique<FaultyWatch>(std::move(s));
    }
    std::weak_ptr<Core> weak = weak_from_this();
    auto inner = inner_->StartWatch(req, [weak, s](const WatchResponse& r) {
      if (auto core = weak.lock()) core->OnInnerResponse(s, r);
    });
    if (inner == nullptr) return nullptr;
    {
      MutexLock lock(s->mu);
      s->inner = std::move(inner);
    }
    MutexLock lock(mu_);
    if (watches_.size() >= 64 && watches_.size() >= 2 * live_hint_) PruneWatches();
    watches_.push_back(s);
    return std::make_unique<FaultyWatch>(std::move(s));
  }

  void OnInnerResponse(const WatchStatePtr& s, const WatchResponse& r) {
    bool drop = false;
    Duration delay{};
    Duration lag{};
    {
      MutexLock lock(mu_);
      if (!r.canceled && drop_rate_ > 0 && rng_->Bernoulli(drop_rate_)) {
        drop = true;
      } else {
        delay = watch_delay_;
        lag = stale_lag_;
        const TimePoint now = clock_->Now();
        if (now < stall_until_) delay += stall_until_ - now;
      }
    }
    if (!drop) {
      if (lag > Duration::zero()) delay += LagLeft(r, lag);
      if (delay > Duration::zero()) {
        MutexLock lock(mu_);
        ++counters_.delayed_watch_responses;
      }
    }
    if (drop) {
      if (EndWatch(s, executor_)) {
        MutexLock lock(mu_);
        ++counters_.dropped_watches;
      }
      return;
    }
    const TimePoint now = clock_->Now();
    TimePoint due = now;
    bool immediate = false;
    {
      MutexLock lock(s->mu);
      immediate = delay <= Duration::zero() && s->pending == 0;
      if (!immediate) {
        due = std::max(now + delay, s->last_due);
        s->last_due = due;
        ++s->pending;
      }
    }
    if (immediate) {
      Deliver(s, r);
      return;
    }
    auto copy = std::make_shared<const WatchResponse>(r);
    executor_->Schedule(due - now, [s, copy] {
      {
        MutexLock lock(s->mu);
        --s->pending;
      }
      Deliver(s, *copy);
    });
  }

  int64_t DropWatches() {
    std::vector<WatchStatePtr> live;
    {
      MutexLock lock(mu_);
      PruneWatches();
      for (const auto& w : watches_) {
        if (auto s = w.lock()) live.push_back(std::move(s));
      }
    }
    int64_t n = 0;
    for (const WatchStatePtr& s : live) n += EndWatch(s, executor_) ? 1 : 0;
    MutexLock lock(mu_);
    counters_.dropped_watches += n;
    return n;
  }

  // Stops the timeline's watch: the inner store need not outlive the Core.
  void Shutdown() { timeline_.reset(); }

  Store* const inner_;
  Clock* const clock_;
  Executor* const executor_;

  mutable Mutex mu_;
  Rng* const rng_ PT_GUARDED_BY(mu_);
  double error_rate_ GUARDED_BY(mu_) = 0;
  double timeout_rate_ GUARDED_BY(mu_) = 0;
  double drop_rate_ GUARDED_BY(mu_) = 0;
  Duration watch_delay_ GUARDED_BY(mu_){};
  TimePoint stall_until_ GUARDED_BY(mu_){};
  Duration stale_lag_ GUARDED_BY(mu_){};
  bool reject_new_watches_ GUARDED_BY(mu_) = false;
  FaultyStoreCounters counters_ GUARDED_BY(mu_);

 private:
  void PruneWatches() REQUIRES(mu_) {
    std::erase_if(watches_, [](const std::weak_ptr<WatchState>& w) {
      auto s = w.lock();
      if (!s) return true;
      MutexLock lock(s->mu);
      return !s->alive || s->ended;
    });
    live_hint_ = watches_.size();
  }

  std::vector<std::weak_ptr<WatchState>> watches_ GUARDED_BY(mu_);
  size_t live_hint_ GUARDED_BY(mu_) = 0;
  // When each revision became current, for stale reads; reset by Shutdown (on the owner's thread).
  std::unique_ptr<RevisionTimeline> timeline_ = std::make_unique<RevisionTimeline>(inner_, clock_);
};

FaultyStore::FaultyStore(Store* inner, Clock* clock, Executor* executor, Rng* rng)
    : inner_(inner), core_(std::make_shared<Core>(inner, clock, executor, rng)) {}

FaultyStore::~FaultyStore() { core_->Shutdown(); }

void FaultyStore::set_error_rate(double p) {
  MutexLock lock(core_->mu_);
  core_->error_rate_ = p;
}
void FaultyStore::set_timeout_rate(double p) {
  MutexLock lock(core_->mu_);
  core_->timeout_rate_ = p;
}
void FaultyStore::set_watch_delay(Duration d) {
  MutexLock lock(core_->mu_);
  core_->watch_delay_ = std::max(d, Duration::zero());
}
void FaultyStore::stall_watches_until(TimePoint until) {
  MutexLock lock(core_->mu_);
  core_->stall_until_ = until;
}
void FaultyStore::set_watch_drop_rate(double p) {
  MutexLock lock(core_->mu_);
  core_->drop_rate_ = p;
}
void FaultyStore::set_reject_new_watches(bool reject) {
  MutexLock lock(core_->mu_);
  core_->reject_new_watches_ = reject;
}
void FaultyStore::set_stale_read_lag(Duration lag) { core_->SetStaleLag(std::max(lag, Duration::zero())); }

void FaultyStore::ClearFaults() {
  {
    MutexLock lock(core_->mu_);
    core_->error_rate_ = 0;
    core_->timeout_rate_ = 0;
    core_->drop_rate_ = 0;
    core_->watch_delay_ = Duration::zero();
    core_->stall_until_ = {};
    core_->reject_new_watches_ = false;
  }
  core_->SetStaleLag(Duration::zero());
}

int64_t FaultyStore::DropWatches() { return core_->DropWatches(); }

Result<int64_t> FaultyStore::ForceCompaction() {
  auto rev = CurrentRevision(inner_);
  if (!rev.ok()) return rev.status();
  auto r = inner_->Compact(*rev);
  if (!r.ok()) return r.status();
  MutexLock lock(core_->mu_);
  ++core_->counters_.forced_compactions;
  return *rev;
}

FaultyStoreCounters FaultyStore::counters() const {
  MutexLock lock(core_->mu_);
  return core_->counters_;
}

namespace {
Status InjectedUnavailable() { return Status(Code::kUnavailable, "injected fault: store unavailable"); }
Status InjectedTimeout() {
  return Status(Code::kTimeout, "injected fault: request timed out after being applied");
}
}  // namespace

Result<RangeResponse> FaultyStore::Range(const RangeRequest& req) {
  if (core_->Strike(&Core::error_rate_, &FaultyStoreCounters::unavailable_errors))
    return InjectedUnavailable();
  if (req.revision == 0) {
    const int64_t stale = core_->StaleRevision();
    if (stale > 0 && !core_->IsLatest(stale)) {
      RangeRequest at = req;
      at.revision = stale;
      auto r = inner_->Range(at);
      if (r.ok()) {
        r->revision = stale;  // a lagging member reports its own revision
        core_->CountStaleRead();
        return r;
      }
      // Compacted past the stale revision: serve the latest, as a member that caught up would.
    }
  }
  return inner_->Range(req);
}

Result<PutResponse> FaultyStore::Put(const PutRequest& req) {
  if (core_->Strike(&Core::error_rate_, &FaultyStoreCounters::unavailable_errors))
    return InjectedUnavailable();
  auto r = inner_->Put(req);
  if (r.ok() && core_->Strike(&Core::timeout_rate_, &FaultyStoreCounters::timeouts)) return InjectedTimeout();
  return r;
}

Result<DeleteResponse> FaultyStore::DeleteRange(const DeleteRequest& req) {
  if (core_->Strike(&Core::error_rate_, &FaultyStoreCounters::unavailable_errors))
    return InjectedUnavailable();
  auto r = inner_->DeleteRange(req);
  if (r.ok() && core_->Strike(&Core::timeout_rate_, &FaultyStoreCounters::timeouts)) return InjectedTimeout();
  return r;
}

Result<TxnResponse> FaultyStore::Txn(const TxnRequest& req) {
  if (core_->Strike(&Core::error_rate_, &FaultyStoreCounters::unavailable_errors))
    return InjectedUnavailable();
  auto r = inner_->Txn(req);
  if (r.ok() && core_->Strike(&Core::timeout_rate_, &FaultyStoreCounters::timeouts)) return InjectedTimeout();
  return r;
}

Result<int64_t> FaultyStore::Compact(int64_t revision) { return inner_->Compact(revision); }

std::unique_ptr<Watch> FaultyStore::StartWatch(const WatchRequest& req, WatchCallback cb) {
  return core_->StartWatch(req, std::move(cb));
}

Result<LeaseGrantResponse> FaultyStore::LeaseGrant(int64_t ttl_seconds, int64_t id) {
  return inner_->LeaseGrant(ttl_seconds, id);
}
Status FaultyStore::LeaseRevoke(int64_t id) { return inner_->LeaseRevoke(id); }
Result<int64_t> FaultyStore::LeaseKeepAlive(int64_t id) { return inner_->LeaseKeepAlive(id); }

}  // namespace rcsim
