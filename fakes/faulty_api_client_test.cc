#include "fakes/faulty_api_client.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "fakes/inprocess_api_client.h"
#include "fakes/mem_store.h"
#include "fakes/sim_loop.h"
#include "registry/registry.h"

namespace rcsim {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

Pod MakePod(const std::string& name) {
  Pod pod;
  pod.metadata.name = name;
  pod.metadata.namespace_ = "default";
  pod.metadata.labels = {{"app", "web"}};
  Container c;
  c.name = "main";
  c.image = "nginx";
  pod.spec.containers.push_back(c);
  return pod;
}

class FaultyApiClientTest : public ::testing::Test {
 protected:
  // Creates a pod through the faulty client; returns the result once delivered (nullopt if never).
  std::optional<Result<PodPtr>> CreateVia(const std::string& name, Duration run = seconds(5)) {
    std::optional<Result<PodPtr>> out;
    api_.pods().Create("default", MakePod(name), [&](Result<PodPtr> r) { out.emplace(std::move(r)); });
    loop_.RunFor(run);
    return out;
  }
  bool Exists(const std::string& name) { return registry_.pods().Get("default", name).ok(); }

  SimLoop loop_;
  MemStore store_{&loop_, &loop_};
  Mt19937Rng registry_rng_{1};
  Registry registry_{&store_, &loop_, &registry_rng_};
  InProcessApiClient inner_{&registry_, &loop_};
  Mt19937Rng rng_{42};
  FaultyApiClient api_{&inner_, &store_, &loop_, &loop_, &rng_};
};

TEST_F(FaultyApiClientTest, PassesCallsThroughAndCountsThem) {
  auto r = CreateVia("a");
  ASSERT_TRUE(r.has_value());
  ASSERT_TRUE(r->ok()) << r->status().ToString();
  EXPECT_EQ(r->value()->metadata.name, "a");
  EXPECT_TRUE(Exists("a"));
  std::optional<Result<ObjectList<Pod>>> list;
  api_.pods().List("default", ListOptions{}, [&](Result<ObjectList<Pod>> l) { list.emplace(std::move(l)); });
  loop_.RunFor(milliseconds(1));
  ASSERT_TRUE(list.has_value() && list->ok());
  EXPECT_EQ(list->value().items.size(), 1u);
  EXPECT_EQ(api_.counters().calls[static_cast<int>(Verb::kCreate)], 1u);
  EXPECT_EQ(api_.counters().calls[static_cast<int>(Verb::kList)], 1u);
  EXPECT_EQ(api_.counters().calls_total(), 2u);
  EXPECT_EQ(api_.counters().errors_injected, 0u);
}

// Issue 12: real mode's etcd SIGKILL makes a create in flight fail with 504 (outcome unknown) and the
// manager wait out its grace; the simulation's restart_etcd made every call a clean 503.
TEST_F(FaultyApiClientTest, FailInFlightTimesOutWritesAndFailsReadsOnTheirWayNotLaterOnes) {
  api_.SetLatencyAll(milliseconds(10), milliseconds(10));
  std::optional<Result<PodPtr>> create;
  std::optional<Result<ObjectList<Pod>>> list;
  api_.pods().Create("default", MakePod("lost"), [&](Result<PodPtr> r) { create.emplace(std::move(r)); });
  api_.pods().List("default", ListOptions{}, [&](Result<ObjectList<Pod>> l) { list.emplace(std::move(l)); });
  loop_.RunFor(milliseconds(5));
  api_.FailInFlight("etcd crashed");
  loop_.RunFor(milliseconds(10));
  ASSERT_TRUE(create.has_value());
  EXPECT_EQ(create->status().code(), Code::kTimeout);
  EXPECT_EQ(create->status().message(), "etcd crashed");
  ASSERT_TRUE(list.has_value());
  EXPECT_EQ(list->status().code(), Code::kUnavailable);
  EXPECT_FALSE(Exists("lost"));  // not applied
  EXPECT_EQ(api_.counters().calls[static_cast<int>(Verb::kCreate)], 1u);
  auto after = CreateVia("later");  // sent after the crash: the other faults decide (none here)
  ASSERT_TRUE(after.has_value());
  EXPECT_TRUE(after->ok());
  EXPECT_TRUE(Exists("later"));
}

TEST_F(FaultyApiClientTest, LatencyDelaysTheCallWithinTheRange) {
  api_.SetLatency(Verb::kCreate, milliseconds(100), milliseconds(200));
  const TimePoint start = loop_.Now();
  std::optional<TimePoint> replied;
  api_.pods().Create("default", MakePod("slow"), [&](const Result<PodPtr>& r) {
    EXPECT_TRUE(r.ok());
    replied = loop_.Now();
  });
  loop_.RunFor(milliseconds(99));
  EXPECT_FALSE(Exists("slow"));  // not yet at the server
  loop_.RunFor(seconds(1));
  ASSERT_TRUE(replied.has_value());
  EXPECT_GE(*replied - start, milliseconds(100));
  EXPECT_LE(*replied - start, milliseconds(200));
}

TEST_F(FaultyApiClientTest, InjectedErrorsAreNotApplied) {
  api_.SetErrorRate(Verb::kCreate, 1.0);
  auto r = CreateVia("e");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status().code(), Code::kUnavailable);
  EXPECT_FALSE(Exists("e"));
  EXPECT_EQ(api_.counters().errors_injected, 1u);
  // Other verbs are unaffected.
  std::optional<Result<PodPtr>> get;
  api_.pods().Get("default", "e", [&](Result<PodPtr> g) { get.emplace(std::move(g)); });
  loop_.RunFor(milliseconds(1));
  ASSERT_TRUE(get.has_value());
  EXPECT_EQ(get->status().code(), Code::kNotFound);
}

