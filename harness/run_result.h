// What one run of one scenario produced: the verdict, every expectation's measured value, the
// measurements the reports show, and the time series for the plots.
//
// Everything here except the wall_* fields is a pure function of (scenario, seed): two runs with the
// same inputs give equal values (the reports rely on it).
#ifndef RCSIM_HARNESS_RUN_RESULT_H_
#define RCSIM_HARNESS_RUN_RESULT_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/metrics.h"
#include "engine/time.h"

namespace rcsim {

// One sample of a controller (or of the whole world): the values holding from `t` (virtual time since
// the run started) until the next point. Points are recorded only when a value changes; changes within
// one virtual instant collapse to the state at the end of that instant.
struct SeriesPoint {
  Duration t{0};
  int32_t desired = 0;
  int32_t active = 0;
  int32_t running = 0;
  bool operator==(const SeriesPoint&) const = default;
};

struct ControllerOutcome {
  std::string ns;
  std::string name;
  int32_t peak_active = 0;
  // State at the end of the run (ground truth).
  bool exists = false;
  int32_t desired = 0;
  int32_t active = 0;
  int32_t running = 0;
  int32_t ready = 0;
  int32_t status_replicas = 0;
  std::vector<SeriesPoint> series;
};

struct ExpectationOutcome {
  std::string kind;
  std::string text;     // the expectation as written (compact JSON)
  bool passed = false;
  nlohmann::json measured;  // the measured value (null when nothing could be measured)
  std::string detail;   // one human line: "converged after 3.2s (limit 5s)"
};

struct EventMark {
  Duration at{0};
  std::string kind;
  std::string text;  // the event as written
};

struct RunResult {
  std::string scenario;
  std::string file;
  uint64_t seed = 0;
  std::string tier;
  std::string mode = "sim";  // "sim", or "real" (rcsim run --real: wall-clock times, no trace)
  // The manager that ran: "modern" or "2014"; manager_from_flag: chosen by `--manager`, not by the
  // scenario's manager.kind (the replay command then says so).
  std::string manager_kind = "modern";
  bool manager_from_flag = false;
  bool passed = false;
  // Set when the run itself could not proceed (e.g. a controller was refused by the API); the run
  // then fails with this reason.
  std::string error;
  std::vector<ExpectationOutcome> expectations;

  Duration virtual_time{0};
  std::string end_reason;  // "duration" or "quiet"
  // Largest measured time of the converged expectations (nullopt: none, or one never converged).
  std::optional<Duration> convergence;
  bool any_not_converged = false;

  std::map<std::string, uint64_t> api_calls;  // by verb name, the manager's calls
  uint64_t api_calls_total = 0;
  int32_t peak_active = 0;  // highest total of active pods over all controllers
  uint64_t changes = 0;     // committed pod/controller changes observed
  uint64_t loop_events = 0;
  int manager_starts = 0;
  ManagerMetrics manager;  // summed over every manager incarnation

  uint64_t trace_digest = 0;
  uint64_t trace_lines = 0;
  std::vector<std::string> trace;  // only when asked for (replay)

  std::vector<ControllerOutcome> controllers;  // sorted by namespace/name
  std::vector<SeriesPoint> totals;             // sums over all controllers
  std::vector<EventMark> events;               // in firing order

  double wall_seconds = 0;  // not deterministic
};

}  // namespace rcsim

#endif  // RCSIM_HARNESS_RUN_RESULT_H_
