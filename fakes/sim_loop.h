// SimLoop: the virtual clock and the single-threaded discrete-event executor of the simulation.
//
// Time never moves on its own. RunUntil(t) fires due timers in (due time, scheduling sequence) order,
// jumping the clock straight to each timer's due time; same-time events therefore fire in the order
// they were scheduled, and a run is a pure function of its inputs. Post(fn) is Schedule(0, fn).
//
// Thread-safety: none. Everything runs on the thread that calls Run*; Post/Schedule must be called from
// that thread (or before running).
#ifndef RCSIM_FAKES_SIM_LOOP_H_
#define RCSIM_FAKES_SIM_LOOP_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <unordered_set>
#include <vector>

#include "engine/executor.h"
#include "engine/time.h"

namespace rcsim {

class SimLoop final : public Clock, public Executor {
 public:
  // The virtual epoch: 2014-06-06T00:00:00Z, the week Kubernetes was announced.
  static TimePoint Epoch();

  explicit SimLoop(TimePoint start = Epoch()) : now_(start) {}

  TimePoint Now() const override { return now_; }
  void Post(std::function<void()> fn) override { Schedule(Duration::zero(), std::move(fn)); }
  TimerId Schedule(Duration delay, std::function<void()> fn) override;
  void Cancel(TimerId id) override;

  // When the next pending timer is due, if any.
  std::optional<TimePoint> NextDue() const;
  // Runs one due event (advancing the clock to it). False if none is pending.
  bool RunOne();
  // Runs every event due at or before `t`, then sets the clock to `t`. Returns events run.
  uint64_t RunUntil(TimePoint t);
  uint64_t RunFor(Duration d) { return RunUntil(now_ + d); }
  // Runs until no event is pending or `max_events` ran. Returns events run.
  uint64_t RunUntilIdle(uint64_t max_events = UINT64_MAX);

  std::size_t pending() const { return heap_.size() + lane_.size() - cancelled_.size(); }
  uint64_t events_run() const { return events_run_; }

 private:
  // A pending event: when it is due, its sequence number (the tie-break, and its TimerId) and the slot
  // of slots_ that holds its closure. 24 bytes: sifting the heap moves no closures.
  struct Event {
    TimePoint due;
    uint64_t seq;
    uint32_t slot;
  };
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      return a.due != b.due ? a.due > b.due : a.seq > b.seq;
    }
  };
  // Zero-delay events skip the heap: they go to lane_, which is always in (due, seq) order because
  // every entry is due at now_ (the clock cannot move past now_ while an event due at now_ is pending)
  // and seqs only grow. The next event is the earlier of lane_.front() and the heap's top, so events
  // run in exactly the (due, seq) order one heap of everything would give.
  bool LaneFirst() const;
  void DropCancelledFront();
  uint32_t Store(std::function<void()> fn);

  TimePoint now_;
  uint64_t next_seq_ = 1;
  uint64_t events_run_ = 0;
  std::vector<Event> heap_;                   // a binary heap under Later: timers with a delay
  std::deque<Event> lane_;                    // zero-delay posts, due now_, in seq order
  std::vector<std::function<void()>> slots_;  // closures of pending events, by Event::slot
  std::vector<uint32_t> free_slots_;
  std::unordered_set<uint64_t> cancelled_;  // seqs of cancelled events still in heap_ or lane_
};

}  // namespace rcsim

#endif  // RCSIM_FAKES_SIM_LOOP_H_
