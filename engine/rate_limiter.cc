#include "engine/rate_limiter.h"

#include <algorithm>
#include <cmath>

namespace rcsim {

Duration ItemExponentialRateLimiter::When(const std::string& key) {
  int exp = failures_[key]++;
  // 2^62 ns is far above any cap; stop doubling before the multiplication can overflow.
  if (exp >= 62) return cap_;
  double delay = static_cast<double>(base_.count()) * std::ldexp(1.0, exp);
  if (delay >= static_cast<double>(cap_.count())) return cap_;
  return Duration(static_cast<int64_t>(delay));
}

int ItemExponentialRateLimiter::NumRequeues(const std::string& key) const {
  auto it = failures_.find(key);
  return it == failures_.end() ? 0 : it->second;
}

TokenBucketRateLimiter::TokenBucketRateLimiter(const Clock* clock, double qps, int burst)
    : clock_(clock), qps_(qps), burst_(std::max(1, burst)), tokens_(burst_), last_(clock->Now()) {}

Duration TokenBucketRateLimiter::When(const std::string&) {
  if (qps_ <= 0) return Duration::zero();  // no limit
  TimePoint now = clock_->Now();
  if (now > last_) {
    tokens_ = std::min(burst_, tokens_ + ToSeconds(now - last_) * qps_);
    last_ = now;
  }
  tokens_ -= 1;
  if (tokens_ >= 0) return Duration::zero();
  return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(-tokens_ / qps_));
}

Duration MaxOfRateLimiter::When(const std::string& key) {
  Duration max = Duration::zero();
  for (auto& l : limiters_) max = std::max(max, l->When(key));
  return max;
}

void MaxOfRateLimiter::Forget(const std::string& key) {
  for (auto& l : limiters_) l->Forget(key);
}

int MaxOfRateLimiter::NumRequeues(const std::string& key) const {
  int max = 0;
  for (const auto& l : limiters_) max = std::max(max, l->NumRequeues(key));
  return max;
}

std::unique_ptr<RateLimiter> NewControllerRateLimiter(const Clock* clock, Duration min_backoff,
                                                      Duration max_backoff, double qps, int burst) {
  std::vector<std::unique_ptr<RateLimiter>> limiters;
  limiters.push_back(std::make_unique<ItemExponentialRateLimiter>(min_backoff, max_backoff));
  limiters.push_back(std::make_unique<TokenBucketRateLimiter>(clock, qps, burst));
  return std::make_unique<MaxOfRateLimiter>(std::move(limiters));
}

}  // namespace rcsim
