// rcsim: runs scenario files against the replication manager in the simulated world.
//
//   rcsim run PATH... [--seed N] [--seeds N] [--tier fast|slow|all] [--filter REGEX] [--jobs N]
//                     [--report DIR] [--quiet] [--shard K/N [--timings DIR]] [--baseline DIR
//                     [--regression 1.2x] [--fail-on-regression]] [--events FILE] [--timeout D]
//   rcsim run --real PATH... [--kubeconfig FILE [--context C]] [--report DIR] [--timeout D] ...
//   rcsim run --compare PATH... [--seeds N] [--report DIR]
//   rcsim run PATH... [--manager modern|2014|both]
//   rcsim explore FILE... [--manager modern|2014] [--runs N] [--seed S] [--jobs N] [--out DIR]
//   rcsim report merge DIR... --out DIR
//   rcsim replay FILE [--seed N] [--manager modern|2014]
//   rcsim validate PATH...
//   rcsim schema
//
// Exit status: 0 every run passed, 1 a run failed, 2 bad input or usage (nothing ran).
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <variant>
#include <vector>

#include "harness/duration.h"
#include "harness/explore.h"
#include "harness/runner.h"
#include "harness/scenario.h"
#include "harness/scenario_expand.h"
#include "harness/scenario_fields.h"
#include "harness/suite.h"
#include "reports/html_report.h"
#include "reports/json_report.h"
#include "reports/junit_report.h"
#include "reports/manager_pairs.h"
#include "reports/mode_comparison.h"
#include "reports/report_set.h"
#include "reports/suite_stats.h"
#ifdef RCSIM_REAL_MODE
#include "harness/real/real_bench.h"
#include "harness/real/real_runner.h"
#endif

namespace rcsim {
namespace {

constexpr int kExitPass = 0;
constexpr int kExitFail = 1;
constexpr int kExitUsage = 2;

const char kUsage[] =
    R"(usage: rcsim run PATH... [options]     run scenario files (folders are searched for *.json,
                                       *.yaml and *.yml)
       rcsim replay FILE [--seed N] [--manager M]
                                       run one scenario and print its full event trace
                                       (FILE#RUN for one run of a matrix file)
       rcsim explore FILE... [options] run perturbed copies of each scenario (faults placed at the
                                       manager's syncs) and write minimised failing ones to --out
       rcsim validate PATH...          parse and check scenario files without running them
       rcsim schema                    print the JSON Schema (draft 2020-12) of scenario files
       rcsim convert FILE              print a JSON scenario file as YAML (same scenario, same runs)
       rcsim bench --real [--quick] [--json FILE]  production figures on a stack of its own: raw
                                       etcd puts and create Txns, pods/s (1 RC of 1000, 100 RCs of
                                       10), delete->replacement, pods created straight through the
                                       API (--quick: the smallest sizes, a smoke run)
       rcsim --help

run options:
  --seed N          run every scenario with seed N instead of its own
  --seeds N         swarm mode: run every scenario with N seeds derived from its own (or --seed)
  --tier T          fast, slow or all (default all)
  --filter REGEX    only scenarios whose name matches REGEX (ECMAScript, searched)
  --jobs N          run N scenarios at once (default: the number of CPUs)
  --report DIR      write DIR/<scenario>.json, DIR/runs.json, DIR/junit.xml and DIR/index.html
  --quiet           print only failures and the summary line
  --shard K/N       run only shard K of N (1 <= K <= N) of the (scenario, seed) pairs
  --timings DIR     balance the shards by the wall times of an earlier report (default: by count)
  --baseline DIR    compare with an earlier report: verdicts, convergence, API calls
  --regression Fx   a change beyond F times is a regression (default 1.2x)
  --fail-on-regression  exit 1 when a run regressed against the baseline
  --events FILE     write every run's world changes and manager actions as JSON Lines
  --timeout D       stop and fail a run after D of wall time (e.g. 5m)
  --manager M       modern, 2014 or both: the manager to run instead of each scenario's manager.kind;
                    both runs every scenario on each and shows the verdicts side by side (a flagged
                    run of the other manager is named <scenario>.2014 or <scenario>.modern)

real mode (docs/scenarios.md, "Real mode"):
  --real            run each scenario against real processes on the wall clock: etcd, the apiserver,
                    the controller-manager behind rcsim's fault proxy, one node agent per node (at
                    most 16) running the pods as processes (one stack per scenario, on free loopback
                    ports, stopped at the end, also on failure or SIGINT)
  --hollow-nodes    with --real / --compare: hollow nodes instead of node agents (pods get a Running
                    status, nothing runs; any number of nodes; no kill_pods or fail_node)
  --etcd-members N  with --real / --compare: an etcd cluster of N members (1, 3 or 5; default 1), for
                    restart_etcd's member and kill_etcd_leader
  --kubeconfig F    with --real: use the cluster of this kubeconfig instead (events that need process
                    control or the fault proxy are refused); --context C picks its context
  --compare         run each scenario in the simulation and for real; report both side by side
                    (a verdict that differs is a failure). With --seeds N the simulation runs N seeds
                    and real mode once (on the first of them): real convergence against the seeds'
                    median, min and max; a failure unless every seed's verdict is the real one
  --apiserver-binary F, --controller-manager-binary F, --node-agent-binary F, --etcd-binary F
                    the programs real mode starts (default: beside rcsim in the build tree, /usr/bin/etcd)

  rcsim report merge DIR... --out DIR   join shard reports into one (JSON, JUnit, HTML)

explore options: --manager modern|2014, --runs N (default 100; 0: only the scenario as written, with
  the generic invariants), --time D (a wall-time budget shared by the files; without --runs, as many
  runs as it allows), --seed S (default 1), --max-faults N (default 2), --jobs N, --out DIR (minimised
  failing scenarios, replayable with rcsim run, and summary.json)

Exit status: 0 if every run passed, 1 if any failed, 2 on bad input or usage
(validate: 0 if every file is valid, 2 otherwise).
The scenario format is described in docs/scenarios.md.
)";

struct UsageError {
  std::string message;
};

int Usage(const std::string& message) {
  std::cerr << "rcsim: " << message << "\n\n" << kUsage;
  return kExitUsage;
}

uint64_t ParseUint(std::string_view flag, std::string_view text, uint64_t min, uint64_t max) {
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size() || text.empty()) {
    throw UsageError{std::string(flag) + ": expected a non-negative integer, got \"" + std::string(text) +
                     "\""};
  }
  if (v < min || v > max) {
    throw UsageError{std::string(flag) + ": must be between " + std::to_string(min) + " and " +
                     std::to_string(max) + ", got " + std::string(text)};
  }
  return v;
}

