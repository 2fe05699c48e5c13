#include "reports/html_report.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <optional>
#include <utility>

#include "harness/runner.h"
#include "reports/json_report.h"
#include "reports/junit_report.h"
#include "reports/manager_pairs.h"
#include "reports/suite_stats.h"

namespace rcsim {
namespace {

constexpr double kWidth = 760, kHeight = 260;
constexpr double kLeft = 52, kRight = 16, kTop = 18, kBottom = 34;
constexpr std::size_t kMaxPlotPoints = 1500;

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f", v);
  return buf;
}

std::string Secs(double s) {
  char buf[32];
  if (s >= 100) {
    std::snprintf(buf, sizeof(buf), "%.0fs", s);
  } else if (s >= 1) {
    std::snprintf(buf, sizeof(buf), "%.2fs", s);
  } else {
    std::snprintf(buf, sizeof(buf), "%.0fms", s * 1000);
  }
  return buf;
}

// A "nice" tick step (1, 2 or 5 times a power of ten) giving about `ticks` ticks over `span`.
double NiceStep(double span, int ticks) {
  double raw = span / ticks;
  double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (raw <= m * p) return m * p;
  }
  return 10 * p;
}

}  // namespace

std::string SeriesSvg(const std::vector<SeriesPoint>& series, Duration virtual_time,
                      const std::vector<EventMark>& events, const std::string& attrs,
                      const std::string& title, int32_t y_at_least) {
  std::vector<SeriesPoint> pts = DownsampleSeries(series, kMaxPlotPoints);
  double t_end = std::max(ToSeconds(virtual_time), pts.empty() ? 0.0 : ToSeconds(pts.back().t));
  if (t_end <= 0) t_end = 1;
  int32_t y_max = std::max(1, y_at_least);
  for (const SeriesPoint& p : pts) y_max = std::max({y_max, p.desired, p.active, p.running});
  double y_step = std::max(1.0, std::ceil(NiceStep(y_max * 1.1, 4)));
  double y_top = std::ceil(y_max * 1.1 / y_step) * y_step;
  const double pw = kWidth - kLeft - kRight, ph = kHeight - kTop - kBottom;
  auto X = [&](double t) { return kLeft + pw * t / t_end; };
  auto Y = [&](double v) { return kTop + ph * (1 - v / y_top); };

  std::string svg = "<svg " + attrs + " xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " + Num(kWidth) +
                    " " + Num(kHeight) + "\" width=\"" + Num(kWidth) + "\" height=\"" + Num(kHeight) +
                    "\" role=\"img\">\n";
  svg += "<title>" + XmlEscape(title) + "</title>\n";
  // Axes and grid.
  svg += "<g class=\"axes\">";
  for (double v = 0; v <= y_top + 1e-9; v += y_step) {
    svg += "<line class=\"grid\" x1=\"" + Num(kLeft) + "\" x2=\"" + Num(kLeft + pw) + "\" y1=\"" + Num(Y(v)) +
           "\" y2=\"" + Num(Y(v)) + "\"/><text class=\"tick\" x=\"" + Num(kLeft - 6) + "\" y=\"" +
           Num(Y(v) + 4) + "\" text-anchor=\"end\">" + std::to_string(static_cast<long long>(v)) + "</text>";
  }
  double x_step = NiceStep(t_end, 6);
  for (double t = 0; t <= t_end + 1e-9; t += x_step) {
    svg += "<line class=\"tickmark\" x1=\"" + Num(X(t)) + "\" x2=\"" + Num(X(t)) + "\" y1=\"" +
           Num(kTop + ph) + "\" y2=\"" + Num(kTop + ph + 4) + "\"/><text class=\"tick\" x=\"" + Num(X(t)) +
           "\" y=\"" + Num(kTop + ph + 16) + "\" text-anchor=\"middle\">" + Secs(t) + "</text>";
  }
  svg += "<line class=\"axis\" x1=\"" + Num(kLeft) + "\" x2=\"" + Num(kLeft + pw) + "\" y1=\"" +
         Num(kTop + ph) + "\" y2=\"" + Num(kTop + ph) + "\"/><line class=\"axis\" x1=\"" + Num(kLeft) +
         "\" x2=\"" + Num(kLeft) + "\" y1=\"" + Num(kTop) + "\" y2=\"" + Num(kTop + ph) + "\"/>";
  svg += "<text class=\"label\" x=\"" + Num(kLeft + pw / 2) + "\" y=\"" + Num(kHeight - 4) +
         "\" text-anchor=\"middle\">virtual time</text></g>\n";
  // Event marks under the series.
  for (const EventMark& e : events) {
    double x = X(ToSeconds(e.at));
    svg += "<g class=\"event-mark\" data-kind=\"" + XmlEscape(e.kind) + "\"><title>" +
           XmlEscape(Secs(ToSeconds(e.at))) + " " + XmlEscape(e.text) + "</title><line x1=\"" + Num(x) +
           "\" x2=\"" + Num(x) + "\" y1=\"" + Num(kTop) + "\" y2=\"" + Num(kTop + ph) + "\"/><text x=\"" +
           Num(x + 3) + "\" y=\"" + Num(kTop + 10) + "\">" + XmlEscape(e.kind) + "</text></g>\n";
  }
  // Step polylines: a value holds from its point to the next one, and to the end of the run.
  struct Series {
    const char* name;
    int32_t SeriesPoint::*field;
  };
  for (const Series& s : {Series{"desired", &SeriesPoint::desired}, Series{"active", &SeriesPoint::active},
                          Series{"running", &SeriesPoint::running}}) {
    std::string points;
    double prev_y = Y(0);
    for (const SeriesPoint& p : pts) {
      double x = X(ToSeconds(p.t)), y = Y(p.*(s.field));
      if (!points.empty()) points += Num(x) + "," + Num(prev_y) + " ";
      points += Num(x) + "," + Num(y) + " ";
      prev_y = y;
    }
    if (pts.empty()) points = Num(X(0)) + "," + Num(Y(0)) + " ";
    points += Num(X(t_end)) + "," + Num(prev_y);
    svg += "<polyline class=\"series " + std::string(s.name) + "\" points=\"" + points + "\"/>\n";
  }
  // Legend.
  double lx = kLeft + 8;
  for (const char* name : {"desired", "active", "running"}) {
    svg += "<g class=\"legend\"><line class=\"series " + std::string(name) + "\" x1=\"" + Num(lx) +
           "\" x2=\"" + Num(lx + 18) + "\" y1=\"" + Num(kTop - 8) + "\" y2=\"" + Num(kTop - 8) +
           "\"/><text x=\"" + Num(lx + 22) + "\" y=\"" + Num(kTop - 4) + "\">" + name + "</text></g>";
    lx += 90;
  }
  svg += "\n</svg>";
  return svg;
}

