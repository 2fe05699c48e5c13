// The manager against the simulated stack: MemStore <- Registry <- InProcessApiClient (optionally
// wrapped in FaultyApiClient), all on one SimLoop.
#include <gtest/gtest.h>

#include "engine/replication_manager.h"
#include "fakes/faulty_api_client.h"
#include "fakes/inprocess_api_client.h"
#include "fakes/mem_store.h"
#include "fakes/sim_loop.h"
#include "registry/registry.h"

namespace rcsim {
namespace {

ReplicationController MakeRc(const std::string& name, int replicas) {
  ReplicationController rc;
  rc.metadata.name = name;
  rc.metadata.namespace_ = "default";
  rc.spec.replicas = replicas;
  rc.spec.selector = {{"app", name}};
  PodTemplateSpec t;
  t.metadata.labels = {{"app", name}};
  t.spec.containers.push_back(Container{"c", "nginx", {}, {}});
  rc.spec.template_ = t;
  return rc;
}

class ManagerE2eTest : public ::testing::Test {
 protected:
  ManagerE2eTest()
      : store_(&loop_, &loop_),
        rng_(7),
        registry_(&store_, &loop_, &rng_),
        inner_api_(&registry_, &loop_),
        fault_rng_(11),
        api_(&inner_api_, &store_, &loop_, &loop_, &fault_rng_),
        manager_rng_(3) {}

  void StartManager(const ManagerOptions& options = {}) {
    manager_ = std::make_unique<ReplicationManager>(options, &store_, &api_, &loop_, &loop_, &manager_rng_,
                                                    &trace_, &logger_);
    manager_->Start();
  }

  ControllerPtr CreateRc(const ReplicationController& rc) {
    auto r = registry_.controllers().Create(rc.metadata.namespace_, rc);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : nullptr;
  }
  void Scale(const std::string& name, int replicas) {
    auto got = registry_.controllers().Get("default", name);
    ASSERT_TRUE(got.ok());
    ReplicationController rc = **got;
    rc.spec.replicas = replicas;
    ASSERT_TRUE(registry_.controllers().Update(rc).ok());
  }
  std::vector<PodPtr> Pods(const std::string& app) {
    ListOptions opts;
    opts.label_selector = LabelSelector::FromMap({{"app", app}});
    auto r = registry_.pods().List("default", opts);
    EXPECT_TRUE(r.ok());
    return r.ok() ? r->items : std::vector<PodPtr>{};
  }
  int ActiveOwned(const std::string& app) {
    int n = 0;
    for (const auto& p : Pods(app)) {
      if (IsActive(*p) && p->metadata.ControllerRef() != nullptr) ++n;
    }
    return n;
  }
  ReplicationControllerStatus StatusOf(const std::string& name) {
    auto got = registry_.controllers().Get("default", name);
    EXPECT_TRUE(got.ok());
    return got.ok() ? (*got)->status : ReplicationControllerStatus{};
  }

