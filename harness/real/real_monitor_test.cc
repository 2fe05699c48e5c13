#include "harness/real/real_monitor.h"

#include <gtest/gtest.h>

#include <memory>

#include "harness/checkers.h"

namespace rcsim {
namespace {

using std::chrono::seconds;

ControllerPtr Rc(const std::string& name, int32_t replicas, const std::string& rv,
                 const std::string& uid = "u1") {
  auto rc = std::make_shared<ReplicationController>();
  rc->metadata.name = name;
  rc->metadata.namespace_ = "default";
  rc->metadata.uid = uid;
  rc->metadata.resource_version = rv;
  rc->spec.replicas = replicas;
  rc->spec.selector = {{"app", name}};
  return rc;
}

PodPtr MakePod(const std::string& name, const std::string& rv, const std::string& owner_uid, bool running,
               Labels labels = {{"app", "web"}}) {
  auto p = std::make_shared<Pod>();
  p->metadata.name = name;
  p->metadata.namespace_ = "default";
  p->metadata.resource_version = rv;
  p->metadata.labels = std::move(labels);
  if (!owner_uid.empty()) {
    OwnerReference ref;
    ref.kind = "ReplicationController";
    ref.name = "web";
    ref.uid = owner_uid;
    ref.controller = true;
    p->metadata.owner_references.push_back(ref);
  }
  if (running) {
    p->status.phase = "Running";
    PodCondition c;
    c.type = "Ready";
    c.status = "True";
    p->status.conditions.push_back(c);
  }
  return p;
}

TEST(RealMonitorTest, CountsOwnedPodsAndOrphansButNotAnotherUidsPods) {
  RealMonitor m;
  m.OnController(seconds(0), Rc("web", 3, "1"), false);
  m.OnPod(seconds(1), MakePod("a", "2", "u1", true), false);
  m.OnPod(seconds(1), MakePod("b", "3", "", false), false);                    // orphan, pending
  m.OnPod(seconds(2), MakePod("c", "4", "other-uid", true), false);            // a predecessor's
  m.OnPod(seconds(2), MakePod("d", "5", "u1", true, {{"app", "db"}}), false);  // not selected
  const RealMonitor::Tracked* t = m.Find("default", "web");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->counts.desired, 3);
  EXPECT_EQ(t->counts.active, 2);
  EXPECT_EQ(t->counts.running, 1);
  EXPECT_EQ(t->counts.ready, 1);
  EXPECT_EQ(t->peak_active, 2);
  m.OnPod(seconds(3), MakePod("b", "6", "", true), false);
  m.OnPod(seconds(3), MakePod("e", "7", "u1", true), false);
  EXPECT_EQ(t->counts.running, 3);
  // The series is change-only; converged from 3s on.
  EXPECT_EQ(FirstConvergedAt(t->series, seconds(0)), std::optional<Duration>(seconds(3)));
}

TEST(RealMonitorTest, StaleCopiesAndLateUpdatesOfDeletedObjectsAreIgnored) {
  RealMonitor m;
  m.OnController(seconds(0), Rc("web", 1, "1"), false);
  m.OnController(seconds(1), Rc("web", 5, "9"), false);  // the harness's own write, applied at once
  m.OnController(seconds(2), Rc("web", 1, "1"), false);  // the watch's late copy of the first version
  EXPECT_EQ(m.Find("default", "web")->counts.desired, 5);
  m.OnPod(seconds(3), MakePod("a", "10", "u1", true), false);
  m.OnPod(seconds(4), MakePod("a", "10", "u1", true), true);   // deleted by the harness
  m.OnPod(seconds(5), MakePod("a", "10", "u1", true), false);  // the watch's MODIFIED of that version
  EXPECT_EQ(m.Find("default", "web")->counts.active, 0);
  m.OnPod(seconds(6), MakePod("a", "12", "u1", true), false);  // recreated under the same name
  EXPECT_EQ(m.Find("default", "web")->counts.active, 1);
}

TEST(RealMonitorTest, WindowsFoldEveryIntermediateStateAndTheOneHoldingAtTheirStart) {
  RealMonitor m;
  const std::size_t w = m.AddWindow("default", "web", seconds(2), seconds(10));
  m.OnController(seconds(0), Rc("web", 2, "1"), false);
  m.OnPod(seconds(1), MakePod("a", "2", "u1", true), false);
  m.OnPod(seconds(1), MakePod("b", "3", "u1", true), false);
  m.OnPod(seconds(4), MakePod("b", "3", "u1", true), true);
  m.OnPod(seconds(5), MakePod("c", "5", "u1", true), false);
  RealMonitor::Window got = m.GetWindow(w, seconds(20));
  EXPECT_TRUE(got.any);
  EXPECT_EQ(got.max_active, 2);
  EXPECT_EQ(got.min_ready, 1);
  EXPECT_EQ(got.min_ready_at, seconds(4));
}

TEST(RealMonitorTest, ResyncDropsWhatIsGoneAndAddsWhatWasMissed) {
  RealMonitor m;
  m.OnController(seconds(0), Rc("web", 2, "1"), false);
  m.OnPod(seconds(1), MakePod("a", "2", "u1", true), false);
  m.ResyncPods(seconds(2), {MakePod("b", "4", "u1", true), MakePod("c", "5", "u1", true)});
  EXPECT_EQ(m.Find("default", "web")->counts.running, 2);
  EXPECT_EQ(m.pods().count("default/a"), 0u);
  m.ResyncControllers(seconds(3), {});
  EXPECT_FALSE(m.Find("default", "web")->exists);
  EXPECT_EQ(m.totals().back().desired, 0);
}

}  // namespace
}  // namespace rcsim
