#include "engine/mutex.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace rcsim {
namespace {

constexpr auto kDeadline = std::chrono::seconds(30);  // only a hang reaches it

// A counter one thread bumps and another waits on, as the annotated classes use the wrappers.
class Counter {
 public:
  void Add() EXCLUDES(mu_) {
    MutexLock lock(mu_);
    ++count_;
    cv_.NotifyAll();
  }
  // True once count >= n; false if the deadline passed first.
  bool WaitAtLeast(int n) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    return cv_.WaitUntil(mu_, std::chrono::steady_clock::now() + kDeadline,
                         [&]() REQUIRES(mu_) { return count_ >= n; });
  }
  int count() EXCLUDES(mu_) {
    MutexLock lock(mu_);
    return count_;
  }

 private:
  Mutex mu_;
  CondVar cv_;
  int count_ GUARDED_BY(mu_) = 0;
};

TEST(MutexTest, CondVarWakesAWaiterInAnotherThread) {
  Counter c;
  std::thread adder([&] {
    for (int i = 0; i < 1000; ++i) c.Add();
  });
  EXPECT_TRUE(c.WaitAtLeast(1000));
  adder.join();
  EXPECT_EQ(c.count(), 1000);
}

// Two threads hand a token back and forth: each waits (Wait, WaitFor) for its turn with the lock held.
TEST(MutexTest, PingPongAlternatesTurns) {
  Mutex mu;
  CondVar cv;
  int turn = 0;  // guarded by mu (a local cannot be annotated)
  constexpr int kRounds = 200;
  std::thread other([&] {
    for (int i = 0; i < kRounds; ++i) {
      MutexLock lock(mu);
      cv.Wait(mu, [&] { return turn % 2 == 1; });
      ++turn;
      cv.NotifyAll();
    }
  });
  bool in_time = true;
  for (int i = 0; i < kRounds && in_time; ++i) {
    MutexLock lock(mu);
    in_time = cv.WaitFor(mu, kDeadline, [&] { return turn % 2 == 0; });
    ++turn;
    cv.NotifyAll();
  }
  other.join();
  EXPECT_TRUE(in_time);
  MutexLock lock(mu);
  EXPECT_EQ(turn, 2 * kRounds);
}

TEST(MutexTest, WaitUntilReturnsThePredicateAtTheDeadline) {
  Mutex mu;
  CondVar cv;
  MutexLock lock(mu);
  EXPECT_FALSE(cv.WaitUntil(mu, std::chrono::steady_clock::now(), [] { return false; }));
  EXPECT_TRUE(cv.WaitFor(mu, std::chrono::seconds(0), [] { return true; }));
}

TEST(MutexTest, TryLockFailsWhileAnotherThreadHoldsIt) {
  Mutex mu;
  MutexLock lock(mu);
  bool got = true;
  std::thread t([&] {
    got = false;
    if (mu.TryLock()) {
      got = true;
      mu.Unlock();
    }
  });
  t.join();
  EXPECT_FALSE(got);
  lock.Unlock();
  bool relocked = false;
  if (mu.TryLock()) {
    relocked = true;
    mu.Unlock();
  }
  EXPECT_TRUE(relocked);
  lock.Lock();  // the scope's destructor releases it again
}

TEST(MutexTest, RecursiveMutexLockNests) {
  RecursiveMutex mu;
  RecursiveMutexLock outer(mu);
  auto reenter = [&] { RecursiveMutexLock inner(mu); };
  reenter();  // as a callback run under the lock that re-enters its owner
  SUCCEED();
}

}  // namespace
}  // namespace rcsim
