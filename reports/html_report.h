// DIR/index.html: one self-contained page (inline CSS and SVG, no script, no network) with the suite
// summary and, per run, failing runs first, its expectations and an SVG plot of desired / active /
// running pods (summed over the scenario's controllers) over virtual time, with every injected event
// marked by a dashed vertical line.
//
// Stable hooks for tests and tools: each plot is <svg class="plot" data-scenario=... data-seed=...>
// holding <polyline class="series desired|active|running"> and one <g class="event-mark"> per event.
#ifndef RCSIM_REPORTS_HTML_REPORT_H_
#define RCSIM_REPORTS_HTML_REPORT_H_

#include <string>
#include <vector>

#include "engine/status.h"
#include "harness/run_result.h"
#include "reports/suite_stats.h"

namespace rcsim {

// The SVG plot of one run.
std::string SvgPlot(const RunResult& r);
struct HtmlOptions {
  double wall_seconds = -1;                // the suite's wall time; < 0: the sum of the runs'
  std::vector<RunComparison> comparisons;  // --baseline; empty: no comparison section
  double regression_factor = 1.2;
  // The comparison section's heading; rcsim run --compare sets "Simulation and real mode" (the
  // simulation is then the left-hand side of each arrow, real mode the right).
  std::string comparison_title = "Against the baseline";
};

// One series (a controller's, or the totals) as a plot; `attrs` are the <svg> element's attributes.
std::string SeriesSvg(const std::vector<SeriesPoint>& series, Duration virtual_time,
                      const std::vector<EventMark>& events, const std::string& attrs,
                      const std::string& title);

// The page: the summary (verdicts, wall time, virtual/wall), the runs table, the baseline comparison
// (table and paired plot), swarm statistics (per scenario with several seeds: pass rate, convergence
// percentiles, a CDF plot <svg class="cdf">, failing seeds with replay commands), then one section
// per run with its expectations as sentences, its plot and, for several controllers, one
// <svg class="plot controller"> each. Wall-clock values are inside elements of class "wall".
std::string HtmlReport(const std::vector<RunResult>& results, const HtmlOptions& options = {});
Status WriteHtmlReport(const std::vector<RunResult>& results, const std::string& path,
                       const HtmlOptions& options = {});

}  // namespace rcsim

#endif  // RCSIM_REPORTS_HTML_REPORT_H_
