#include "reports/json_report.h"

#include <cstdio>
#include <fstream>

#include "harness/runner.h"

namespace rcsim {
namespace {

using nlohmann::json;

json SeriesToJson(const std::vector<SeriesPoint>& series) {
  std::vector<SeriesPoint> points = DownsampleSeries(series, kMaxSeriesPoints);
  json t = json::array(), desired = json::array(), active = json::array(), running = json::array();
  for (const SeriesPoint& p : points) {
    t.push_back(ReportSeconds(p.t));
    desired.push_back(p.desired);
    active.push_back(p.active);
    running.push_back(p.running);
  }
  json out = {{"t", t}, {"desired", desired}, {"active", active}, {"running", running}};
  if (points.size() != series.size()) out["series_points"] = series.size();
  return out;
}

json ParsedOrString(const std::string& text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  return j.is_discarded() ? json(text) : j;
}

std::string Hex16(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

double ReportSeconds(Duration d) {
  return static_cast<double>(std::chrono::duration_cast<std::chrono::microseconds>(d).count()) / 1e6;
}

std::vector<SeriesPoint> DownsampleSeries(const std::vector<SeriesPoint>& series, std::size_t max_points) {
  if (series.size() <= max_points || max_points < 3) return series;
  const std::size_t buckets = max_points / 3;
  const Duration t0 = series.front().t;
  const Duration span = series.back().t - t0 + Duration(1);
  std::vector<SeriesPoint> out;
  out.reserve(max_points);
  std::size_t i = 0;
  while (i < series.size()) {
    const std::size_t b = static_cast<std::size_t>(
        static_cast<__int128>((series[i].t - t0).count()) * buckets / span.count());
    std::size_t j = i, peak = i;
    while (j < series.size() &&
           static_cast<std::size_t>(static_cast<__int128>((series[j].t - t0).count()) * buckets / span.count()) == b) {
      if (series[j].active > series[peak].active) peak = j;
      ++j;
    }
    out.push_back(series[i]);
    if (peak != i) out.push_back(series[peak]);
    if (j - 1 != i && j - 1 != peak) out.push_back(series[j - 1]);
    i = j;
  }
  return out;
}

std::string JsonReportFileName(const RunResult& r, bool per_seed) {
  return per_seed ? r.scenario + "-seed" + std::to_string(r.seed) + ".json" : r.scenario + ".json";
}

json RunResultToJson(const RunResult& r) {
  json j;
  j["scenario"] = r.scenario;
  j["file"] = r.file;
  j["seed"] = r.seed;
  j["tier"] = r.tier;
  j["mode"] = r.mode;
  j["verdict"] = r.passed ? "PASS" : "FAIL";
  j["error"] = r.error;
  j["manager_kind"] = r.manager_kind;
  j["manager_from_flag"] = r.manager_from_flag;
  j["replay"] = ReplayCommandFor(r);

  json expectations = json::array(), convergence = json::array();
  for (const ExpectationOutcome& o : r.expectations) {
    json written = ParsedOrString(o.text);
    expectations.push_back({{"kind", o.kind},
                            {"expectation", written},
                            {"passed", o.passed},
                            {"measured", o.measured},
                            {"detail", o.detail}});
    if (o.kind == "converged" && written.is_object()) {
      const json& body = written["converged"];
      convergence.push_back({{"controller", body.value("controller", "")},
                             {"after", body.value("after", "0s")},
                             {"seconds", o.measured},
                             {"passed", o.passed}});
    }
  }
  j["expectations"] = expectations;
  j["convergence"] = convergence;
  j["convergence_max_seconds"] =
      r.convergence && !r.any_not_converged ? json(ReportSeconds(*r.convergence)) : json(nullptr);

  json calls = json::object();
  for (const auto& [verb, n] : r.api_calls) calls[verb] = n;
  calls["total"] = r.api_calls_total;
  j["api_calls"] = calls;
  j["peak_active"] = r.peak_active;
  j["virtual_seconds"] = ReportSeconds(r.virtual_time);
  j["end_reason"] = r.end_reason;
  j["changes"] = r.changes;
  j["loop_events"] = r.loop_events;
  j["manager"] = {{"starts", r.manager_starts},
                  {"syncs", r.manager.syncs},
                  {"sync_errors", r.manager.sync_errors},
                  {"creates", r.manager.creates},
                  {"create_errors", r.manager.create_errors},
                  {"deletes", r.manager.deletes},
                  {"delete_errors", r.manager.delete_errors},
                  {"adoptions", r.manager.adoptions},
                  {"releases", r.manager.releases},
                  {"status_updates", r.manager.status_updates},
                  {"relists", r.manager.relists},
                  {"requeues", r.manager.requeues},
                  {"invalid_controllers", r.manager.invalid_controllers},
                  {"claim_errors", r.manager.claim_errors}};
  j["trace"] = {{"digest", Hex16(r.trace_digest)}, {"lines", r.trace_lines}};

  json events = json::array();
  for (const EventMark& e : r.events) {
    events.push_back({{"at", ReportSeconds(e.at)}, {"kind", e.kind}, {"event", ParsedOrString(e.text)}});
  }
  j["events"] = events;

  json controllers = json::array();
  for (const ControllerOutcome& c : r.controllers) {
    controllers.push_back({{"namespace", c.ns},
                           {"name", c.name},
                           {"peak_active", c.peak_active},
                           {"final",
                            {{"exists", c.exists},
                             {"desired", c.desired},
                             {"active", c.active},
                             {"running", c.running},
                             {"ready", c.ready},
                             {"status_replicas", c.status_replicas}}},
                           {"series", SeriesToJson(c.series)}});
  }
  j["controllers"] = controllers;
  j["totals"] = SeriesToJson(r.totals);
  j["wall_seconds"] = r.wall_seconds;
  return j;
}

Status WriteJsonReport(const RunResult& r, const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return Status(Code::kInternal, "cannot write " + path);
  out << RunResultToJson(r).dump(2) << "\n";
  out.close();
  if (!out) return Status(Code::kInternal, "cannot write " + path);
  return Status::Ok();
}

}  // namespace rcsim
