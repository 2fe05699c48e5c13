// The manager's work queue of controller keys ("namespace/name"), with client-go's semantics:
// - a key is queued at most once (adds of a queued key collapse);
// - a key handed out by Get() is "processing" until Done(); adds meanwhile mark it dirty and it is
//   queued again on Done(), so one key is never processed twice at once;
// - AddAfter delays an add on the executor (the earliest pending delay of a key wins);
// - AddRateLimited delays by the rate limiter's When(key); Forget resets the key's backoff.
//
// Get() never blocks: the consumer pulls keys while it has capacity and is told through the ready
// callback when a key becomes available. Thread-safety: none; every call on the engine's executor.
#ifndef RCSIM_ENGINE_WORK_QUEUE_H_
#define RCSIM_ENGINE_WORK_QUEUE_H_

#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include "engine/executor.h"
#include "engine/metrics.h"
#include "engine/rate_limiter.h"
#include "engine/time.h"

namespace rcsim {

class WorkQueue {
 public:
  WorkQueue(const Clock* clock, Executor* executor, std::unique_ptr<RateLimiter> limiter);
  // Cancels the pending delayed adds.
  ~WorkQueue();
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  // Where adds, queue and work durations are counted (client-go's workqueue metrics); none if null.
  void SetMetrics(WorkQueueMetrics* metrics) { metrics_ = metrics; }
  // Called synchronously whenever a key becomes available to Get() (it may then already be taken).
  void SetReadyCallback(std::function<void()> on_ready) { on_ready_ = std::move(on_ready); }

  void Add(const std::string& key);
  void AddAfter(const std::string& key, Duration delay);
  void AddRateLimited(const std::string& key);
  void Forget(const std::string& key) { limiter_->Forget(key); }
  int NumRequeues(const std::string& key) const { return limiter_->NumRequeues(key); }

  // The next key, now marked processing; nullopt if none is ready or the queue is shut down.
  std::optional<std::string> Get();
  // Ends the processing of `key`; if it was added meanwhile it is queued again.
  void Done(const std::string& key);
  // Drops every queued and delayed key; later adds are ignored.
  void ShutDown();

  std::size_t Len() const { return queue_.size(); }
  bool IsProcessing(const std::string& key) const { return processing_.count(key) != 0; }
  std::size_t NumDelayed() const { return waiting_.size(); }
  // Seconds the keys being processed have been processing, summed and the longest
  // (workqueue_unfinished_work_seconds, workqueue_longest_running_processor_seconds).
  struct Unfinished {
    double total_seconds = 0;
    double longest_seconds = 0;
  };
  Unfinished UnfinishedWork() const;

 private:
  struct Waiting {
    TimePoint due;
    TimerId timer = 0;
  };

  const Clock* clock_;
  Executor* executor_;
  std::unique_ptr<RateLimiter> limiter_;
  std::function<void()> on_ready_;
  bool shutting_down_ = false;
  std::deque<std::string> queue_;
  // Queued, or added while processing; with when it was first added (for queue_duration).
  std::unordered_map<std::string, TimePoint> dirty_;
  // Handed out by Get(), not yet Done(); with when (for work_duration and unfinished work).
  std::unordered_map<std::string, TimePoint> processing_;
  std::unordered_map<std::string, Waiting> waiting_;  // delayed adds
  WorkQueueMetrics* metrics_ = nullptr;
};

}  // namespace rcsim

#endif  // RCSIM_ENGINE_WORK_QUEUE_H_
