#include "fakes/sim_loop.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace rcsim {
namespace {

TEST(SimLoopTest, TimeDoesNotMoveOnItsOwn) {
  SimLoop loop;
  TimePoint t0 = loop.Now();
  loop.Schedule(5s, [] {});
  EXPECT_EQ(loop.Now(), t0);
  EXPECT_EQ(loop.NextDue(), t0 + 5s);
}

TEST(SimLoopTest, FiresInDueOrderThenSchedulingOrder) {
  SimLoop loop;
  std::vector<std::string> order;
  loop.Schedule(2s, [&] { order.push_back("b2"); });
  loop.Schedule(1s, [&] { order.push_back("a1"); });
  loop.Schedule(2s, [&] { order.push_back("c2"); });
  loop.Post([&] { order.push_back("now"); });
  EXPECT_EQ(loop.RunUntilIdle(), 4u);
  EXPECT_EQ(order, (std::vector<std::string>{"now", "a1", "b2", "c2"}));
  EXPECT_EQ(loop.Now(), SimLoop::Epoch() + 2s);
}

TEST(SimLoopTest, RunUntilStopsAtDeadlineAndSetsClock) {
  SimLoop loop;
  int fired = 0;
  loop.Schedule(1s, [&] { ++fired; });
  loop.Schedule(3s, [&] { ++fired; });
  EXPECT_EQ(loop.RunFor(2s), 1u);
  EXPECT_EQ(fired, 1);
  EXPECT_EQ(loop.Now(), SimLoop::Epoch() + 2s);
  EXPECT_EQ(loop.pending(), 1u);
}

TEST(SimLoopTest, CancelledTimerNeverFires) {
  SimLoop loop;
  bool fired = false;
  TimerId id = loop.Schedule(1s, [&] { fired = true; });
  loop.Cancel(id);
  loop.Cancel(id);
  EXPECT_EQ(loop.RunUntilIdle(), 0u);
  EXPECT_FALSE(fired);
  EXPECT_FALSE(loop.NextDue().has_value());
}

TEST(SimLoopTest, TimersScheduledWhileRunningUseTheCurrentTime) {
  SimLoop loop;
  TimePoint inner;
  loop.Schedule(1s, [&] { loop.Schedule(500ms, [&] { inner = loop.Now(); }); });
  loop.RunUntilIdle();
  EXPECT_EQ(inner, SimLoop::Epoch() + 1500ms);
}

}  // namespace
}  // namespace rcsim
