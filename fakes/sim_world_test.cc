#include "fakes/sim_world.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "engine/labels.h"
#include "fakes/faulty_store.h"
#include "fakes/mem_store.h"
#include "registry/event_registry.h"

namespace rcsim {
namespace {

using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

ReplicationController MakeController(const std::string& name, int32_t replicas) {
  ReplicationController rc;
  rc.metadata.name = name;
  rc.metadata.namespace_ = "default";
  rc.spec.replicas = replicas;
  rc.spec.selector = {{"app", name}};
  PodTemplateSpec t;
  t.metadata.labels = {{"app", name}};
  Container c;
  c.name = "main";
  c.image = "nginx";
  t.spec.containers.push_back(c);
  rc.spec.template_ = t;
  return rc;
}

// Watches every change of the world and keeps, per controller, whether it has converged, and the
// first time any controller had more active pods than desired (the never_above invariant).
class ConvergenceChecker {
 public:
  explicit ConvergenceChecker(SimWorld* world) : world_(world) {
    world_->OnChange([this] { OnChange(); });
  }

  void Track(const std::string& name, int32_t desired) {
    desired_[name] = desired;
    Recheck(name);
  }
  bool AllConverged() const { return unconverged_.empty() && !desired_.empty(); }
  size_t unconverged() const { return unconverged_.size(); }
  // "name: desired/active/running" of the controllers not converged, for failure messages.
  std::string Describe() const {
    std::string out;
    for (const std::string& name : unconverged_) {
      const SimWorld::ControllerView v = world_->View("default", name);
      out += name + ": " + std::to_string(v.desired) + "/" + std::to_string(v.active) + "/" +
             std::to_string(v.running) + "; ";
    }
    return out;
  }
  const std::vector<std::string>& violations() const { return violations_; }
  uint64_t changes() const { return changes_; }
  int64_t last_revision() const { return last_revision_; }
  bool revisions_increasing() const { return revisions_increasing_; }

 private:
  void OnChange() {
    ++changes_;
    const WorldChange& c = world_->last_change();
    if (c.revision < last_revision_) revisions_increasing_ = false;
    last_revision_ = c.revision;
    if (c.kind == WorldChange::Kind::kController) {
      Recheck(c.name);
      return;
    }
    // Only a pod turning active can push a controller above its desired count.
    const bool added = !c.was_active && c.is_active;
    if (!c.owner_before.empty()) Recheck(c.owner_before, added);
    if (!c.owner_after.empty() && c.owner_after != c.owner_before) Recheck(c.owner_after, added);
    if (c.owner_before.empty() && c.owner_after.empty()) {
      for (const auto& [name, desired] : desired_) Recheck(name, added);  // an orphan may match anyone
    }
  }

  void Recheck(const std::string& name, bool check_above = false) {
    auto it = desired_.find(name);
    if (it == desired_.end()) return;
    const SimWorld::ControllerView v = world_->View("default", name);
    if (check_above && v.exists && v.active > v.desired && violations_.size() < 10) {
      violations_.push_back(name + ": active " + std::to_string(v.active) + " > desired " +
                            std::to_string(v.desired) + " at revision " + std::to_string(last_revision_));
    }
    if (v.exists && v.running == it->second && v.active == it->second && v.desired == it->second) {
      unconverged_.erase(name);
    } else {
      unconverged_.insert(name);
    }
  }

  SimWorld* const world_;
  std::map<std::string, int32_t> desired_;
  std::set<std::string> unconverged_;
  std::vector<std::string> violations_;
  uint64_t changes_ = 0;
  int64_t last_revision_ = 0;
  bool revisions_increasing_ = true;
};

std::string Name(int i) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "rc-%03d", i);
  return buf;
}

