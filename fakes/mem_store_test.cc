// MemStore behaviour beyond the Store contract: delivery mechanics, history pruning, bad input.
#include "fakes/mem_store.h"

#include <gtest/gtest.h>

#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "fakes/sim_loop.h"

namespace rcsim {
namespace {

class MemStoreTest : public ::testing::Test {
 protected:
  MemStoreTest() : store_(&loop_, &loop_) {}

  int64_t Put(const std::string& key, const std::string& value, int64_t lease = 0) {
    PutRequest req;
    req.key = key;
    req.value = Value(value);
    req.lease = lease;
    auto r = store_.Put(req);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r->revision : 0;
  }
  std::unique_ptr<Watch> WatchRange(const std::string& key, const std::string& end, int64_t start,
                                    std::vector<WatchResponse>* out, bool prev_kv = false) {
    WatchRequest req;
    req.key = key;
    req.range_end = end;
    req.start_revision = start;
    req.prev_kv = prev_kv;
    return store_.StartWatch(req, [out](const WatchResponse& r) { out->push_back(r); });
  }

  SimLoop loop_;
  MemStore store_;
};

// Value::Stampable: the store writes the commit revision into the object as it stores it, once; other
// typed values are stored as they are; bytes never carry the stamp.
TEST_F(MemStoreTest, StampableValuesCarryTheRevisionTheyWereFirstStoredAt) {
  auto pod = std::make_shared<Pod>();
  pod->metadata.name = "p";
  PutRequest req;
  req.key = "/registry/pods/ns/p";
  req.value = Value::Stampable(pod);
  auto first = store_.Put(req);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(pod->metadata.resource_version, std::to_string(first->revision));
  EXPECT_EQ(req.value.bytes().find("resourceVersion"), std::string::npos) << req.value.bytes();
  auto again = store_.Put(req);  // the same value written again (a replayed request) keeps its stamp
  ASSERT_TRUE(again.ok());
  EXPECT_GT(again->revision, first->revision);
  EXPECT_EQ(pod->metadata.resource_version, std::to_string(first->revision));

  auto plain = std::make_shared<Pod>();
  plain->metadata.name = "q";
  req.key = "/registry/pods/ns/q";
  req.value = Value(PodPtr(plain));
  ASSERT_TRUE(store_.Put(req).ok());
  EXPECT_EQ(plain->metadata.resource_version, "");
}

TEST_F(MemStoreTest, WatchCallbacksAreNeverInline) {
  std::vector<WatchResponse> got;
  auto w = WatchRange("a", "", 0, &got);
  Put("a", "1");
  EXPECT_TRUE(got.empty());
  loop_.RunUntilIdle();
  EXPECT_EQ(got.size(), 1u);
}

TEST_F(MemStoreTest, TxnSpanningRangesGivesEachWatcherOnlyItsEvents) {
  std::vector<WatchResponse> left, right, all;
  auto wl = WatchRange("a/", PrefixEnd("a/"), 0, &left, /*prev_kv=*/true);
  auto wr = WatchRange("b/", PrefixEnd("b/"), 0, &right);
  auto wa = WatchRange(std::string(1, '\0'), std::string(1, '\0'), 0, &all);  // every key
  Put("a/1", "old");
  loop_.RunUntilIdle();
  left.clear();
  all.clear();
  TxnRequest t;
  PutRequest p1, p2;
  p1.key = "a/1";
  p1.value = Value("new");
  p2.key = "b/1";
  p2.value = Value("x");
  t.success = {TxnOp::Put(p1), TxnOp::Put(p2)};
  ASSERT_TRUE(store_.Txn(t).ok());
  loop_.RunUntilIdle();
  ASSERT_EQ(left.size(), 1u);
  ASSERT_EQ(left[0].events.size(), 1u);
  EXPECT_EQ(left[0].events[0].kv.key, "a/1");
  ASSERT_TRUE(left[0].events[0].prev_kv.has_value());
  EXPECT_EQ(left[0].events[0].prev_kv->value.bytes(), "old");
  ASSERT_EQ(right.size(), 1u);
  ASSERT_EQ(right[0].events.size(), 1u);
  EXPECT_EQ(right[0].events[0].kv.key, "b/1");
  ASSERT_EQ(all.size(), 1u);  // once per revision even though both events match
  ASSERT_EQ(all[0].events.size(), 2u);
  EXPECT_FALSE(all[0].events[0].prev_kv.has_value());
}

TEST_F(MemStoreTest, WatchersWithIdenticalRangesEachGetEveryEvent) {
  std::vector<WatchResponse> a, b;
  auto wa = WatchRange("p/", PrefixEnd("p/"), 0, &a);
  auto wb = WatchRange("p/", PrefixEnd("p/"), 0, &b);
  for (int i = 0; i < 5; ++i) Put("p/" + std::to_string(i), "v");
  wa.reset();
  Put("p/x", "v");
  loop_.RunUntilIdle();
  EXPECT_EQ(a.size(), 0u);  // destroyed before the loop ran: queued responses are dropped
  ASSERT_EQ(b.size(), 6u);
  for (size_t i = 1; i < b.size(); ++i) {
    EXPECT_EQ(b[i].header_revision, b[i - 1].header_revision + 1);
  }
  EXPECT_EQ(store_.watcher_count(), 1);
}

TEST_F(MemStoreTest, WatchFromAFutureRevisionSkipsEarlierEvents) {
  std::vector<WatchResponse> got;
  auto w = WatchRange("k", "", store_.revision() + 3, &got);
  Put("k", "1");
  Put("k", "2");
  const int64_t r3 = Put("k", "3");
  loop_.RunUntilIdle();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].events[0].kv.mod_revision, r3);
}

