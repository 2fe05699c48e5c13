// Rate limiters for the work queue, as in client-go's workqueue: a per-key exponential backoff, an
// overall token bucket, and their combination (the longer delay wins).
//
// Thread-safety: none; used on the engine's executor.
#ifndef RCSIM_ENGINE_RATE_LIMITER_H_
#define RCSIM_ENGINE_RATE_LIMITER_H_

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/time.h"

namespace rcsim {

class RateLimiter {
 public:
  virtual ~RateLimiter() = default;
  // The delay before `key` may be processed again; records one more failure of `key`.
  virtual Duration When(const std::string& key) = 0;
  // Clears the failure history of `key` (after a successful sync).
  virtual void Forget(const std::string& key) = 0;
  // Failures recorded for `key` since its last Forget.
  virtual int NumRequeues(const std::string& key) const = 0;
};

// Delay = base * 2^(failures), capped at `cap`. The first failure of a key gives `base`.
class ItemExponentialRateLimiter final : public RateLimiter {
 public:
  ItemExponentialRateLimiter(Duration base, Duration cap) : base_(base), cap_(cap) {}
  Duration When(const std::string& key) override;
  void Forget(const std::string& key) override { failures_.erase(key); }
  int NumRequeues(const std::string& key) const override;

 private:
  Duration base_;
  Duration cap_;
  std::unordered_map<std::string, int> failures_;
};

// A token bucket of `burst` tokens refilled at `qps` per second by `clock`. Every When() takes a token;
// when none is left it reserves a future one and returns the wait (like golang.org/x/time/rate's
// Reserve). Keys are not distinguished.
class TokenBucketRateLimiter final : public RateLimiter {
 public:
  TokenBucketRateLimiter(const Clock* clock, double qps, int burst);
  Duration When(const std::string& key) override;
  void Forget(const std::string&) override {}
  int NumRequeues(const std::string&) const override { return 0; }

 private:
  const Clock* clock_;
  double qps_;
  double burst_;
  double tokens_;  // may go negative: reservations of future tokens
  TimePoint last_;
};

// The maximum of several limiters' delays; NumRequeues is the maximum of theirs.
class MaxOfRateLimiter final : public RateLimiter {
 public:
  explicit MaxOfRateLimiter(std::vector<std::unique_ptr<RateLimiter>> limiters)
      : limiters_(std::move(limiters)) {}
  Duration When(const std::string& key) override;
  void Forget(const std::string& key) override;
  int NumRequeues(const std::string& key) const override;

 private:
  std::vector<std::unique_ptr<RateLimiter>> limiters_;
};

// The manager's default: per-key exponential backoff combined with an overall token bucket.
std::unique_ptr<RateLimiter> NewControllerRateLimiter(const Clock* clock, Duration min_backoff,
                                                      Duration max_backoff, double qps, int burst);

}  // namespace rcsim

#endif  // RCSIM_ENGINE_RATE_LIMITER_H_
