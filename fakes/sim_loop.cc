#include "fakes/sim_loop.h"

#include <algorithm>
#include <cassert>

namespace rcsim {

TimePoint SimLoop::Epoch() { return TimePoint(std::chrono::sys_days(std::chrono::year(2014) / 6 / 6)); }

uint32_t SimLoop::Store(std::function<void()> fn) {
  if (free_slots_.empty()) {
    slots_.push_back(std::move(fn));
    return static_cast<uint32_t>(slots_.size() - 1);
  }
  const uint32_t slot = free_slots_.back();
  free_slots_.pop_back();
  slots_[slot] = std::move(fn);
  return slot;
}

TimerId SimLoop::Schedule(Duration delay, std::function<void()> fn) {
  if (delay < Duration::zero()) delay = Duration::zero();
  const uint64_t seq = next_seq_++;
  const Event e{now_ + delay, seq, Store(std::move(fn))};
  if (delay == Duration::zero()) {
    lane_.push_back(e);
  } else {
    heap_.push_back(e);
    std::push_heap(heap_.begin(), heap_.end(), Later{});
  }
  return seq;
}

void SimLoop::Cancel(TimerId id) {
  if (id == 0 || id >= next_seq_) return;
  // Only record ids still pending: a fired timer's id would otherwise leak into cancelled_.
  // Pending-ness is checked lazily: ids in cancelled_ that are no longer queued are erased when
  // they reach the front (see DropCancelledFront).
  cancelled_.insert(id);
  if (cancelled_.size() > heap_.size() + lane_.size()) {
    // Some cancelled ids already fired; rebuild the set from what is queued (rare).
    std::unordered_set<uint64_t> live;
    for (const Event& e : heap_) {
      if (cancelled_.count(e.seq)) live.insert(e.seq);
    }
    for (const Event& e : lane_) {
      if (cancelled_.count(e.seq)) live.insert(e.seq);
    }
    cancelled_.swap(live);
  }
}

bool SimLoop::LaneFirst() const {
  if (lane_.empty()) return false;
  return heap_.empty() || Later{}(heap_.front(), lane_.front());
}

void SimLoop::DropCancelledFront() {
  while (!cancelled_.empty()) {
    const bool lane = LaneFirst();
    if (!lane && heap_.empty()) return;
    const Event& front = lane ? lane_.front() : heap_.front();
    auto it = cancelled_.find(front.seq);
    if (it == cancelled_.end()) return;
    cancelled_.erase(it);
    slots_[front.slot] = nullptr;
    free_slots_.push_back(front.slot);
    if (lane) {
      lane_.pop_front();
    } else {
      std::pop_heap(heap_.begin(), heap_.end(), Later{});
      heap_.pop_back();
    }
  }
}

std::optional<TimePoint> SimLoop::NextDue() const {
  const_cast<SimLoop*>(this)->DropCancelledFront();
  if (LaneFirst()) return lane_.front().due;
  if (heap_.empty()) return std::nullopt;
  return heap_.front().due;
}

bool SimLoop::RunOne() {
  DropCancelledFront();
  Event e;
  if (LaneFirst()) {
    e = lane_.front();
    lane_.pop_front();
  } else if (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), Later{});
    e = heap_.back();
    heap_.pop_back();
  } else {
    return false;
  }
  // Moved out before it runs: what it schedules may reuse the slot or grow slots_.
  std::function<void()> fn = std::move(slots_[e.slot]);
  slots_[e.slot] = nullptr;
  free_slots_.push_back(e.slot);
  assert(e.due >= now_);
  now_ = e.due;
  ++events_run_;
  fn();
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
