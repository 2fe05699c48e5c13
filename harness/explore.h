// Explore: search fault schedules instead of writing them (the start of `rcsim explore`, issue 15).
//
// One scenario file is run once as a reference with its trace kept; the moments the manager acted
// (its "sync" trace lines) are the candidate places for faults. Then `runs` perturbed copies are run,
// each the scenario plus 1..max_faults faults drawn deterministically from `seed`, each placed just
// before or after one such moment: a stale view (stale_reads), an intermediate state (the manager
// crashes right after a sync began; creates time out with an unknown outcome; pod lists fail),
// unobserved state (watches dropped or delayed). Every copy is checked against the scenario's own
// expectations plus generic invariants: for each controller of the scenario, never more active pods
// than its highest desired count (orphans that became its own after its first pod appeared left out:
// it adopts them and deletes the surplus by design) and, if it is never deleted, convergence within
// `converge_within` after the last fault ended, the scenario's own fault windows included (creates a
// quota forbids for a minute cannot converge before that minute is over).
//
// A failing copy is minimised (every fault that is not needed for the same broken invariant is
// removed, then each remaining fault's window is halved while it still fails) and written to
// `out_dir` as an ordinary scenario file (manager.kind set) that `rcsim run` replays. Findings are
// distinct by the invariant broken (generic or the scenario's own, the failed expectation's kind and
// controller); invariants the scenario breaks without added faults are not findings.
//
// Deterministic: the same file, options and seed give the same schedules and findings (wall times
// aside); `jobs` only changes how fast.
#ifndef RCSIM_HARNESS_EXPLORE_H_
#define RCSIM_HARNESS_EXPLORE_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "engine/status.h"
#include "engine/time.h"

namespace rcsim {

// Perturbed runs are drawn in batches of this many. From the second batch on, half of the schedules
// mutate one that produced a trace never seen before (novelty: a new digest), as coverage-guided
// fuzzers keep inputs that reach new behaviour; the other half are drawn afresh.
constexpr int kExploreBatch = 100;

struct ExploreOptions {
  std::string manager;  // "modern" or "2014" ("": the scenario's manager.kind)
  int runs = 100;       // perturbed runs (with `time`: at most this many); 0: only the scenario as written
  // Wall-time budget for the perturbed runs (zero: none): runs go in batches of `batch` until
  // `runs` or the budget is reached. The schedules are the same sequence either way; only how far
  // into it the exploration gets depends on the machine.
  std::chrono::duration<double> time{0};
  uint64_t seed = 1;
  int max_faults = 2;  // faults added per run (1..max_faults)
  int jobs = 1;
  int batch = kExploreBatch;  // runs per batch (tests use smaller ones to reach later batches)
  std::string out_dir;        // where minimised failing scenarios are written ("": nowhere)
  Duration converge_within = std::chrono::seconds(30);
};

struct ExploreFinding {
  // "invariant: converged web" (a generic invariant) or "scenario: converged web" (the scenario's own
  // expectation, which an added fault may break by design).
  std::string invariant;
  // 1-based index of the first perturbed run that broke it; 0: the scenario as written (no fault
  // added) already breaks it for this manager (then `faults` is 0 and `scenario` is that run).
  int first_run = 0;
  double first_wall_seconds = 0;  // wall time from the start of the exploration to that run's batch
  int faults = 0;                 // after minimisation
  std::string file;               // the written scenario ("" without out_dir)
  // The 2014 flaws behind it (names as in scenarios/flaws): the baseline traces some as they happen
  // (lock left held, watch loop died, ignored errors, stale resync, a ready pod deleted while a
  // not-ready one stays, a sync waiting for the global lock); FlawsOf says which broken invariant
  // and trace lines stand for which flaw.
  std::vector<std::string> flaws;
  nlohmann::json scenario;  // the minimised scenario document
};

struct ExploreResult {
  std::string scenario;
  int runs = 0;
  int failing = 0;
  int distinct_traces = 0;  // distinct trace digests among the perturbed runs
  int novel_mutations = 0;  // runs that mutated an earlier novel schedule
  double wall_seconds = 0;
  std::vector<ExploreFinding> findings;
};

// kInvalid for a file that cannot be read or parsed, or that uses include or matrix.
Result<ExploreResult> Explore(const std::string& path, const ExploreOptions& options, std::ostream* log);

// The 2014 flaws a run shows: `invariant` as in ExploreFinding, `trace` the run's trace lines.
std::vector<std::string> FlawsOf(const std::string& invariant, const std::vector<std::string>& trace);

// The scenario as explore checks it without an added fault (run 0): the document with the generic
// invariants appended (never_above with allow_late_orphans, converged after everything settled).
nlohmann::json AsExplored(const nlohmann::json& doc, const ExploreOptions& options);

// The perturbed documents of one exploration, without running them (for tests): `moments` are the
// candidate times in seconds.
std::vector<nlohmann::json> PerturbedDocuments(const nlohmann::json& doc, const std::vector<double>& moments,
                                               const ExploreOptions& options);

}  // namespace rcsim

#endif  // RCSIM_HARNESS_EXPLORE_H_
