#include "fakes/faulty_store.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "fakes/mem_store.h"
#include "fakes/sim_loop.h"

namespace rcsim {
namespace {

class FaultyStoreTest : public ::testing::Test {
 protected:
  FaultyStoreTest() : rng_(7), inner_(&loop_, &loop_), store_(&inner_, &loop_, &loop_, &rng_) {}

  Result<PutResponse> Put(Store& s, const std::string& key, const std::string& value) {
    PutRequest req;
    req.key = key;
    req.value = Value(value);
    return s.Put(req);
  }
  std::unique_ptr<Watch> WatchPrefix(const std::string& prefix, int64_t start,
                                     std::vector<WatchResponse>* out) {
    WatchRequest req;
    req.key = prefix;
    req.range_end = PrefixEnd(prefix);
    req.start_revision = start;
    return store_.StartWatch(req, [out](const WatchResponse& r) { out->push_back(r); });
  }

  SimLoop loop_;
  Mt19937Rng rng_;
  MemStore inner_;
  FaultyStore store_;
};

TEST_F(FaultyStoreTest, PassesThroughWhenNoFaultIsSet) {
  std::vector<WatchResponse> got;
  auto w = WatchPrefix("/a/", 0, &got);
  ASSERT_TRUE(Put(store_, "/a/1", "v").ok());
  loop_.RunUntilIdle();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].events[0].kv.key, "/a/1");
  auto r = store_.Get("/a/1");
  ASSERT_TRUE(r.ok() && r->has_value());
  FaultyStoreCounters c = store_.counters();
  EXPECT_EQ(c.unavailable_errors + c.timeouts + c.delayed_watch_responses + c.dropped_watches, 0);
}

TEST_F(FaultyStoreTest, ErrorRateFailsRequestsWithUnavailableWithoutApplyingThem) {
  store_.set_error_rate(1.0);
  auto put = Put(store_, "/a/1", "v");
  ASSERT_FALSE(put.ok());
  EXPECT_EQ(put.status().code(), Code::kUnavailable);
  EXPECT_EQ(inner_.revision(), 1);
  EXPECT_EQ(store_.Get("/a/1").status().code(), Code::kUnavailable);
  DeleteRequest d;
  d.key = "/a/1";
  EXPECT_EQ(store_.DeleteRange(d).status().code(), Code::kUnavailable);
  TxnRequest t;
  EXPECT_EQ(store_.Txn(t).status().code(), Code::kUnavailable);
  EXPECT_EQ(store_.counters().unavailable_errors, 4);

  store_.set_error_rate(0);
  EXPECT_TRUE(Put(store_, "/a/1", "v").ok());
  EXPECT_EQ(inner_.revision(), 2);
}

TEST_F(FaultyStoreTest, ErrorRateIsAFractionDrawnFromTheSeededRng) {
  auto run = [](uint64_t seed) {
    SimLoop loop;
    Mt19937Rng rng(seed);
    MemStore inner(&loop, &loop);
    FaultyStore store(&inner, &loop, &loop, &rng);
    store.set_error_rate(0.3);
    std::vector<bool> failed;
    for (int i = 0; i < 1000; ++i) {
      PutRequest req;
      req.key = "/k";
      req.value = Value("v");
      failed.push_back(!store.Put(req).ok());
    }
    EXPECT_EQ(inner.revision() - 1, std::count(failed.begin(), failed.end(), false));
    return failed;
  };
  std::vector<bool> a = run(1);
  const auto fails = std::count(a.begin(), a.end(), true);
  EXPECT_GT(fails, 230);
  EXPECT_LT(fails, 370);
  EXPECT_EQ(run(1), a);
  EXPECT_NE(run(2), a);
}