std::string SvgPlot(const RunResult& r) {
  return SeriesSvg(r.totals, r.virtual_time, r.events,
                   "class=\"plot\" data-scenario=\"" + XmlEscape(r.scenario) + "\" data-seed=\"" +
                       std::to_string(r.seed) + "\"",
                   r.scenario + ": desired, active and running pods over virtual time");
}

std::string ManagerPairPlots(const ManagerPair& p) {
  // One time axis and one count axis for both, so that the two plots compare at a glance.
  const Duration t_end = std::max(p.modern->virtual_time, p.old->virtual_time);
  int32_t y_max = 1;
  for (const RunResult* r : {p.modern, p.old}) {
    for (const SeriesPoint& s : r->totals) y_max = std::max({y_max, s.desired, s.active, s.running});
  }
  std::string h = "<div class=\"manager-pair\" data-scenario=\"" + XmlEscape(p.scenario) + "\" data-seed=\"" +
                  std::to_string(p.seed) + "\">";
  const std::pair<const char*, const RunResult*> sides[] = {{"modern", p.modern}, {"2014", p.old}};
  for (const auto& [kind, r] : sides) {
    const char* verdict = r->passed ? "PASS" : "FAIL";
    h += "<figure><figcaption>" + std::string(kind) + " manager: <span class=\"" + verdict + "\">" + verdict +
         "</span></figcaption>" +
         SeriesSvg(r->totals, t_end, r->events,
                   "class=\"plot manager\" data-scenario=\"" + XmlEscape(p.scenario) + "\" data-seed=\"" +
                       std::to_string(p.seed) + "\" data-manager=\"" + kind + "\"",
                   p.scenario + " on the " + kind + " manager: desired, active and running pods", y_max) +
         "</figure>";
  }
  return h + "</div>";
}

