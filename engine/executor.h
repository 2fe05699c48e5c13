// The Executor port: where the engine's work runs, and its timers.
//
// Contract:
// - Post(fn) runs fn soon, after everything already posted (FIFO). Schedule(d, fn) runs fn once the
//   clock reaches now + d; timers due at the same time run in the order they were scheduled.
// - Callbacks never run inline inside Post/Schedule.
// - Production: a single event-loop thread (the engine is single-threaded by contract); Post is safe
//   from any thread so backends can hand results back. Simulation: the virtual-clock loop
//   (fakes/sim_loop.h), one thread, deterministic.
#ifndef RCSIM_ENGINE_EXECUTOR_H_
#define RCSIM_ENGINE_EXECUTOR_H_

#include <cstdint>
#include <functional>

#include "engine/time.h"

namespace rcsim {

using TimerId = uint64_t;

class Executor {
 public:
  virtual ~Executor() = default;
  virtual void Post(std::function<void()> fn) = 0;
  // Returns an id that Cancel accepts; ids are never 0 and never reused.
  virtual TimerId Schedule(Duration delay, std::function<void()> fn) = 0;
  // Cancelling a timer that already ran or was cancelled is a no-op.
  virtual void Cancel(TimerId id) = 0;
};

}  // namespace rcsim

#endif  // RCSIM_ENGINE_EXECUTOR_H_