TEST_F(MemStoreTest, DestroyingTheWatchInsideItsCallbackStopsTheRest) {
  std::unique_ptr<Watch> w;
  int calls = 0;
  WatchRequest req;
  req.key = "k";
  w = store_.StartWatch(req, [&](const WatchResponse&) {
    ++calls;
    w.reset();
  });
  Put("k", "1");
  Put("k", "2");
  Put("k", "3");
  loop_.RunUntilIdle();
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(store_.watcher_count(), 0);
}

TEST_F(MemStoreTest, WatchMayOutliveTheStore) {
  SimLoop loop;
  std::unique_ptr<Watch> w;
  int calls = 0;
  {
    MemStore store(&loop, &loop);
    WatchRequest req;
    req.key = "k";
    w = store.StartWatch(req, [&](const WatchResponse&) { ++calls; });
    PutRequest p;
    p.key = "k";
    p.value = Value("v");
    ASSERT_TRUE(store.Put(p).ok());
    auto lease = store.LeaseGrant(5);
    ASSERT_TRUE(lease.ok());
  }
  loop.RunUntilIdle();  // the queued response and the lease timer are dropped
  EXPECT_EQ(calls, 0);
  w.reset();
}

TEST_F(MemStoreTest, CallbackWritesAreDeliveredInLaterTurns) {
  // A watcher writing into its own range must not starve the loop: each drain delivers only what was
  // queued when it started.
  std::vector<int64_t> revs;
  WatchRequest req;
  req.key = "c";
  auto w = store_.StartWatch(req, [&](const WatchResponse& r) {
    revs.push_back(r.header_revision);
    if (revs.size() < 3) Put("c", "again");
  });
  Put("c", "first");
  EXPECT_EQ(loop_.RunOne() ? 1 : 0, 1);
  EXPECT_EQ(revs.size(), 1u);
  loop_.RunUntilIdle();
  ASSERT_EQ(revs.size(), 3u);
  EXPECT_EQ(revs[2], revs[0] + 2);
}

TEST_F(MemStoreTest, CompactionDropsHistoryAndDeletedKeys) {
  Put("a", "1");
  Put("a", "2");
  Put("b", "1");
  DeleteRequest d;
  d.key = "b";
  ASSERT_TRUE(store_.DeleteRange(d).ok());
  const int64_t now = store_.revision();
  ASSERT_TRUE(store_.Compact(now).ok());
  EXPECT_EQ(store_.compact_revision(), now);
  EXPECT_EQ(store_.key_count(), 1);
  RangeRequest all;
  all.key = std::string(1, '\0');
  all.range_end = std::string(1, '\0');
  all.revision = now;
  auto r = store_.Range(all);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->kvs.size(), 1u);
  EXPECT_EQ(r->kvs[0].value.bytes(), "2");
  EXPECT_EQ(r->kvs[0].version, 2);
  // History written after the compaction is kept.
  Put("a", "3");
  all.revision = now;
  r = store_.Range(all);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->kvs[0].value.bytes(), "2");
}

TEST_F(MemStoreTest, TypedValuesPassThroughWithoutEncoding) {
  auto pod = std::make_shared<Pod>();
  PutRequest p;
  p.key = "/registry/pods/default/x";
  p.value = Value(PodPtr(pod));
  ASSERT_TRUE(store_.Put(p).ok());
  auto got = store_.Get(p.key);
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->value.pod().get(), pod.get());
}

