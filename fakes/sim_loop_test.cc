#include "fakes/sim_loop.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

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
  loop.Schedule(2s, [&] { order.emplace_back("b2"); });
  loop.Schedule(1s, [&] { order.emplace_back("a1"); });
  loop.Schedule(2s, [&] { order.emplace_back("c2"); });
  loop.Post([&] { order.emplace_back("now"); });
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

TEST(SimLoopTest, ZeroDelayPostRunsAfterEarlierTimersDueNow) {
  SimLoop loop;
  std::vector<std::string> order;
  loop.Schedule(1s, [&] {
    order.emplace_back("a");
    loop.Post([&] { order.emplace_back("post-from-a"); });
  });
  loop.Schedule(1s, [&] { order.emplace_back("b"); });  // due at the same time, scheduled before the post
  loop.Schedule(2s, [&] { order.emplace_back("later"); });
  loop.RunUntilIdle();
  EXPECT_EQ(order, (std::vector<std::string>{"a", "b", "post-from-a", "later"}));
}

TEST(SimLoopTest, CancelledPostNeverRuns) {
  SimLoop loop;
  std::vector<int> order;
  loop.Post([&] { order.push_back(1); });
  TimerId id = loop.Schedule(0s, [&] { order.push_back(2); });
  loop.Post([&] { order.push_back(3); });
  loop.Cancel(id);
  EXPECT_EQ(loop.pending(), 2u);
  EXPECT_EQ(loop.RunUntilIdle(), 2u);
  EXPECT_EQ(order, (std::vector<int>{1, 3}));
}

// A reference executor: one ordered map of every pending event by (due, seq), the order the contract
// defines. The loop must run the same random workload (nested posts, timers, cancels) in the same order.
class ReferenceLoop {
 public:
  TimePoint Now() const { return now_; }
  TimerId Schedule(Duration d, std::function<void()> fn) {
    const uint64_t seq = next_++;
    events_.emplace(std::make_pair(now_ + d, seq), std::move(fn));
    return seq;
  }
  void Cancel(TimerId id) {
    for (auto it = events_.begin(); it != events_.end(); ++it) {
      if (it->first.second == id) {
        events_.erase(it);
        return;
      }
    }
  }
  bool RunOne() {
    if (events_.empty()) return false;
    auto node = events_.extract(events_.begin());
    now_ = node.key().first;
    node.mapped()();
    return true;
  }

 private:
  TimePoint now_ = SimLoop::Epoch();
  uint64_t next_ = 1;
  std::map<std::pair<TimePoint, uint64_t>, std::function<void()>> events_;
};

template <typename Loop>
std::vector<std::pair<int, TimePoint>> RunRandomWorkload(Loop& loop, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::pair<int, TimePoint>> log;
  std::vector<TimerId> ids;
  int next_name = 0;
  std::function<void(int)> spawn = [&](int depth) {
    const int name = next_name++;
    const Duration delays[] = {0ms, 0ms, 0ms, 1ms, 2ms, 5ms};
    ids.push_back(loop.Schedule(delays[rng() % 6], [&, name, depth] {
      log.emplace_back(name, loop.Now());
      if (depth < 6) {
        for (uint32_t i = rng() % 3; i > 0; --i) spawn(depth + 1);
      }
      if (rng() % 4 == 0 && !ids.empty()) loop.Cancel(ids[rng() % ids.size()]);
    }));
  };
  for (int i = 0; i < 20; ++i) spawn(0);
  while (loop.RunOne()) {
  }
  return log;
}

TEST(SimLoopTest, RunsInTheOrderOfOneHeapOfEveryEvent) {
  for (uint32_t seed = 1; seed <= 50; ++seed) {
    SimLoop loop;
    ReferenceLoop reference;
    auto got = RunRandomWorkload(loop, seed);
    auto want = RunRandomWorkload(reference, seed);
    ASSERT_GT(want.size(), 20u);
    ASSERT_EQ(got, want) << "seed " << seed;
  }
}

}  // namespace
}  // namespace rcsim
