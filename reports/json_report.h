// The per-scenario JSON report (DIR/<scenario>.json).
//
// Shape (keys sorted; times in virtual seconds, rounded to the microsecond):
//   scenario, file, seed, tier, mode ("sim", or "real": times are wall-clock seconds since the run
//   started), verdict ("PASS"/"FAIL"), error (run error or ""), replay (command),
//   expectations: [{kind, expectation (as written), passed, measured, detail}],
//   convergence: [{controller, after, seconds (null if never)}], convergence_max_seconds,
//   api_calls: {get, list, watch, create, update, patch, delete, total}, peak_active,
//   virtual_seconds, end_reason, changes, loop_events, manager: {starts, syncs, creates, ...},
//   trace: {digest (16 hex digits), lines},
//   events: [{at, kind, event}],
//   controllers: [{namespace, name, peak_active, final: {...}, series: {t, desired, active, running}}],
//   totals: {t, desired, active, running},
//   wall_seconds.
// Series are columnar and change-only; past kMaxSeriesPoints they are downsampled (series_points
// gives the original count). Everything except wall_* is deterministic for a (scenario, seed).
#ifndef RCSIM_REPORTS_JSON_REPORT_H_
#define RCSIM_REPORTS_JSON_REPORT_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/status.h"
#include "harness/run_result.h"

namespace rcsim {

inline constexpr std::size_t kMaxSeriesPoints = 2000;

// At most `max_points` points of a change-only series: when longer, the run is cut into time buckets
// and each keeps its first point, its highest-active point and its last point (in time order), so
// peaks and the final state survive.
std::vector<SeriesPoint> DownsampleSeries(const std::vector<SeriesPoint>& series, std::size_t max_points);

// "<scenario>.json", or "<scenario>-seed<N>.json" when several seeds of one scenario are reported.
std::string JsonReportFileName(const RunResult& r, bool per_seed);

nlohmann::json RunResultToJson(const RunResult& r);

// Writes RunResultToJson(r) (2-space indented, trailing newline) to `path`.
Status WriteJsonReport(const RunResult& r, const std::string& path);

// Seconds as a JSON number rounded to the microsecond.
double ReportSeconds(Duration d);

}  // namespace rcsim

#endif  // RCSIM_REPORTS_JSON_REPORT_H_
