#include "harness/explore.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <utility>

#include "baseline2014/replication_manager_2014.h"
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

// When the scenario's own events are over (ms): the latest settled_at (the end of each fault window,
// a restart's downtime, ...), not only the latest `at`. 0 for a document that does not parse.
int64_t OwnEventsSettledMs(const json& base) {
  Result<Scenario> s = ParseScenario(base, "");
  if (!s.ok()) return 0;
  Duration end{0};
  for (const ScenarioEvent& e : s->events) end = std::max(end, e.settled_at);
  return std::chrono::duration_cast<std::chrono::milliseconds>(end).count();
}

// The scenario plus `faults` and the generic invariants. `own_end_ms`: OwnEventsSettledMs(base).
json Build(const json& base, int64_t own_end_ms, const std::vector<Fault>& faults, const std::string& manager,
           Duration converge_within) {
  json doc = base;
  if (!manager.empty()) doc["manager"]["kind"] = manager;
  json& events = doc["events"];
  if (!events.is_array()) events = json::array();
  // Convergence is owed only once nothing blocks it: neither the scenario's own faults (a quota that
  // forbids creates for a minute, a partition) nor the added ones.
  int64_t last_end = own_end_ms;
  for (const Fault& f : faults) {
    events.push_back(f.event);
    last_end = std::max(last_end, f.end_ms);
  }
  const int64_t duration = DurationMs(doc, "duration", 600000);
  // A manager whose syncs kept failing backs off and, with nothing to wake it (a quota lifted is no
  // event), acts again at its next resync at the latest: convergence is owed within that resync plus
  // 10 s for the pods to start, where that is longer than `converge_within`.
  const json& manager_doc = doc.contains("manager") ? doc["manager"] : json::object();
  auto ms = [](Duration d) { return std::chrono::duration_cast<std::chrono::milliseconds>(d).count(); };
  const int64_t resync = manager_doc.value("kind", "modern") == "2014"
                             ? ms(Manager2014Options{}.resync_period)
                             : DurationMs(manager_doc, "resync", ms(ManagerConfig{}.resync));
  const int64_t within = std::max(ms(converge_within), resync + 10000);
  // Every controller the scenario defines, as namespace/name: when it was last created (0 for the
  // scenario's own) and last deleted (-1: never).
  struct Life {
    std::string bare;
    int64_t created_ms = 0;
    int64_t deleted_ms = -1;
  };
  std::map<std::string, Life> lives;
  auto life_of = [&](const json& c) -> Life& {
    Life& life = lives[c.value("namespace", "default") + "/" + c.value("name", "")];
    life.bare = c.value("name", "");
    return life;
  };
  for (const json& c : doc["controllers"]) life_of(c);
  bool capacity_limited = false;  // the cluster, not the manager, may keep pods from running
  for (const json& e : events) {
    if (e.contains("create_controller")) {
      Life& life = life_of(e["create_controller"]);
      life.created_ms = std::max(life.created_ms, DurationMs(e, "at", 0));
    }
    if (e.contains("node_capacity")) capacity_limited = true;
  }
  std::map<std::string, std::set<std::string>> same_name;  // name -> the namespaces defining it
  for (const auto& [qualified, life] : lives)
    same_name[life.bare].insert(qualified.substr(0, qualified.find('/')));
  for (const json& e : events) {
    if (!e.contains("delete_controller")) continue;
    std::string ref = e["delete_controller"].value("controller", "");  // "name" or "namespace/name"
    if (ref.find('/') == std::string::npos) {
      const std::set<std::string>& in = same_name[ref];
      ref = (in.size() == 1 ? *in.begin() : "default") + "/" + ref;
    }
    auto it = lives.find(ref);
    if (it != lives.end()) it->second.deleted_ms = std::max(it->second.deleted_ms, DurationMs(e, "at", 0));
  }
  json& expect = doc["expect"];
  for (const auto& [qualified, life] : lives) {
    // A bare name where it is unique (as the scenarios write it), else namespace/name.
    const std::string name = same_name[life.bare].size() > 1 ? qualified : life.bare;
    // Orphans that come to the controller after it has its pods (another controller deleted without
    // cascade) are adopted and the surplus deleted: an overshoot by design, not by its creates.
    expect.push_back({{"never_above", {{"controller", name}, {"allow_late_orphans", true}}}});
    // Convergence is owed by a controller that exists at the end, once every event is over (its
    // create_controller among them). Where node_capacity may leave pods unschedulable, the manager's
    // part is its active pods.
    if (life.deleted_ms < life.created_ms && last_end + within <= duration) {
      json converged = {{"controller", name}, {"after", Ms(last_end)}, {"within", Ms(within)}};
      if (capacity_limited) converged["count"] = "active";
      expect.push_back({{"converged", converged}});
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

// The candidate moments: the times (ms) of the manager's sync trace lines and of the scenario's own
// events (a fault just before a scale or a kill shapes what the manager sees of it), distinct, in order.
std::vector<int64_t> Moments(const std::vector<std::string>& trace, const json& doc) {
  std::vector<int64_t> out;
  for (const std::string& line : trace) {
    std::size_t a = line.find(' ');
    if (a == std::string::npos || line.compare(a + 1, 13, "manager sync ") != 0) continue;
    out.push_back(static_cast<int64_t>(std::strtod(line.substr(0, a).c_str(), nullptr) * 1000));
  }
  if (doc.contains("events") && doc["events"].is_array()) {
    for (const json& e : doc["events"]) {
      if (e.is_object() && e.contains("at")) out.push_back(DurationMs(e, "at", 0));
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

struct Draw {
  std::vector<Fault> faults;
  json doc;
};

Fault DrawAtAMoment(Rng& rng, const std::vector<int64_t>& moments, int64_t duration) {
  const int64_t m = moments.empty() ? 0 : moments[rng.Below(moments.size())];
  return DrawFault(rng, m, duration);
}

// 1..max_faults faults, each at a candidate moment.
std::vector<Fault> FreshFaults(Rng& rng, const std::vector<int64_t>& moments, int64_t duration,
                               const ExploreOptions& o) {
  std::vector<Fault> faults;
  const int n = 1 + static_cast<int>(rng.Below(static_cast<uint64_t>(std::max(1, o.max_faults))));
  faults.reserve(static_cast<std::size_t>(n));
  for (int k = 0; k < n; ++k) faults.push_back(DrawAtAMoment(rng, moments, duration));
  return faults;
}

// A schedule near `parent`: one more fault (while under max_faults), or one of its faults drawn again.
std::vector<Fault> Mutate(Rng& rng, std::vector<Fault> parent, const std::vector<int64_t>& moments,
                          int64_t duration, const ExploreOptions& o) {
  if (parent.empty() || (static_cast<int>(parent.size()) < o.max_faults && rng.Bernoulli(0.5))) {
    parent.push_back(DrawAtAMoment(rng, moments, duration));
  } else {
    parent[rng.Below(parent.size())] = DrawAtAMoment(rng, moments, duration);
  }
  return parent;
}

// `count` schedules: fresh ones, or (half of them, once `novel` holds any) mutations of a novel one.
std::vector<Draw> DrawBatch(Rng& rng, int count, const json& base, int64_t own_end_ms,
                            const std::vector<int64_t>& moments, const std::vector<std::vector<Fault>>& novel,
                            const ExploreOptions& o, int* mutations) {
  std::vector<Draw> out;
  const int64_t duration = DurationMs(base, "duration", 600000);
  for (int i = 0; i < count; ++i) {
    Draw d;
    if (!novel.empty() && rng.Bernoulli(0.5)) {
      d.faults = Mutate(rng, novel[rng.Below(novel.size())], moments, duration, o);
      ++*mutations;
    } else {
      d.faults = FreshFaults(rng, moments, duration, o);
    }
    d.doc = Build(base, own_end_ms, d.faults, o.manager, o.converge_within);
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

bool TraceHas(const std::vector<std::string>& trace, const char* mark) {
  return std::any_of(trace.begin(), trace.end(),
                     [mark](const std::string& line) { return line.find(mark) != std::string::npos; });
}

bool Breaks(const std::string& invariant, const char* kind) {
  const std::size_t colon = invariant.find(": ");
  return colon != std::string::npos && invariant.compare(colon + 2, std::strlen(kind), kind) == 0;
}

}  // namespace

std::vector<std::string> FlawsOf(const std::string& invariant, const std::vector<std::string>& trace) {
  std::vector<std::string> out;
  // Traced by the baseline as they happen: the run exercised them.
  const bool lock_held = TraceHas(trace, "returns with the lock held");
  if (lock_held) out.emplace_back("lock left held when listing fails");
  if (TraceHas(trace, "watch loop died")) out.emplace_back("a deleted controller crashes the watch loop");
  if (TraceHas(trace, "(ignored)")) out.emplace_back("create and delete errors ignored");
  if (TraceHas(trace, "older than the watch's"))
    out.emplace_back("stale resync overwriting a newer watch event");
  // Flaws that show only in what they break.
  if (TraceHas(trace, "is not ready") &&
      (Breaks(invariant, "converged") || Breaks(invariant, "final") || Breaks(invariant, "never_below"))) {
    out.emplace_back("scale-down deletes whatever comes first");
  }
  if (Breaks(invariant, "never_above")) out.emplace_back("double creation when the pod list lags");
  if (!lock_held && TraceHas(trace, "waits for the global lock") && Breaks(invariant, "converged")) {
    out.emplace_back("sequential creates under one global lock");
  }
  return out;
}

json AsExplored(const json& doc, const ExploreOptions& options) {
  return Build(doc, OwnEventsSettledMs(doc), {}, options.manager, options.converge_within);
}

std::vector<json> PerturbedDocuments(const json& doc, const std::vector<double>& moments,
                                     const ExploreOptions& options) {
  std::vector<int64_t> ms;
  ms.reserve(moments.size());
  for (double m : moments) ms.push_back(static_cast<int64_t>(m * 1000));
  std::vector<json> out;
  Mt19937Rng rng(DeriveSeed(options.seed, 15));
  int mutations = 0;
  for (Draw& d : DrawBatch(rng, options.runs, doc, OwnEventsSettledMs(doc), ms, {}, options, &mutations))
    out.push_back(std::move(d.doc));
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
  const std::vector<int64_t> moments = Moments(ref.trace, base);
  ExploreResult result;
  result.scenario = reference->name;
  if (log != nullptr) {
    *log << "explore " << reference->name << ": reference " << (ref.passed ? "PASS" : "FAIL") << ", "
         << moments.size() << " candidate moments\n";
  }

  // Invariants the scenario breaks without any added fault are reported as such, not as findings of
  // a perturbation.
  const int64_t own_end = OwnEventsSettledMs(base);
  Result<RunResult> unperturbed = RunDoc(Build(base, own_end, {}, o.manager, o.converge_within), path,
                                         /*keep_trace=*/true);
  if (!unperturbed.ok()) return unperturbed.status();
  const std::size_t own = base.contains("expect") && base["expect"].is_array() ? base["expect"].size() : 0;
  const std::set<std::string> already = BrokenInvariants(*unperturbed, own);

  // The runs, batch by batch; only the first schedule to break each invariant is kept.
  struct First {
    std::size_t run = 0;
    std::vector<Fault> faults;
    double wall_seconds = 0;
  };
  std::map<std::string, First> first;  // invariant -> first run breaking it
  Mt19937Rng rng(DeriveSeed(o.seed, 15));
  std::vector<std::vector<Fault>> novel;  // schedules whose trace was new
  std::set<uint64_t> digests;
  const bool timed = o.time.count() > 0;
  // At least one batch, even when the reference runs used up the budget.
  while (result.runs < o.runs && (result.runs == 0 || !timed || wall() < o.time.count())) {
    const std::size_t start = static_cast<std::size_t>(result.runs);
    std::vector<Draw> batch = DrawBatch(rng, std::min(std::max(1, o.batch), o.runs - result.runs), base,
                                        own_end, moments, novel, o, &result.novel_mutations);
    std::vector<Scenario> scenarios;
    scenarios.reserve(batch.size());
    for (const Draw& d : batch) {
      Result<Scenario> s = ParseScenario(d.doc, path);
      if (!s.ok())
        return Status(Code::kInternal, "explore built an invalid scenario: " + s.status().message());
      scenarios.push_back(std::move(s).value());
    }
    std::vector<PlannedRun> plan;
    for (std::size_t i = 0; i < scenarios.size(); ++i)
      plan.push_back(PlannedRun{&scenarios[i], scenarios[i].seed, i, ""});
    std::vector<double> finished_at(plan.size(), 0);
    std::vector<RunResult> results =
        RunPlan(plan, std::max(1, o.jobs), RunOptions{},
                [&](std::size_t i, const RunResult&) { finished_at[i] = wall(); });
    result.runs += static_cast<int>(results.size());
    for (std::size_t i = 0; i < results.size(); ++i) {
      if (digests.insert(results[i].trace_digest).second) novel.push_back(batch[i].faults);
      if (results[i].passed) continue;
      ++result.failing;
      for (const std::string& inv : BrokenInvariants(results[i], own)) {
        if (already.count(inv) == 0) first.emplace(inv, First{start + i, batch[i].faults, finished_at[i]});
      }
    }
  }
  result.distinct_traces = static_cast<int>(digests.size());

  const std::string manager_name = o.manager.empty() ? reference->manager.kind : o.manager;
  for (const std::string& inv : already) {
    ExploreFinding finding;
    finding.invariant = inv;
    finding.scenario = Build(base, own_end, {}, o.manager, o.converge_within);
    if (manager_name == "2014") finding.flaws = FlawsOf(inv, unperturbed->trace);
    const std::string name = reference->name + "-explore-" + std::to_string(result.findings.size() + 1);
    finding.scenario["name"] = name;
    finding.scenario["description"] = "found by rcsim explore: " + path +
                                      " as written (no fault added) breaks " + inv + " on the " +
                                      manager_name + " manager";
    if (!o.out_dir.empty()) {
      std::filesystem::create_directories(o.out_dir);
      finding.file = (std::filesystem::path(o.out_dir) / (name + ".json")).string();
      std::ofstream(finding.file) << finding.scenario.dump(2) << "\n";
    }
    if (log != nullptr) {
      *log << "  breaks " << inv << " as written (no fault added)"
           << (finding.file.empty() ? "" : " -> " + finding.file) << "\n";
      for (const std::string& f : finding.flaws) *log << "    2014 flaw: " << f << "\n";
    }
    result.findings.push_back(std::move(finding));
  }

  // Minimise the first run of each broken invariant, in order of discovery.
  std::vector<std::pair<std::size_t, std::string>> order;
  order.reserve(first.size());
  for (const auto& [inv, f] : first) order.emplace_back(f.run, inv);
  std::sort(order.begin(), order.end());
  for (const auto& entry : order) {
    const std::size_t i = entry.first;
    const std::string& inv = entry.second;
    std::vector<Fault> faults = first[inv].faults;
    auto still_fails = [&](const std::vector<Fault>& f) {
      Result<RunResult> r = RunDoc(Build(base, own_end, f, o.manager, o.converge_within), path);
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
    finding.first_wall_seconds = first[inv].wall_seconds;
    finding.faults = static_cast<int>(faults.size());
    finding.scenario = Build(base, own_end, faults, o.manager, o.converge_within);
    if (Result<RunResult> replay = RunDoc(finding.scenario, path, /*keep_trace=*/true); replay.ok()) {
      if (manager_name == "2014") finding.flaws = FlawsOf(inv, replay->trace);
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
      for (const std::string& f : finding.flaws) *log << "    2014 flaw: " << f << "\n";
    }
    result.findings.push_back(std::move(finding));
  }
  result.wall_seconds = wall();
  return result;
}

}  // namespace rcsim
