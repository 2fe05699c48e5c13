// A report directory as one unit: what `rcsim run --report DIR` writes and `rcsim report merge`,
// `--timings` and `--baseline` read back.
//
//   DIR/<scenario>.json (per run, json_report.h), DIR/junit.xml, DIR/index.html, DIR/managers.json
//   (only when runs of one scenario and seed ran on both managers: ManagerPairsToJson), and DIR/runs.json:
//   {"format": 1, "per_seed": bool, "shard": "K/N" or "", "plan_size": total runs of the unsharded
//    plan, "wall_seconds": the suite's wall time, "runs": [{"plan_index", "scenario", "seed", "report"}]}.
//
// JUnit and HTML are always rendered from the results as read back from their JSON (RunResultFromJson),
// so a merge of shard reports renders exactly what the unsharded run rendered (wall times aside).
#ifndef RCSIM_REPORTS_REPORT_SET_H_
#define RCSIM_REPORTS_REPORT_SET_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/status.h"
#include "harness/run_result.h"
#include "reports/html_report.h"
#include "reports/junit_report.h"

namespace rcsim {

struct ReportSet {
  bool per_seed = false;
  std::string shard;                    // "K/N", "" for a whole suite or a merge
  std::size_t plan_size = 0;            // runs in the unsharded plan
  double wall_seconds = 0;              // the suite's wall time (a merge: the sum of its shards')
  std::vector<std::size_t> plan_index;  // per result, its place in the unsharded plan
  std::vector<RunResult> results;       // in plan order
  // As read from disk (ReadReportSet), per result: written back verbatim, so a merge copies each run
  // report byte for byte rather than re-rendering it from the rounded RunResult.
  std::vector<nlohmann::json> raw;
};

// The inverse of RunResultToJson, up to its rounding (times to the microsecond, series downsampled).
Result<RunResult> RunResultFromJson(const nlohmann::json& j);

// Writes every file of the set. `html` options: baseline comparison and the like.
Status WriteReportSet(const std::string& dir, const ReportSet& set, const HtmlOptions& html = {},
                      const JunitOptions& junit = {});

// Reads DIR/runs.json and the run reports it lists.
Result<ReportSet> ReadReportSet(const std::string& dir);

// Joins shard sets into one, in plan order. kInvalid if they disagree on per_seed or plan_size, or
// two hold the same plan index.
Result<ReportSet> MergeReportSets(const std::vector<ReportSet>& sets);

}  // namespace rcsim

#endif  // RCSIM_REPORTS_REPORT_SET_H_
