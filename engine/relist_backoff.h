// RelistBackoff: how long an informer waits before re-listing after a failed list or watch.
// min_backoff doubling with each consecutive failure, capped at max_backoff. The count of failures
// resets on Reset() (a watch event arrived) and on its own once `reset_after` passed without a failure
// (as client-go's backoff manager does after 2 minutes of health), so a blip long after an outage
// costs min_backoff again rather than the outage's last delay.
//
// Thread-safety: none; used on the informer's executor.
#ifndef RCSIM_ENGINE_RELIST_BACKOFF_H_
#define RCSIM_ENGINE_RELIST_BACKOFF_H_

#include <algorithm>
#include <optional>

#include "engine/time.h"

namespace rcsim {

class RelistBackoff {
 public:
  // `clock` may be null: then only Reset() resets the count.
  RelistBackoff(const Clock* clock, Duration min_backoff, Duration max_backoff, Duration reset_after)
      : clock_(clock),
        min_(min_backoff),
        max_(std::max(min_backoff, max_backoff)),
        reset_after_(reset_after) {}

  // Records a failure and returns the delay before the next attempt.
  Duration Failure() {
    if (clock_ != nullptr) {
      TimePoint now = clock_->Now();
      if (last_failure_ && now - *last_failure_ >= reset_after_) failures_ = 0;
      last_failure_ = now;
    }
    ++failures_;
    Duration delay = min_;
    for (int i = 1; i < failures_ && delay < max_; ++i) delay *= 2;
    return std::min(delay, max_);
  }
  void Reset() { failures_ = 0; }
  int failures() const { return failures_; }

 private:
  const Clock* clock_;
  Duration min_;
  Duration max_;
  Duration reset_after_;
  int failures_ = 0;
  std::optional<TimePoint> last_failure_;
};

}  // namespace rcsim

#endif  // RCSIM_ENGINE_RELIST_BACKOFF_H_
