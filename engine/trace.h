// The trace: one line per observable event (virtual time, actor, event). The simulation hashes every
// line into a 64-bit FNV-1a digest so that two runs can be compared byte for byte; `rcsim replay` prints
// the lines. Production passes a sink that logs or does nothing.
#ifndef RCSIM_ENGINE_TRACE_H_
#define RCSIM_ENGINE_TRACE_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace rcsim {

// Not thread-safe: used from the simulation's single thread or the engine's executor.
class TraceSink {
 public:
  virtual ~TraceSink() = default;
  // Whether Record does anything; callers skip building expensive event strings when false.
  virtual bool enabled() const { return true; }
  virtual void Record(std::string_view actor, std::string_view event) = 0;
};

class NullTraceSink final : public TraceSink {
 public:
  bool enabled() const override { return false; }
  void Record(std::string_view, std::string_view) override {}
};

// 64-bit FNV-1a.
inline uint64_t Fnv1a64(std::string_view data, uint64_t h = 0xcbf29ce484222325ULL) {
  for (unsigned char c : data) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

}  // namespace rcsim

#endif  // RCSIM_ENGINE_TRACE_H_
