#include "reports/junit_report.h"

#include <cstdio>
#include <fstream>
#include <map>

#include "harness/runner.h"

namespace rcsim {
namespace {

std::string Seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3f", s);
  return buf;
}

}  // namespace

std::string XmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    unsigned char c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        if (c < 0x20 && ch != '\n' && ch != '\t' && ch != '\r') {
          out += '?';
        } else {
          out += ch;
        }
    }
  }
  return out;
}

std::string JunitXml(const std::vector<RunResult>& results, bool per_seed, const JunitOptions& options) {
  std::map<std::pair<std::string, uint64_t>, std::string> regressed;  // (scenario, seed) -> what
  for (const RunComparison& c : options.comparisons) {
    std::string why;
    for (const std::string& x : c.regressions) why += (why.empty() ? "" : "; ") + x;
    if (!why.empty()) regressed[{c.scenario, c.seed}] = why;
  }
  auto regression_of = [&](const RunResult& r) -> const std::string* {
    auto it = regressed.find({r.scenario, r.seed});
    return it == regressed.end() ? nullptr : &it->second;
  };
  int failures = 0;
  double total = 0;
  for (const RunResult& r : results) {
    failures += !r.passed || (options.regressions_fail && regression_of(r) != nullptr) ? 1 : 0;
    total += r.wall_seconds;
  }
  std::string tests = std::to_string(results.size());
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<testsuites name=\"rcsim\" tests=\"" + tests + "\" failures=\"" + std::to_string(failures) +
         "\" errors=\"0\" time=\"" + Seconds(total) + "\">\n";
  out += "  <testsuite name=\"rcsim\" tests=\"" + tests + "\" failures=\"" + std::to_string(failures) +
         "\" errors=\"0\" skipped=\"0\" time=\"" + Seconds(total) + "\">\n";
  for (const RunResult& r : results) {
    std::string name = per_seed ? r.scenario + " seed=" + std::to_string(r.seed) : r.scenario;
    out += "    <testcase classname=\"rcsim." + XmlEscape(r.tier) + "\" name=\"" + XmlEscape(name) +
           "\" file=\"" + XmlEscape(r.file) + "\" time=\"" + Seconds(r.wall_seconds) + "\">\n";
    std::string replay = ReplayCommandFor(r);
    if (!r.passed) {
      std::string message, body;
      if (!r.error.empty()) {
        message = r.error;
        body += "error: " + r.error + "\n";
      }
      for (const ExpectationOutcome& o : r.expectations) {
        if (o.passed) continue;
        if (message.empty()) message = o.text + ": " + o.detail;
        body += "failed: " + o.text + ": " + o.detail + "\n";
      }
      body += "seed: " + std::to_string(r.seed) + "\nreplay: " + replay + "\n";
      out += "      <failure message=\"" + XmlEscape(message) + "\" type=\"ExpectationFailed\">" +
             XmlEscape(body) + "</failure>\n";
    }
    const std::string* regression = regression_of(r);
    if (regression != nullptr && r.passed && options.regressions_fail) {
      out += "      <failure message=\"" + XmlEscape("regressed against the baseline: " + *regression) +
             "\" type=\"Regression\">" +
             XmlEscape("regressed against the baseline: " + *regression +
                       "\nseed: " + std::to_string(r.seed) + "\nreplay: " + replay + "\n") +
             "</failure>\n";
    }
    out += "      <system-out>" +
           XmlEscape("seed " + std::to_string(r.seed) + ", virtual " +
                     Seconds(static_cast<double>(r.virtual_time.count()) / 1e9) + "s, replay: " + replay +
                     (regression != nullptr ? "\nregressed against the baseline: " + *regression : "")) +
           "</system-out>\n";
    out += "    </testcase>\n";
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

Status WriteJunitReport(const std::vector<RunResult>& results, bool per_seed, const std::string& path,
                        const JunitOptions& options) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return Status(Code::kInternal, "cannot write " + path);
  out << JunitXml(results, per_seed, options);
  out.close();
  if (!out) return Status(Code::kInternal, "cannot write " + path);
  return Status::Ok();
}

}  // namespace rcsim