TEST_F(FaultyStoreTest, TimeoutRateAppliesTheWriteThenReportsTimeout) {
  store_.set_timeout_rate(1.0);
  auto put = Put(store_, "/a/1", "v");
  ASSERT_FALSE(put.ok());
  EXPECT_EQ(put.status().code(), Code::kTimeout);
  auto got = inner_.Get("/a/1");
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(got->has_value());  // the outcome was unknown to the caller, but it happened
  EXPECT_EQ(store_.counters().timeouts, 1);
  EXPECT_TRUE(store_.Get("/a/1").ok());  // reads are not affected
}

TEST_F(FaultyStoreTest, WatchDelayDelaysEveryResponseAndKeepsOrder) {
  std::vector<WatchResponse> got;
  auto w = WatchPrefix("/a/", 0, &got);
  store_.set_watch_delay(std::chrono::milliseconds(100));
  ASSERT_TRUE(Put(store_, "/a/1", "v").ok());
  loop_.RunFor(std::chrono::milliseconds(50));
  ASSERT_TRUE(Put(store_, "/a/2", "v").ok());
  loop_.RunFor(Duration::zero());  // the inner store hands /a/2 over now: due at 150 ms
  // Switching the delay off must not let the next response overtake the queued ones.
  store_.set_watch_delay(Duration::zero());
  ASSERT_TRUE(Put(store_, "/a/3", "v").ok());
  loop_.RunFor(std::chrono::milliseconds(49));
  EXPECT_TRUE(got.empty());
  loop_.RunFor(std::chrono::milliseconds(1));
  ASSERT_EQ(got.size(), 1u);
  loop_.RunUntilIdle();
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].events[0].kv.key, "/a/1");
  EXPECT_EQ(got[1].events[0].kv.key, "/a/2");
  EXPECT_EQ(got[2].events[0].kv.key, "/a/3");
  EXPECT_EQ(loop_.Now(), SimLoop::Epoch() + std::chrono::milliseconds(150));
  EXPECT_EQ(store_.counters().delayed_watch_responses, 2);
}

TEST_F(FaultyStoreTest, DropWatchesCancelsActiveWatchesWithUnavailable) {
  std::vector<WatchResponse> got;
  auto w = WatchPrefix("/a/", 0, &got);
  ASSERT_TRUE(Put(store_, "/a/1", "v").ok());
  loop_.RunUntilIdle();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(inner_.watcher_count(), 1);
  EXPECT_EQ(store_.DropWatches(), 1);
  EXPECT_EQ(inner_.watcher_count(), 0);
  ASSERT_TRUE(Put(store_, "/a/2", "v").ok());
  loop_.RunUntilIdle();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_TRUE(got[1].canceled);
  EXPECT_EQ(got[1].status.code(), Code::kUnavailable);
  EXPECT_TRUE(got[1].events.empty());
  EXPECT_EQ(store_.DropWatches(), 0);  // already ended
  EXPECT_EQ(store_.counters().dropped_watches, 1);

  // The caller re-watches from where it was and misses nothing.
  std::vector<WatchResponse> again;
  auto w2 = WatchPrefix("/a/", got[0].header_revision + 1, &again);
  loop_.RunUntilIdle();
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].events[0].kv.key, "/a/2");
}

TEST_F(FaultyStoreTest, DropRateEndsAWatchInsteadOfDeliveringAResponse) {
  store_.set_watch_drop_rate(1.0);
  std::vector<WatchResponse> got;
  auto w = WatchPrefix("/a/", 0, &got);
  ASSERT_TRUE(Put(store_, "/a/1", "v").ok());
  ASSERT_TRUE(Put(store_, "/a/2", "v").ok());
  loop_.RunUntilIdle();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(got[0].canceled);
  EXPECT_EQ(got[0].status.code(), Code::kUnavailable);
  EXPECT_EQ(store_.counters().dropped_watches, 1);
}

