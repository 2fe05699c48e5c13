// Durations as written in scenario files: a sequence of <number><unit> with units ms, s, m, h
// ("500ms", "30s", "1m30s", "1.5s", "2h"), or "0". Numbers are non-negative decimals; fractional parts
// are kept to the nanosecond. Negative, empty, unit-less (except "0") and overflowing values are refused.
#ifndef RCSIM_HARNESS_DURATION_H_
#define RCSIM_HARNESS_DURATION_H_

#include <string>
#include <string_view>

#include "engine/status.h"
#include "engine/time.h"

namespace rcsim {

// kInvalid with a reason ("missing unit in \"10\"") when `text` is not a duration.
Result<Duration> ParseDuration(std::string_view text);

// Canonical scenario form, exact and parseable by ParseDuration: "0s", "500ms", "1m30s", "1h0m5s",
// "1.5ms" for sub-millisecond parts.
std::string FormatScenarioDuration(Duration d);

}  // namespace rcsim

#endif  // RCSIM_HARNESS_DURATION_H_
