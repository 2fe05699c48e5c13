#include "backends/httpclient/token_bucket.h"

#include <gtest/gtest.h>

namespace rcsim {
namespace {

using namespace std::chrono_literals;
using Clock = TokenBucket::Clock;

TEST(TokenBucket, BurstAtOnceThenQpsInCallOrder) {
  const Clock::time_point t0{};
  TokenBucket bucket(20, 30, t0);  // kube-controller-manager's --kube-api-qps / --kube-api-burst
  for (int i = 0; i < 30; ++i) EXPECT_EQ(bucket.Reserve(t0), Clock::duration::zero()) << i;
  // Beyond the burst, each request waits one more 50 ms slot.
  EXPECT_EQ(bucket.Reserve(t0), 50ms);
  EXPECT_EQ(bucket.Reserve(t0), 100ms);
  // 100 ms later the two reserved tokens have been refilled, and nothing more.
  EXPECT_EQ(bucket.Reserve(t0 + 100ms), 50ms);
}

TEST(TokenBucket, RefillsUpToBurstOnly) {
  const Clock::time_point t0{};
  TokenBucket bucket(10, 2, t0);
  EXPECT_EQ(bucket.Reserve(t0), Clock::duration::zero());
  EXPECT_EQ(bucket.Reserve(t0), Clock::duration::zero());
  EXPECT_EQ(bucket.Reserve(t0), 100ms);
  // An hour idle refills two tokens, not 36,000.
  const Clock::time_point later = t0 + 1h;
  EXPECT_EQ(bucket.Reserve(later), Clock::duration::zero());
  EXPECT_EQ(bucket.Reserve(later), Clock::duration::zero());
  EXPECT_EQ(bucket.Reserve(later), 100ms);
}

TEST(TokenBucket, BurstBelowOneCountsAsOne) {
  const Clock::time_point t0{};
  TokenBucket bucket(4, 0, t0);
  EXPECT_EQ(bucket.Reserve(t0), Clock::duration::zero());
  EXPECT_EQ(bucket.Reserve(t0), 250ms);
}

}  // namespace
}  // namespace rcsim
