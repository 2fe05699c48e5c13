// Go duration syntax, as Kubernetes binaries take durations on their command lines ("15s", "500ms",
// "1m30s", "2h", "5m0s"; units ns, us, ms, s, m, h; decimals allowed; "0" alone means zero).
#ifndef RCSIM_ENGINE_GO_DURATION_H_
#define RCSIM_ENGINE_GO_DURATION_H_

#include <optional>
#include <string_view>

#include "engine/time.h"

namespace rcsim {

// nullopt for anything else (no unit, an unknown unit, a negative or overflowing value).
std::optional<Duration> ParseGoDuration(std::string_view s);

}  // namespace rcsim

#endif  // RCSIM_ENGINE_GO_DURATION_H_
