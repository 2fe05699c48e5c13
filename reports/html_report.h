// DIR/index.html: one self-contained page (inline CSS and SVG, no script, no network) with the suite
// summary and, per run, failing runs first, its expectations and an SVG plot of desired / active /
// running pods (summed over the scenario's controllers) over virtual time, with every injected event
// marked by a dashed vertical line.
//
// Stable hooks for tests and tools: each plot is <svg class="plot" data-scenario=... data-seed=...>
// holding <polyline class="series desired|active|running"> and one <g class="event-mark"> per event.
// Runs of one scenario on both managers also get a "Managers side by side" table and, per pair, the
// paired plots of ManagerPairPlots.
#ifndef RCSIM_REPORTS_HTML_REPORT_H_
#define RCSIM_REPORTS_HTML_REPORT_H_

#include <string>
#include <vector>

#include "engine/status.h"
#include "harness/run_result.h"
#include "reports/manager_pairs.h"
#include "reports/mode_comparison.h"
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
  // rcsim run --compare: one row per scenario (the real run against every simulated seed: verdicts,
  // the simulation's median, min and max, real / median), a paired plot of the median and the real
  // convergence, under comparison_title; non-empty, it replaces the baseline section. Hooks:
  // <table class="comparison modes"> with <tr class="same|differs|split" data-scenario=...>.
  std::vector<ModeComparison> mode_comparisons;
};

// One series (a controller's, or the totals) as a plot; `attrs` are the <svg> element's attributes. The
// count axis reaches at least `y_at_least` (plots drawn side by side share one scale).
std::string SeriesSvg(const std::vector<SeriesPoint>& series, Duration virtual_time,
                      const std::vector<EventMark>& events, const std::string& attrs,
                      const std::string& title, int32_t y_at_least = 1);

// The two runs of a scenario on the modern and the 2014 manager (rcsim run --manager both) as two plots
// of their pod counts side by side, on the same time and count axes: <div class="manager-pair"
// data-scenario=... data-seed=...> holding <svg class="plot manager" data-manager="modern"> and
// data-manager="2014".
std::string ManagerPairPlots(const ManagerPair& pair);

// The page: the summary (verdicts, wall time, virtual/wall), the runs table, the baseline comparison
// or the comparison of the two modes (table and paired plot), swarm statistics (per scenario with several
// seeds: pass rate, convergence percentiles, a CDF plot <svg class="cdf">, failing seeds with replay
// commands), then one section per run with its expectations as sentences, its plot and, for several
// controllers, one <svg class="plot controller"> each. Wall-clock values are inside elements of class "wall".
std::string HtmlReport(const std::vector<RunResult>& results, const HtmlOptions& options = {});
Status WriteHtmlReport(const std::vector<RunResult>& results, const std::string& path,
                       const HtmlOptions& options = {});

}  // namespace rcsim

#endif  // RCSIM_REPORTS_HTML_REPORT_H_
