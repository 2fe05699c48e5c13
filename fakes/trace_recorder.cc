#include "fakes/trace_recorder.h"

#include <chrono>
#include <cstdio>

namespace rcsim {

TraceRecorder::TraceRecorder(const Clock* clock, bool keep_lines)
    : clock_(clock), origin_(clock->Now()), keep_lines_(keep_lines), digest_(Fnv1a64("")) {}

void TraceRecorder::Record(std::string_view actor, std::string_view event) {
  const int64_t ns = (clock_->Now() - origin_).count();
  // Integer formatting keeps the text independent of floating-point rounding.
  const bool negative = ns < 0;
  const uint64_t abs_ns = negative ? static_cast<uint64_t>(-(ns + 1)) + 1 : static_cast<uint64_t>(ns);
  const uint64_t micros = abs_ns / 1000;
  char time_buf[48];
  const int n = std::snprintf(time_buf, sizeof(time_buf), "%s%llu.%06llu", negative ? "-" : "",
                              static_cast<unsigned long long>(micros / 1000000),
                              static_cast<unsigned long long>(micros % 1000000));
  line_.clear();
  line_.append(time_buf, static_cast<size_t>(n));
  line_.push_back(' ');
  line_.append(actor);
  line_.push_back(' ');
  line_.append(event);
  digest_ = Fnv1a64(line_, digest_);
  digest_ = Fnv1a64("\n", digest_);
  ++line_count_;
  if (keep_lines_) lines_.push_back(line_);
}

}  // namespace rcsim
