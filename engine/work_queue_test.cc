#include "engine/work_queue.h"

#include <gtest/gtest.h>

#include "engine/rate_limiter.h"
#include "fakes/sim_loop.h"

namespace rcsim {
namespace {

class WorkQueueTest : public ::testing::Test {
 protected:
  WorkQueueTest()
      : queue_(&loop_, &loop_,
               std::make_unique<ItemExponentialRateLimiter>(std::chrono::milliseconds(5),
                                                            std::chrono::seconds(1000))) {
    queue_.SetReadyCallback([this] { ++ready_calls_; });
  }
  SimLoop loop_;
  WorkQueue queue_;
  int ready_calls_ = 0;
};

TEST_F(WorkQueueTest, DuplicateAddsCollapse) {
  queue_.Add("ns/a");
  queue_.Add("ns/a");
  queue_.Add("ns/b");
  EXPECT_EQ(queue_.Len(), 2u);
  EXPECT_EQ(queue_.Get(), "ns/a");
  EXPECT_EQ(queue_.Get(), "ns/b");
  EXPECT_EQ(queue_.Get(), std::nullopt);
  EXPECT_EQ(ready_calls_, 2);
}

// client-go's workqueue metrics: an add that collapses into a queued key is not counted; the queue
// duration runs from the first add to Get, the work duration from Get to Done; unfinished work is
// what is processing now.
TEST_F(WorkQueueTest, MetricsCountAddsAndTimeQueuedAndProcessed) {
  WorkQueueMetrics m;
  queue_.SetMetrics(&m);
  queue_.Add("ns/a");
  loop_.RunFor(std::chrono::milliseconds(500));
  queue_.Add("ns/a");  // collapses
  queue_.Add("ns/b");
  EXPECT_EQ(m.adds, 2u);
  loop_.RunFor(std::chrono::seconds(2));
  ASSERT_EQ(queue_.Get(), "ns/a");  // queued 2.5 s
  ASSERT_EQ(queue_.Get(), "ns/b");  // queued 2 s
  EXPECT_EQ(m.queue_duration.count, 2u);
  EXPECT_DOUBLE_EQ(m.queue_duration.sum, 4.5);
  EXPECT_EQ(m.queue_duration.buckets[9], 2u);  // (1 s, 10 s]
  loop_.RunFor(std::chrono::milliseconds(50));
  queue_.Add("ns/a");  // while processing: counted, timed from now
  EXPECT_EQ(m.adds, 3u);
  EXPECT_DOUBLE_EQ(queue_.UnfinishedWork().total_seconds, 0.1);
  EXPECT_DOUBLE_EQ(queue_.UnfinishedWork().longest_seconds, 0.05);
  queue_.Done("ns/a");  // processed 50 ms; queued again
  EXPECT_EQ(m.work_duration.count, 1u);
  EXPECT_EQ(m.work_duration.buckets[7], 1u);  // (10 ms, 100 ms]
  EXPECT_DOUBLE_EQ(queue_.UnfinishedWork().total_seconds, 0.05);
  loop_.RunFor(std::chrono::milliseconds(5));
  ASSERT_EQ(queue_.Get(), "ns/a");
  EXPECT_EQ(m.queue_duration.count, 3u);
  EXPECT_EQ(m.queue_duration.buckets[6], 1u);  // 5 ms: (1 ms, 10 ms]
}

TEST_F(WorkQueueTest, KeyIsNeverHandedOutTwiceAtOnce) {
  queue_.Add("ns/a");
  ASSERT_EQ(queue_.Get(), "ns/a");
  queue_.Add("ns/a");  // while processing: remembered, not queued
  EXPECT_EQ(queue_.Len(), 0u);
  EXPECT_EQ(queue_.Get(), std::nullopt);
  queue_.Add("ns/a");
  queue_.Done("ns/a");
  EXPECT_EQ(queue_.Len(), 1u);
  EXPECT_EQ(queue_.Get(), "ns/a");
  queue_.Done("ns/a");
  EXPECT_EQ(queue_.Get(), std::nullopt);
}

TEST_F(WorkQueueTest, AddAfterDelaysAndEarliestWins) {
  queue_.AddAfter("ns/a", std::chrono::seconds(10));
  queue_.AddAfter("ns/a", std::chrono::seconds(2));
  queue_.AddAfter("ns/a", std::chrono::seconds(5));
  EXPECT_EQ(queue_.NumDelayed(), 1u);
  loop_.RunFor(std::chrono::seconds(1));
  EXPECT_EQ(queue_.Len(), 0u);
  loop_.RunFor(std::chrono::seconds(1));
  EXPECT_EQ(queue_.Len(), 1u);
  EXPECT_EQ(queue_.Get(), "ns/a");
  queue_.Done("ns/a");
  loop_.RunFor(std::chrono::seconds(20));
  EXPECT_EQ(queue_.Len(), 0u);  // the later delays were dropped
}

TEST_F(WorkQueueTest, RateLimitedBackoffGrowsAndForgetResets) {
  const TimePoint start = loop_.Now();
  std::vector<Duration> delays;
  for (int i = 0; i < 4; ++i) {
    queue_.AddRateLimited("ns/a");
    TimePoint before = loop_.Now();
    while (queue_.Len() == 0) ASSERT_TRUE(loop_.RunOne());
    delays.push_back(loop_.Now() - before);
    ASSERT_EQ(queue_.Get(), "ns/a");
    queue_.Done("ns/a");
  }
  EXPECT_EQ(delays, (std::vector<Duration>{std::chrono::milliseconds(5), std::chrono::milliseconds(10),
                                           std::chrono::milliseconds(20), std::chrono::milliseconds(40)}));
  EXPECT_EQ(queue_.NumRequeues("ns/a"), 4);
  queue_.Forget("ns/a");
  EXPECT_EQ(queue_.NumRequeues("ns/a"), 0);
  queue_.AddRateLimited("ns/a");
  TimePoint before = loop_.Now();
  while (queue_.Len() == 0) ASSERT_TRUE(loop_.RunOne());
  EXPECT_EQ(loop_.Now() - before, std::chrono::milliseconds(5));
  EXPECT_GT(loop_.Now(), start);
}

TEST_F(WorkQueueTest, ShutDownDropsEverything) {
  queue_.Add("ns/a");
  queue_.AddAfter("ns/b", std::chrono::seconds(1));
  queue_.ShutDown();
  loop_.RunFor(std::chrono::seconds(2));
  EXPECT_EQ(queue_.Get(), std::nullopt);
  queue_.Add("ns/c");
  EXPECT_EQ(queue_.Len(), 0u);
}

TEST(RateLimiterTest, ExponentialBackoffIsCapped) {
  ItemExponentialRateLimiter limiter(std::chrono::milliseconds(5), std::chrono::seconds(1000));
  Duration last{};
  for (int i = 0; i < 100; ++i) last = limiter.When("k");
  EXPECT_EQ(last, std::chrono::seconds(1000));
  EXPECT_EQ(limiter.When("other"), std::chrono::milliseconds(5));
  EXPECT_EQ(limiter.NumRequeues("k"), 100);
}

TEST(RateLimiterTest, TokenBucketAllowsBurstThenPaces) {
  SimLoop loop;
  TokenBucketRateLimiter bucket(&loop, /*qps=*/10, /*burst=*/3);
  EXPECT_EQ(bucket.When("a"), Duration::zero());
  EXPECT_EQ(bucket.When("b"), Duration::zero());
  EXPECT_EQ(bucket.When("c"), Duration::zero());
  EXPECT_EQ(bucket.When("d"), std::chrono::milliseconds(100));
  EXPECT_EQ(bucket.When("e"), std::chrono::milliseconds(200));
  loop.RunFor(std::chrono::seconds(10));  // refills to the burst, not beyond
  for (int i = 0; i < 3; ++i) EXPECT_EQ(bucket.When("x"), Duration::zero());
  EXPECT_EQ(bucket.When("y"), std::chrono::milliseconds(100));
}

TEST(RateLimiterTest, ControllerLimiterTakesTheLongerDelay) {
  SimLoop loop;
  auto limiter = NewControllerRateLimiter(&loop, std::chrono::milliseconds(5), std::chrono::seconds(1000),
                                          /*qps=*/10, /*burst=*/2);
  EXPECT_EQ(limiter->When("a"), std::chrono::milliseconds(5));  // backoff wins
  EXPECT_EQ(limiter->When("b"), std::chrono::milliseconds(5));
  EXPECT_EQ(limiter->When("c"), std::chrono::milliseconds(100));  // bucket empty: bucket wins
  limiter->Forget("a");
  EXPECT_EQ(limiter->NumRequeues("a"), 0);
  EXPECT_EQ(limiter->NumRequeues("b"), 1);
}

}  // namespace
}  // namespace rcsim