namespace {

using nlohmann::json;

std::string Pct(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f%%", 100 * v);
  return buf;
}

std::string Ratio(double virtual_s, double wall_s) {
  if (wall_s <= 0) return "-";
  char buf[32];
  double x = virtual_s / wall_s;
  std::snprintf(buf, sizeof(buf), x >= 100 ? "%.0fx" : "%.1fx", x);
  return buf;
}

std::string MaybeSecs(const std::optional<double>& v) { return v ? Secs(*v) : "-"; }

// An expectation as a sentence: "web converged 1.97s after 30s (limit 5s)".
std::string Sentence(const ExpectationOutcome& o) {
  json written = json::parse(o.text, nullptr, /*allow_exceptions=*/false);
  if (!written.is_object() || !written.contains(o.kind) || !written[o.kind].is_object()) return o.detail;
  const json& b = written[o.kind];
  std::string c = b.value("controller", "");
  const json& m = o.measured;
  if (o.kind == "converged") {
    std::string after = b.value("after", "0s"), within = b.value("within", "1m");
    if (!m.is_number()) return c + " never converged within " + within + " after " + after;
    std::string took = Secs(m.get<double>());
    return c + " converged " + took + " after " + after + (o.passed ? " (limit " : ", over the limit of ") +
           within + (o.passed ? ")" : "");
  }
  if (o.kind == "never_above") {
    std::string bound = b.contains("active") ? b["active"].dump() : "its highest replicas";
    std::string peak = m.is_number() ? m.dump() : "?";
    return o.passed ? c + " never had more than " + bound + " active pods (peak " + peak + ")"
                    : c + " had " + peak + " active pods, above " + bound;
  }
  if (o.kind == "final") return c + " at the end: " + o.detail;
  if (o.kind == "api_calls") {
    std::string verb = b.contains("verb") ? b["verb"].get<std::string>() + " " : "";
    std::string n = m.is_number() ? m.dump() : "?";
    return "the manager made " + n + " " + verb + "API calls (at most " + b.value("at_most", json(0)).dump() +
           ")";
  }
  if (o.kind == "status_matches") {
    return o.passed ? c + "'s status matched what is observable" : c + "'s status did not match: " + o.detail;
  }
  return o.detail;
}

// Empirical CDF of convergence times over a swarm: a step line from 0 to 1.
std::string CdfSvg(const SwarmStats& s) {
  const double w = 420, h = 180, l = 44, r = 12, t = 12, b = 30;
  const double pw = w - l - r, ph = h - t - b;
  double x_max = s.convergence.empty() ? 1 : std::max(s.convergence.back(), 1e-3) * 1.05;
  auto X = [&](double v) { return l + pw * v / x_max; };
  auto Y = [&](double p) { return t + ph * (1 - p); };
  std::string svg = "<svg class=\"cdf\" data-scenario=\"" + XmlEscape(s.scenario) +
                    "\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " + Num(w) + " " + Num(h) +
                    "\" width=\"" + Num(w) + "\" height=\"" + Num(h) + "\" role=\"img\"><title>" +
                    XmlEscape(s.scenario) + ": CDF of convergence time over " + std::to_string(s.runs) +
                    " seeds</title>\n";
  for (double p : {0.0, 0.5, 0.9, 1.0}) {
    svg += "<line class=\"grid\" x1=\"" + Num(l) + "\" x2=\"" + Num(l + pw) + "\" y1=\"" + Num(Y(p)) +
           "\" y2=\"" + Num(Y(p)) + "\"/><text x=\"" + Num(l - 4) + "\" y=\"" + Num(Y(p) + 4) +
           "\" text-anchor=\"end\">" +
           (p == 0.5   ? "p50"
            : p == 0.9 ? "p90"
            : p == 0   ? "0"
                       : "1") +
           "</text>";
  }
  double step = NiceStep(x_max, 4);
  for (double v = 0; v <= x_max + 1e-12; v += step) {
    svg += "<text x=\"" + Num(X(v)) + "\" y=\"" + Num(h - 14) + "\" text-anchor=\"middle\">" + Secs(v) +
           "</text>";
  }
  svg += "<line class=\"axis\" x1=\"" + Num(l) + "\" x2=\"" + Num(l + pw) + "\" y1=\"" + Num(Y(0)) +
         "\" y2=\"" + Num(Y(0)) + "\"/><text x=\"" + Num(l + pw / 2) + "\" y=\"" + Num(h - 2) +
         "\" text-anchor=\"middle\">convergence time (fraction of seeds at or below)</text>\n";
  std::string pts = Num(X(0)) + "," + Num(Y(0));
  const double n = static_cast<double>(s.runs);
  for (std::size_t i = 0; i < s.convergence.size(); ++i) {
    double x = X(s.convergence[i]);
    pts += " " + Num(x) + "," + Num(Y(static_cast<double>(i) / n)) + " " + Num(x) + "," +
           Num(Y(static_cast<double>(i + 1) / n));
  }
  pts += " " + Num(X(x_max)) + "," + Num(Y(static_cast<double>(s.convergence.size()) / n));
  svg += "<polyline class=\"series cdf-line\" points=\"" + pts + "\"/>\n</svg>";
  return svg;
}

// Baseline vs now, one pair of bars per scenario run (convergence seconds).
std::string PairedSvg(const std::vector<RunComparison>& cs) {
  std::vector<const RunComparison*> rows;
  double v_max = 1e-3;
  for (const RunComparison& c : cs) {
    if (!c.in_baseline || (!c.base_convergence && !c.now_convergence)) continue;
    rows.push_back(&c);
    v_max = std::max({v_max, c.base_convergence.value_or(0), c.now_convergence.value_or(0)});
  }
  const double row_h = 22, l = 220, w = 760, r = 70;
  const double h = 30 + row_h * static_cast<double>(rows.size());
  std::string svg = "<svg class=\"paired\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " + Num(w) +
                    " " + Num(h) + "\" width=\"" + Num(w) + "\" height=\"" + Num(h) +
                    "\" role=\"img\"><title>convergence: baseline (grey) and this run (blue)</title>\n";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const RunComparison& c = *rows[i];
    double y = 20 + row_h * static_cast<double>(i);
    auto bar = [&](double v, double dy, const char* cls) {
      return "<rect class=\"" + std::string(cls) + "\" x=\"" + Num(l) + "\" y=\"" + Num(y + dy) +
             "\" width=\"" + Num((w - l - r) * v / v_max) + "\" height=\"8\"/>";
    };
    svg += "<g class=\"pair" + std::string(c.regressed() ? " regressed" : "") + "\" data-scenario=\"" +
           XmlEscape(c.scenario) + "\"><text x=\"" + Num(l - 6) + "\" y=\"" + Num(y + 12) +
           "\" text-anchor=\"end\">" + XmlEscape(c.scenario) + " #" + std::to_string(c.seed) + "</text>" +
           bar(c.base_convergence.value_or(0), 0, "base") + bar(c.now_convergence.value_or(0), 9, "now") +
           "<text x=\"" + Num(w - r + 4) + "\" y=\"" + Num(y + 12) + "\">" + MaybeSecs(c.now_convergence) +
           "</text></g>\n";
  }
  svg += "</svg>";
  return svg;
}

