// The 2014 manager over the in-memory etcd and the in-process API on the virtual clock: its normal
// behaviour, and each seed flaw as the 2014 code showed it.
#include "baseline2014/replication_manager_2014.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "fakes/faulty_api_client.h"
#include "fakes/inprocess_api_client.h"
#include "fakes/mem_store.h"
#include "fakes/sim_loop.h"
#include "fakes/trace_recorder.h"
#include "registry/registry.h"

namespace rcsim {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

ReplicationController MakeRc(const std::string& name, int replicas) {
  ReplicationController rc;
  rc.metadata.name = name;
  rc.metadata.namespace_ = "default";
  rc.spec.replicas = replicas;
  rc.spec.selector = {{"app", name}};
  PodTemplateSpec t;
  t.metadata.labels = {{"app", name}};
  t.spec.containers.push_back(Container{"c", "busybox", {"sleep", "3600"}, {}});
  rc.spec.template_ = t;
  return rc;
}

// The store, the registry, the manager's API view (fixed latency) and the 2014 manager.
class World2014 {
 public:
  explicit World2014(Duration api_latency = milliseconds(5))
      : store_(&loop_, &loop_),
        registry_(&store_, &loop_, &registry_rng_),
        inner_api_(&registry_, &loop_),
        api_(&inner_api_, &store_, &loop_, &loop_, &fault_rng_),
        trace_(&loop_, /*keep_lines=*/true) {
    api_.SetLatencyAll(api_latency, api_latency);
  }
  ~World2014() {
    if (manager_) manager_->Stop();
  }

  void Create(const ReplicationController& rc) {
    ASSERT_TRUE(registry_.controllers().Create("default", rc).ok());
  }
  void Scale(const std::string& name, int replicas) {
    auto rc = registry_.controllers().Get("default", name);
    ASSERT_TRUE(rc.ok());
    ReplicationController updated = **rc;
    updated.spec.replicas = replicas;
    ASSERT_TRUE(registry_.controllers().Update(updated).ok());
  }
  // Background, as kubectl asks: with no policy a core/v1 controller is orphaned and waits for the GC.
  void DeleteController(const std::string& name) {
    DeleteOptions background;
    background.propagation_policy = kPropagationBackground;
    ASSERT_TRUE(registry_.controllers().Delete("default", name, background).ok());
  }
  void Start() {
    manager_ = std::make_unique<ReplicationManager2014>(Manager2014Options{}, &store_, &api_, &loop_, &loop_,
                                                        &trace_, &logger_);
    manager_->Start();
  }
  // Active pods of `name` (by its label), in list order.
  std::vector<PodPtr> Active(const std::string& name) {
    ListOptions opts;
    opts.label_selector = LabelSelector::FromMap({{"app", name}});
    auto list = registry_.pods().List("default", opts);
    EXPECT_TRUE(list.ok());
    std::vector<PodPtr> out;
    for (const PodPtr& p : list->items) {
      if (IsActive(*p)) out.push_back(p);
    }
    return out;
  }
  int ActiveCount(const std::string& name) { return static_cast<int>(Active(name).size()); }
  // Runs until `t` after the start of the world.
  void RunUntil(Duration t) { loop_.RunUntil(origin_ + t); }
  Duration Now() const { return loop_.Now() - origin_; }
  bool TraceHas(const std::string& text) const {
    return std::any_of(trace_.lines().begin(), trace_.lines().end(),
                       [&](const std::string& l) { return l.find(text) != std::string::npos; });
  }

