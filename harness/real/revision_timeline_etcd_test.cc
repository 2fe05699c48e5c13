// The stale view of real mode (rcsim run --real, stale_reads): fakes' RevisionTimeline over an etcd v3
// client of a real etcd, and the PinStaleList rule the fault proxy applies with it. Time is a manual
// clock, so what counts as `lag` ago is exact; only etcd's watch delivery is waited for (bounded).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "backends/etcd/etcd_store.h"
#include "fakes/revision_timeline.h"
#include "tests/etcd_fixture/etcd_process.h"

namespace rcsim {
namespace {

using std::chrono::seconds;

// Moves only when told; read from etcd's watch thread too.
class ManualClock final : public Clock {
 public:
  TimePoint Now() const override { return TimePoint(Duration(now_.load())); }
  void Set(Duration since_epoch) { now_.store(since_epoch.count()); }

 private:
  std::atomic<Duration::rep> now_{0};
};

int64_t Put(Store& store, const std::string& key) {
  PutRequest put;
  put.key = key;
  put.value = Value("v");
  Result<PutResponse> r = store.Put(put);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? r->revision : 0;
}

TEST(RevisionTimelineOverEtcdTest, CacheListsArePinnedToTheRevisionCurrentLagAgo) {
  auto etcd = EtcdProcess::Start();
  ASSERT_TRUE(etcd.ok()) << etcd.status().ToString();
  EtcdStoreOptions eo;
  eo.endpoints = {(*etcd)->endpoint()};
  auto store = EtcdStore::Create(eo);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  ManualClock clock;
  clock.Set(seconds(100));
  RevisionTimeline timeline(store->get(), &clock);
  const int64_t before = Put(**store, "/registry/pods/default/a");
  ASSERT_TRUE(timeline.OpenWindow());
  timeline.set_lag(seconds(3));
  clock.Set(seconds(101));
  const int64_t after = Put(**store, "/registry/pods/default/b");
  ASSERT_GT(after, before);
  // The write is recorded once etcd's watch delivers it.
  const auto deadline = std::chrono::steady_clock::now() + seconds(10);
  while (timeline.IsLatest(before) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_FALSE(timeline.IsLatest(before));

  // At 102 s, 3 s ago is before the window opened: a cache list shows the window's first state.
  clock.Set(seconds(102));
  ListOptions cached;
  cached.resource_version = "0";
  ASSERT_TRUE(PinStaleList(timeline, &cached));
  EXPECT_EQ(cached.resource_version, std::to_string(before));
  EXPECT_EQ(cached.resource_version_match, ResourceVersionMatch::kExact);
  ListOptions not_older;  // never older than what the client saw
  not_older.resource_version = std::to_string(after);
  EXPECT_FALSE(PinStaleList(timeline, &not_older));  // `after` is the latest: served fresh
  ListOptions consistent;
  EXPECT_FALSE(PinStaleList(timeline, &consistent));
  EXPECT_EQ(consistent.resource_version, "");
  // At 105 s the write of 101 s is 4 s old: the stale view has caught up with it.
  clock.Set(seconds(105));
  ListOptions later;
  later.resource_version = "0";
  EXPECT_FALSE(PinStaleList(timeline, &later));
}

}  // namespace
}  // namespace rcsim
