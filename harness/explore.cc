#include "harness/explore.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <utility>

#include "engine/rng.h"
#include "harness/duration.h"
#include "harness/runner.h"
#include "harness/scenario.h"
#include "harness/scenario_document.h"
#include "harness/suite.h"

namespace rcsim {
namespace {

using nlohmann::json;

// One added fault: its event and the virtual time its window ends.
struct Fault {
  json event;
  int64_t end_ms = 0;
};

std::string Ms(int64_t ms) { return std::to_string(ms) + "ms"; }

int64_t DurationMs(const json& doc, const char* key, int64_t fallback_ms) {
  if (!doc.contains(key) || !doc[key].is_string()) return fallback_ms;
  Result<Duration> d = ParseDuration(doc[key].get<std::string>());
  return d.ok() ? std::chrono::duration_cast<std::chrono::milliseconds>(*d).count() : fallback_ms;
}

// Draws one fault near `moment_ms` (a time the manager synced), within the run.
Fault DrawFault(Rng& rng, int64_t moment_ms, int64_t duration_ms) {
  static const int64_t kWindows[] = {2000, 5000, 10000};
  int64_t window = kWindows[rng.Below(3)];
  const uint64_t kind = rng.Below(7);
  int64_t at = moment_ms - 200;  // just before the sync: the fault shapes what it sees
  json action;
  const char* key = "";
  int64_t end_extra = 0;
  switch (kind) {
    case 0: {  // stale view
      const int64_t lag = rng.Bernoulli(0.5) ? 1000 : 3000;
      key = "stale_reads";
      action = {{"for", Ms(window)}, {"lag", Ms(lag)}};
      end_extra = lag;
      break;
    }
    case 1: {  // intermediate state: crash right after the sync's first calls
      at = moment_ms + static_cast<int64_t>(rng.Between(1, 20));
      const int64_t down = rng.Bernoulli(0.5) ? 0 : 1000;
      key = "restart_manager";
      action = {{"down", Ms(down)}};
      window = 0;
      end_extra = down;
      break;
    }
    case 2:  // intermediate state: creates time out, outcome unknown, applied late
      key = "api_faults";
      action = {{"for", Ms(window)}, {"timeout_rate", 1.0}, {"latency", "3s"}, {"verbs", {"create"}}};
      break;
    case 3:  // writes fail
      key = "api_faults";
      action = {{"for", Ms(window)}, {"error_rate", 1.0}, {"verbs", {"create", "delete"}}};
      break;
    case 4:  // lists fail
      key = "api_faults";
      action = {{"for", Ms(window)}, {"error_rate", 1.0}, {"verbs", {"list"}}};
      break;
    case 5:  // unobserved state: watches broken
      key = "watch_faults";
      action = {{"for", Ms(window)}, {"drop", true}};
      break;
    default:  // unobserved state: watch events late
      key = "watch_faults";
      action = {{"for", Ms(window)}, {"delay", "3s"}};
      break;
  }
  at = std::clamp<int64_t>(at, 0, std::max<int64_t>(0, duration_ms - window - end_extra));
  Fault f;
  f.event = {{"at", Ms(at)}, {key, action}};
  f.end_ms = at + window + end_extra;
  return f;
}

// The scenario plus `faults` and the generic invariants.
json Build(const json& base, const std::vector<Fault>& faults, const std::string& manager,
           Duration converge_within) {
  json doc = base;
  if (!manager.empty()) doc["manager"]["kind"] = manager;
  json& events = doc["events"];
  if (!events.is_array()) events = json::array();
  int64_t last_end = 0;
  for (const json& e : events) last_end = std::max(last_end, DurationMs(e, "at", 0));
  for (const Fault& f : faults) {
    events.push_back(f.event);
    last_end = std::max(last_end, f.end_ms);
  }
  std::set<std::string> deleted;
  for (const json& e : events) {
    if (e.contains("delete_controller")) deleted.insert(e["delete_controller"].value("controller", ""));
  }
  const int64_t duration = DurationMs(doc, "duration", 600000);
  const int64_t within = std::chrono::duration_cast<std::chrono::milliseconds>(converge_within).count();
  json& expect = doc["expect"];
  for (const json& c : doc["controllers"]) {
    const std::string name = c.value("name", "");
    expect.push_back({{"never_above", {{"controller", name}}}});
    if (deleted.count(name) == 0 && last_end + within <= duration) {
      expect.push_back(
          {{"converged", {{"controller", name}, {"after", Ms(last_end)}, {"within", Ms(within)}}}});
    }
  }
  return doc;
}

// "<source>: kind controller" of each failed expectation (source "invariant" for the generic ones
// Build appended after the scenario's `own` expectations, else "scenario"), and "error" for a run error.
std::set<std::string> BrokenInvariants(const RunResult& r, std::size_t own) {
  std::set<std::string> out;
  if (!r.error.empty()) out.insert("error");
  for (std::size_t i = 0; i < r.expectations.size(); ++i) {
    const ExpectationOutcome& o = r.expectations[i];
    if (o.passed) continue;
    const std::string source = i < own ? "scenario: " : "invariant: ";
    json e = json::parse(o.text, nullptr, /*allow_exceptions=*/false);
    std::string controller;
    if (e.is_object() && e.contains(o.kind) && e[o.kind].is_object())
      controller = e[o.kind].value("controller", "");
    out.insert(source + (controller.empty() ? o.kind : o.kind + " " + controller));
  }
  return out;
}

// The candidate moments: the times (ms) of the manager's sync trace lines, distinct, in order.
std::vector<int64_t> SyncMoments(const std::vector<std::string>& trace) {
  std::vector<int64_t> out;
  for (const std::string& line : trace) {
    std::size_t a = line.find(' ');
    if (a == std::string::npos || line.compare(a + 1, 13, "manager sync ") != 0) continue;
    const int64_t ms = static_cast<int64_t>(std::strtod(line.substr(0, a).c_str(), nullptr) * 1000);
    if (out.empty() || out.back() != ms) out.push_back(ms);
  }
  return out;
}

struct Draw {
  std::vector<Fault> faults;
  json doc;
};

std::vector<Draw> DrawAll(const json& base, const std::vector<int64_t>& moments, const ExploreOptions& o) {
  std::vector<Draw> out;
  Mt19937Rng rng(DeriveSeed(o.seed, 15));
  const int64_t duration = DurationMs(base, "duration", 600000);
  for (int i = 0; i < o.runs; ++i) {
    Draw d;
    const int n = 1 + static_cast<int>(rng.Below(static_cast<uint64_t>(std::max(1, o.max_faults))));
    for (int k = 0; k < n; ++k) {
      const int64_t m = moments.empty() ? 0 : moments[rng.Below(moments.size())];
      d.faults.push_back(DrawFault(rng, m, duration));
    }
    d.doc = Build(base, d.faults, o.manager, o.converge_within);
    out.push_back(std::move(d));
  }
  return out;
}

Result<RunResult> RunDoc(const json& doc, const std::string& file, bool keep_trace = false) {
  Result<Scenario> s = ParseScenario(doc, file);
  if (!s.ok()) return s.status();
  RunOptions options;
  options.keep_trace = keep_trace;
  return RunScenario(*s, s->seed, options);
}

// Trace lines of the 2014 baseline that show which of its flaws a run exercised.
constexpr std::pair<const char*, const char*> kFlawMarks[] = {
    {"returns with the lock held", "lock left held when listing fails"},
    {"watch loop died", "a deleted controller crashes the watch loop"},
    {"(ignored)", "create and delete errors ignored"},
    {"older than the watch's", "stale resync overwriting a newer watch event"},
};

std::vector<std::string> FlawsShown(const std::vector<std::string>& trace) {
  std::vector<std::string> out;
  for (const auto& [mark, flaw] : kFlawMarks) {
    for (const std::string& line : trace) {
      if (line.find(mark) != std::string::npos) {
        out.push_back(flaw);
        break;
      }
    }
  }
  return out;
}

}  // namespace

std::vector<json> PerturbedDocuments(const json& doc, const std::vector<double>& moments,
                                     const ExploreOptions& options) {
  std::vector<int64_t> ms;
  for (double m : moments) ms.push_back(static_cast<int64_t>(m * 1000));
  std::vector<json> out;
  for (Draw& d : DrawAll(doc, ms, options)) out.push_back(std::move(d.doc));
  return out;
}

Result<ExploreResult> Explore(const std::string& path, const ExploreOptions& o, std::ostream* log) {
  const auto wall_start = std::chrono::steady_clock::now();
  auto wall = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  };
  Result<ScenarioDocument> loaded = LoadDocument(path);
  if (!loaded.ok()) return loaded.status();
  json base = loaded->value;
  if (!base.is_object() || base.contains("include") || base.contains("matrix")) {
    return Status(Code::kInvalid, path + ": explore takes a scenario without include or matrix");
  }
  Result<Scenario> reference = ParseScenario(base, path);
  if (!reference.ok()) return reference.status();
  RunOptions ref_options;
  ref_options.keep_trace = true;
  ref_options.manager = o.manager;
  RunResult ref = RunScenario(*reference, reference->seed, ref_options);
  const std::vector<int64_t> moments = SyncMoments(ref.trace);
  ExploreResult result;
  result.scenario = reference->name;
  if (log != nullptr) {
    *log << "explore " << reference->name << ": reference " << (ref.passed ? "PASS" : "FAIL") << ", "
         << moments.size() << " sync moments\n";
  }