// Options of both commands; flags accept "--flag value" and "--flag=value".
struct Args {
  std::vector<std::string> paths;
  SuiteOptions suite;
  bool seed_given = false;
  int jobs = 0;
  std::string report_dir;
  bool quiet = false;
  bool help = false;
  int shard_k = 0, shard_n = 0;
  std::string timings_dir;
  std::string baseline_dir;
  double regression = 1.2;
  bool fail_on_regression = false;
  std::string events_file;
  double timeout_seconds = 0;
  bool real = false;
  bool compare = false;
  std::string kubeconfig;
  std::string context;
  std::string apiserver_binary;
  std::string controller_manager_binary;
  std::string node_agent_binary;
  bool hollow_nodes = false;
  int etcd_members = 1;
  std::string etcd_binary = "/usr/bin/etcd";
  std::string manager;  // "", "modern", "2014" or (run only) "both"
};

Args ParseArgs(const std::vector<std::string>& argv, bool replay) {
  Args a;
  for (std::size_t i = 0; i < argv.size(); ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      a.help = true;
      continue;
    }
    if (arg.rfind("--", 0) != 0 || arg == "--") {
      if (arg == "--") {
        for (++i; i < argv.size(); ++i) a.paths.push_back(argv[i]);
        break;
      }
      a.paths.push_back(arg);
      continue;
    }
    std::string flag = arg, value;
    bool has_value = false;
    if (std::size_t eq = arg.find('='); eq != std::string::npos) {
      flag = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      has_value = true;
    }
    auto take = [&]() -> std::string {
      if (has_value) return value;
      if (i + 1 >= argv.size()) throw UsageError{flag + ": missing value"};
      return argv[++i];
    };
    if (flag == "--quiet" && !replay) {
      if (has_value) throw UsageError{"--quiet takes no value"};
      a.quiet = true;
    } else if (flag == "--seed") {
      a.suite.seed = ParseUint(flag, take(), 0, UINT64_MAX);
      a.seed_given = true;
    } else if (flag == "--seeds" && !replay) {
      a.suite.seeds = static_cast<int>(ParseUint(flag, take(), 1, 100000));
    } else if (flag == "--tier" && !replay) {
      a.suite.tier = take();
      if (a.suite.tier != "fast" && a.suite.tier != "slow" && a.suite.tier != "all") {
        throw UsageError{"--tier: must be fast, slow or all, got \"" + a.suite.tier + "\""};
      }
    } else if (flag == "--filter" && !replay) {
      a.suite.filter = take();
    } else if (flag == "--jobs" && !replay) {
      a.jobs = static_cast<int>(ParseUint(flag, take(), 1, 1024));
    } else if (flag == "--report" && !replay) {
      a.report_dir = take();
      if (a.report_dir.empty()) throw UsageError{"--report: empty directory"};
    } else if (flag == "--shard" && !replay) {
      std::string v = take();
      std::size_t slash = v.find('/');
      if (slash == std::string::npos) throw UsageError{"--shard: expected K/N, got \"" + v + "\""};
      a.shard_n = static_cast<int>(ParseUint(flag, v.substr(slash + 1), 1, 100000));
      a.shard_k = static_cast<int>(ParseUint(flag, v.substr(0, slash), 1, static_cast<uint64_t>(a.shard_n)));
    } else if (flag == "--timings" && !replay) {
      a.timings_dir = take();
    } else if (flag == "--baseline" && !replay) {
      a.baseline_dir = take();
    } else if (flag == "--regression" && !replay) {
      std::string v = take();
      std::string num = !v.empty() && v.back() == 'x' ? v.substr(0, v.size() - 1) : v;
      char* end = nullptr;
      double f = std::strtod(num.c_str(), &end);
      if (num.empty() || end != num.c_str() + num.size() || !(f >= 1.0 && f <= 1000.0)) {
        throw UsageError{"--regression: expected a factor such as 1.2x (>= 1), got \"" + v + "\""};
      }
      a.regression = f;
    } else if (flag == "--fail-on-regression" && !replay) {
      if (has_value) throw UsageError{"--fail-on-regression takes no value"};
      a.fail_on_regression = true;
    } else if (flag == "--events" && !replay) {
      a.events_file = take();
      if (a.events_file.empty()) throw UsageError{"--events: empty file name"};
    } else if ((flag == "--real" || flag == "--compare") && !replay) {
      if (has_value) throw UsageError{flag + " takes no value"};
      (flag == "--real" ? a.real : a.compare) = true;
    } else if (flag == "--kubeconfig" && !replay) {
      a.kubeconfig = take();
      if (a.kubeconfig.empty()) throw UsageError{"--kubeconfig: empty file name"};
    } else if (flag == "--context" && !replay) {
      a.context = take();
    } else if (flag == "--apiserver-binary" && !replay) {
      a.apiserver_binary = take();
    } else if (flag == "--controller-manager-binary" && !replay) {
      a.controller_manager_binary = take();
    } else if (flag == "--node-agent-binary" && !replay) {
      a.node_agent_binary = take();
    } else if (flag == "--etcd-members" && !replay) {
      const std::string v = take();
      if (v != "1" && v != "3" && v != "5")
        throw UsageError{"--etcd-members: must be 1, 3 or 5, got \"" + v + "\""};
      a.etcd_members = std::stoi(v);
    } else if (flag == "--hollow-nodes" && !replay) {
      if (has_value) throw UsageError{"--hollow-nodes takes no value"};
      a.hollow_nodes = true;
    } else if (flag == "--etcd-binary" && !replay) {
      a.etcd_binary = take();
    } else if (flag == "--manager") {
      a.manager = take();
      if (a.manager != "modern" && a.manager != "2014" && (replay || a.manager != "both")) {
        throw UsageError{std::string("--manager: must be modern, 2014") + (replay ? "" : " or both") +
                         ", got \"" + a.manager + "\""};
      }
    } else if (flag == "--timeout") {
      std::string v = take();
      Result<Duration> d = ParseDuration(v);
      if (!d.ok() || *d <= Duration::zero())
        throw UsageError{"--timeout: expected a duration such as 5m, got \"" + v + "\""};
      a.timeout_seconds = ToSeconds(*d);
    } else {
      throw UsageError{"unknown option " + flag + (replay ? " for replay" : "")};
    }
  }
  return a;
}

