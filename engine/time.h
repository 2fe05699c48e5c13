// Time for the engine: a Clock port, durations, and RFC 3339 formatting.
//
// The engine never reads the wall clock. Production passes a SystemClock (apps/), simulation passes the
// virtual clock (fakes/sim_loop.h), whose time moves only when the simulation advances it.
#ifndef RCSIM_ENGINE_TIME_H_
#define RCSIM_ENGINE_TIME_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rcsim {

using Duration = std::chrono::nanoseconds;
using TimePoint = std::chrono::sys_time<std::chrono::nanoseconds>;

using std::chrono_literals::operator""ms;
using std::chrono_literals::operator""s;
using std::chrono_literals::operator""min;
using std::chrono_literals::operator""h;

// Thread-safety: implementations must be safe to call from any thread.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual TimePoint Now() const = 0;
};

// "2014-06-06T00:00:00Z" (seconds precision, as Kubernetes metav1.Time).
std::string FormatRfc3339(TimePoint t);
// Parses RFC 3339: "2014-06-06T00:00:00Z", optional fractional seconds, and any offset
// ("+02:00", "-05:30", "+00:00"); nullopt if malformed.
std::optional<TimePoint> ParseRfc3339(std::string_view s);

// "04:33:10.123456": the UTC time of day with microseconds, as the time in a klog line's header. For
// log lines of the processes (apps/), which pass the wall clock's time.
std::string FormatTimeOfDay(TimePoint t);

// Writes `v` as exactly `n` decimal digits, zero-padded (the lowest `n` digits if it has more), at `p`, and
// returns the end. For fixed-width fields of timestamps, written by hand because snprintf's format parsing
// cost more than the rest of encoding one.
inline char* WriteFixedDigits(char* p, std::uint64_t v, int n) {
  for (int i = n - 1; i >= 0; --i, v /= 10) p[i] = static_cast<char>('0' + v % 10);
  return p + n;
}

// Human duration for logs and reports: "1.5s", "250ms", "2m3s".
std::string FormatDuration(Duration d);

inline double ToSeconds(Duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace rcsim

#endif  // RCSIM_ENGINE_TIME_H_