TEST_F(FaultyStoreTest, RejectedNewWatchesAreCancelledAtOnce) {
  store_.set_reject_new_watches(true);
  std::vector<WatchResponse> got;
  auto w = WatchPrefix("/a/", 0, &got);
  EXPECT_TRUE(got.empty());  // never inline
  ASSERT_TRUE(Put(store_, "/a/1", "v").ok());
  loop_.RunUntilIdle();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(got[0].canceled);
  EXPECT_EQ(got[0].status.code(), Code::kUnavailable);
  EXPECT_EQ(inner_.watcher_count(), 0);
  EXPECT_EQ(store_.counters().rejected_watches, 1);

  store_.set_reject_new_watches(false);
  std::vector<WatchResponse> ok;
  auto w2 = WatchPrefix("/a/", 0, &ok);
  ASSERT_TRUE(Put(store_, "/a/2", "v").ok());
  loop_.RunUntilIdle();
  ASSERT_EQ(ok.size(), 1u);
  EXPECT_FALSE(ok[0].canceled);
}

TEST_F(FaultyStoreTest, ForceCompactionCompactsTheInnerStoreAtItsRevision) {
  const int64_t r1 = Put(store_, "/a/1", "v")->revision;
  const int64_t r2 = Put(store_, "/a/1", "w")->revision;
  auto c = store_.ForceCompaction();
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(*c, r2);
  EXPECT_EQ(inner_.compact_revision(), r2);
  EXPECT_EQ(store_.counters().forced_compactions, 1);
  std::vector<WatchResponse> got;
  auto w = WatchPrefix("/a/", r1, &got);
  loop_.RunUntilIdle();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(got[0].canceled);
  EXPECT_EQ(got[0].compact_revision, r2);
  EXPECT_FALSE(store_.ForceCompaction().ok());  // nothing new to compact
}

TEST_F(FaultyStoreTest, StaleReadsServeTheRevisionCurrentLagAgo) {
  const int64_t r1 = Put(store_, "/a/1", "v1")->revision;
  store_.set_stale_read_lag(std::chrono::seconds(10));
  loop_.RunFor(std::chrono::seconds(1));
  const int64_t r2 = Put(store_, "/a/1", "v2")->revision;
  loop_.RunFor(std::chrono::seconds(4));  // t = 5 s
  const int64_t r3 = Put(store_, "/a/1", "v3")->revision;
  loop_.RunFor(std::chrono::seconds(1));  // t = 6 s: 10 s ago is before the lag was set

  auto read = [this] {
    auto r = store_.Get("/a/1");
    EXPECT_TRUE(r.ok() && r->has_value());
    return r.ok() && r->has_value() ? (*r)->value.bytes() : std::string();
  };
  EXPECT_EQ(read(), "v1");
  auto header = store_.GetPrefix("/a/");
  ASSERT_TRUE(header.ok());
  EXPECT_EQ(header->revision, r1);
  loop_.RunFor(std::chrono::seconds(5));  // t = 11 s: 10 s ago is t = 1 s, when r2 was written
  EXPECT_EQ(read(), "v2");
  loop_.RunFor(std::chrono::seconds(4));  // t = 15 s
  EXPECT_EQ(read(), "v3");
  EXPECT_GE(store_.counters().stale_reads, 3);
  // A read at an explicit revision is not affected.
  RangeRequest at;
  at.key = "/a/1";
  at.revision = r2;
  EXPECT_EQ(store_.Range(at)->kvs[0].value.bytes(), "v2");

  store_.set_stale_read_lag(Duration::zero());
  const int64_t r4 = Put(store_, "/a/1", "v4")->revision;
  EXPECT_EQ(read(), "v4");
  EXPECT_EQ(store_.GetPrefix("/a/")->revision, r4);
  EXPECT_GT(r3, r2);
}