std::string Secs(Duration d) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3fs", ToSeconds(d));
  return buf;
}

std::string ResultLine(const RunResult& r) {
  char wall[32];
  std::snprintf(wall, sizeof(wall), "%.2fs", r.wall_seconds);
  std::string conv = r.any_not_converged ? "never" : r.convergence ? Secs(*r.convergence) : "-";
  std::string line =
      std::string(r.passed ? "PASS" : "FAIL") + "  " + r.scenario + "  seed=" + std::to_string(r.seed) +
      (r.mode == "real" ? "  mode=real" : "") + "  converged=" + conv +
      (r.mode == "real" ? "  elapsed=" : "  virtual=") +
      FormatScenarioDuration(std::chrono::duration_cast<std::chrono::milliseconds>(r.virtual_time)) +
      "  wall=" + wall;
  if (!r.passed) line += (r.mode == "real" ? "  rerun: " : "  replay: ") + ReplayCommandFor(r);
  return line;
}

std::string FailureDetails(const RunResult& r) {
  std::string out;
  if (!r.error.empty()) out += "    error: " + r.error + "\n";
  for (const ExpectationOutcome& o : r.expectations) {
    if (!o.passed) out += "    failed " + o.text + ": " + o.detail + "\n";
  }
  return out;
}

// A one-line progress bar, drawn only when stdout is a terminal.
class Progress {
 public:
  Progress(std::size_t total, bool enabled) : total_(total), enabled_(enabled && total > 1) {}
  void Clear() {
    if (enabled_ && drawn_) std::cout << "\r\033[K" << std::flush;
    drawn_ = false;
  }
  void Draw(std::size_t done, std::size_t failed) {
    if (!enabled_) return;
    constexpr int kWidth = 30;
    int filled = static_cast<int>(kWidth * done / total_);
    std::cout << "\r[" << std::string(filled, '#') << std::string(kWidth - filled, '.') << "] " << done << "/"
              << total_ << (failed ? "  " + std::to_string(failed) + " failed" : "") << std::flush;
    drawn_ = true;
  }

 private:
  std::size_t total_;
  bool enabled_;
  bool drawn_ = false;
};

// An upper bound of the pods a scenario asks for at once: its controllers' replicas plus every
// replicas an event sets.
int64_t PodsAskedFor(const Scenario& s) {
  int64_t n = 0;
  for (const ControllerConfig& c : s.controllers) n += c.replicas;
  for (const ScenarioEvent& e : s.events) {
    if (const auto* a = std::get_if<ScaleAction>(&e.action)) n += a->replicas;
    if (const auto* a = std::get_if<CreateControllerAction>(&e.action)) n += a->controller.replicas;
    if (const auto* a = std::get_if<UpdateControllerAction>(&e.action)) n += a->replicas.value_or(0);
  }
  return n;
}

// Scenarios near the parser's maxima (10M replicas) run for many minutes: say so before running.
constexpr int64_t kWarnPods = 1'000'000;
void WarnIfHuge(const std::vector<Scenario>& scenarios, double timeout_seconds) {
  for (const Scenario& s : scenarios) {
    int64_t pods = PodsAskedFor(s);
    if (pods > kWarnPods) {
      std::cerr << "rcsim: warning: " << s.file << ": asks for up to " << pods
                << " pods; the simulation needs roughly 100 s of wall time per million pods"
                << (timeout_seconds > 0 ? "" : " (bound each run with --timeout)") << "\n";
    }
  }
}

// The trace of a run as JSON Lines: {"scenario", "seed", "t" (virtual seconds), "actor", "event"}.
void AppendEvents(std::ostream& out, const RunResult& r) {
  for (const std::string& line : r.trace) {
    std::size_t a = line.find(' ');
    std::size_t b = a == std::string::npos ? std::string::npos : line.find(' ', a + 1);
    nlohmann::json j = {{"scenario", r.scenario}, {"seed", r.seed}};
    if (b == std::string::npos) {
      j["event"] = line;
    } else {
      j["t"] = std::strtod(line.substr(0, a).c_str(), nullptr);
      j["actor"] = line.substr(a + 1, b - a - 1);
      std::string ev = line.substr(b + 1);
      nlohmann::json parsed = nlohmann::json::parse(ev, nullptr, /*allow_exceptions=*/false);
      j["event"] = parsed.is_discarded() || !parsed.is_object() ? nlohmann::json(ev) : parsed;
    }
    out << j.dump() << "\n";
  }
}

#ifdef RCSIM_REAL_MODE
std::atomic<bool> g_interrupted{false};
extern "C" void OnInterrupt(int) { g_interrupted.store(true); }

// A program real mode starts: `given`, else beside rcsim in the build tree (apps/<name>/<name>), else
// in rcsim's own folder, else `name` (found on PATH by the caller's error).
std::string FindProgram(const std::string& given, const std::string& name) {
  if (!given.empty()) return given;
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (const std::filesystem::path& p :
         {self.parent_path().parent_path() / name / name, self.parent_path() / name}) {
      if (std::filesystem::exists(p, ec)) return p.string();
    }
  }
  for (const char* dir : {"/usr/local/bin/", "/usr/bin/"}) {
    if (std::filesystem::exists(std::string(dir) + name, ec)) return std::string(dir) + name;
  }
  return name;
}

#endif

