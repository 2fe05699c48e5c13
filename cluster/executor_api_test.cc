#include "cluster/executor_api.h"

#include <gtest/gtest.h>

#include <deque>
#include <functional>

#include "cluster/cluster_test_world.h"

namespace rcsim {
namespace {

// Runs posted tasks only when told: shows which thread (here: which queue) a callback ran on.
class QueueExecutor final : public Executor {
 public:
  void Post(std::function<void()> fn) override { tasks_.push_back(std::move(fn)); }
  TimerId Schedule(Duration, std::function<void()> fn) override {
    Post(std::move(fn));
    return ++next_;
  }
  void Cancel(TimerId) override {}
  int RunAll() {
    int n = 0;
    while (!tasks_.empty()) {
      auto fn = std::move(tasks_.front());
      tasks_.pop_front();
      fn();
      ++n;
    }
    return n;
  }

 private:
  std::deque<std::function<void()>> tasks_;
  TimerId next_ = 0;
};

TEST(ExecutorApiTest, CallbacksRunOnTheGivenExecutor) {
  ClusterTestWorld world;
  QueueExecutor hop;
  ExecutorApi api(&world.api(), &world.api(), &hop);
  bool created = false;
  api.pods().Create("default", ClusterTestWorld::MakePod("a"), [&](const Result<PodPtr>& r) {
    ASSERT_TRUE(r.ok());
    created = true;
  });
  bool bound = false;
  world.loop().RunUntilIdle();
  EXPECT_FALSE(created);  // the inner client answered; the hop has not run yet
  EXPECT_EQ(hop.RunAll(), 1);
  EXPECT_TRUE(created);
  Node n = ClusterTestWorld::MakeNode("n1", world.loop().Now());
  api.nodes().Create("", n, [](const Result<NodePtr>& r) { ASSERT_TRUE(r.ok()); });
  Binding b;
  b.metadata.name = "a";
  b.target_name = "n1";
  api.BindPod("default", b, [&](const Status& s) {
    EXPECT_TRUE(s.ok()) << s.ToString();
    bound = true;
  });
  world.loop().RunUntilIdle();
  hop.RunAll();
  EXPECT_TRUE(bound);
}

TEST(ExecutorApiTest, LeaseCallbacksRunOnTheGivenExecutor) {
  ClusterTestWorld world;
  QueueExecutor hop;
  ExecutorApi api(&world.api(), &world.api(), &hop);
  Lease l;
  l.metadata.name = "n1";
  l.spec.holder_identity = "n1";
  int replies = 0;
  api.leases().Create(kNodeLeaseNamespace, l, [&](const Result<LeasePtr>& r) {
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    ++replies;
  });
  api.leases().List(kNodeLeaseNamespace, {}, [&](const Result<ObjectList<Lease>>& r) {
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->items.size(), 1u);
    ++replies;
  });
  world.loop().RunUntilIdle();
  EXPECT_EQ(replies, 0);  // the inner client answered; the hops have not run yet
  EXPECT_EQ(hop.RunAll(), 2);
  EXPECT_EQ(replies, 2);
}

TEST(ExecutorApiTest, NoWatchEventRunsAfterItsHandleIsDestroyed) {
  ClusterTestWorld world;
  QueueExecutor hop;
  ExecutorApi api(&world.api(), &world.api(), &hop);
  int events = 0;
  std::unique_ptr<ApiWatch> w =
      api.pods().Watch("default", ListOptions{}, "", [&](const ApiWatchEvent<Pod>&) { ++events; });
  world.CreatePod(ClusterTestWorld::MakePod("a"));
  world.loop().RunUntilIdle();
  hop.RunAll();
  EXPECT_EQ(events, 1);
  world.CreatePod(ClusterTestWorld::MakePod("b"));
  world.loop().RunUntilIdle();  // the event is posted to `hop`...
  w.reset();                    // ...and the watch ends before it runs
  hop.RunAll();
  EXPECT_EQ(events, 1);
}

}  // namespace
}  // namespace rcsim
