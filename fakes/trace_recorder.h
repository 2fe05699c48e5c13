// TraceRecorder: the simulation's TraceSink. Every Record(actor, event) becomes the line
// "<virtual seconds since the recorder was built, 6 decimals> <actor> <event>", which is folded into a
// 64-bit FNV-1a digest (engine/trace.h; the line plus a trailing '\n' is hashed, so the digest equals
// Fnv1a64 of the whole trace file). Lines are kept only when asked (for `rcsim replay`).
//
// Thread-safety: none (the simulation's single thread).
#ifndef RCSIM_FAKES_TRACE_RECORDER_H_
#define RCSIM_FAKES_TRACE_RECORDER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/time.h"
#include "engine/trace.h"

namespace rcsim {

class TraceRecorder final : public TraceSink {
 public:
  // `clock` is not owned and must outlive the recorder; time 0 of the trace is clock->Now() here.
  explicit TraceRecorder(const Clock* clock, bool keep_lines = false);

  void Record(std::string_view actor, std::string_view event) override;

  uint64_t digest() const { return digest_; }
  uint64_t line_count() const { return line_count_; }
  // Empty unless keep_lines; each line without its trailing '\n'.
  const std::vector<std::string>& lines() const { return lines_; }
  bool keep_lines() const { return keep_lines_; }
  void set_keep_lines(bool keep) { keep_lines_ = keep; }

 private:
  const Clock* const clock_;
  const TimePoint origin_;
  bool keep_lines_;
  uint64_t digest_;
  uint64_t line_count_ = 0;
  std::string line_;  // scratch, reused to avoid per-line allocation
  std::vector<std::string> lines_;
};

}  // namespace rcsim

#endif  // RCSIM_FAKES_TRACE_RECORDER_H_