  // Invariants the scenario breaks without any added fault are not findings.
  Result<RunResult> unperturbed = RunDoc(Build(base, {}, o.manager, o.converge_within), path);
  if (!unperturbed.ok()) return unperturbed.status();
  const std::size_t own = base.contains("expect") && base["expect"].is_array() ? base["expect"].size() : 0;
  const std::set<std::string> already = BrokenInvariants(*unperturbed, own);

  std::vector<Draw> draws = DrawAll(base, moments, o);
  std::vector<Scenario> scenarios;
  scenarios.reserve(draws.size());
  for (const Draw& d : draws) {
    Result<Scenario> s = ParseScenario(d.doc, path);
    if (!s.ok()) return Status(Code::kInternal, "explore built an invalid scenario: " + s.status().message());
    scenarios.push_back(std::move(s).value());
  }
  std::vector<PlannedRun> plan;
  for (std::size_t i = 0; i < scenarios.size(); ++i)
    plan.push_back(PlannedRun{&scenarios[i], scenarios[i].seed, i, ""});
  std::vector<double> finished_at(plan.size(), 0);
  std::vector<RunResult> results = RunPlan(plan, std::max(1, o.jobs), RunOptions{},
                                           [&](std::size_t i, const RunResult&) { finished_at[i] = wall(); });
  result.runs = static_cast<int>(results.size());
  std::set<uint64_t> digests;
  std::map<std::string, std::size_t> first;  // invariant -> first run breaking it
  for (std::size_t i = 0; i < results.size(); ++i) {
    digests.insert(results[i].trace_digest);
    if (results[i].passed) continue;
    ++result.failing;
    for (const std::string& inv : BrokenInvariants(results[i], own)) {
      if (already.count(inv) == 0) first.emplace(inv, i);
    }
  }
  result.distinct_traces = static_cast<int>(digests.size());