std::string Ratio2(const std::optional<double>& v) {
  if (!v) return "-";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2fx", *v);
  return buf;
}

// rcsim run --compare: the table of ModeComparisons and the paired plot (the simulation's median in
// grey, the real run in blue).
std::string ModesSection(const std::vector<ModeComparison>& cs, const std::string& title) {
  std::size_t seeds = 0;
  for (const ModeComparison& c : cs) seeds = std::max(seeds, c.sim.size());
  std::string h =
      "<section class=\"baseline modes\"><h2>" + XmlEscape(title) + "</h2>\n<p>the real run of each " +
      "scenario against the simulation over " + std::to_string(seeds) + (seeds == 1 ? " seed" : " seeds") +
      ": a scenario fails unless every seed's verdict is the real one (SPLIT: the majority " +
      "agrees, some seeds do not; DIFFERS: the majority does not); convergence within 3x of the " +
      "median is expected</p>\n";
  h += "<table class=\"comparison modes\"><tr><th>scenario</th><th>outcome</th><th>real (seed)</th>"
       "<th>real convergence</th><th>sim verdicts</th><th>sim median</th><th>sim min</th><th>sim max</th>"
       "<th>real&divide;median</th></tr>\n";
  std::vector<RunComparison> paired;
  for (const ModeComparison& c : cs) {
    std::string outcome = c.Outcome();
    std::string cls = outcome;
    std::transform(cls.begin(), cls.end(), cls.begin(), [](unsigned char ch) { return std::tolower(ch); });
    std::string verdicts = "<details><summary>" + std::to_string(c.sim_passed) + "/" +
                           std::to_string(c.sim.size()) + " PASS</summary>";
    for (const ModeRun& s : c.sim) {
      const char* v = s.passed ? "PASS" : "FAIL";
      verdicts += "<span class=\"" + std::string(v) + "\">" + std::to_string(s.seed) + " " + v + " " +
                  (s.never_converged ? std::string("never") : MaybeSecs(s.convergence)) + "</span><br>";
    }
    verdicts += "</details>";
    const char* real = c.real.passed ? "PASS" : "FAIL";
    h += "<tr class=\"" + cls + "\" data-scenario=\"" + XmlEscape(c.scenario) + "\"><td>" +
         XmlEscape(c.scenario) + "</td><td class=\"" + (c.EverySeedAgrees() ? "PASS" : "FAIL") + "\">" +
         outcome + "</td><td class=\"" + real + "\">" + real + " (" + std::to_string(c.real.seed) +
         ")</td><td>" + (c.real.never_converged ? std::string("never") : MaybeSecs(c.real.convergence)) +
         "</td><td>" + verdicts + "</td><td>" + MaybeSecs(c.sim_median) + "</td><td>" + MaybeSecs(c.sim_min) +
         "</td><td>" + MaybeSecs(c.sim_max) + "</td><td>" + Ratio2(c.ratio) + "</td></tr>\n";
    RunComparison p;
    p.scenario = c.scenario;
    p.seed = c.real.seed;
    p.in_baseline = true;
    p.base_convergence = c.sim_median;
    p.now_convergence = c.real.convergence;
    if (!c.EverySeedAgrees()) p.regressions.push_back(outcome);
    paired.push_back(std::move(p));
  }
  return h + "</table>\n" + PairedSvg(paired) + "\n</section>\n";
}

}  // namespace

