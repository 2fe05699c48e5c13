#include "harness/duration.h"

#include <cstdint>
#include <cstdio>
#include <limits>

namespace rcsim {
namespace {

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kS = 1000 * kMs;
constexpr int64_t kM = 60 * kS;
constexpr int64_t kH = 60 * kM;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

Status Bad(std::string_view text, const std::string& why) {
  return Status(Code::kInvalid, why + " in duration \"" + std::string(text) + "\"");
}

}  // namespace

Result<Duration> ParseDuration(std::string_view text) {
  if (text.empty()) return Bad(text, "empty value");
  if (text == "0") return Duration::zero();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  int64_t total = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    if (text[i] == '-' || text[i] == '+') return Bad(text, "sign not allowed");
    if (!IsDigit(text[i]) && text[i] != '.') return Bad(text, "expected a number");
    // Integer part and up to 18 fractional digits, kept exactly.
    int64_t whole = 0;
    bool any_digit = false;
    while (i < text.size() && IsDigit(text[i])) {
      if (whole > (kMax - 9) / 10) return Bad(text, "value too large");
      whole = whole * 10 + (text[i] - '0');
      any_digit = true;
      ++i;
    }
    int64_t frac = 0, frac_scale = 1;
    if (i < text.size() && text[i] == '.') {
      ++i;
      while (i < text.size() && IsDigit(text[i])) {
        if (frac_scale < 1'000'000'000'000'000'000LL) {
          frac = frac * 10 + (text[i] - '0');
          frac_scale *= 10;
        }
        any_digit = true;
        ++i;
      }
    }
    if (!any_digit) return Bad(text, "expected a number");
    std::size_t unit_start = i;
    while (i < text.size() && !IsDigit(text[i]) && text[i] != '.') ++i;
    std::string_view unit = text.substr(unit_start, i - unit_start);
    int64_t scale;
    if (unit == "ms") {
      scale = kMs;
    } else if (unit == "s") {
      scale = kS;
    } else if (unit == "m") {
      scale = kM;
    } else if (unit == "h") {
      scale = kH;
    } else if (unit.empty()) {
      return Bad(text, "missing unit (ms, s, m or h)");
    } else {
      return Bad(text, "unknown unit \"" + std::string(unit) + "\" (ms, s, m or h)");
    }
    if (whole > kMax / scale) return Bad(text, "value too large");
    int64_t part = whole * scale;
    // frac / frac_scale * scale, without overflow: scale <= 3.6e12, frac_scale <= 1e18.
    // The fraction adds less than `scale`, but may still carry the part past the maximum
    // ("9223372036854.999ms").
    auto frac_ns = static_cast<int64_t>(static_cast<long double>(frac) * scale / frac_scale);
    if (part > kMax - frac_ns) return Bad(text, "value too large");
    part += frac_ns;
    if (part > kMax - total) return Bad(text, "value too large");
    total += part;
  }
  return Duration(total);
}

std::string FormatScenarioDuration(Duration d) {
  int64_t ns = d.count();
  if (ns == 0) return "0s";
  std::string out;
  if (ns < 0) {
    out = "-";
    ns = -ns;
  }
  char buf[64];
  int64_t h = ns / kH, m = (ns % kH) / kM, s = (ns % kM) / kS, rest = ns % kS;
  if (h > 0) out += std::to_string(h) + "h";
  if (m > 0) out += std::to_string(m) + "m";
  if (s > 0) out += std::to_string(s) + "s";
  if (rest % kMs == 0 && rest > 0) {
    out += std::to_string(rest / kMs) + "ms";
  } else if (rest > 0) {
    std::snprintf(buf, sizeof(buf), "%lld.%06lldms", static_cast<long long>(rest / kMs),
                  static_cast<long long>(rest % kMs));
    out += buf;
  }
  return out;
}

}  // namespace rcsim