int Run(const std::vector<std::string>& argv) {
  const auto wall_start = std::chrono::steady_clock::now();
  Args a = ParseArgs(argv, /*replay=*/false);
  if (a.help) {
    std::cout << kUsage;
    return kExitPass;
  }
  if (a.paths.empty()) return Usage("run: no scenario file or folder given");
  if (!a.timings_dir.empty() && a.shard_n == 0) return Usage("--timings: only with --shard");
  if (a.fail_on_regression && a.baseline_dir.empty())
    return Usage("--fail-on-regression: only with --baseline");
  Result<std::vector<std::string>> files = FindScenarioFiles(a.paths);
  if (!files.ok()) {
    std::cerr << "rcsim: " << files.status().message() << "\n";
    return kExitUsage;
  }
  Result<std::vector<Scenario>> scenarios = LoadScenarios(*files);
  if (!scenarios.ok()) {
    std::cerr << scenarios.status().message() << "\n";
    return kExitUsage;
  }
  Result<std::vector<PlannedRun>> full = PlanRuns(*scenarios, a.suite);
  if (!full.ok()) return Usage(full.status().message());
  if (a.manager == "both") {
    // Every run twice, side by side: the modern manager, then the 2014 one.
    std::vector<PlannedRun> both;
    for (const PlannedRun& p : *full) {
      for (const char* kind : {"modern", "2014"}) {
        PlannedRun q = p;
        q.manager = kind;
        q.index = both.size();
        both.push_back(q);
      }
    }
    *full = std::move(both);
  }
  std::optional<ReportSet> baseline;
  if (!a.baseline_dir.empty()) {
    Result<ReportSet> b = ReadReportSet(a.baseline_dir);
    if (!b.ok()) {
      std::cerr << "rcsim: --baseline: " << b.status().message() << "\n";
      return kExitUsage;
    }
    baseline = std::move(b).value();
  }
  std::vector<PlannedRun> plan_runs = *full;
  if (a.shard_n > 0) {
    std::map<std::pair<std::string, uint64_t>, double> costs;
    if (!a.timings_dir.empty()) {
      Result<ReportSet> t = ReadReportSet(a.timings_dir);
      if (!t.ok()) {
        std::cerr << "rcsim: --timings: " << t.status().message() << "\n";
        return kExitUsage;
      }
      for (const RunResult& r : t->results) costs[{r.scenario, r.seed}] = r.wall_seconds;
    }
    plan_runs.clear();
    for (std::size_t i : ShardIndices(*full, a.shard_k, a.shard_n, costs)) plan_runs.push_back((*full)[i]);
  }
  const std::vector<PlannedRun>* plan = &plan_runs;
  if (full->empty()) std::cerr << "rcsim: no scenario matches the tier and filter\n";
  WarnIfHuge(*scenarios, a.timeout_seconds);
  if (!a.kubeconfig.empty() && !a.real) return Usage("--kubeconfig: only with --real");
  if (!a.context.empty() && a.kubeconfig.empty()) return Usage("--context: only with --kubeconfig");
  if (a.real && a.compare) return Usage("--real and --compare: give one (--compare runs both modes)");
  if (a.hollow_nodes && !a.real && !a.compare) return Usage("--hollow-nodes: only with --real or --compare");
  if (a.etcd_members != 1 && !a.real && !a.compare)
    return Usage("--etcd-members: only with --real or --compare");
  if (a.etcd_members != 1 && !a.kubeconfig.empty()) return Usage("--etcd-members: not with --kubeconfig");
  if (!a.manager.empty() && (a.real || a.compare))
    return Usage("--manager: only in the simulation (real mode runs the controller-manager)");
#ifdef RCSIM_REAL_MODE
  RealRunOptions real_options;
  if (a.real || a.compare) {
    // Refuse, before anything runs, what real mode cannot do (every problem of every scenario).
    int problems = 0;
    for (const Scenario& s : *scenarios) {
      for (const std::string& p :
           RealModeProblems(s, !a.kubeconfig.empty(), a.hollow_nodes, a.etcd_members)) {
        std::cerr << p << "\n";
        ++problems;
      }
    }
    if (problems > 0) {
      std::cerr << "rcsim: " << problems << " event(s) or expectation(s) real mode cannot do; nothing ran\n";
      return kExitUsage;
    }
    real_options.etcd_binary = a.etcd_binary;
    real_options.apiserver_binary = FindProgram(a.apiserver_binary, "apiserver");
    real_options.controller_manager_binary = FindProgram(a.controller_manager_binary, "controller-manager");
    real_options.node_agent_binary = FindProgram(a.node_agent_binary, "node-agent");
    real_options.hollow_nodes = a.hollow_nodes;
    real_options.etcd_members = a.etcd_members;
    real_options.kubeconfig = a.kubeconfig;
    real_options.context = a.context;
    real_options.wall_timeout_seconds = a.timeout_seconds;
    real_options.logs_dir = a.report_dir;
    real_options.interrupted = [] { return g_interrupted.load(); };
    real_options.log = [](const std::string& line) { std::cerr << "rcsim: " << line << std::endl; };
    struct sigaction sa {};
    sa.sa_handler = OnInterrupt;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
  }
#else
  if (a.real || a.compare) return Usage("--real / --compare: this rcsim was built without the backends");
#endif

  const bool per_seed = a.suite.seeds > 0;
  // --compare --seeds N: the simulation runs every seed, real mode each scenario once, on its first
  // seed (a real run takes seconds of wall time where a simulated one takes milliseconds, and in real
  // mode the seed only picks the pods and nodes events hit, the timings are the wall clock's; `rcsim
  // run --real --seeds N` runs real mode N times). Renumbered as a plan of its own: a shard runs the real run
  // of the scenarios whose first seed it holds.
  std::vector<PlannedRun> real_full, real_plan;
  if (a.compare && per_seed) {
    std::set<std::size_t> in_shard;
    for (const PlannedRun& p : *plan) in_shard.insert(p.index);
    std::set<const Scenario*> seen;
    for (const PlannedRun& p : *full) {
      if (!seen.insert(p.scenario).second) continue;
      PlannedRun q = p;
      q.index = real_full.size();
      real_full.push_back(q);
      if (in_shard.count(p.index) > 0) real_plan.push_back(q);
    }
  }
  const bool real_once = a.compare && per_seed;
  const std::vector<PlannedRun>& shown = real_once ? real_plan : *plan;  // the runs printed and reported

  int jobs = a.jobs > 0 ? a.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  Progress progress(shown.size(), isatty(STDOUT_FILENO) != 0);
  // Lines are printed in plan order (so logs do not depend on --jobs), each as soon as it and every
  // run before it finished.
  std::vector<const RunResult*> finished(shown.size(), nullptr);
  std::size_t printed = 0, done = 0, failed = 0;
  RunOptions run_options;
  run_options.keep_trace = !a.events_file.empty();
  run_options.wall_timeout_seconds = a.timeout_seconds;
  if (a.manager != "both") run_options.manager = a.manager;
  std::ofstream events;
  if (!a.events_file.empty()) {
    events.open(a.events_file, std::ios::binary | std::ios::trunc);
    if (!events) {
      std::cerr << "rcsim: --events: cannot write " << a.events_file << "\n";
      return kExitUsage;
    }
  }
  progress.Draw(0, 0);
  auto on_done = [&](std::size_t i, const RunResult& r) {
    finished[i] = &r;
    ++done;
    failed += r.passed ? 0 : 1;
    progress.Clear();
    for (; printed < finished.size() && finished[printed] != nullptr; ++printed) {
      const RunResult& p = *finished[printed];
      if (!a.quiet || !p.passed) std::cout << ResultLine(p) << "\n" << (p.passed ? "" : FailureDetails(p));
      if (events.is_open()) AppendEvents(events, p);
    }
    std::cout << std::flush;
    progress.Draw(done, failed);
  };
  std::vector<RunResult> results;
  std::vector<RunResult> sim_results;  // --compare: the simulation's runs
  std::vector<std::size_t> sim_index;  // their places in the unsharded plan
  bool interrupted = false;
  if (!a.real && !a.compare) {
    results = RunPlan(*plan, jobs, run_options, on_done);
  }
#ifdef RCSIM_REAL_MODE
  if (a.compare) {
    sim_results = RunPlan(*plan, jobs, run_options, [](std::size_t, const RunResult&) {});
    for (const PlannedRun& p : *plan) sim_index.push_back(p.index);
  }
  if (a.real || a.compare) {
    // One run at a time: each starts its own processes, and runs side by side would skew the clock.
    results.resize(shown.size());
    for (std::size_t i = 0; i < shown.size(); ++i) {
      if (g_interrupted.load()) break;
      results[i] = RunScenarioReal(*shown[i].scenario, shown[i].seed, real_options);
      on_done(i, results[i]);
    }
    interrupted = g_interrupted.load();
    if (interrupted) {
      std::size_t ran = 0;
      while (ran < results.size() && finished[ran] != nullptr) ++ran;
      results.resize(ran);
      // Only the simulated runs of the scenarios that ran for real.
      std::set<std::string> ran_names;
      for (const RunResult& r : results) ran_names.insert(r.scenario);
      std::vector<RunResult> kept;
      std::vector<std::size_t> kept_index;
      for (std::size_t i = 0; i < sim_results.size(); ++i) {
        if (ran_names.count(sim_results[i].scenario) == 0) continue;
        kept.push_back(std::move(sim_results[i]));
        kept_index.push_back(sim_index[i]);
      }
      sim_results = std::move(kept);
      sim_index = std::move(kept_index);
    }
  }
#endif
  progress.Clear();
  if (events.is_open()) {
    events.close();
    if (!events) {
      std::cerr << "rcsim: --events: cannot write " << a.events_file << "\n";
      return kExitUsage;
    }
    for (RunResult& r : results) r.trace.clear();
  }
  // --compare: the swarm is the simulation's.
  const std::vector<SwarmStats> swarm =
      per_seed ? ComputeSwarmStats(a.compare ? sim_results : results) : std::vector<SwarmStats>{};
  if (per_seed) {
    for (const SwarmStats& s : swarm) {
      std::cout << "swarm " << SwarmLine(s) << "\n";
      for (std::size_t i = 0; i < s.failing_seeds.size(); ++i)
        std::cout << "    replay: " << s.replay[i] << "\n";
    }
  }
  const std::vector<ManagerPair> pairs = PairManagers(results);
  if (a.manager == "both") {
    std::cout << "managers side by side (modern | 2014):\n";
    for (const ManagerPair& p : pairs) {
      std::cout << "  " << p.scenario << "  seed=" << p.seed << "  modern "
                << (p.modern->passed ? "PASS" : "FAIL") << "  2014 " << (p.old->passed ? "PASS" : "FAIL");
      std::vector<std::string> f = FailedExpectations(*p.old);
      for (std::size_t i = 0; i < f.size(); ++i) std::cout << (i == 0 ? "  (2014 failed: " : "; ") << f[i];
      std::cout << (f.empty() ? "" : ")") << "\n";
    }
  }
  HtmlOptions html;
  int regressed = 0;
  int differing = 0;
  std::vector<RunComparison> junit_comparisons;  // --compare: the real runs against the same seed's
#ifdef RCSIM_REAL_MODE
  std::vector<ModeComparison> modes;
  if (a.compare) {
    // Per scenario, the real run against every simulated seed (reports/mode_comparison.h: a scenario
    // fails unless every seed's verdict is the real one); a 3x convergence difference from the median
    // is what the two modes are expected to stay within.
    modes = CompareModes(results, sim_results);
    html.mode_comparisons = modes;
    html.comparison_title = "Simulation and real mode";
    junit_comparisons = CompareWithBaseline(results, sim_results, 3.0);
    for (const ModeComparison& c : modes) {
      std::cout << ModeComparisonLine(c) << "\n";
      differing += c.EverySeedAgrees() ? 0 : 1;
    }
  }
#endif
  if (baseline) {
    html.comparisons = CompareWithBaseline(results, baseline->results, a.regression);
    html.regression_factor = a.regression;
    for (const RunComparison& c : html.comparisons) {
      if (!c.regressed()) continue;
      ++regressed;
      std::string why;
      for (const std::string& x : c.regressions) why += (why.empty() ? "" : "; ") + x;
      std::cout << "REGRESSED  " << c.scenario << "  seed=" << c.seed << "  " << why << "\n";
    }
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  if (!a.report_dir.empty()) {
    ReportSet set;
    set.per_seed = per_seed && !real_once;
    set.shard = a.shard_n > 0 ? std::to_string(a.shard_k) + "/" + std::to_string(a.shard_n) : "";
    set.plan_size = real_once ? real_full.size() : full->size();
    set.wall_seconds = wall;
    for (const PlannedRun& p : shown) set.plan_index.push_back(p.index);
    set.results = results;
    JunitOptions junit;
    junit.comparisons = a.compare ? junit_comparisons : html.comparisons;
    junit.regressions_fail = a.fail_on_regression;
    Status st = WriteReportSet(a.report_dir, set, html, junit);
    if (!st.ok()) {
      std::cerr << "rcsim: --report: " << st.message() << "\n";
      return kExitUsage;
    }
    if (per_seed) {
      std::ofstream(std::filesystem::path(a.report_dir) / "swarm.json")
          << SwarmStatsToJson(a.compare ? ComputeSwarmStats(results) : swarm).dump(2) << "\n";
    }
#ifdef RCSIM_REAL_MODE
    if (a.compare) {
      // DIR holds the real runs (with the comparison), DIR/sim the simulated ones, DIR/compare.json both.
      ReportSet sim_set = set;
      sim_set.per_seed = per_seed;
      sim_set.plan_size = full->size();
      sim_set.plan_index = sim_index;
      sim_set.results = sim_results;
      const std::filesystem::path sim_dir = std::filesystem::path(a.report_dir) / "sim";
      if (Status st2 = WriteReportSet(sim_dir.string(), sim_set); !st2.ok()) {
        std::cerr << "rcsim: --report: " << st2.message() << "\n";
        return kExitUsage;
      }
      if (per_seed) {
        std::ofstream(sim_dir / "swarm.json") << SwarmStatsToJson(swarm).dump(2) << "\n";
      }
      nlohmann::json cmp = nlohmann::json::array();
      for (const ModeComparison& c : modes) cmp.push_back(ModeComparisonToJson(c));
      const nlohmann::json doc = {{"runs", cmp},
                                  {"sim_seeds_per_scenario", per_seed ? a.suite.seeds : 1},
                                  {"real_runs_per_scenario", 1},
                                  {"verdict_rule", "every_seed"}};
      std::ofstream(std::filesystem::path(a.report_dir) / "compare.json") << doc.dump(2) << "\n";
    }
#endif
  }
  std::string summary =
      std::to_string(results.size() - failed) + " passed, " + std::to_string(failed) + " failed";
  if (baseline) summary += ", " + std::to_string(regressed) + " regressed";
  if (a.compare)
    summary += " (real mode), " + std::to_string(differing) + " verdicts differ from the simulation";
  if (interrupted) summary += " (interrupted: the rest did not run)";
  std::cout << summary << std::endl;
  if (interrupted) return 130;
  if (failed > 0 || differing > 0) return kExitFail;
  return regressed > 0 && a.fail_on_regression ? kExitFail : kExitPass;
}

// rcsim bench --real [--quick] [--json FILE] [--apiserver-binary F] [--controller-manager-binary F]
//                    [--etcd-binary F]
int Bench(const std::vector<std::string>& argv) {
#ifdef RCSIM_REAL_MODE
  bool real = false;
  std::string json_file;
  bool quick = false;
  std::string apiserver, manager, etcd;
  for (std::size_t i = 0; i < argv.size(); ++i) {
    const std::string& arg = argv[i];
    auto take = [&]() -> std::string {
      if (i + 1 >= argv.size()) throw UsageError{arg + ": missing value"};
      return argv[++i];
    };
    if (arg == "--real") {
      real = true;
    } else if (arg == "--json") {
      json_file = take();
    } else if (arg == "--apiserver-binary") {
      apiserver = take();
    } else if (arg == "--controller-manager-binary") {
      manager = take();
    } else if (arg == "--etcd-binary") {
      etcd = take();
    } else if (arg == "--quick") {
      quick = true;
    } else {
      throw UsageError{"unknown option " + arg + " for bench"};
    }
  }
  if (!real) return Usage("bench: only --real is implemented (simulation benchmarks: build/bench/*)");
  RealBenchOptions o = quick ? QuickRealBenchOptions() : RealBenchOptions{};
  if (!etcd.empty()) o.etcd_binary = etcd;
  o.apiserver_binary = FindProgram(apiserver, "apiserver");
  o.controller_manager_binary = FindProgram(manager, "controller-manager");
  Result<nlohmann::json> figures = RunRealBench(o);
  if (!figures.ok()) {
    std::cerr << "rcsim: bench: " << figures.status().ToString() << "\n";
    return kExitFail;
  }
  std::cout << figures->dump(2) << std::endl;
  if (!json_file.empty()) std::ofstream(json_file) << figures->dump(2) << "\n";
  return kExitPass;
#else
  (void)argv;
  return Usage("bench --real: this rcsim was built without the backends");
#endif
}

// rcsim report merge DIR... --out DIR
int Report(const std::vector<std::string>& argv) {
  if (argv.empty() || argv[0] != "merge") return Usage("report: expected \"report merge DIR... --out DIR\"");
  std::vector<std::string> dirs;
  std::string out;
  for (std::size_t i = 1; i < argv.size(); ++i) {
    const std::string& arg = argv[i];
    if (arg == "--out") {
      if (i + 1 >= argv.size()) throw UsageError{"--out: missing value"};
      out = argv[++i];
    } else if (arg.rfind("--out=", 0) == 0) {
      out = arg.substr(6);
    } else if (arg.rfind("--", 0) == 0) {
      throw UsageError{"unknown option " + arg + " for report merge"};
    } else {
      dirs.push_back(arg);
    }
  }
  if (dirs.empty()) return Usage("report merge: no report directory given");
  if (out.empty()) return Usage("report merge: --out DIR is required");
  std::vector<ReportSet> sets;
  for (const std::string& d : dirs) {
    Result<ReportSet> s = ReadReportSet(d);
    if (!s.ok()) {
      std::cerr << "rcsim: " << s.status().message() << "\n";
      return kExitUsage;
    }
    sets.push_back(std::move(s).value());
  }
  Result<ReportSet> merged = MergeReportSets(sets);
  if (!merged.ok()) {
    std::cerr << "rcsim: report merge: " << merged.status().message() << "\n";
    return kExitUsage;
  }
  if (merged->results.size() != merged->plan_size) {
    std::cerr << "rcsim: warning: merged " << merged->results.size() << " of the suite's "
              << merged->plan_size << " runs (a shard is missing?)\n";
  }
  if (Status st = WriteReportSet(out, *merged); !st.ok()) {
    std::cerr << "rcsim: report merge: " << st.message() << "\n";
    return kExitUsage;
  }
  if (merged->per_seed) {
    std::ofstream(std::filesystem::path(out) / "swarm.json")
        << SwarmStatsToJson(ComputeSwarmStats(merged->results)).dump(2) << "\n";
  }
  std::size_t failed = 0;
  for (const RunResult& r : merged->results) failed += r.passed ? 0 : 1;
  std::cout << (merged->results.size() - failed) << " passed, " << failed << " failed (merged " << dirs.size()
            << " reports)" << std::endl;
  return failed == 0 ? kExitPass : kExitFail;
}

// rcsim explore FILE... [--manager M] [--runs N | --time D] [--seed S] [--max-faults N] [--jobs N]
// [--out DIR]
int ExploreCommand(const std::vector<std::string>& argv) {
  ExploreOptions o;
  bool runs_given = false;
  std::chrono::duration<double> budget{0};
  o.jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::string> files;
  for (std::size_t i = 0; i < argv.size(); ++i) {
    const std::string& arg = argv[i];
    if (arg.rfind("--", 0) != 0) {
      files.push_back(arg);
      continue;
    }
    if (i + 1 >= argv.size()) throw UsageError{arg + ": missing value"};
    const std::string& v = argv[++i];
    if (arg == "--manager") {
      if (v != "modern" && v != "2014")
        throw UsageError{"--manager: must be modern or 2014, got \"" + v + "\""};
      o.manager = v;
    } else if (arg == "--runs") {
      o.runs = static_cast<int>(ParseUint(arg, v, 0, 10'000'000));
      runs_given = true;
    } else if (arg == "--time") {
      Result<Duration> d = ParseDuration(v);
      if (!d.ok() || *d <= Duration::zero())
        throw UsageError{"--time: expected a duration such as 10m, got \"" + v + "\""};
      budget = std::chrono::duration<double>(ToSeconds(*d));
    } else if (arg == "--seed") {
      o.seed = ParseUint(arg, v, 0, UINT64_MAX);
    } else if (arg == "--max-faults") {
      o.max_faults = static_cast<int>(ParseUint(arg, v, 1, 16));
    } else if (arg == "--jobs") {
      o.jobs = static_cast<int>(ParseUint(arg, v, 1, 1024));
    } else if (arg == "--out") {
      o.out_dir = v;
    } else {
      throw UsageError{"unknown option " + arg + " for explore"};
    }
  }
  if (files.empty()) return Usage("explore: no scenario file given");
  // --time without --runs: as many runs as the budget allows; the budget is shared by the files (each
  // gets an even part of what is left).
  if (budget.count() > 0 && !runs_given) o.runs = 10'000'000;
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  int found = 0;
  int64_t total_runs = 0;
  // The 2014 flaws found: the first time (wall seconds from the start) and the file that showed each.
  std::map<std::string, std::pair<double, std::string>> flaws;
  nlohmann::json summary = nlohmann::json::array();
  for (std::size_t fi = 0; fi < files.size(); ++fi) {
    const std::string& f = files[fi];
    if (budget.count() > 0) {
      const double left = std::max(0.0, budget.count() - elapsed());
      o.time = std::chrono::duration<double>(std::max(1e-9, left / static_cast<double>(files.size() - fi)));
    }
    const double file_start = elapsed();
    Result<ExploreResult> r = Explore(f, o, &std::cout);
    if (!r.ok()) {
      std::cerr << r.status().message() << "\n";
      return kExitUsage;
    }
    found += static_cast<int>(r->findings.size());
    char rate[64];
    std::snprintf(rate, sizeof(rate), "%.1f", r->wall_seconds > 0 ? r->runs / r->wall_seconds : 0.0);
    std::cout << "explore " << r->scenario << ": " << r->runs << " runs, " << r->distinct_traces
              << " distinct traces (" << r->novel_mutations << " runs mutated a novel schedule), "
              << r->failing << " failing, " << r->findings.size() << " distinct failures, " << rate
              << " runs/s\n";
    total_runs += r->runs;
    nlohmann::json findings = nlohmann::json::array();
    for (const ExploreFinding& x : r->findings) {
      const double at = file_start + x.first_wall_seconds;
      for (const std::string& flaw : x.flaws) {
        auto it = flaws.find(flaw);
        if (it == flaws.end() || at < it->second.first) flaws[flaw] = {at, x.file.empty() ? f : x.file};
      }
      findings.push_back({{"invariant", x.invariant},
                          {"first_run", x.first_run},
                          {"first_wall_seconds", at},
                          {"faults", x.faults},
                          {"file", x.file},
                          {"flaws", x.flaws}});
    }
    summary.push_back({{"file", f},
                       {"scenario", r->scenario},
                       {"runs", r->runs},
                       {"failing", r->failing},
                       {"distinct_traces", r->distinct_traces},
                       {"wall_seconds", r->wall_seconds},
                       {"findings", std::move(findings)}});
  }
  if (!flaws.empty()) {
    std::cout << "2014 flaws found: " << flaws.size() << " of 7\n";
    for (const auto& [flaw, first] : flaws) {
      char at[32];
      std::snprintf(at, sizeof(at), "%.1f", first.first);
      std::cout << "  " << flaw << ": first after " << at << " s (" << first.second << ")\n";
    }
  }
  char rate[64];
  std::snprintf(rate, sizeof(rate), "%.1f",
                elapsed() > 0 ? static_cast<double>(total_runs) / elapsed() : 0.0);
  std::cout << "explored " << files.size() << " file(s): " << total_runs << " runs, " << found
            << " distinct failures, " << rate << " runs/s\n";
  if (!o.out_dir.empty()) {
    nlohmann::json flaws_json = nlohmann::json::object();
    for (const auto& [flaw, first] : flaws)
      flaws_json[flaw] = {{"first_wall_seconds", first.first}, {"file", first.second}};
    std::filesystem::create_directories(o.out_dir);
    std::ofstream(std::filesystem::path(o.out_dir) / "summary.json")
        << nlohmann::json{{"runs", total_runs},
                          {"wall_seconds", elapsed()},
                          {"files", std::move(summary)},
                          {"flaws", std::move(flaws_json)}}
               .dump(2)
        << "\n";
  }
  return found > 0 ? kExitFail : kExitPass;
}

int Replay(const std::vector<std::string>& argv) {
  Args a = ParseArgs(argv, /*replay=*/true);
  if (a.help) {
    std::cout << kUsage;
    return kExitPass;
  }
  if (a.paths.size() != 1) return Usage("replay: give exactly one scenario file");
  Result<Scenario> s = LoadScenarioFile(a.paths[0]);
  if (!s.ok()) {
    std::cerr << s.status().message() << "\n";
    return kExitUsage;
  }
  RunOptions options;
  options.keep_trace = true;
  options.manager = a.manager;
  options.wall_timeout_seconds = a.timeout_seconds;
  RunResult r = RunScenario(*s, a.suite.seed.value_or(s->seed), options);
  std::cout << "# " << s->name << " seed=" << r.seed << " (virtual time in seconds, actor, event)\n";
  for (const std::string& line : r.trace) std::cout << line << "\n";
  std::cout << "# trace digest " << std::hex << r.trace_digest << std::dec << ", " << r.trace_lines
            << " lines\n";
  for (const ExpectationOutcome& o : r.expectations) {
    std::cout << "# " << (o.passed ? "ok     " : "FAILED ") << o.text << ": " << o.detail << "\n";
  }
  if (!r.error.empty()) std::cout << "# error: " << r.error << "\n";
  std::cout << ResultLine(r) << std::endl;
  return r.passed ? kExitPass : kExitFail;
}

// Parses every file (reporting every bad one, not only the first) without running anything.
int Validate(const std::vector<std::string>& argv) {
  std::vector<std::string> paths;
  for (const std::string& arg : argv) {
    if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      return kExitPass;
    }
    if (arg.rfind("--", 0) == 0) throw UsageError{"unknown option " + arg + " for validate"};
    paths.push_back(arg);
  }
  if (paths.empty()) return Usage("validate: no scenario file or folder given");
  Result<std::vector<std::string>> files = FindScenarioFiles(paths);
  if (!files.ok()) {
    std::cerr << "rcsim: " << files.status().message() << "\n";
    return kExitUsage;
  }
  int bad = 0;
  std::map<std::string, std::string> names;  // scenario name -> file
  for (const std::string& f : *files) {
    Result<std::vector<Scenario>> runs = LoadScenarioFileRuns(f);
    if (!runs.ok()) {
      std::cerr << runs.status().message() << "\n";
      ++bad;
      continue;
    }
    for (const Scenario& s : *runs) {
      auto [it, inserted] = names.emplace(s.name, f);
      if (!inserted) {
        std::cerr << f << ": /name: scenario name \"" << s.name << "\" is also used by " << it->second
                  << "\n";
        ++bad;
        break;
      }
    }
  }
  if (bad > 0) {
    std::cerr << bad << " of " << files->size() << " scenario files invalid\n";
    return kExitUsage;
  }
  std::cout << files->size() << " scenario files valid";
  if (names.size() != files->size()) std::cout << " (" << names.size() << " runs)";
  std::cout << "\n";
  return kExitPass;
}