  // Minimise the first run of each broken invariant, in order of discovery.
  std::vector<std::pair<std::size_t, std::string>> order;
  for (const auto& [inv, i] : first) order.emplace_back(i, inv);
  std::sort(order.begin(), order.end());
  for (const auto& [i, inv] : order) {
    std::vector<Fault> faults = draws[i].faults;
    auto still_fails = [&](const std::vector<Fault>& f) {
      Result<RunResult> r = RunDoc(Build(base, f, o.manager, o.converge_within), path);
      return r.ok() && BrokenInvariants(*r, own).count(inv) > 0;
    };
    for (std::size_t k = faults.size(); k-- > 0;) {
      std::vector<Fault> fewer = faults;
      fewer.erase(fewer.begin() + static_cast<std::ptrdiff_t>(k));
      if (still_fails(fewer)) faults = std::move(fewer);
    }
    // Earliest end: halve each remaining fault's window while the invariant still breaks.
    for (std::size_t k = 0; k < faults.size(); ++k) {
      std::string key;
      for (auto it = faults[k].event.begin(); it != faults[k].event.end(); ++it) {
        if (it.key() != "at") key = it.key();
      }
      for (int step = 0; step < 3 && faults[k].event[key].contains("for"); ++step) {
        const int64_t window = DurationMs(faults[k].event[key], "for", 0);
        if (window < 200) break;
        std::vector<Fault> trial = faults;
        trial[k].event[key]["for"] = Ms(window / 2);
        trial[k].end_ms -= window - window / 2;
        if (!still_fails(trial)) break;
        faults = std::move(trial);
      }
    }
    ExploreFinding finding;
    finding.invariant = inv;
    finding.first_run = static_cast<int>(i) + 1;
    finding.first_wall_seconds = finished_at[i];
    finding.faults = static_cast<int>(faults.size());
    finding.scenario = Build(base, faults, o.manager, o.converge_within);
    if (Result<RunResult> replay = RunDoc(finding.scenario, path, /*keep_trace=*/true); replay.ok()) {
      finding.flaws = FlawsShown(replay->trace);
    }
    const std::string name = reference->name + "-explore-" + std::to_string(result.findings.size() + 1);
    finding.scenario["name"] = name;
    finding.scenario["description"] = "found by rcsim explore (seed " + std::to_string(o.seed) + ", run " +
                                      std::to_string(i + 1) + ") from " + path + ": breaks " + inv;
    if (!o.out_dir.empty()) {
      std::filesystem::create_directories(o.out_dir);
      finding.file = (std::filesystem::path(o.out_dir) / (name + ".json")).string();
      std::ofstream(finding.file) << finding.scenario.dump(2) << "\n";
    }
    if (log != nullptr) {
      *log << "  breaks " << inv << ": first at run " << finding.first_run << " ("
           << finding.first_wall_seconds << " s), minimised to " << finding.faults << " fault(s)"
           << (finding.file.empty() ? "" : " -> " + finding.file) << "\n";
      for (const std::string& f : finding.flaws) *log << "    2014 flaw in its trace: " << f << "\n";
    }
    result.findings.push_back(std::move(finding));
  }
  result.wall_seconds = wall();
  return result;
}

}  // namespace rcsim