TEST(SimWorldTest, OneControllerConvergesThroughTheFullStack) {
  SimWorld world(SimWorldOptions{});
  ConvergenceChecker checker(&world);
  world.StartManager();
  ASSERT_NE(world.manager(), nullptr);
  auto rc = world.CreateController(MakeController("web", 3));
  ASSERT_TRUE(rc.ok()) << rc.status().ToString();
  checker.Track("web", 3);
  ASSERT_TRUE(world.RunUntil([&] { return checker.AllConverged(); }, minutes(1)));
  const SimWorld::ControllerView v = world.View("default", "web");
  EXPECT_TRUE(v.exists);
  EXPECT_EQ(v.desired, 3);
  EXPECT_EQ(v.active, 3);
  EXPECT_EQ(v.running, 3);
  EXPECT_EQ(v.ready, 3);
  EXPECT_EQ(world.PodsOf("default", "web").size(), 3u);
  EXPECT_TRUE(checker.violations().empty());
  EXPECT_TRUE(checker.revisions_increasing());
  EXPECT_EQ(world.observed_revision(), world.store().revision());
  EXPECT_GT(world.manager_api().counters().calls[static_cast<int>(Verb::kCreate)], 0u);
  EXPECT_FALSE(world.View("default", "missing").exists);
  EXPECT_EQ(world.ControllerKeys(), std::vector<std::string>{"default/web"});
  // The status catches up.
  ASSERT_TRUE(
      world.RunUntil([&] { return world.View("default", "web").status.ready_replicas == 3; }, minutes(1)));
}

TEST(SimWorldTest, ViewCountsOrphansThatMatchButNotPodsOfOtherControllers) {
  SimWorldOptions options;
  SimWorld world(options);
  ASSERT_TRUE(world.CreateController(MakeController("a", 2)).ok());
  Pod orphan;
  orphan.metadata.name = "orphan";
  orphan.metadata.namespace_ = "default";
  orphan.metadata.labels = {{"app", "a"}};
  orphan.spec.containers.push_back(Container{"main", "nginx", {}, {}});
  orphan.spec.restart_policy = "Never";  // a killed container stays dead: the pod fails
  bool done = false;
  world.admin_api().pods().Create("default", orphan, [&](const Result<PodPtr>& r) {
    EXPECT_TRUE(r.ok());
    done = true;
  });
  ASSERT_TRUE(world.RunUntil([&] { return done; }, seconds(1)));
  world.RunFor(seconds(5));  // bound and started by the nodes; no manager running
  SimWorld::ControllerView v = world.View("default", "a");
  EXPECT_EQ(v.active, 1);
  EXPECT_EQ(v.running, 1);
  ASSERT_TRUE(world.KillPod("default", "orphan").ok());
  world.RunFor(seconds(1));  // its node agent reports the exit
  v = world.View("default", "a");
  EXPECT_EQ(v.active, 0);
  EXPECT_EQ(world.PodsOf("default", "a").size(), 1u);  // terminated, still selected
}

std::string DescribeManager(SimWorld& world) {
  ReplicationManager* m = world.manager();
  if (!m) return "no manager";
  const ManagerMetrics& x = m->metrics();
  std::string out = " manager: syncs=" + std::to_string(x.syncs) +
                    " sync_errors=" + std::to_string(x.sync_errors) +
                    " creates=" + std::to_string(x.creates) + " relists=" + std::to_string(x.relists) +
                    " informer_pods=" + std::to_string(m->pods().size()) +
                    " world_pods=" + std::to_string(world.pod_count());
  for (const std::string& key : world.ControllerKeys()) {
    ControllerPtr rc = m->controllers().Get(key);
    std::string exp_key = rc ? ExpectationsKey(*rc) : key;
    out += " " + key + ":sat=" + std::to_string(m->expectations().Satisfied(exp_key)) +
           ",adds=" + std::to_string(m->expectations().PendingAdds(exp_key));
  }
  return out;
}

struct ScenarioOutcome {
  uint64_t digest = 0;
  bool converged = false;
  bool reconverged = false;
  int total_desired = 0;
  int killed = 0;
  std::vector<std::string> violations;
  uint64_t changes = 0;
};