TEST_F(FaultyApiClientTest, InjectedErrorsCarryTheChosenCodeAndMessageUntilTheyEnd) {
  api_.SetErrorRate(Verb::kCreate, 1.0);
  api_.SetErrorStatus(Verb::kCreate, Code::kForbidden, "exceeded quota: pods=3", loop_.Now() + seconds(10));
  auto quota = CreateVia("q");
  ASSERT_TRUE(quota.has_value());
  EXPECT_EQ(quota->status().code(), Code::kForbidden);
  EXPECT_EQ(quota->status().message(), "exceeded quota: pods=3");
  EXPECT_FALSE(Exists("q"));
  loop_.RunFor(seconds(6));  // past the status's end; the error rate stays
  auto plain = CreateVia("q");
  ASSERT_TRUE(plain.has_value());
  EXPECT_EQ(plain->status().code(), Code::kUnavailable);
  EXPECT_EQ(plain->status().message(), "injected: unavailable (create)");
}

TEST_F(FaultyApiClientTest, TimeoutsHaveUnknownOutcomeAndArriveAfterTheTimeout) {
  api_.SetTimeoutRate(Verb::kCreate, 1.0);
  api_.set_timeout(seconds(3));
  int timeouts = 0;
  for (int i = 0; i < 20; ++i) {
    api_.pods().Create("default", MakePod("t" + std::to_string(i)), [&](const Result<PodPtr>& r) {
      EXPECT_EQ(r.status().code(), Code::kTimeout);
      ++timeouts;
    });
  }
  loop_.RunFor(milliseconds(2999));
  EXPECT_EQ(timeouts, 0);
  loop_.RunFor(milliseconds(1));
  EXPECT_EQ(timeouts, 20);
  int applied = 0;
  for (int i = 0; i < 20; ++i) applied += Exists("t" + std::to_string(i));
  EXPECT_GT(applied, 0);
  EXPECT_LT(applied, 20);
  EXPECT_EQ(api_.counters().timeouts_injected, 20u);
}

TEST_F(FaultyApiClientTest, FaultsSwitchOffAtTheirEndTime) {
  api_.SetErrorRateAll(1.0, loop_.Now() + seconds(10));
  auto during = CreateVia("x", seconds(11));
  ASSERT_TRUE(during.has_value());
  EXPECT_EQ(during->status().code(), Code::kUnavailable);
  auto after = CreateVia("x");
  ASSERT_TRUE(after.has_value());
  EXPECT_TRUE(after->ok());
}