// Simulator bug: a second stale window served revisions from before it began (the timeline kept the
// first window's entries).
TEST_F(FaultyStoreTest, StaleReadPredatesTheStartOfItsLag) {
  store_.set_stale_read_lag(std::chrono::seconds(10));
  ASSERT_TRUE(Put(store_, "/a/1", "v1").ok());
  loop_.RunFor(std::chrono::seconds(1));
  ASSERT_TRUE(Put(store_, "/a/1", "v2").ok());
  loop_.RunFor(std::chrono::seconds(1));
  store_.set_stale_read_lag(Duration::zero());
  loop_.RunFor(std::chrono::seconds(1));
  const int64_t r3 = Put(store_, "/a/1", "v3")->revision;
  loop_.RunFor(std::chrono::seconds(1));  // t = 4 s: the second window begins
  store_.set_stale_read_lag(std::chrono::seconds(10));
  loop_.RunFor(std::chrono::seconds(1));
  ASSERT_TRUE(Put(store_, "/a/1", "v4").ok());
  loop_.RunFor(std::chrono::seconds(1));
  auto r = store_.Get("/a/1");
  ASSERT_TRUE(r.ok() && r->has_value());
  EXPECT_EQ((*r)->value.bytes(), "v3");  // what was current at the window's start, never older
  EXPECT_EQ(store_.GetPrefix("/a/")->revision, r3);
}

TEST_F(FaultyStoreTest, StalledWatchHoldsResponsesUntilTheWindowEndsInOrder) {
  std::vector<WatchResponse> got;
  auto w = WatchPrefix("/a/", 0, &got);
  const TimePoint until = loop_.Now() + std::chrono::seconds(1);
  store_.stall_watches_until(until);
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(Put(store_, "/a/" + std::to_string(i), "v").ok());
    loop_.RunFor(std::chrono::milliseconds(100));
  }
  loop_.RunUntil(until - std::chrono::milliseconds(1));
  EXPECT_TRUE(got.empty());
  loop_.RunUntil(until);
  ASSERT_EQ(got.size(), 5u);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(got[i].events[0].kv.key, "/a/" + std::to_string(i));
  ASSERT_TRUE(Put(store_, "/a/after", "v").ok());
  loop_.RunFor(Duration::zero());
  ASSERT_EQ(got.size(), 6u);  // after the window responses flow at once again
}

TEST_F(FaultyStoreTest, StaleLagAlsoDelaysWatchResponses) {
  std::vector<WatchResponse> got;
  auto w = WatchPrefix("/a/", 0, &got);
  store_.set_stale_read_lag(std::chrono::seconds(2));
  ASSERT_TRUE(Put(store_, "/a/1", "v").ok());
  loop_.RunFor(std::chrono::milliseconds(1999));
  EXPECT_TRUE(got.empty());
  loop_.RunFor(std::chrono::milliseconds(1));
  EXPECT_EQ(got.size(), 1u);
}

TEST_F(FaultyStoreTest, DestroyingTheWatchStopsDelayedResponses) {
  std::vector<WatchResponse> got;
  auto w = WatchPrefix("/a/", 0, &got);
  store_.set_watch_delay(std::chrono::seconds(1));
  ASSERT_TRUE(Put(store_, "/a/1", "v").ok());
  loop_.RunFor(std::chrono::milliseconds(10));
  w.reset();
  loop_.RunUntilIdle();
  EXPECT_TRUE(got.empty());
}

TEST_F(FaultyStoreTest, ClearFaultsSwitchesEverythingOff) {
  store_.set_error_rate(1);
  store_.set_timeout_rate(1);
  store_.set_watch_delay(std::chrono::seconds(1));
  store_.set_reject_new_watches(true);
  store_.ClearFaults();
  std::vector<WatchResponse> got;
  auto w = WatchPrefix("/a/", 0, &got);
  ASSERT_TRUE(Put(store_, "/a/1", "v").ok());
  loop_.RunUntilIdle();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_FALSE(got[0].canceled);
  EXPECT_EQ(loop_.Now(), SimLoop::Epoch());
}

}  // namespace
}  // namespace rcsim
