#include "engine/time.h"

#include <cstdio>

namespace rcsim {
namespace {

constexpr int kMinRfc3339Year = 1678;
constexpr int kMaxRfc3339Year = 2261;

// The number the `n` ASCII digits at s[at] spell, or -1 if one of them is not a digit.
int Digits(std::string_view s, std::size_t at, int n) {
  int v = 0;
  for (int i = 0; i < n; ++i) {
    const char c = s[at + i];
    if (c < '0' || c > '9') return -1;
    v = v * 10 + (c - '0');
  }
  return v;
}

}  // namespace

// The formatters write fixed-width fields by hand: snprintf's format parsing cost more than the rest of
// encoding a timestamp, and every object the API server encodes carries several.
std::string FormatRfc3339(TimePoint t) {
  auto secs = std::chrono::floor<std::chrono::seconds>(t);
  auto days = std::chrono::floor<std::chrono::days>(secs);
  std::chrono::year_month_day ymd(days);
  std::chrono::hh_mm_ss<std::chrono::seconds> hms(secs - days);
  // TimePoint reaches from 1677 to 2262: the year always has four digits.
  char buf[20];
  char* p = WriteFixedDigits(buf, static_cast<std::uint64_t>(static_cast<int>(ymd.year())), 4);
  *p++ = '-';
  p = WriteFixedDigits(p, static_cast<unsigned>(ymd.month()), 2);
  *p++ = '-';
  p = WriteFixedDigits(p, static_cast<unsigned>(ymd.day()), 2);
  *p++ = 'T';
  p = WriteFixedDigits(p, static_cast<std::uint64_t>(hms.hours().count()), 2);
  *p++ = ':';
  p = WriteFixedDigits(p, static_cast<std::uint64_t>(hms.minutes().count()), 2);
  *p++ = ':';
  p = WriteFixedDigits(p, static_cast<std::uint64_t>(hms.seconds().count()), 2);
  *p++ = 'Z';
  return std::string(buf, p);
}

std::string FormatTimeOfDay(TimePoint t) {
  auto us = std::chrono::floor<std::chrono::microseconds>(t);
  std::chrono::hh_mm_ss<std::chrono::microseconds> hms(us - std::chrono::floor<std::chrono::days>(us));
  char buf[15];
  char* p = WriteFixedDigits(buf, static_cast<std::uint64_t>(hms.hours().count()), 2);
  *p++ = ':';
  p = WriteFixedDigits(p, static_cast<std::uint64_t>(hms.minutes().count()), 2);
  *p++ = ':';
  p = WriteFixedDigits(p, static_cast<std::uint64_t>(hms.seconds().count()), 2);
  *p++ = '.';
  p = WriteFixedDigits(p, static_cast<std::uint64_t>(hms.subseconds().count()), 6);
  return std::string(buf, p);
}

std::optional<TimePoint> ParseRfc3339(std::string_view s) {
  // "yyyy-mm-ddThh:mm:ss": fixed positions, ASCII digits only (no sign, no space, as Go's time.Parse;
  // sscanf's %2d took "+6" and "-1", so a minute of -1 was accepted).
  if (s.size() < 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':') {
    return std::nullopt;
  }
  const int y = Digits(s, 0, 4), mo = Digits(s, 5, 2), d = Digits(s, 8, 2), h = Digits(s, 11, 2),
            mi = Digits(s, 14, 2), se = Digits(s, 17, 2);
  if (y < 0 || mo < 0 || d < 0 || h < 0 || mi < 0 || se < 0) return std::nullopt;
  // TimePoint counts int64 nanoseconds from 1970, which reach from 1677-09-21 to 2262-04-11: a year
  // outside [1678, 2261] would wrap (year 9999 came back as 1816), so it is refused.
  if (y < kMinRfc3339Year || y > kMaxRfc3339Year) return std::nullopt;
  std::size_t pos = 19;
  Duration frac{0};
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    int64_t scale = 100000000, ns = 0;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      ns += (s[pos] - '0') * scale;
      scale /= 10;
      ++pos;
    }
    if (pos == 20) return std::nullopt;  // a '.' with no digits
    frac = Duration(ns);
  }
  // The offset: "Z" (or "z"), or "+hh:mm" / "-hh:mm".
  std::chrono::minutes offset{0};
  if (pos + 1 == s.size() && (s[pos] == 'Z' || s[pos] == 'z')) {
    // UTC
  } else if (pos + 6 == s.size() && (s[pos] == '+' || s[pos] == '-') && s[pos + 3] == ':') {
    const int oh = Digits(s, pos + 1, 2), om = Digits(s, pos + 4, 2);
    if (oh < 0 || om < 0 || oh > 23 || om > 59) return std::nullopt;
    offset = std::chrono::minutes(oh * 60 + om);
    if (s[pos] == '-') offset = -offset;
  } else {
    return std::nullopt;
  }
  std::chrono::year_month_day ymd{std::chrono::year(y), std::chrono::month(mo), std::chrono::day(d)};
  if (!ymd.ok() || h > 23 || mi > 59 || se > 60) return std::nullopt;
  // Local time minus its offset is UTC.
  return TimePoint(std::chrono::sys_days(ymd)) + std::chrono::hours(h) + std::chrono::minutes(mi) +
         std::chrono::seconds(se) + frac - offset;
}

std::string FormatDuration(Duration d) {
  char buf[48];
  int64_t ns = d.count();
  const char* sign = ns < 0 ? "-" : "";
  if (ns < 0) ns = -ns;
  if (ns < 1000000) {
    std::snprintf(buf, sizeof(buf), "%s%.3fms", sign, static_cast<double>(ns) / 1e6);
  } else if (ns < 1000000000) {
    const int64_t whole_us = ns / 1000;  // truncated to microseconds
    std::snprintf(buf, sizeof(buf), "%s%gms", sign, static_cast<double>(whole_us) / 1e3);
  } else if (ns < 60LL * 1000000000) {
    const int64_t whole_ms = ns / 1000000;  // truncated to milliseconds
    std::snprintf(buf, sizeof(buf), "%s%gs", sign, static_cast<double>(whole_ms) / 1e3);
  } else {
    int64_t total_ms = ns / 1000000;
    int64_t h = total_ms / 3600000, m = (total_ms / 60000) % 60;
    double s = static_cast<double>(total_ms % 60000) / 1e3;
    if (h > 0) {
      std::snprintf(buf, sizeof(buf), "%s%lldh%lldm%gs", sign, static_cast<long long>(h),
                    static_cast<long long>(m), s);
    } else {
      std::snprintf(buf, sizeof(buf), "%s%lldm%gs", sign, static_cast<long long>(m), s);
    }
  }
  return buf;
}

}  // namespace rcsim
