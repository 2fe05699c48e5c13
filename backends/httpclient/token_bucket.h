// TokenBucket: client-side rate limiting as client-go's flowcontrol.NewTokenBucketRateLimiter (qps,
// burst): the bucket holds up to `burst` tokens and refills at `qps` per second; each request takes
// one. Reserve() never refuses: it hands out the next token even when the bucket is empty and says
// how long to wait for it, so waits are in call order (the bucket goes into debt).
//
// Time is passed in, so the class is deterministic under test.
// Thread-safety: not synchronised; the owner serialises calls (HttpTransport holds its mutex).
#ifndef RCSIM_BACKENDS_HTTPCLIENT_TOKEN_BUCKET_H_
#define RCSIM_BACKENDS_HTTPCLIENT_TOKEN_BUCKET_H_

#include <chrono>

namespace rcsim {

class TokenBucket {
 public:
  using Clock = std::chrono::steady_clock;

  // qps > 0; burst below 1 counts as 1. Starts full.
  TokenBucket(double qps, int burst, Clock::time_point now);

  // Takes a token; how long from `now` until it may be used (zero: at once).
  Clock::duration Reserve(Clock::time_point now);

 private:
  const double qps_;
  const double burst_;
  double tokens_;  // may be negative: tokens handed out ahead of the refill
  Clock::time_point last_;
};

}  // namespace rcsim

#endif  // RCSIM_BACKENDS_HTTPCLIENT_TOKEN_BUCKET_H_