  SimLoop loop_;
  MemStore store_;
  Mt19937Rng rng_;
  Registry registry_;
  InProcessApiClient inner_api_;
  Mt19937Rng fault_rng_;
  FaultyApiClient api_;
  Mt19937Rng manager_rng_;
  NullTraceSink trace_;
  NullLogger logger_;
  std::unique_ptr<ReplicationManager> manager_;
};

TEST_F(ManagerE2eTest, ConvergesFromZeroToNAndBackToM) {
  CreateRc(MakeRc("web", 25));
  StartManager();
  loop_.RunFor(std::chrono::seconds(5));
  EXPECT_EQ(ActiveOwned("web"), 25);
  EXPECT_EQ(StatusOf("web").replicas, 25);
  EXPECT_EQ(StatusOf("web").observed_generation, 1);
  Scale("web", 4);
  loop_.RunFor(std::chrono::seconds(5));
  EXPECT_EQ(static_cast<int>(Pods("web").size()), 4);
  EXPECT_EQ(StatusOf("web").replicas, 4);
  EXPECT_EQ(StatusOf("web").observed_generation, 2);
  EXPECT_EQ(manager_->metrics().creates, 25u);
  EXPECT_EQ(manager_->metrics().deletes, 21u);
}

TEST_F(ManagerE2eTest, AdoptsOrphansAndReleasesRelabelledPods) {
  Pod orphan;
  orphan.metadata.name = "stray";
  orphan.metadata.labels = {{"app", "web"}};
  orphan.spec.containers.push_back(Container{"c", "nginx", {}, {}});
  ASSERT_TRUE(registry_.pods().Create("default", orphan).ok());
  ControllerPtr rc = CreateRc(MakeRc("web", 3));
  StartManager();
  loop_.RunFor(std::chrono::seconds(5));
  auto stray = registry_.pods().Get("default", "stray");
  ASSERT_TRUE(stray.ok());
  ASSERT_NE((*stray)->metadata.ControllerRef(), nullptr);
  EXPECT_EQ((*stray)->metadata.ControllerRef()->uid, rc->metadata.uid);
  EXPECT_EQ(ActiveOwned("web"), 3);
  EXPECT_EQ(manager_->metrics().creates, 2u);

  Pod relabel = **stray;
  relabel.metadata.labels = {{"app", "debug"}};
  ASSERT_TRUE(registry_.pods().Update(relabel).ok());
  loop_.RunFor(std::chrono::seconds(5));
  auto released = registry_.pods().Get("default", "stray");
  ASSERT_TRUE(released.ok());
  EXPECT_EQ((*released)->metadata.ControllerRef(), nullptr);
  EXPECT_EQ(ActiveOwned("web"), 3);  // a replacement was created
  EXPECT_EQ(manager_->metrics().releases, 1u);
}

TEST_F(ManagerE2eTest, PodFailureWakesItsControllerAtOnce) {
  CreateRc(MakeRc("web", 3));
  ManagerOptions opts;
  opts.resync_period = std::chrono::hours(1);
  StartManager(opts);
  loop_.RunFor(std::chrono::seconds(1));
  ASSERT_EQ(ActiveOwned("web"), 3);
  Pod failed = *Pods("web").front();
  failed.status.phase = phase::kFailed;
  ASSERT_TRUE(registry_.pods().UpdateStatus(failed).ok());
  loop_.RunFor(std::chrono::milliseconds(50));
  EXPECT_EQ(ActiveOwned("web"), 3);
  EXPECT_EQ(manager_->metrics().creates, 4u);
}

TEST_F(ManagerE2eTest, MalformedAndDeletedControllersDoNotStopTheManager) {
  ASSERT_TRUE(store_.Put(PutRequest{"/registry/controllers/default/bad", Value("{garbage"), 0, false}).ok());
  CreateRc(MakeRc("gone", 2));
  StartManager();
  loop_.RunFor(std::chrono::seconds(1));
  EXPECT_EQ(manager_->metrics().malformed_objects, 1u);
  EXPECT_EQ(ActiveOwned("gone"), 2);
  DeleteOptions background;  // with no policy the controller would stay, orphaning (no GC here)
  background.propagation_policy = "Background";
  ASSERT_TRUE(registry_.controllers().Delete("default", "gone", background).ok());
  loop_.RunFor(std::chrono::seconds(1));
  CreateRc(MakeRc("web", 2));
  loop_.RunFor(std::chrono::seconds(1));
  EXPECT_EQ(ActiveOwned("web"), 2);
  EXPECT_EQ(manager_->controllers().Get("default/gone"), nullptr);
}

TEST_F(ManagerE2eTest, ConvergesExactlyAfterApiFaults) {
  for (int i = 0; i < 5; ++i) CreateRc(MakeRc("rc" + std::to_string(i), 10 + i));
  api_.SetErrorRateAll(0.2);
  api_.SetTimeoutRateAll(0.05);
  api_.SetLatencyAll(std::chrono::milliseconds(1), std::chrono::milliseconds(20));
  api_.SetWatchDelay(std::chrono::milliseconds(0), std::chrono::milliseconds(50));
  StartManager();
  loop_.RunFor(std::chrono::minutes(2));
  api_.DropWatches();
  Scale("rc0", 3);
  Scale("rc4", 20);
  loop_.RunFor(std::chrono::minutes(1));
  api_.ClearFaults();
  // Timed-out creates hold expectations up to their 5 minute timeout.
  loop_.RunFor(std::chrono::minutes(7));
  EXPECT_GT(api_.counters().errors_injected, 0u);
  EXPECT_GT(manager_->metrics().sync_errors, 0u);
  std::vector<int> want = {3, 11, 12, 13, 20};
  for (int i = 0; i < 5; ++i) {
    std::string name = "rc" + std::to_string(i);
    EXPECT_EQ(ActiveOwned(name), want[i]) << name;
    EXPECT_EQ(StatusOf(name).replicas, want[i]) << name;
  }
}

}  // namespace
}  // namespace rcsim
