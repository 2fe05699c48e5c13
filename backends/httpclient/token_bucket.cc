#include "backends/httpclient/token_bucket.h"

#include <algorithm>

namespace rcsim {

TokenBucket::TokenBucket(double qps, int burst, Clock::time_point now)
    : qps_(qps), burst_(std::max(1, burst)), tokens_(burst_), last_(now) {}

TokenBucket::Clock::duration TokenBucket::Reserve(Clock::time_point now) {
  if (now > last_) {
    const double elapsed = std::chrono::duration<double>(now - last_).count();
    tokens_ = std::min(burst_, tokens_ + elapsed * qps_);
    last_ = now;
  }
  tokens_ -= 1;
  if (tokens_ >= 0) return Clock::duration::zero();
  return std::chrono::round<Clock::duration>(std::chrono::duration<double>(-tokens_ / qps_));
}

}  // namespace rcsim