TEST_F(FaultyApiClientTest, PartitionTimesOutEveryCallAndEndsWatches) {
  std::vector<ApiWatchEvent<Pod>> events;
  auto watch = api_.pods().Watch("default", ListOptions{}, "",
                                 [&](const ApiWatchEvent<Pod>& ev) { events.push_back(ev); });
  loop_.RunFor(milliseconds(1));
  ASSERT_EQ(api_.active_watches(), 1);
  api_.SetPartitioned(true, loop_.Now() + seconds(30));
  loop_.RunFor(milliseconds(1));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].type, ApiWatchEvent<Pod>::Type::kError);
  EXPECT_EQ(events[0].error.code(), Code::kUnavailable);
  EXPECT_EQ(api_.active_watches(), 0);
  EXPECT_TRUE(api_.partitioned());

  auto r = CreateVia("p", seconds(2));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status().code(), Code::kTimeout);
  EXPECT_FALSE(Exists("p"));
  // A watch started during the partition fails too.
  std::vector<ApiWatchEvent<Pod>> events2;
  auto watch2 = api_.pods().Watch("default", ListOptions{}, "",
                                  [&](const ApiWatchEvent<Pod>& ev) { events2.push_back(ev); });
  loop_.RunFor(seconds(2));
  ASSERT_EQ(events2.size(), 1u);
  EXPECT_EQ(events2[0].type, ApiWatchEvent<Pod>::Type::kError);

  loop_.RunFor(seconds(30));
  EXPECT_FALSE(api_.partitioned());
  auto healed = CreateVia("p");
  ASSERT_TRUE(healed.has_value());
  EXPECT_TRUE(healed->ok());
}

TEST_F(FaultyApiClientTest, WatchDelayKeepsOrder) {
  api_.SetWatchDelay(milliseconds(0), milliseconds(100));
  std::vector<std::string> seen;
  auto watch = api_.pods().Watch("default", ListOptions{}, "", [&](const ApiWatchEvent<Pod>& ev) {
    ASSERT_EQ(ev.type, ApiWatchEvent<Pod>::Type::kAdded);
    seen.push_back(ev.object->metadata.name);
  });
  loop_.RunFor(milliseconds(1));
  std::vector<std::string> created;
  for (int i = 0; i < 50; ++i) {
    created.push_back("w" + std::to_string(i));
    ASSERT_TRUE(registry_.pods().Create("default", MakePod(created.back())).ok());
    loop_.RunFor(milliseconds(3));  // shorter than the delays, so draws overlap
  }
  loop_.RunFor(seconds(1));
  EXPECT_EQ(seen, created);
}

// A stalled watch stays open: nothing arrives during the window, everything held arrives at its end
// in order, and events after the window flow at once again.
TEST_F(FaultyApiClientTest, StalledWatchHoldsEventsUntilTheWindowEndsInOrder) {
  std::vector<std::pair<std::string, TimePoint>> seen;
  auto watch = api_.pods().Watch("default", ListOptions{}, "", [&](const ApiWatchEvent<Pod>& ev) {
    ASSERT_EQ(ev.type, ApiWatchEvent<Pod>::Type::kAdded);
    seen.emplace_back(ev.object->metadata.name, loop_.Now());
  });
  loop_.RunFor(milliseconds(1));
  const TimePoint until = loop_.Now() + seconds(2);
  api_.StallWatches(until);
  std::vector<std::string> created;
  for (int i = 0; i < 10; ++i) {
    created.push_back("s" + std::to_string(i));
    ASSERT_TRUE(registry_.pods().Create("default", MakePod(created.back())).ok());
    loop_.RunFor(milliseconds(100));
  }
  loop_.RunUntil(until - milliseconds(1));
  EXPECT_TRUE(seen.empty()) << seen.size() << " events leaked through the stall";
  loop_.RunUntil(until);
  ASSERT_EQ(seen.size(), created.size());
  for (size_t i = 0; i < seen.size(); ++i) {
    EXPECT_EQ(seen[i].first, created[i]);
    EXPECT_EQ(seen[i].second, until);
  }
  ASSERT_TRUE(registry_.pods().Create("default", MakePod("after")).ok());
  loop_.RunFor(Duration::zero());
  ASSERT_EQ(seen.size(), created.size() + 1);
  EXPECT_EQ(seen.back().first, "after");
  EXPECT_EQ(seen.back().second, until);
}

