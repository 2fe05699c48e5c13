#include "backends/http/thread_executor.h"

#include <utility>

#include "engine/mutex.h"

namespace rcsim {

ThreadExecutor::ThreadExecutor() : thread_([this] { Run(); }) {}

ThreadExecutor::~ThreadExecutor() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  cv_.NotifyAll();
  thread_.join();
}

TimerId ThreadExecutor::Schedule(Duration delay, std::function<void()> fn) {
  const auto due = std::chrono::steady_clock::now() +
                   std::chrono::duration_cast<std::chrono::steady_clock::duration>(delay);
  TimerId id;
  {
    MutexLock lock(mu_);
    id = next_seq_++;
    if (stopping_) return id;
    heap_.push(Timer{due, id, std::move(fn)});
    pending_.insert(id);
  }
  cv_.NotifyOne();
  return id;
}

void ThreadExecutor::Cancel(TimerId id) {
  MutexLock lock(mu_);
  pending_.erase(id);
}

void ThreadExecutor::Run() {
  MutexLock lock(mu_);
  while (!stopping_) {
    if (heap_.empty()) {
      cv_.Wait(mu_);
      continue;
    }
    const auto due = heap_.top().due;
    if (due > std::chrono::steady_clock::now()) {
      cv_.WaitUntil(mu_, due);
      continue;
    }
    Timer t = std::move(const_cast<Timer&>(heap_.top()));
    heap_.pop();
    if (pending_.erase(t.seq) == 0) continue;  // cancelled
    lock.Unlock();
    t.fn();
    t.fn = nullptr;  // destroy captures outside the lock too
    lock.Lock();
  }
}

}  // namespace rcsim
