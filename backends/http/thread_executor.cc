#include "backends/http/thread_executor.h"

#include <utility>

namespace rcsim {

ThreadExecutor::ThreadExecutor() : thread_([this] { Run(); }) {}

ThreadExecutor::~ThreadExecutor() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

TimerId ThreadExecutor::Schedule(Duration delay, std::function<void()> fn) {
  const auto due = std::chrono::steady_clock::now() +
                   std::chrono::duration_cast<std::chrono::steady_clock::duration>(delay);
  TimerId id;
  {
    std::lock_guard<std::mutex> lock(mu_);
    id = next_seq_++;
    if (stopping_) return id;
    heap_.push(Timer{due, id, std::move(fn)});
    pending_.insert(id);
  }
  cv_.notify_one();
  return id;
}

void ThreadExecutor::Cancel(TimerId id) {
  std::lock_guard<std::mutex> lock(mu_);
  pending_.erase(id);
}

void ThreadExecutor::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    if (heap_.empty()) {
      cv_.wait(lock);
      continue;
    }
    const auto due = heap_.top().due;
    if (due > std::chrono::steady_clock::now()) {
      cv_.wait_until(lock, due);
      continue;
    }
    Timer t = std::move(const_cast<Timer&>(heap_.top()));
    heap_.pop();
    if (pending_.erase(t.seq) == 0) continue;  // cancelled
    lock.unlock();
    t.fn();
    t.fn = nullptr;  // destroy captures outside the lock too
    lock.lock();
  }
}

}  // namespace rcsim