TEST_F(FaultyApiClientTest, DroppedWatchEndsWithUnavailableAndDeliversNothingMore) {
  std::vector<ApiWatchEvent<Pod>> events;
  auto watch = api_.pods().Watch("default", ListOptions{}, "",
                                 [&](const ApiWatchEvent<Pod>& ev) { events.push_back(ev); });
  loop_.RunFor(milliseconds(1));
  ASSERT_TRUE(registry_.pods().Create("default", MakePod("one")).ok());
  loop_.RunFor(milliseconds(1));
  api_.DropWatches();
  ASSERT_TRUE(registry_.pods().Create("default", MakePod("two")).ok());
  loop_.RunFor(seconds(1));
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].type, ApiWatchEvent<Pod>::Type::kAdded);
  EXPECT_EQ(events[1].type, ApiWatchEvent<Pod>::Type::kError);
  EXPECT_EQ(events[1].error.code(), Code::kUnavailable);
  EXPECT_EQ(api_.counters().watches_dropped, 1u);
}

std::vector<std::string> Names(const ObjectList<Pod>& list) {
  std::vector<std::string> out;
  for (const PodPtr& p : list.items) out.push_back(p->metadata.name);
  return out;
}

// The options of an informer's first list: resourceVersion "0", which a lagging cache may serve.
ListOptions CacheList() {
  ListOptions opts;
  opts.resource_version = "0";
  return opts;
}

// A stale window never shows the world as it was before the window opened: a list a cache may serve
// (resourceVersion "0") inside it is served at max(now - lag, window start), at once, and says that
// revision; the watch events of changes made
// inside the window come lag after they happened.
TEST_F(FaultyApiClientTest, StaleListsNeverPredateTheWindowAndWatchEventsComeLagLate) {
  ASSERT_TRUE(registry_.pods().Create("default", MakePod("before")).ok());
  loop_.RunFor(milliseconds(500));
  api_.SetStaleLag(seconds(2));
  std::optional<TimePoint> watched;
  auto watch = api_.pods().Watch("default", ListOptions{}, "0", [&](const ApiWatchEvent<Pod>& ev) {
    if (ev.type == ApiWatchEvent<Pod>::Type::kAdded && ev.object->metadata.name == "s") watched = loop_.Now();
  });
  loop_.RunFor(milliseconds(1));
  const TimePoint created_at = loop_.Now();
  ASSERT_TRUE(registry_.pods().Create("default", MakePod("s")).ok());
  loop_.RunFor(milliseconds(1));
  std::optional<ObjectList<Pod>> listed;
  api_.pods().List("default", CacheList(), [&](Result<ObjectList<Pod>> l) {
    ASSERT_TRUE(l.ok()) << l.status().ToString();
    listed = std::move(*l);
  });
  loop_.RunFor(milliseconds(1));  // served now, at the revision current when the window opened
  ASSERT_TRUE(listed.has_value());
  EXPECT_EQ(Names(*listed), std::vector<std::string>{"before"});
  EXPECT_EQ(api_.counters().stale_lists, 1u);
  loop_.RunFor(milliseconds(1990));
  EXPECT_FALSE(watched.has_value());
  loop_.RunFor(milliseconds(20));
  ASSERT_TRUE(watched.has_value());
  EXPECT_EQ(*watched - created_at, seconds(2));
  // Once lag has passed since the create, a list shows the pod.
  api_.pods().List("default", CacheList(), [&](Result<ObjectList<Pod>> l) { listed = std::move(*l); });
  loop_.RunFor(milliseconds(1));
  EXPECT_EQ(Names(*listed), (std::vector<std::string>{"before", "s"}));
}

