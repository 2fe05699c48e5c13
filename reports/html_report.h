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

namespace rcsim {

// The SVG plot of one run.
std::string SvgPlot(const RunResult& r);
std::string HtmlReport(const std::vector<RunResult>& results);
Status WriteHtmlReport(const std::vector<RunResult>& results, const std::string& path);

}  // namespace rcsim

#endif  // RCSIM_REPORTS_HTML_REPORT_H_