// The acceptance scenario: 100 controllers of 1..50 replicas from empty to converged, 30% of
// the pods killed, reconverged.
ScenarioOutcome RunHundredControllers(uint64_t seed) {
  ScenarioOutcome out;
  SimWorldOptions options;
  options.seed = seed;
  // Up to 5000 pods: the nodes' capacity (max_pods, the kubelet's 110) must hold them all, or the
  // scheduler rightly leaves the rest Pending (Unschedulable).
  options.nodes = 50;
  SimWorld world(options);
  ConvergenceChecker checker(&world);
  world.StartManager();
  std::vector<std::pair<std::string, int32_t>> controllers;
  for (int i = 0; i < 100; ++i) {
    const int32_t replicas = static_cast<int32_t>(world.rng().Between(1, 50));
    controllers.emplace_back(Name(i), replicas);
    out.total_desired += replicas;
  }
  for (const auto& [name, replicas] : controllers) {
    auto r = world.CreateController(MakeController(name, replicas));
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    checker.Track(name, replicas);
  }
  out.converged = world.RunUntil([&] { return checker.AllConverged(); }, minutes(10));
  if (!out.converged) {
    ADD_FAILURE() << checker.unconverged() << " controllers did not converge";
    return out;
  }

  std::vector<std::string> pods;
  for (const auto& [name, replicas] : controllers) {
    for (const std::string& key : world.PodsOf("default", name)) pods.push_back(key);
  }
  EXPECT_EQ(static_cast<int>(pods.size()), out.total_desired);
  // Fisher-Yates with the world's Rng: the victims depend only on the seed.
  for (size_t i = pods.size(); i > 1; --i) std::swap(pods[i - 1], pods[world.rng().Below(i)]);
  out.killed = static_cast<int>(pods.size() * 3 / 10);
  const uint64_t creates = world.manager()->metrics().creates;
  for (int i = 0; i < out.killed; ++i) {
    const std::string& key = pods[i];
    const auto slash = key.find('/');
    EXPECT_TRUE(world.KillPod(key.substr(0, slash), key.substr(slash + 1)).ok());
  }
  EXPECT_EQ(world.cluster().counters().kills, static_cast<uint64_t>(out.killed));
  // A kill is a container exiting: its node agent restarts it in place (restartPolicy Always), so the
  // pod stays and is not Ready meanwhile; nothing is replaced.
  auto all_ready = [&] {
    for (const auto& [name, replicas] : controllers) {
      if (world.View("default", name).ready != replicas) return false;
    }
    return checker.AllConverged();
  };
  EXPECT_TRUE(world.RunUntil([&] { return !all_ready(); }, seconds(1)));
  out.reconverged = world.RunUntil(all_ready, minutes(10));
  EXPECT_EQ(world.cluster().restarts(), out.killed);
  EXPECT_EQ(world.manager()->metrics().creates, creates) << "a restarted pod is not replaced";
  world.RunFor(minutes(2));
  // The incremental counts of View agree with a recount from the mirrored pods.
  for (const auto& [name, replicas] : controllers) {
    int active = 0;
    int running = 0;
    for (const std::string& key : world.PodsOf("default", name)) {
      PodPtr pod = world.GetPod("default", key.substr(key.find('/') + 1));
      active += IsActive(*pod);
      running += IsActive(*pod) && pod->status.phase == phase::kRunning;
    }
    const SimWorld::ControllerView v = world.View("default", name);
    EXPECT_EQ(v.active, active) << name;
    EXPECT_EQ(v.running, running) << name;
  }
  EXPECT_EQ(world.active_pods(), out.total_desired);
  EXPECT_EQ(world.running_pods(), out.total_desired);
  out.violations = checker.violations();
  out.changes = checker.changes();
  out.digest = world.digest();
  return out;
}

TEST(SimWorldTest, HundredControllersConvergeSurviveKillsNeverOvershootAndAreDeterministic) {
  const ScenarioOutcome first = RunHundredControllers(1);
  EXPECT_TRUE(first.converged);
  EXPECT_TRUE(first.reconverged);
  EXPECT_GT(first.total_desired, 100);
  EXPECT_GT(first.killed, 0);
  EXPECT_TRUE(first.violations.empty()) << first.violations.front();
  EXPECT_GT(first.changes, static_cast<uint64_t>(first.total_desired));

  const ScenarioOutcome again = RunHundredControllers(1);
  EXPECT_EQ(first.digest, again.digest);
  EXPECT_EQ(first.changes, again.changes);

  const ScenarioOutcome other = RunHundredControllers(2);
  EXPECT_TRUE(other.reconverged);
  EXPECT_TRUE(other.violations.empty());
  EXPECT_NE(first.digest, other.digest);
}