// Issue 9: a manager restarted inside a stale window (its informer listing from a lagging watch cache,
// RV="0" in an HA apiserver) must see the world as it was lag ago, as its predecessor did: its list
// misses the pod created 1s before the restart, and its watch from that list's resourceVersion shows
// the create lag after it happened. (Before: the list was fetched at once and delivered lag late, so it
// already held the pod and the hazard could not happen.)
TEST_F(FaultyApiClientTest, RestartedManagerInsideStaleWindowListsTheWorldAsItWasLagAgo) {
  ASSERT_TRUE(registry_.pods().Create("default", MakePod("old")).ok());
  loop_.RunFor(seconds(1));
  api_.SetStaleLag(seconds(3), loop_.Now() + seconds(10));
  loop_.RunFor(seconds(4));
  const TimePoint created_at = loop_.Now();
  ASSERT_TRUE(registry_.pods().Create("default", MakePod("recent")).ok());
  loop_.RunFor(seconds(1));
  api_.AbandonPending();  // the predecessor crashed; its successor lists and watches
  std::optional<ObjectList<Pod>> listed;
  api_.pods().List("default", CacheList(), [&](Result<ObjectList<Pod>> l) {
    ASSERT_TRUE(l.ok()) << l.status().ToString();
    listed = std::move(*l);
  });
  loop_.RunFor(milliseconds(1));
  ASSERT_TRUE(listed.has_value()) << "a stale list is a snapshot read, served at once";
  EXPECT_EQ(Names(*listed), std::vector<std::string>{"old"});
  std::optional<TimePoint> seen;
  auto watch = api_.pods().Watch("default", ListOptions{}, listed->resource_version,
                                 [&](const ApiWatchEvent<Pod>& ev) {
                                   if (ev.type == ApiWatchEvent<Pod>::Type::kAdded) seen = loop_.Now();
                                 });
  loop_.RunFor(seconds(4));
  ASSERT_TRUE(seen.has_value());
  EXPECT_EQ(*seen - created_at, seconds(3));
}

// A consistent list (resourceVersion "", a quorum read from etcd upstream) is fresh inside a stale
// window; a list not older than N shows at least what happened up to N (a re-listing informer never
// goes back in time), and the lagging state when that is newer.
TEST_F(FaultyApiClientTest, ConsistentAndNotOlderThanListsAreNeverOlderThanAsked) {
  ASSERT_TRUE(registry_.pods().Create("default", MakePod("old")).ok());
  loop_.RunFor(seconds(1));
  api_.SetStaleLag(seconds(3));
  loop_.RunFor(seconds(1));
  Result<PodPtr> recent = registry_.pods().Create("default", MakePod("recent"));
  ASSERT_TRUE(recent.ok());
  ASSERT_TRUE(registry_.pods().Create("default", MakePod("newest")).ok());
  loop_.RunFor(milliseconds(10));
  auto list = [&](const ListOptions& opts) {
    std::optional<ObjectList<Pod>> listed;
    api_.pods().List("default", opts, [&](Result<ObjectList<Pod>> l) {
      ASSERT_TRUE(l.ok()) << l.status().ToString();
      listed = std::move(*l);
    });
    loop_.RunFor(milliseconds(1));
    EXPECT_TRUE(listed.has_value());
    return listed.has_value() ? Names(*listed) : std::vector<std::string>{};
  };
  EXPECT_EQ(list(ListOptions{}), (std::vector<std::string>{"newest", "old", "recent"}));
  EXPECT_EQ(api_.counters().stale_lists, 0u);
  EXPECT_EQ(list(CacheList()), std::vector<std::string>{"old"});
  ListOptions not_older;
  not_older.resource_version = (*recent)->metadata.resource_version;
  EXPECT_EQ(list(not_older), (std::vector<std::string>{"old", "recent"}));
  EXPECT_EQ(api_.counters().stale_lists, 2u);
  // Not older than a revision the lagging state already holds: the lagging state.
  not_older.resource_version = "1";
  EXPECT_EQ(list(not_older), std::vector<std::string>{"old"});
}

