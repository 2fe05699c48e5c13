#include "fakes/sim_loop.h"

#include <cassert>

namespace rcsim {

TimePoint SimLoop::Epoch() {
  return TimePoint(std::chrono::sys_days(std::chrono::year(2014) / 6 / 6));
}

TimerId SimLoop::Schedule(Duration delay, std::function<void()> fn) {
  if (delay < Duration::zero()) delay = Duration::zero();
  uint64_t seq = next_seq_++;
  heap_.push(Timer{now_ + delay, seq, std::move(fn)});
  return seq;
}

void SimLoop::Cancel(TimerId id) {
  if (id == 0 || id >= next_seq_) return;
  // Only record ids still pending: a fired timer's id would otherwise leak into cancelled_.
  // Pending-ness is checked lazily: ids in cancelled_ that are no longer in the heap are erased when
  // the heap drains (see DropCancelledTop / RunOne).
  cancelled_.insert(id);
  if (cancelled_.size() > heap_.size()) {
    // Some cancelled ids already fired; rebuild the set from the heap (rare).
    std::unordered_set<uint64_t> live;
    auto copy = heap_;
    while (!copy.empty()) {
      if (cancelled_.count(copy.top().seq)) live.insert(copy.top().seq);
      copy.pop();
    }
    cancelled_.swap(live);
  }
}

void SimLoop::DropCancelledTop() {
  while (!heap_.empty()) {
    auto it = cancelled_.find(heap_.top().seq);
    if (it == cancelled_.end()) return;
    cancelled_.erase(it);
    heap_.pop();
  }
}

std::optional<TimePoint> SimLoop::NextDue() const {
  const_cast<SimLoop*>(this)->DropCancelledTop();
  if (heap_.empty()) return std::nullopt;
  return heap_.top().due;
}

bool SimLoop::RunOne() {
  DropCancelledTop();
  if (heap_.empty()) return false;
  Timer t = std::move(const_cast<Timer&>(heap_.top()));
  heap_.pop();
  assert(t.due >= now_);
  now_ = t.due;
  ++events_run_;
  t.fn();
  return true;
}

uint64_t SimLoop::RunUntil(TimePoint t) {
  uint64_t n = 0;
  while (true) {
    auto due = NextDue();
    if (!due || *due > t) break;
    RunOne();
    ++n;
  }
  if (t > now_) now_ = t;
  return n;
}

uint64_t SimLoop::RunUntilIdle(uint64_t max_events) {
  uint64_t n = 0;
  while (n < max_events && RunOne()) ++n;
  return n;
}

}  // namespace rcsim