int Schema(const std::vector<std::string>& argv) {
  if (!argv.empty()) return Usage("schema takes no arguments");
  std::cout << ScenarioJsonSchema().dump(2) << "\n";
  return kExitPass;
}

int Convert(const std::vector<std::string>& argv) {
  if (argv.size() != 1) return Usage("convert: give exactly one scenario file");
  Result<ScenarioDocument> doc = LoadDocument(argv[0]);
  if (!doc.ok()) {
    std::cerr << doc.status().message() << "\n";
    return kExitUsage;
  }
  if (Result<Scenario> s = ParseScenarioDocument(*doc); !s.ok()) {
    std::cerr << s.status().message() << "\n";
    return kExitUsage;
  }
  // In the file's own key order when it is JSON.
  std::ifstream in(argv[0], std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (doc->format == DocumentFormat::kJson) {
    std::cout << EmitYaml(nlohmann::ordered_json::parse(text.str()));
  } else {
    std::cout << EmitYaml(doc->value);
  }
  return kExitPass;
}

int Main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) return Usage("no command given");
  std::string command = args[0];
  args.erase(args.begin());
  // `rcsim COMMAND --help` (before any `--`) prints the usage for every command, as `rcsim --help`.
  for (const std::string& arg : args) {
    if (arg == "--") break;
    if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      return kExitPass;
    }
  }
  try {
    if (command == "run") return Run(args);
    if (command == "replay") return Replay(args);
    if (command == "explore") return ExploreCommand(args);
    if (command == "validate") return Validate(args);
    if (command == "schema") return Schema(args);
    if (command == "convert") return Convert(args);
    if (command == "report") return Report(args);
    if (command == "bench") return Bench(args);
    if (command == "--help" || command == "-h" || command == "help") {
      std::cout << kUsage;
      return kExitPass;
    }
    return Usage("unknown command \"" + command + "\"");
  } catch (const UsageError& e) {
    return Usage(e.message);
  }
}

}  // namespace
}  // namespace rcsim

int main(int argc, char** argv) { return rcsim::Main(argc, argv); }
