#include "backends/http/log_query.h"

#include <charconv>

#include "backends/http/api_handler.h"

namespace rcsim {
namespace {

bool ParseBool(std::string_view v, bool* out) {
  if (v == "true" || v == "1") {
    *out = true;
  } else if (v == "false" || v == "0" || v.empty()) {
    *out = false;
  } else {
    return false;
  }
  return true;
}

}  // namespace

Result<LogQuery> ParseLogQuery(std::string_view query) {
  LogQuery q;
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view kv = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    const std::size_t eq = kv.find('=');
    std::string k;
    std::string v;
    if (!PercentDecode(kv.substr(0, eq), &k) ||
        !PercentDecode(eq == std::string_view::npos ? std::string_view() : kv.substr(eq + 1), &v)) {
      return Status(Code::kBadRequest, "malformed query");
    }
    if (k == "container") {
      q.container = v;
    } else if (k == "tailLines") {
      int64_t n = 0;
      auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
      if (ec != std::errc() || end != v.data() + v.size() || n < 0) {
        return Status(Code::kBadRequest, "tailLines: must be a non-negative integer, not \"" + v + "\"");
      }
      q.tail_lines = n;
    } else if (k == "follow" && !ParseBool(v, &q.follow)) {
      return Status(Code::kBadRequest, "follow: must be true or false, not \"" + v + "\"");
    } else if (k == "previous" && !ParseBool(v, &q.previous)) {
      return Status(Code::kBadRequest, "previous: must be true or false, not \"" + v + "\"");
    }
  }
  return q;
}

std::string KubeletLogQuery(const LogQuery& q) {
  std::string out;
  if (q.tail_lines) out += "&tailLines=" + std::to_string(*q.tail_lines);
  if (q.follow) out += "&follow=true";
  if (q.previous) out += "&previous=true";
  return out.empty() ? out : out.substr(1);
}

}  // namespace rcsim
