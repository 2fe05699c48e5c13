// rcsim: runs scenario files against the replication manager in the simulated world.
//
//   rcsim run PATH... [--seed N] [--seeds N] [--tier fast|slow|all] [--filter REGEX] [--jobs N]
//                     [--report DIR] [--quiet]
//   rcsim replay FILE [--seed N]
//   rcsim validate PATH...
//   rcsim schema
//
// Exit status: 0 every run passed, 1 a run failed, 2 bad input or usage (nothing ran).
#include <unistd.h>

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "harness/duration.h"
#include "harness/runner.h"
#include "harness/scenario.h"
#include "harness/scenario_expand.h"
#include "harness/scenario_fields.h"
#include "harness/suite.h"
#include "reports/html_report.h"
#include "reports/json_report.h"
#include "reports/junit_report.h"

namespace rcsim {
namespace {

constexpr int kExitPass = 0;
constexpr int kExitFail = 1;
constexpr int kExitUsage = 2;

const char kUsage[] =
    R"(usage: rcsim run PATH... [options]     run scenario files (folders are searched for *.json,
                                       *.yaml and *.yml)
       rcsim replay FILE [--seed N]    run one scenario and print its full event trace
                                       (FILE#RUN for one run of a matrix file)
       rcsim validate PATH...          parse and check scenario files without running them
       rcsim schema                    print the JSON Schema (draft 2020-12) of scenario files
       rcsim convert FILE              print a JSON scenario file as YAML (same scenario, same runs)
       rcsim --help

run options:
  --seed N          run every scenario with seed N instead of its own
  --seeds N         swarm mode: run every scenario with N seeds derived from its own (or --seed)
  --tier T          fast, slow or all (default all)
  --filter REGEX    only scenarios whose name matches REGEX (ECMAScript, searched)
  --jobs N          run N scenarios at once (default: the number of CPUs)
  --report DIR      write DIR/<scenario>.json, DIR/junit.xml and DIR/index.html
  --quiet           print only failures and the summary line

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
      "  converged=" + conv + "  virtual=" +
      FormatScenarioDuration(std::chrono::duration_cast<std::chrono::milliseconds>(r.virtual_time)) +
      "  wall=" + wall;
  if (!r.passed) line += "  replay: " + ReplayCommand(r.file, r.seed);
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

int WriteReports(const std::string& dir, const std::vector<RunResult>& results, bool per_seed) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    std::cerr << "rcsim: --report: cannot create " << dir << ": " << ec.message() << "\n";
    return kExitUsage;
  }
  for (const RunResult& r : results) {
    Status st = WriteJsonReport(r, (std::filesystem::path(dir) / JsonReportFileName(r, per_seed)).string());
    if (!st.ok()) {
      std::cerr << "rcsim: " << st.message() << "\n";
      return kExitUsage;
    }
  }
  for (Status st : {WriteJunitReport(results, per_seed, (std::filesystem::path(dir) / "junit.xml").string()),
                    WriteHtmlReport(results, (std::filesystem::path(dir) / "index.html").string())}) {
    if (!st.ok()) {
      std::cerr << "rcsim: " << st.message() << "\n";
      return kExitUsage;
    }
  }
  return kExitPass;
}

int Run(const std::vector<std::string>& argv) {
  Args a = ParseArgs(argv, /*replay=*/false);
  if (a.help) {
    std::cout << kUsage;
    return kExitPass;
  }
  if (a.paths.empty()) return Usage("run: no scenario file or folder given");
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
  Result<std::vector<PlannedRun>> plan = PlanRuns(*scenarios, a.suite);
  if (!plan.ok()) return Usage(plan.status().message());
  if (plan->empty()) std::cerr << "rcsim: no scenario matches the tier and filter\n";

  int jobs = a.jobs > 0 ? a.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  Progress progress(plan->size(), isatty(STDOUT_FILENO) != 0);
  // Lines are printed in plan order (so logs do not depend on --jobs), each as soon as it and every
  // run before it finished.
  std::vector<const RunResult*> finished(plan->size(), nullptr);
  std::size_t printed = 0, done = 0, failed = 0;
  progress.Draw(0, 0);
  std::vector<RunResult> results = RunPlan(*plan, jobs, RunOptions{}, [&](std::size_t i, const RunResult& r) {
    finished[i] = &r;
    ++done;
    failed += r.passed ? 0 : 1;
    progress.Clear();
    for (; printed < finished.size() && finished[printed] != nullptr; ++printed) {
      const RunResult& p = *finished[printed];
      if (!a.quiet || !p.passed) std::cout << ResultLine(p) << "\n" << (p.passed ? "" : FailureDetails(p));
    }
    std::cout << std::flush;
    progress.Draw(done, failed);
  });
  progress.Clear();
  if (!a.report_dir.empty()) {
    if (int rc = WriteReports(a.report_dir, results, a.suite.seeds > 0); rc != kExitPass) return rc;
  }
  std::cout << (results.size() - failed) << " passed, " << failed << " failed" << std::endl;
  return failed == 0 ? kExitPass : kExitFail;
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
  try {
    if (command == "run") return Run(args);
    if (command == "replay") return Replay(args);
    if (command == "validate") return Validate(args);
    if (command == "schema") return Schema(args);
    if (command == "convert") return Convert(args);
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
