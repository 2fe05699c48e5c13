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
#include <functional>
#include <optional>
#include <queue>
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

  std::size_t pending() const { return heap_.size() - cancelled_.size(); }
  uint64_t events_run() const { return events_run_; }

 private:
  struct Timer {
    TimePoint due;
    uint64_t seq;
    std::function<void()> fn;
  };
  struct Later {
    bool operator()(const Timer& a, const Timer& b) const {
      return a.due != b.due ? a.due > b.due : a.seq > b.seq;
    }
  };
  void DropCancelledTop();

  TimePoint now_;
  uint64_t next_seq_ = 1;
  uint64_t events_run_ = 0;
  std::priority_queue<Timer, std::vector<Timer>, Later> heap_;
  std::unordered_set<uint64_t> cancelled_;  // seqs of cancelled timers still in heap_
};

}  // namespace rcsim

#endif  // RCSIM_FAKES_SIM_LOOP_H_
