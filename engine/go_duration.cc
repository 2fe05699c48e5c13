#include "engine/go_duration.h"

#include <cctype>
#include <exception>
#include <string>

namespace rcsim {

std::optional<Duration> ParseGoDuration(std::string_view s) {
  if (s.empty()) return std::nullopt;
  if (s == "0") return Duration::zero();
  Duration total{0};
  while (!s.empty()) {
    size_t i = 0;
    double v = 0;
    bool digits = false;
    while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.'))
      ++i, digits = true;
    if (!digits) return std::nullopt;
    try {
      v = std::stod(std::string(s.substr(0, i)));
    } catch (const std::exception&) {
      return std::nullopt;
    }
    size_t j = i;
    while (j < s.size() && std::isalpha(static_cast<unsigned char>(s[j]))) ++j;
    const std::string_view unit = s.substr(i, j - i);
    double ns = 0;
    if (unit == "ns")
      ns = 1;
    else if (unit == "us")
      ns = 1e3;
    else if (unit == "ms")
      ns = 1e6;
    else if (unit == "s")
      ns = 1e9;
    else if (unit == "m")
      ns = 60e9;
    else if (unit == "h")
      ns = 3600e9;
    else
      return std::nullopt;
    if (v * ns > 1e18) return std::nullopt;
    total += Duration(static_cast<int64_t>(v * ns));
    s.remove_prefix(j);
  }
  return total;
}

}  // namespace rcsim