TEST(SimWorldTest, ApiErrorsTimeoutsAndStaleReadsStillConvergeWithoutOvershoot) {
  SimWorldOptions options;
  options.seed = 7;
  // A create that timed out keeps its expectation until this timeout (its outcome is unknown).
  options.manager.expectations_timeout = seconds(30);
  SimWorld world(options);
  ConvergenceChecker checker(&world);
  world.manager_api().SetErrorRateAll(0.2);
  world.manager_api().SetTimeoutRate(Verb::kCreate, 0.1);
  world.manager_api().SetTimeoutRate(Verb::kDelete, 0.1);
  world.manager_api().SetStaleLag(milliseconds(500));
  world.manager_api().SetWatchDelay(milliseconds(0), milliseconds(200));
  world.StartManager();
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(world.CreateController(MakeController(Name(i), 10)).ok());
    checker.Track(Name(i), 10);
  }
  world.RunFor(seconds(2));
  world.manager_api().DropWatches();
  EXPECT_TRUE(world.RunUntil([&] { return checker.AllConverged(); }, minutes(10)))
      << checker.Describe() << DescribeManager(world);
  EXPECT_TRUE(checker.violations().empty()) << checker.violations().front();
  EXPECT_GT(world.manager_api().counters().errors_injected, 0u);
  EXPECT_GT(world.manager_api().counters().timeouts_injected, 0u);

  // Scale down under the same faults: still no controller above its (new) desired count once the
  // change is committed.
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(world.ScaleController("default", Name(i), 4).ok());
    checker.Track(Name(i), 4);
  }
  EXPECT_TRUE(world.RunUntil([&] { return checker.AllConverged(); }, minutes(10)));
}

TEST(SimWorldTest, ManagerRestartConvergesWithoutOvershoot) {
  SimWorldOptions options;
  options.seed = 3;
  SimWorld world(options);
  ConvergenceChecker checker(&world);
  world.StartManager();
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(world.CreateController(MakeController(Name(i), 100)).ok());
    checker.Track(Name(i), 100);
  }
  world.RunFor(milliseconds(12));  // mid-way: slow-start batches of creates in flight
  const SimWorld::ControllerView before = world.View("default", Name(0));
  EXPECT_GT(before.active, 0);
  EXPECT_LT(before.active, 100);
  world.StopManager();
  EXPECT_EQ(world.manager(), nullptr);
  world.RunFor(seconds(5));
  EXPECT_FALSE(checker.AllConverged());
  world.StartManager();
  EXPECT_EQ(world.manager_starts(), 2);
  EXPECT_TRUE(world.RunUntil([&] { return checker.AllConverged(); }, minutes(5)));
  EXPECT_TRUE(checker.violations().empty()) << checker.violations().front();
}

// Issue 12: the simulated manager watched controllers in the store while real mode's controller-manager
// watches them through the API (behind the fault proxy), so a partition cost the two different relist
// backoffs (store errors came back at once, the proxy holds each call 1 s). It now reads them through
// its API view, as the real one does; the store view is the 2014 baseline's (or an option's).
TEST(SimWorldTest, TheManagerWatchesControllersThroughItsApiViewAsRealModeDoes) {
  for (bool from_store : {false, true}) {
    SimWorldOptions options;
    options.manager_controllers_from_store = from_store;
    SimWorld world(options);
    ConvergenceChecker checker(&world);
    // A store view that fails every call and refuses every watch hides controllers only from a
    // manager that reads them there.
    world.manager_store().set_error_rate(1.0);
    world.manager_store().set_reject_new_watches(true);
    world.StartManager();
    ASSERT_TRUE(world.CreateController(MakeController("web", 3)).ok());
    checker.Track("web", 3);
    EXPECT_EQ(world.RunUntil([&] { return checker.AllConverged(); }, seconds(20)), !from_store)
        << "from_store=" << from_store;
    const uint64_t lists = world.manager_api().counters().calls[static_cast<int>(Verb::kList)];
    if (from_store) {
      EXPECT_EQ(lists, 1u);  // pods only
    } else {
      EXPECT_GE(lists, 2u);  // pods and controllers
    }
  }
}

TEST(SimWorldTest, StoreFaultsOnTheControllerWatchStillConverge) {
  SimWorldOptions options;
  options.seed = 11;
  options.manager_controllers_from_store = true;
  SimWorld world(options);
  ConvergenceChecker checker(&world);
  world.manager_store().set_watch_delay(milliseconds(300));
  world.StartManager();
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(world.CreateController(MakeController(Name(i), 5)).ok());
    checker.Track(Name(i), 5);
  }
  world.RunFor(milliseconds(500));
  world.manager_store().DropWatches();
  ASSERT_TRUE(world.manager_store().ForceCompaction().ok());
  EXPECT_TRUE(world.RunUntil([&] { return checker.AllConverged(); }, minutes(5)));
  EXPECT_TRUE(checker.violations().empty());
}