  SimLoop loop_;
  const TimePoint origin_ = loop_.Now();
  Mt19937Rng registry_rng_{1};
  Mt19937Rng fault_rng_{2};
  MemStore store_;
  Registry registry_;
  InProcessApiClient inner_api_;
  FaultyApiClient api_;
  TraceRecorder trace_;
  NullLogger logger_;
  std::unique_ptr<ReplicationManager2014> manager_;
};

TEST(ReplicationManager2014Test, CreatesOrphansWithTheControllerLabelAndNoStatus) {
  World2014 w;
  w.Create(MakeRc("web", 3));
  w.Start();
  w.RunUntil(seconds(1));
  std::vector<PodPtr> pods = w.Active("web");
  ASSERT_EQ(pods.size(), 3u);
  for (const PodPtr& p : pods) {
    EXPECT_TRUE(p->metadata.owner_references.empty()) << "2014 had no ownership";
    EXPECT_EQ(p->metadata.labels.at("replicationController"), "web");
  }
  auto rc = w.registry_.controllers().Get("default", "web");
  ASSERT_TRUE(rc.ok());
  EXPECT_EQ((*rc)->status.replicas, 0) << "2014 wrote no status";
  EXPECT_EQ(w.manager_->metrics().creates, 3u);
}

TEST(ReplicationManager2014Test, WatchAppliesAScaleAtOnceAndResyncRepairsKilledPods) {
  World2014 w;
  w.Create(MakeRc("web", 2));
  w.Start();
  w.RunUntil(seconds(1));
  w.Scale("web", 5);
  w.RunUntil(seconds(2));
  EXPECT_EQ(w.ActiveCount("web"), 5) << "the watch's set event synced the controller";
  // Pod deaths are not watched: only the 10 s resync notices them.
  std::vector<PodPtr> pods = w.Active("web");
  ASSERT_TRUE(w.registry_.pods().Delete("default", pods[0]->metadata.name, DeleteOptions{}).ok());
  w.RunUntil(seconds(9));
  EXPECT_EQ(w.ActiveCount("web"), 4);
  w.RunUntil(seconds(12));
  EXPECT_EQ(w.ActiveCount("web"), 5);
  EXPECT_GE(w.manager_->counters().resyncs, 2u);
}

// Sequential creates under one global lock: one create in flight at a time, whatever the controller.
TEST(ReplicationManager2014Test, CreatesOneAtATimeUnderTheGlobalLock) {
  World2014 w(milliseconds(50));
  w.Create(MakeRc("a", 20));
  w.Create(MakeRc("b", 20));
  w.Start();
  // 40 creates at 50 ms each, one after the other (plus the two lists): at least 2 s.
  w.RunUntil(milliseconds(1000));
  EXPECT_LE(w.ActiveCount("a") + w.ActiveCount("b"), 20);
  EXPECT_EQ(w.ActiveCount("b"), 0) << "b waits for the lock while a creates";
  w.RunUntil(milliseconds(2200));
  EXPECT_EQ(w.ActiveCount("a") + w.ActiveCount("b"), 40);
}

// Flaw: a failed list returns with the lock held; the manager never syncs again.
TEST(ReplicationManager2014Test, FailedListLeavesTheLockHeldForGood) {
  World2014 w;
  w.Create(MakeRc("web", 2));
  w.Start();
  w.RunUntil(seconds(1));
  ASSERT_EQ(w.ActiveCount("web"), 2);
  // Lists fail for 2 s around the second resync (t = 10 s).
  w.api_.SetErrorRate(Verb::kList, 1.0, w.loop_.Now() + seconds(10));
  w.RunUntil(seconds(12));
  EXPECT_TRUE(w.manager_->counters().lock_leaked);
  EXPECT_TRUE(w.manager_->lock_held());
  const uint64_t syncs = w.manager_->metrics().syncs;
  w.Scale("web", 5);
  w.RunUntil(seconds(60));
  EXPECT_EQ(w.ActiveCount("web"), 2) << "neither the watch nor the resync syncs any more";
  EXPECT_EQ(w.manager_->metrics().syncs, syncs);
  EXPECT_GE(w.manager_->lock_waiters(), 1u);
  EXPECT_TRUE(w.TraceHas("returns with the lock held"));
}

// Flaw: a delete event kills the watch loop (nil controller); its watcher leaks; a new loop starts 20 s
// later, and what changed in between is seen only by a resync.
TEST(ReplicationManager2014Test, DeleteEventKillsTheWatchLoopAndLeaksItsWatcher) {
  World2014 w;
  w.Create(MakeRc("a", 1));
  w.Create(MakeRc("b", 2));
  w.Start();
  w.RunUntil(seconds(1));
  const int64_t watchers = w.store_.watcher_count();
  w.DeleteController("a");
  w.RunUntil(milliseconds(1100));
  EXPECT_EQ(w.manager_->counters().watch_crashes, 1u);
  EXPECT_EQ(w.manager_->counters().leaked_watches, 1u);
  w.Scale("b", 4);
  w.RunUntil(seconds(9));
  EXPECT_EQ(w.ActiveCount("b"), 2) << "no watch loop: the scale waits for the resync";
  w.RunUntil(seconds(12));
  EXPECT_EQ(w.ActiveCount("b"), 4) << "the resync at ~10 s applied it";
  // The loop restarts 20 s after the crash with a new watcher; the old one is still open.
  w.RunUntil(seconds(22));
  EXPECT_EQ(w.store_.watcher_count(), watchers + 1);
  w.Scale("b", 6);
  w.RunUntil(seconds(22) + milliseconds(200));
  EXPECT_EQ(w.ActiveCount("b"), 6) << "the restarted loop handles set events again";
  EXPECT_TRUE(w.TraceHas("watch loop died"));
}

// Flaw: the resync syncs the copy it read at its start, after the watch loop synced a newer one.
TEST(ReplicationManager2014Test, StaleResyncOverwritesANewerWatchEvent) {
  World2014 w(milliseconds(50));
  w.Create(MakeRc("a", 20));
  w.Create(MakeRc("b", 10));
  w.Start();
  // The first resync read a (20) and b (10) at t = 0 and creates a's 20 pods one by one (~1 s).
  w.RunUntil(milliseconds(300));
  w.Scale("b", 3);  // the watch loop waits for the lock, then syncs b at 3
  w.RunUntil(seconds(5));
  EXPECT_EQ(w.ActiveCount("b"), 10) << "the resync then synced b from its older copy (10)";
  EXPECT_GE(w.manager_->counters().stale_resync_syncs, 1u);
  // The next resync reads the current spec and deletes the extra pods.
  w.RunUntil(seconds(20));
  EXPECT_EQ(w.ActiveCount("b"), 3);
}

// Flaw: create errors are ignored; nothing retries before the next resync.
TEST(ReplicationManager2014Test, CreateErrorsAreIgnoredUntilTheNextResync) {
  World2014 w;
  w.Create(MakeRc("web", 4));
  w.api_.SetErrorRate(Verb::kCreate, 1.0, w.loop_.Now() + seconds(2));
  w.Start();
  w.RunUntil(seconds(9));
  EXPECT_EQ(w.ActiveCount("web"), 0);
  EXPECT_EQ(w.manager_->metrics().create_errors, 4u);
  EXPECT_EQ(w.manager_->metrics().sync_errors, 0u) << "the sync itself succeeded";
  w.RunUntil(seconds(11));
  EXPECT_EQ(w.ActiveCount("web"), 4);
}

// Flaw: a scale-down deletes the first pods of the list, whatever their state.
TEST(ReplicationManager2014Test, ScaleDownDeletesTheFirstPodsOfTheList) {
  World2014 w;
  w.Create(MakeRc("web", 5));
  w.Start();
  w.RunUntil(seconds(1));
  std::vector<PodPtr> before = w.Active("web");
  ASSERT_EQ(before.size(), 5u);
  w.Scale("web", 2);
  w.RunUntil(seconds(2));
  std::vector<PodPtr> after = w.Active("web");
  ASSERT_EQ(after.size(), 2u);
  EXPECT_EQ(after[0]->metadata.name, before[3]->metadata.name);
  EXPECT_EQ(after[1]->metadata.name, before[4]->metadata.name);
}

// Flaw: a create the API acknowledged before its pod shows in the list (in 2014 the apiserver answered
// before the pod was stored; here a create times out and is applied later) is counted as missing by
// the next sync, which creates it again: more pods than ever desired.
TEST(ReplicationManager2014Test, CreatesNotYetListedAreMadeAgain) {
  World2014 w;
  w.Create(MakeRc("web", 10));
  w.api_.SetTimeoutRate(Verb::kCreate, 1.0, w.loop_.Now() + seconds(60));
  w.api_.SetLatency(Verb::kCreate, seconds(5), seconds(5), w.loop_.Now() + seconds(60));
  w.Start();
  int peak = 0;
  for (int step = 1; step <= 30; ++step) {
    w.Scale("web", 10 + step % 2);  // a set event every 2 s: the watch loop syncs at once
    for (int i = 0; i < 20; ++i) {
      w.RunUntil(milliseconds(2000 * step + 100 * i));
      peak = std::max(peak, w.ActiveCount("web"));
    }
  }
  EXPECT_GT(peak, 11) << "never more than 11 desired";
  EXPECT_EQ(w.manager_->metrics().creates, 0u) << "every create timed out";
  EXPECT_GT(w.manager_->metrics().create_errors, 0u);
}

TEST(ReplicationManager2014Test, StopEndsEveryLoopAndWatcher) {
  World2014 w;
  w.Create(MakeRc("web", 1));
  const int64_t watchers = w.store_.watcher_count();
  w.Start();
  w.RunUntil(seconds(1));
  w.DeleteController("web");
  w.Create(MakeRc("api", 1));
  w.RunUntil(seconds(30));
  w.manager_->Stop();
  EXPECT_EQ(w.store_.watcher_count(), watchers);
  const uint64_t creates = w.manager_->metrics().creates;
  w.Create(MakeRc("late", 3));
  w.RunUntil(seconds(60));
  EXPECT_EQ(w.manager_->metrics().creates, creates);
  EXPECT_EQ(w.ActiveCount("late"), 0);
}

}  // namespace
}  // namespace rcsim