std::string HtmlReport(const std::vector<RunResult>& results, const HtmlOptions& options) {
  std::vector<const RunResult*> order;
  order.reserve(results.size());
  for (const RunResult& r : results) order.push_back(&r);
  std::stable_sort(order.begin(), order.end(),
                   [](const RunResult* a, const RunResult* b) { return !a->passed && b->passed; });
  int failed = 0;
  double virtual_total = 0, wall_sum = 0;
  for (const RunResult& r : results) {
    failed += r.passed ? 0 : 1;
    virtual_total += ToSeconds(r.virtual_time);
    wall_sum += r.wall_seconds;
  }
  int passed = static_cast<int>(results.size()) - failed;
  double wall = options.wall_seconds >= 0 ? options.wall_seconds : wall_sum;
  int regressions = 0;
  for (const RunComparison& c : options.comparisons) regressions += c.regressed() ? 1 : 0;
  int differing = 0;
  for (const ModeComparison& c : options.mode_comparisons) differing += c.EverySeedAgrees() ? 0 : 1;

  std::string h = R"(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>rcsim report</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1100px}
h1{font-size:22px}h2{font-size:17px;margin:0 0 4px}h3{font-size:15px;margin:8px 0 2px}
table{border-collapse:collapse}td,th{padding:3px 10px;border-bottom:1px solid #ddd;text-align:left}
.PASS{color:#1e7e34;font-weight:600}.FAIL,.REGRESSED{color:#c0392b;font-weight:600}
section{border:1px solid #ddd;border-radius:6px;padding:12px 16px;margin:16px 0}
section.fail{border-color:#c0392b}
code,pre{background:#f5f5f5;padding:1px 4px;border-radius:3px}
ul.expect{list-style:none;padding-left:0}ul.expect li{margin:2px 0}.detail{color:#777}
svg.plot,svg.cdf,svg.paired{background:#fff;max-width:100%;height:auto}
.manager-pair{display:flex;flex-wrap:wrap;gap:8px}.manager-pair figure{flex:1 1 360px;margin:0}
.plot .grid,.cdf .grid{stroke:#eee}.plot .axis,.plot .tickmark,.cdf .axis{stroke:#888}
svg text{font-size:11px;fill:#555}
.series{fill:none;stroke-width:2}
.plot .desired{stroke:#555;stroke-dasharray:6 3}.plot .active{stroke:#e67e22}.plot .running{stroke:#2e86de}
.cdf .cdf-line{stroke:#2e86de}.paired .base{fill:#aaa}.paired .now{fill:#2e86de}.paired .regressed text{fill:#c0392b}
.plot .event-mark line{stroke:#8e44ad;stroke-dasharray:3 3}.plot .event-mark text{fill:#8e44ad}
</style></head><body>
)";
  h += "<h1>rcsim report</h1>\n<p class=\"summary\"><span class=\"" + std::string(failed ? "FAIL" : "PASS") +
       "\">" + std::to_string(passed) + " passed, " + std::to_string(failed) + " failed</span>";
  if (!options.mode_comparisons.empty()) {
    h += ", <span class=\"" + std::string(differing ? "FAIL" : "PASS") + "\">" + std::to_string(differing) +
         " verdicts differ</span> from the simulation";
  } else if (!options.comparisons.empty()) {
    h += ", <span class=\"" + std::string(regressions ? "REGRESSED" : "PASS") + "\">" +
         std::to_string(regressions) + " regressed</span> against the baseline";
  }
  h += " &middot; virtual " + Secs(virtual_total) + " in <span class=\"wall\">" + Secs(wall) + " wall (" +
       Ratio(virtual_total, wall) + " faster than real time)</span></p>\n";
  h += "<table class=\"runs\"><tr><th>verdict</th><th>scenario</th><th>seed</th><th>convergence</th>"
       "<th>virtual time</th><th>wall time</th><th>virtual&divide;wall</th><th>peak active</th><th>API "
       "calls</th></tr>\n";
  for (std::size_t i = 0; i < order.size(); ++i) {
    const RunResult& r = *order[i];
    std::string conv = r.any_not_converged ? "never" : r.convergence ? Secs(ToSeconds(*r.convergence)) : "-";
    const char* verdict = r.passed ? "PASS" : "FAIL";
    h += "<tr><td class=\"" + std::string(verdict) + "\">" + verdict + "</td><td><a href=\"#run-" +
         std::to_string(i) + "\">" + XmlEscape(r.scenario) + "</a></td><td>" + std::to_string(r.seed) +
         "</td><td>" + conv + "</td><td>" + Secs(ToSeconds(r.virtual_time)) + "</td><td class=\"wall\">" +
         Secs(r.wall_seconds) + "</td><td class=\"wall\">" +
         Ratio(ToSeconds(r.virtual_time), r.wall_seconds) + "</td><td>" + std::to_string(r.peak_active) +
         "</td><td>" + std::to_string(r.api_calls_total) + "</td></tr>\n";
  }
  h += "</table>\n";

  if (std::vector<ManagerPair> pairs = PairManagers(results); !pairs.empty()) {
    h += "<section class=\"managers\"><h2>Managers side by side</h2>\n<table class=\"managers\"><tr>"
         "<th>scenario</th><th>seed</th><th>modern</th><th>2014</th><th>what the 2014 manager "
         "failed</th></tr>\n";
    for (const ManagerPair& p : pairs) {
      const char* m = p.modern->passed ? "PASS" : "FAIL";
      const char* o = p.old->passed ? "PASS" : "FAIL";
      std::string failed;
      for (const std::string& f : FailedExpectations(*p.old)) failed += "<code>" + XmlEscape(f) + "</code> ";
      h += "<tr><td>" + XmlEscape(p.scenario) + "</td><td>" + std::to_string(p.seed) + "</td><td class=\"" +
           m + "\">" + m + "</td><td class=\"" + o + "\">" + o + "</td><td>" + failed + "</td></tr>\n";
    }
    h += "</table>\n";
    for (const ManagerPair& p : pairs) h += ManagerPairPlots(p) + "\n";
    h += "</section>\n";
  }

  if (!options.mode_comparisons.empty()) {
    h += ModesSection(options.mode_comparisons, options.comparison_title);
  } else if (!options.comparisons.empty()) {
    h += "<section class=\"baseline\"><h2>" + XmlEscape(options.comparison_title) +
         "</h2>\n<p>regression: a change beyond " + Num(options.regression_factor) +
         "x in convergence or API calls, or a verdict turning FAIL</p>\n";
    h += "<table class=\"comparison\"><tr><th>scenario</th><th>seed</th><th>verdict</th><th>convergence</th>"
         "<th>API calls</th><th>change</th></tr>\n";
    for (const RunComparison& c : options.comparisons) {
      std::string change;
      for (const std::string& x : c.regressions) change += (change.empty() ? "" : "; ") + x;
      for (const std::string& x : c.improvements) change += (change.empty() ? "" : "; ") + x;
      if (!c.in_baseline) change = "not in the baseline";
      auto verdict = [](bool p) { return std::string(p ? "PASS" : "FAIL"); };
      h += "<tr class=\"" + std::string(c.regressed() ? "regressed" : "same") + "\"><td>" +
           XmlEscape(c.scenario) + "</td><td>" + std::to_string(c.seed) + "</td><td>" +
           (c.in_baseline ? verdict(c.base_passed) + " &rarr; " : "") + verdict(c.now_passed) + "</td><td>" +
           (c.in_baseline ? MaybeSecs(c.base_convergence) + " &rarr; " : "") + MaybeSecs(c.now_convergence) +
           "</td><td>" + (c.in_baseline ? std::to_string(c.base_calls) + " &rarr; " : "") +
           std::to_string(c.now_calls) + "</td><td class=\"" + std::string(c.regressed() ? "REGRESSED" : "") +
           "\">" + XmlEscape(change) + "</td></tr>\n";
    }
    h += "</table>\n" + PairedSvg(options.comparisons) + "\n</section>\n";
  }

  std::vector<SwarmStats> swarm = ComputeSwarmStats(results);
  bool is_swarm = false;
  for (const SwarmStats& s : swarm) is_swarm = is_swarm || s.runs > 1;
  if (is_swarm) {
    h += "<section class=\"swarm\"><h2>Swarm</h2>\n<table "
         "class=\"swarm-stats\"><tr><th>scenario</th><th>runs</th>"
         "<th>pass rate</th><th>min</th><th>p50</th><th>p90</th><th>p99</th><th>max</th><th>never "
         "converged</th></tr>\n";
    for (const SwarmStats& s : swarm) {
      h += "<tr><td>" + XmlEscape(s.scenario) + "</td><td>" + std::to_string(s.runs) + "</td><td class=\"" +
           (s.passed == s.runs ? "PASS" : "FAIL") + "\">" + Pct(s.PassRate()) + "</td><td>" +
           MaybeSecs(s.Percentile(0)) + "</td><td>" + MaybeSecs(s.Percentile(0.5)) + "</td><td>" +
           MaybeSecs(s.Percentile(0.9)) + "</td><td>" + MaybeSecs(s.Percentile(0.99)) + "</td><td>" +
           MaybeSecs(s.Percentile(1)) + "</td><td>" + std::to_string(s.never_converged) + "</td></tr>\n";
    }
    h += "</table>\n";
    for (const SwarmStats& s : swarm) {
      if (s.runs < 2) continue;
      h += "<h3>" + XmlEscape(s.scenario) + "</h3>\n" + CdfSvg(s) + "\n";
      if (!s.failing_seeds.empty()) {
        h += "<p>failing seeds:</p><ul class=\"failing-seeds\">\n";
        for (std::size_t i = 0; i < s.failing_seeds.size(); ++i) {
          h += "<li>" + std::to_string(s.failing_seeds[i]) + ": <code>" + XmlEscape(s.replay[i]) +
               "</code></li>\n";
        }
        h += "</ul>\n";
      }
    }
    h += "</section>\n";
  }

  for (std::size_t i = 0; i < order.size(); ++i) {
    const RunResult& r = *order[i];
    const char* verdict = r.passed ? "PASS" : "FAIL";
    h +=
        "<section id=\"run-" + std::to_string(i) + "\" class=\"run " + (r.passed ? "pass" : "fail") + "\">\n";
    h += "<h2><span class=\"" + std::string(verdict) + "\">" + verdict + "</span> " + XmlEscape(r.scenario) +
         " <small>seed " + std::to_string(r.seed) + " &middot; " + XmlEscape(r.file) + " &middot; virtual " +
         Secs(ToSeconds(r.virtual_time)) + " (" + XmlEscape(r.end_reason) + ") &middot; trace " +
         std::to_string(r.trace_lines) + " lines</small></h2>\n";
    if (!r.error.empty()) h += "<p class=\"FAIL\">error: " + XmlEscape(r.error) + "</p>\n";
    h += "<ul class=\"expect\">\n";
    for (const ExpectationOutcome& o : r.expectations) {
      h += "<li><span class=\"" + std::string(o.passed ? "PASS" : "FAIL") + "\">" +
           (o.passed ? "&#10003;" : "&#10007;") + "</span> " + XmlEscape(Sentence(o)) +
           " <span class=\"detail\">(<code>" + XmlEscape(o.text) + "</code>: " + XmlEscape(o.detail) +
           ")</span></li>\n";
    }
    h += "</ul>\n";
    if (!r.passed) h += "<p>reproduce: <code>" + XmlEscape(ReplayCommandFor(r)) + "</code></p>\n";
    h += SvgPlot(r) + "\n";
    if (r.controllers.size() > 1) {
      for (const ControllerOutcome& c : r.controllers) {
        h += "<h3>" + XmlEscape(c.ns + "/" + c.name) + "</h3>\n" +
             SeriesSvg(c.series, r.virtual_time, r.events,
                       "class=\"plot controller\" data-scenario=\"" + XmlEscape(r.scenario) +
                           "\" data-controller=\"" + XmlEscape(c.name) + "\"",
                       c.ns + "/" + c.name + ": desired, active and running pods") +
             "\n";
      }
    }
    h += "</section>\n";
  }
  h += "</body></html>\n";
  return h;
}

Status WriteHtmlReport(const std::vector<RunResult>& results, const std::string& path,
                       const HtmlOptions& options) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return Status(Code::kInternal, "cannot write " + path);
  out << HtmlReport(results, options);
  out.close();
  if (!out) return Status(Code::kInternal, "cannot write " + path);
  return Status::Ok();
}

}  // namespace rcsim
