#include "engine/work_queue.h"

#include <algorithm>

namespace rcsim {

WorkQueue::WorkQueue(const Clock* clock, Executor* executor, std::unique_ptr<RateLimiter> limiter)
    : clock_(clock), executor_(executor), limiter_(std::move(limiter)) {}

WorkQueue::~WorkQueue() { ShutDown(); }

void WorkQueue::Add(const std::string& key) {
  if (shutting_down_) return;
  if (!dirty_.try_emplace(key, clock_->Now()).second) return;
  if (metrics_ != nullptr) ++metrics_->adds;
  if (processing_.count(key) != 0) return;  // queued again by Done()
  queue_.push_back(key);
  if (on_ready_) on_ready_();
}

void WorkQueue::AddAfter(const std::string& key, Duration delay) {
  if (shutting_down_) return;
  if (delay <= Duration::zero()) {
    Add(key);
    return;
  }
  TimePoint due = clock_->Now() + delay;
  auto it = waiting_.find(key);
  if (it != waiting_.end()) {
    if (it->second.due <= due) return;
    executor_->Cancel(it->second.timer);
  } else {
    it = waiting_.emplace(key, Waiting{}).first;
  }
  it->second.due = due;
  // The destructor cancels every pending timer, so `this` outlives the callback.
  it->second.timer = executor_->Schedule(delay, [this, key] {
    waiting_.erase(key);
    Add(key);
  });
}

void WorkQueue::AddRateLimited(const std::string& key) { AddAfter(key, limiter_->When(key)); }

std::optional<std::string> WorkQueue::Get() {
  if (shutting_down_ || queue_.empty()) return std::nullopt;
  std::string key = std::move(queue_.front());
  queue_.pop_front();
  const TimePoint now = clock_->Now();
  if (auto it = dirty_.find(key); it != dirty_.end()) {
    if (metrics_ != nullptr) metrics_->queue_duration.Observe(now - it->second);
    dirty_.erase(it);
  }
  processing_.insert_or_assign(key, now);
  return key;
}

void WorkQueue::Done(const std::string& key) {
  if (auto it = processing_.find(key); it != processing_.end()) {
    if (metrics_ != nullptr) metrics_->work_duration.Observe(clock_->Now() - it->second);
    processing_.erase(it);
  }
  if (shutting_down_) return;
  if (dirty_.count(key) != 0) {
    queue_.push_back(key);
    if (on_ready_) on_ready_();
  }
}

WorkQueue::Unfinished WorkQueue::UnfinishedWork() const {
  Unfinished u;
  const TimePoint now = clock_->Now();
  for (const auto& [key, since] : processing_) {
    const double seconds = ToSeconds(now - since);
    u.total_seconds += seconds;
    u.longest_seconds = std::max(u.longest_seconds, seconds);
  }
  return u;
}

void WorkQueue::ShutDown() {
  shutting_down_ = true;
  for (auto& [key, w] : waiting_) executor_->Cancel(w.timer);
  waiting_.clear();
  queue_.clear();
  dirty_.clear();
}

}  // namespace rcsim
