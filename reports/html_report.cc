#include "reports/html_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>

#include "harness/runner.h"
#include "reports/json_report.h"
#include "reports/junit_report.h"

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

std::string SvgPlot(const RunResult& r) {
  std::vector<SeriesPoint> pts = DownsampleSeries(r.totals, kMaxPlotPoints);
  double t_end = std::max(ToSeconds(r.virtual_time), pts.empty() ? 0.0 : ToSeconds(pts.back().t));
  if (t_end <= 0) t_end = 1;
  int32_t y_max = 1;
  for (const SeriesPoint& p : pts) y_max = std::max({y_max, p.desired, p.active, p.running});
  double y_step = std::max(1.0, std::ceil(NiceStep(y_max * 1.1, 4)));
  double y_top = std::ceil(y_max * 1.1 / y_step) * y_step;
  const double pw = kWidth - kLeft - kRight, ph = kHeight - kTop - kBottom;
  auto X = [&](double t) { return kLeft + pw * t / t_end; };
  auto Y = [&](double v) { return kTop + ph * (1 - v / y_top); };

  std::string svg = "<svg class=\"plot\" data-scenario=\"" + XmlEscape(r.scenario) + "\" data-seed=\"" +
                    std::to_string(r.seed) + "\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " +
                    Num(kWidth) + " " + Num(kHeight) + "\" width=\"" + Num(kWidth) + "\" height=\"" +
                    Num(kHeight) + "\" role=\"img\">\n";
  svg += "<title>" + XmlEscape(r.scenario) + ": desired, active and running pods over virtual time</title>\n";
  // Axes and grid.
  svg += "<g class=\"axes\">";
  for (double v = 0; v <= y_top + 1e-9; v += y_step) {
    svg += "<line class=\"grid\" x1=\"" + Num(kLeft) + "\" x2=\"" + Num(kLeft + pw) + "\" y1=\"" + Num(Y(v)) +
           "\" y2=\"" + Num(Y(v)) + "\"/><text class=\"tick\" x=\"" + Num(kLeft - 6) + "\" y=\"" +
           Num(Y(v) + 4) + "\" text-anchor=\"end\">" + std::to_string(static_cast<long long>(v)) + "</text>";
  }
  double x_step = NiceStep(t_end, 6);
  for (double t = 0; t <= t_end + 1e-9; t += x_step) {
    svg += "<line class=\"tickmark\" x1=\"" + Num(X(t)) + "\" x2=\"" + Num(X(t)) + "\" y1=\"" + Num(kTop + ph) +
           "\" y2=\"" + Num(kTop + ph + 4) + "\"/><text class=\"tick\" x=\"" + Num(X(t)) + "\" y=\"" +
           Num(kTop + ph + 16) + "\" text-anchor=\"middle\">" + Secs(t) + "</text>";
  }
  svg += "<line class=\"axis\" x1=\"" + Num(kLeft) + "\" x2=\"" + Num(kLeft + pw) + "\" y1=\"" + Num(kTop + ph) +
         "\" y2=\"" + Num(kTop + ph) + "\"/><line class=\"axis\" x1=\"" + Num(kLeft) + "\" x2=\"" + Num(kLeft) +
         "\" y1=\"" + Num(kTop) + "\" y2=\"" + Num(kTop + ph) + "\"/>";
  svg += "<text class=\"label\" x=\"" + Num(kLeft + pw / 2) + "\" y=\"" + Num(kHeight - 4) +
         "\" text-anchor=\"middle\">virtual time</text></g>\n";
  // Event marks under the series.
  for (const EventMark& e : r.events) {
    double x = X(ToSeconds(e.at));
    svg += "<g class=\"event-mark\" data-kind=\"" + XmlEscape(e.kind) + "\"><title>" + XmlEscape(Secs(ToSeconds(e.at))) +
           " " + XmlEscape(e.text) + "</title><line x1=\"" + Num(x) + "\" x2=\"" + Num(x) + "\" y1=\"" + Num(kTop) +
           "\" y2=\"" + Num(kTop + ph) + "\"/><text x=\"" + Num(x + 3) + "\" y=\"" + Num(kTop + 10) + "\">" +
           XmlEscape(e.kind) + "</text></g>\n";
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
    svg += "<g class=\"legend\"><line class=\"series " + std::string(name) + "\" x1=\"" + Num(lx) + "\" x2=\"" +
           Num(lx + 18) + "\" y1=\"" + Num(kTop - 8) + "\" y2=\"" + Num(kTop - 8) + "\"/><text x=\"" + Num(lx + 22) +
           "\" y=\"" + Num(kTop - 4) + "\">" + name + "</text></g>";
    lx += 90;
  }
  svg += "\n</svg>";
  return svg;
}