TEST(SimWorldTest, CompactsTheStorePeriodicallyAndTheMirrorSurvivesIt) {
  SimWorldOptions options;
  options.compaction_interval = seconds(10);
  SimWorld world(options);
  ConvergenceChecker checker(&world);
  world.StartManager();
  ASSERT_TRUE(world.CreateController(MakeController("c", 4)).ok());
  checker.Track("c", 4);
  ASSERT_TRUE(world.RunUntil([&] { return checker.AllConverged(); }, minutes(1)));
  world.RunFor(seconds(30));
  EXPECT_GT(world.store().compact_revision(), 0);
  ASSERT_TRUE(world.ScaleController("default", "c", 6).ok());
  checker.Track("c", 6);
  EXPECT_TRUE(world.RunUntil([&] { return checker.AllConverged(); }, minutes(1)));
  EXPECT_EQ(world.observed_revision(), world.store().revision());
}

// Issue 14: a big run's history is bounded by revision count, not only every compaction_interval (no
// periodic compaction would happen here at all: the run is shorter than the interval).
TEST(SimWorldTest, CompactsByRevisionCountSoHistoryStaysBounded) {
  for (int64_t keep : {int64_t{0}, int64_t{40}}) {
    SCOPED_TRACE(keep);
    SimWorldOptions options;
    options.compaction_revisions = keep;
    options.keep_trace_lines = true;
    SimWorld world(options);
    ConvergenceChecker checker(&world);
    world.StartManager();
    ASSERT_TRUE(world.CreateController(MakeController("c", 30)).ok());
    checker.Track("c", 30);
    ASSERT_TRUE(world.RunUntil([&] { return checker.AllConverged(); }, minutes(1)));
    const int64_t history = world.store().revision() - world.store().compact_revision();
    ASSERT_GT(world.store().revision(), 200);  // well past 2 x 40 revisions
    int compactions = 0;
    for (const std::string& line : world.trace().lines())
      compactions += line.find("compact ") != std::string::npos;
    if (keep == 0) {
      EXPECT_EQ(world.store().compact_revision(), 0);
      EXPECT_EQ(compactions, 0);
    } else {
      EXPECT_GE(history, keep);
      EXPECT_LE(history, 2 * keep + 1);  // checked once per store event: at most one revision over
      EXPECT_GT(compactions, 2);
    }
    // The mirror and the manager never notice: live watches are not cancelled by a compaction.
    ASSERT_TRUE(world.ScaleController("default", "c", 10).ok());
    checker.Track("c", 10);
    EXPECT_TRUE(world.RunUntil([&] { return checker.AllConverged(); }, minutes(1)));
    EXPECT_EQ(world.observed_revision(), world.store().revision());
    EXPECT_TRUE(checker.violations().empty());
  }
}

// Issue 8: the simulated manager records events in the shared registry, as the real one through the
// API server; the spam filter bounds them (25 per controller at once).
TEST(SimWorldTest, TheManagerRecordsEventsOnItsControllersBounded) {
  SimWorld world(SimWorldOptions{});
  ConvergenceChecker checker(&world);
  world.StartManager();
  ASSERT_TRUE(world.CreateController(MakeController("web", 3)).ok());
  ASSERT_TRUE(world.CreateController(MakeController("big", 100)).ok());
  checker.Track("web", 3);
  checker.Track("big", 100);
  ASSERT_TRUE(world.RunUntil([&] { return checker.AllConverged(); }, minutes(2)));
  std::map<std::string, std::string> web_fields = {{"involvedObject.name", "web"}};
  auto web = world.events().List("default", web_fields, LabelSelector());
  ASSERT_TRUE(web.ok());
  ASSERT_EQ((*web)["items"].size(), 3u);
  for (const auto& ev : (*web)["items"]) {
    EXPECT_EQ(ev["reason"], "SuccessfulCreate");
    EXPECT_EQ(ev["involvedObject"]["kind"], "ReplicationController");
    EXPECT_TRUE(ev["message"].get<std::string>().starts_with("Created pod: web-")) << ev.dump();
  }
  std::map<std::string, std::string> big_fields = {{"involvedObject.name", "big"}};
  auto big = world.events().List("default", big_fields, LabelSelector());
  ASSERT_TRUE(big.ok());
  // 9 distinct events, then one combined event counting the rest the spam filter let through.
  ASSERT_EQ((*big)["items"].size(), 10u);
  int total = 0;
  for (const auto& ev : (*big)["items"]) total += ev["count"].get<int>();
  EXPECT_EQ(total, 25);
  EXPECT_EQ(world.observed_revision(), world.store().revision());
}

}  // namespace
}  // namespace rcsim
