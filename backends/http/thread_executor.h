// The production Clock and Executor: the wall clock, and one thread that runs posted tasks and timers.
//
// ThreadExecutor keeps the Executor contract (engine/executor.h): FIFO for Post, timers due at the same
// time in scheduling order, never inline. Timers are measured on the steady clock.
//
// Thread-safety: both are thread-safe. ~ThreadExecutor stops the thread after the running task; pending
// tasks and timers are dropped, and Post/Schedule after destruction began are ignored.
#ifndef RCSIM_BACKENDS_HTTP_THREAD_EXECUTOR_H_
#define RCSIM_BACKENDS_HTTP_THREAD_EXECUTOR_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <queue>
#include <thread>
#include <unordered_set>
#include <vector>

#include "engine/executor.h"
#include "engine/mutex.h"
#include "engine/time.h"

namespace rcsim {

class SystemClock final : public Clock {
 public:
  TimePoint Now() const override {
    return std::chrono::time_point_cast<Duration>(std::chrono::system_clock::now());
  }
};

class ThreadExecutor final : public Executor {
 public:
  ThreadExecutor();
  ~ThreadExecutor() override;
  ThreadExecutor(const ThreadExecutor&) = delete;
  ThreadExecutor& operator=(const ThreadExecutor&) = delete;

  void Post(std::function<void()> fn) override { Schedule(Duration::zero(), std::move(fn)); }
  TimerId Schedule(Duration delay, std::function<void()> fn) override;
  void Cancel(TimerId id) override;

 private:
  struct Timer {
    std::chrono::steady_clock::time_point due;
    uint64_t seq;
    std::function<void()> fn;
  };
  struct Later {
    bool operator()(const Timer& a, const Timer& b) const {
      return a.due != b.due ? a.due > b.due : a.seq > b.seq;
    }
  };
  void Run();

  Mutex mu_;
  CondVar cv_;
  bool stopping_ GUARDED_BY(mu_) = false;
  uint64_t next_seq_ GUARDED_BY(mu_) = 1;
  std::priority_queue<Timer, std::vector<Timer>, Later> heap_ GUARDED_BY(mu_);
  std::unordered_set<uint64_t> pending_ GUARDED_BY(mu_);  // ids in heap_ not cancelled
  std::thread thread_;
};

}  // namespace rcsim

#endif  // RCSIM_BACKENDS_HTTP_THREAD_EXECUTOR_H_
