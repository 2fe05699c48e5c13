// The Logger port: leveled log lines from the engine. Production passes a sink that writes to stderr;
// the simulation and tests pass a NullLogger or a recording one.
#ifndef RCSIM_ENGINE_LOG_H_
#define RCSIM_ENGINE_LOG_H_

#include <string_view>

namespace rcsim {

enum class LogLevel { kDebug, kInfo, kWarning, kError };

// Thread-safety: called only from the engine's executor.
class Logger {
 public:
  virtual ~Logger() = default;
  virtual void Log(LogLevel level, std::string_view message) = 0;
};

class NullLogger final : public Logger {
 public:
  void Log(LogLevel, std::string_view) override {}
};

}  // namespace rcsim

#endif  // RCSIM_ENGINE_LOG_H_