// The store compacted past the revision a stale list would be served at: the list is served fresh
// (a watch cache that caught up), not refused.
TEST_F(FaultyApiClientTest, StaleListCompactedPastItsRevisionIsServedFresh) {
  api_.SetStaleLag(seconds(3));
  loop_.RunFor(seconds(1));
  ASSERT_TRUE(registry_.pods().Create("default", MakePod("a")).ok());
  loop_.RunFor(seconds(1));
  ASSERT_TRUE(store_.Compact(store_.revision()).ok());
  std::optional<Result<ObjectList<Pod>>> listed;
  api_.pods().List("default", CacheList(), [&](Result<ObjectList<Pod>> l) { listed = std::move(l); });
  loop_.RunFor(milliseconds(1));
  ASSERT_TRUE(listed.has_value());
  ASSERT_TRUE(listed->ok()) << listed->status().ToString();
  EXPECT_EQ(Names(**listed), std::vector<std::string>{"a"});
  EXPECT_EQ(api_.counters().calls[static_cast<int>(Verb::kList)], 1u);
}

// Gets are quorum reads: fresh inside a stale window.
TEST_F(FaultyApiClientTest, GetsAreFreshInsideAStaleWindow) {
  api_.SetStaleLag(seconds(3));
  loop_.RunFor(seconds(1));
  ASSERT_TRUE(registry_.pods().Create("default", MakePod("g")).ok());
  std::optional<Result<PodPtr>> got;
  api_.pods().Get("default", "g", [&](Result<PodPtr> r) { got = std::move(r); });
  loop_.RunFor(milliseconds(1));
  ASSERT_TRUE(got.has_value());
  EXPECT_TRUE(got->ok());
}

TEST_F(FaultyApiClientTest, DestroyedWatchDeliversNothing) {
  api_.SetWatchDelay(milliseconds(50), milliseconds(50));
  int events = 0;
  auto watch = api_.pods().Watch("default", ListOptions{}, "", [&](const ApiWatchEvent<Pod>&) { ++events; });
  loop_.RunFor(milliseconds(1));
  ASSERT_TRUE(registry_.pods().Create("default", MakePod("d")).ok());
  loop_.RunFor(milliseconds(10));  // the event is queued, not yet delivered
  watch.reset();
  loop_.RunFor(seconds(1));
  EXPECT_EQ(events, 0);
  EXPECT_EQ(api_.active_watches(), 0);
}

TEST_F(FaultyApiClientTest, AbandonPendingDropsPendingRepliesAndUnsentCalls) {
  api_.SetWatchDelay(seconds(1), seconds(1));
  api_.SetLatency(Verb::kCreate, milliseconds(100), milliseconds(100));
  bool watched = false;
  bool created = false;
  auto watch =
      api_.pods().Watch("default", ListOptions{}, "", [&](const ApiWatchEvent<Pod>&) { watched = true; });
  ASSERT_TRUE(registry_.pods().Create("default", MakePod("seen")).ok());
  loop_.RunFor(milliseconds(10));  // the event was sent; it waits out the watch delay
  api_.pods().Create("default", MakePod("unsent"), [&](const Result<PodPtr>&) { created = true; });
  api_.AbandonPending();
  loop_.RunFor(seconds(2));
  EXPECT_FALSE(watched);
  EXPECT_FALSE(created);
  EXPECT_FALSE(Exists("unsent"));  // still waiting out its latency when the caller crashed
  // New calls work normally.
  auto r = CreateVia("next");
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->ok());
}

TEST(FaultyApiClientDeterminismTest, SameSeedSameOutcomes) {
  auto run = [](uint64_t seed) {
    SimLoop loop;
    MemStore store(&loop, &loop);
    Mt19937Rng registry_rng(1);
    Registry registry(&store, &loop, &registry_rng);
    InProcessApiClient inner(&registry, &loop);
    Mt19937Rng rng(seed);
    FaultyApiClient api(&inner, &store, &loop, &loop, &rng);
    api.SetErrorRateAll(0.3);
    api.SetTimeoutRateAll(0.3);
    api.SetLatencyAll(milliseconds(1), milliseconds(50));
    std::string outcomes;
    for (int i = 0; i < 64; ++i) {
      api.pods().Create("default", MakePod("p" + std::to_string(i)), [&outcomes, i](const Result<PodPtr>& r) {
        outcomes += std::to_string(i) + ":" + CodeName(r.status().code()) + ",";
      });
    }
    loop.RunFor(seconds(5));
    return outcomes;
  };
  EXPECT_EQ(run(9), run(9));
  EXPECT_NE(run(9), run(10));
}

}  // namespace
}  // namespace rcsim