std::string HtmlReport(const std::vector<RunResult>& results) {
  std::vector<const RunResult*> order;
  for (const RunResult& r : results) order.push_back(&r);
  std::stable_sort(order.begin(), order.end(),
                   [](const RunResult* a, const RunResult* b) { return !a->passed && b->passed; });
  int failed = 0;
  for (const RunResult& r : results) failed += r.passed ? 0 : 1;
  int passed = static_cast<int>(results.size()) - failed;

  std::string h = R"(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>rcsim report</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1100px}
h1{font-size:22px}h2{font-size:17px;margin:0 0 4px}
table{border-collapse:collapse}td,th{padding:3px 10px;border-bottom:1px solid #ddd;text-align:left}
.PASS{color:#1e7e34;font-weight:600}.FAIL{color:#c0392b;font-weight:600}
section{border:1px solid #ddd;border-radius:6px;padding:12px 16px;margin:16px 0}
section.fail{border-color:#c0392b}
code,pre{background:#f5f5f5;padding:1px 4px;border-radius:3px}
ul.expect{list-style:none;padding-left:0}ul.expect li{margin:2px 0}
svg.plot{background:#fff;max-width:100%;height:auto}
.plot .grid{stroke:#eee}.plot .axis,.plot .tickmark{stroke:#888}
.plot text{font-size:11px;fill:#555}
.plot .series{fill:none;stroke-width:2}
.plot .desired{stroke:#555;stroke-dasharray:6 3}.plot .active{stroke:#e67e22}.plot .running{stroke:#2e86de}
.plot .event-mark line{stroke:#8e44ad;stroke-dasharray:3 3}.plot .event-mark text{fill:#8e44ad}
</style></head><body>
)";
  h += "<h1>rcsim report</h1>\n<p class=\"summary\"><span class=\"" + std::string(failed ? "FAIL" : "PASS") + "\">" +
       std::to_string(passed) + " passed, " + std::to_string(failed) + " failed</span></p>\n";
  h += "<table class=\"runs\"><tr><th>verdict</th><th>scenario</th><th>seed</th><th>convergence</th>"
       "<th>virtual time</th><th>peak active</th><th>API calls</th></tr>\n";
  for (std::size_t i = 0; i < order.size(); ++i) {
    const RunResult& r = *order[i];
    std::string conv = r.any_not_converged ? "never" : r.convergence ? Secs(ToSeconds(*r.convergence)) : "-";
    const char* verdict = r.passed ? "PASS" : "FAIL";
    h += "<tr><td class=\"" + std::string(verdict) + "\">" + verdict + "</td><td><a href=\"#run-" + std::to_string(i) +
         "\">" + XmlEscape(r.scenario) + "</a></td><td>" + std::to_string(r.seed) + "</td><td>" + conv +
         "</td><td>" + Secs(ToSeconds(r.virtual_time)) + "</td><td>" + std::to_string(r.peak_active) + "</td><td>" +
         std::to_string(r.api_calls_total) + "</td></tr>\n";
  }
  h += "</table>\n";
  for (std::size_t i = 0; i < order.size(); ++i) {
    const RunResult& r = *order[i];
    const char* verdict = r.passed ? "PASS" : "FAIL";
    h += "<section id=\"run-" + std::to_string(i) + "\" class=\"run " + (r.passed ? "pass" : "fail") + "\">\n";
    h += "<h2><span class=\"" + std::string(verdict) + "\">" + verdict + "</span> " + XmlEscape(r.scenario) +
         " <small>seed " + std::to_string(r.seed) + " &middot; " + XmlEscape(r.file) + " &middot; virtual " +
         Secs(ToSeconds(r.virtual_time)) + " (" + XmlEscape(r.end_reason) + ") &middot; trace " +
         std::to_string(r.trace_lines) + " lines</small></h2>\n";
    if (!r.error.empty()) h += "<p class=\"FAIL\">error: " + XmlEscape(r.error) + "</p>\n";
    h += "<ul class=\"expect\">\n";
    for (const ExpectationOutcome& o : r.expectations) {
      h += "<li><span class=\"" + std::string(o.passed ? "PASS" : "FAIL") + "\">" + (o.passed ? "&#10003;" : "&#10007;") +
           "</span> <code>" + XmlEscape(o.text) + "</code> &mdash; " + XmlEscape(o.detail) + "</li>\n";
    }
    h += "</ul>\n";
    if (!r.passed) h += "<p>reproduce: <code>" + XmlEscape(ReplayCommand(r.file, r.seed)) + "</code></p>\n";
    h += SvgPlot(r) + "\n</section>\n";
  }
  h += "</body></html>\n";
  return h;
}

Status WriteHtmlReport(const std::vector<RunResult>& results, const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return Status(Code::kInternal, "cannot write " + path);
  out << HtmlReport(results);
  out.close();
  if (!out) return Status(Code::kInternal, "cannot write " + path);
  return Status::Ok();
}

}  // namespace rcsim