TEST_F(MemStoreTest, BadInputIsAnErrorValue) {
  PutRequest p;
  EXPECT_EQ(store_.Put(p).status().code(), Code::kBadRequest);
  RangeRequest r;
  EXPECT_EQ(store_.Range(r).status().code(), Code::kBadRequest);
  r.key = "a";
  // A negative revision means "latest", as on a real etcd (contract: NegativeRevisionAndLimit...).
  r.range_end = "0";  // end before start: empty, not an error
  auto empty = store_.Range(r);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->count, 0);
  DeleteRequest d;
  EXPECT_EQ(store_.DeleteRange(d).status().code(), Code::kBadRequest);
  EXPECT_EQ(store_.LeaseGrant(5, -3).status().code(), Code::kBadRequest);
  EXPECT_EQ(store_.LeaseKeepAlive(42).status().code(), Code::kNotFound);

  std::vector<WatchResponse> got;
  auto w = WatchRange("a", "", -5, &got);
  loop_.RunUntilIdle();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(got[0].canceled);
  EXPECT_EQ(got[0].status.code(), Code::kBadRequest);
  EXPECT_EQ(store_.revision(), 1);
}

TEST_F(MemStoreTest, LeaseIdsAreDeterministicAndTtlIsClampedToEtcdsMinimum) {
  auto a = store_.LeaseGrant(1);
  auto b = store_.LeaseGrant(10);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->id, MemStoreOptions().first_lease_id);
  EXPECT_EQ(b->id, a->id + 1);
  EXPECT_EQ(a->ttl_seconds, 2);
  auto c = store_.LeaseGrant(5, b->id + 1);  // chosen by the caller
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->id, b->id + 1);
  EXPECT_EQ(store_.LeaseGrant(5, c->id).status().code(), Code::kAlreadyExists);
  auto d = store_.LeaseGrant(5);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->id, c->id + 1);  // skips the id in use
}

TEST_F(MemStoreTest, LeaseExpiresExactlyAtItsDeadlineInVirtualTime) {
  auto l = store_.LeaseGrant(3);
  ASSERT_TRUE(l.ok());
  Put("k", "v", l->id);
  loop_.RunFor(std::chrono::milliseconds(2999));
  EXPECT_EQ(store_.key_count(), 1);
  ASSERT_TRUE(store_.LeaseKeepAlive(l->id).ok());
  loop_.RunFor(std::chrono::milliseconds(2999));
  EXPECT_EQ(store_.key_count(), 1);
  loop_.RunFor(std::chrono::milliseconds(1));
  EXPECT_EQ(store_.key_count(), 0);
  EXPECT_EQ(store_.lease_count(), 0);
}

// A thread-safe FIFO executor whose tasks run when the test calls RunAll (no timers needed here).
class QueueExecutor final : public Executor {
 public:
  void Post(std::function<void()> fn) override {
    std::lock_guard<std::mutex> lock(mu_);
    tasks_.push_back(std::move(fn));
  }
  TimerId Schedule(Duration, std::function<void()> fn) override {
    Post(std::move(fn));
    return ++next_id_;
  }
  void Cancel(TimerId) override {}
  void RunAll() {
    while (true) {
      std::function<void()> fn;
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (tasks_.empty()) return;
        fn = std::move(tasks_.front());
        tasks_.pop_front();
      }
      fn();
    }
  }

 private:
  std::mutex mu_;
  std::deque<std::function<void()>> tasks_;
  TimerId next_id_ = 0;
};

TEST(MemStoreThreadsTest, ConcurrentWritersProduceOneOrderedHistory) {
  SimLoop clock;
  QueueExecutor executor;
  MemStore store(&clock, &executor);
  std::vector<int64_t> seen;
  WatchRequest req;
  req.key = "/";
  req.range_end = PrefixEnd("/");
  auto w = store.StartWatch(req, [&seen](const WatchResponse& r) {
    for (const WatchEvent& e : r.events) seen.push_back(e.kv.mod_revision);
  });
  auto writer = [&store](int id) {
    for (int i = 0; i < 500; ++i) {
      PutRequest p;
      p.key = "/w" + std::to_string(id) + "/" + std::to_string(i % 50);
      p.value = Value("v");
      ASSERT_TRUE(store.Put(p).ok());
    }
  };
  std::thread a(writer, 1), b(writer, 2);
  for (int i = 0; i < 200; ++i) executor.RunAll();  // deliver while the writers run
  a.join();
  b.join();
  executor.RunAll();
  ASSERT_EQ(seen.size(), 1000u);
  for (size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], static_cast<int64_t>(i) + 2);
  EXPECT_EQ(store.revision(), 1001);
  EXPECT_EQ(store.key_count(), 100);
}

}  // namespace
}  // namespace rcsim
