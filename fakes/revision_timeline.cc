#include "fakes/revision_timeline.h"

#include <algorithm>
#include <string>

#include "engine/mutex.h"
#include "registry/registry.h"

namespace rcsim {

Result<int64_t> CurrentRevision(Store* store) {
  RangeRequest req;
  req.key = std::string(1, '\0');
  auto r = store->Range(req);
  if (!r.ok()) return r.status();
  return r->revision;
}

RevisionTimeline::RevisionTimeline(Store* store, Clock* clock) : store_(store), clock_(clock) {}

RevisionTimeline::~RevisionTimeline() {
  std::unique_ptr<Watch> watch;
  {
    MutexLock lock(mu_);
    watch = std::move(watch_);
  }
  // Reset outside mu_: a callback that is running may be waiting for it, and the watch's destructor
  // waits for that callback.
  watch.reset();
}

bool RevisionTimeline::OpenWindow() {
  auto rev = CurrentRevision(store_);
  if (!rev.ok()) return false;
  bool start = false;
  {
    MutexLock lock(mu_);
    timeline_.clear();
    timeline_.emplace_back(clock_->Now(), *rev);
    start = !recording_;
    recording_ = true;
  }
  if (!start) return true;
  WatchRequest req;
  req.key = std::string(1, '\0');
  req.range_end = std::string(1, '\0');
  req.start_revision = *rev + 1;
  req.prev_kv = true;  // the in-memory store then shares its response instead of copying it
  // The callback uses `this`: no callback runs once the watch (destroyed first) is gone.
  auto w = store_->StartWatch(req, [this](const WatchResponse& r) {
    if (r.events.empty()) return;
    MutexLock lock(mu_);
    timeline_.emplace_back(clock_->Now(), r.events.back().kv.mod_revision);
    Prune();
  });
  MutexLock lock(mu_);
  watch_ = std::move(w);
  return true;
}

void RevisionTimeline::set_lag(Duration lag) {
  MutexLock lock(mu_);
  lag_ = lag;
}

bool RevisionTimeline::recording() const {
  MutexLock lock(mu_);
  return recording_;
}

int64_t RevisionTimeline::StaleRevision() {
  MutexLock lock(mu_);
  if (lag_ <= Duration::zero() || timeline_.empty()) return 0;
  Prune();
  // After pruning, the front is the newest entry at or before now - lag (or the window's first).
  return timeline_.front().second;
}

bool RevisionTimeline::IsLatest(int64_t revision) const {
  MutexLock lock(mu_);
  return timeline_.empty() || timeline_.back().second <= revision;
}

std::optional<TimePoint> RevisionTimeline::BecameCurrent(int64_t revision) {
  MutexLock lock(mu_);
  if (timeline_.empty()) return std::nullopt;
  Prune();
  if (revision <= timeline_.front().second) return std::nullopt;
  auto it = std::lower_bound(timeline_.begin(), timeline_.end(), revision,
                             [](const std::pair<TimePoint, int64_t>& e, int64_t r) { return e.second < r; });
  return it == timeline_.end() ? clock_->Now() : it->first;
}

void RevisionTimeline::Prune() {
  const TimePoint cutoff = clock_->Now() - std::max(lag_, Duration::zero());
  while (timeline_.size() >= 2 && timeline_[1].first <= cutoff) timeline_.pop_front();
}

bool PinStaleList(RevisionTimeline& timeline, ListOptions* opts) {
  if (!opts->continue_token.empty() || opts->resource_version.empty() ||
      opts->resource_version_match == ResourceVersionMatch::kExact) {
    return false;
  }
  int64_t at = timeline.StaleRevision();  // 0: no lag, or nothing recorded
  if (Result<int64_t> floor = ParseResourceVersion(opts->resource_version); floor.ok()) {
    at = std::max(at, *floor);
  }
  if (at <= 0 || timeline.IsLatest(at)) return false;
  opts->resource_version = std::to_string(at);
  opts->resource_version_match = ResourceVersionMatch::kExact;
  return true;
}

}  // namespace rcsim
