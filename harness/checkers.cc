#include "harness/checkers.h"

#include <algorithm>
#include <cstdio>

#include "engine/api_client.h"
#include "engine/labels.h"
#include "harness/duration.h"
#include "registry/registry.h"

namespace rcsim {
namespace {

using nlohmann::json;

std::string Seconds(Duration d) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3fs", ToSeconds(d));
  return buf;
}

// Seconds rounded to the microsecond, so that reports print stable numbers.
double RoundedSeconds(Duration d) {
  return static_cast<double>(std::chrono::duration_cast<std::chrono::microseconds>(d).count()) / 1e6;
}

ExpectationOutcome CheckConverged(const ConvergedExpect& c, const WorldMonitor& monitor) {
  ExpectationOutcome o;
  const WorldMonitor::Tracked* t = monitor.Find(c.namespace_, c.controller);
  std::optional<Duration> at = t ? FirstConvergedAt(t->series, c.after, c.count) : std::nullopt;
  if (!at) {
    o.passed = false;
    o.measured = nullptr;
    o.detail = "never converged after " + FormatScenarioDuration(c.after) + " (run ended at " +
               Seconds(monitor.Elapsed()) + ", limit " + FormatScenarioDuration(c.within) + ")";
    return o;
  }
  Duration took = *at - c.after;
  o.passed = took <= c.within;
  o.measured = RoundedSeconds(took);
  o.detail = "converged " + Seconds(took) + " after " + FormatScenarioDuration(c.after) + " (limit " +
             FormatScenarioDuration(c.within) + ")";
  return o;
}

std::string WindowText(Duration after, std::optional<Duration> until) {
  return " from " + FormatScenarioDuration(after) + " to " +
         (until ? FormatScenarioDuration(*until) : "the end");
}

ExpectationOutcome CheckNeverAbove(const NeverAboveExpect& c, const WorldMonitor& monitor,
                                   std::size_t probe) {
  ExpectationOutcome o;
  if (probe != kNoProbe) {
    WorldMonitor::Window w = monitor.GetWindow(probe);
    int32_t peak = w.any ? w.max_active : 0;
    o.passed = peak <= c.active;
    o.measured = peak;
    o.detail = "peak " + std::to_string(peak) + " active";
    if (w.any) o.detail += " at " + Seconds(w.max_active_at);
    o.detail += WindowText(c.after, c.until) + " (bound " + std::to_string(c.active) + ")";
    return o;
  }
  const WorldMonitor::Tracked* t = monitor.Find(c.namespace_, c.controller);
  int32_t peak = t ? (c.allow_late_orphans ? t->peak_own : t->peak_active) : 0;
  o.passed = peak <= c.active;
  o.measured = peak;
  o.detail = "peak " + std::to_string(peak) + " active";
  if (t && peak > 0) o.detail += " at " + Seconds(c.allow_late_orphans ? t->peak_own_at : t->peak_at);
  if (c.allow_late_orphans && t) {
    o.detail += " not counting orphans that came after its first pod (peak " +
                std::to_string(t->peak_active) + " counting them)";
  }
  o.detail += " (bound " + std::to_string(c.active) + ")";
  return o;
}

ExpectationOutcome CheckNeverBelow(const NeverBelowExpect& c, const WorldMonitor& monitor,
                                   std::size_t probe) {
  ExpectationOutcome o;
  WorldMonitor::Window w = monitor.GetWindow(probe);
  if (!w.any) {
    o.passed = false;
    o.measured = nullptr;
    o.detail = "the run ended before the window" + WindowText(c.after, c.until);
    return o;
  }
  o.passed = w.min_ready >= c.ready;
  o.measured = w.min_ready;
  o.detail = "lowest " + std::to_string(w.min_ready) + " ready at " + Seconds(w.min_ready_at) +
             WindowText(c.after, c.until) + " (floor " + std::to_string(c.ready) + ")";
  return o;
}

ExpectationOutcome CheckPodsMatching(const PodsMatchingExpect& c, const WorldMonitor& monitor,
                                     std::size_t probe) {
  ExpectationOutcome o;
  const WorldMonitor::Matcher& m = monitor.GetMatcher(probe);
  o.passed = true;
  o.measured = json{{"peak_active", m.peak_active}, {"running", m.running}};
  o.detail = "peak " + std::to_string(m.peak_active) + " active";
  if (m.peak_active > 0) o.detail += " at " + Seconds(m.peak_at);
  if (c.never_above) {
    o.passed = o.passed && m.peak_active <= *c.never_above;
    o.detail += " (bound " + std::to_string(*c.never_above) + ")";
  }
  o.detail += ", " + std::to_string(m.running) + " running at the end";
  if (c.final_running) {
    o.passed = o.passed && m.running == *c.final_running;
    o.detail += " (want " + std::to_string(*c.final_running) + ")";
  }
  return o;
}

ExpectationOutcome CheckCondition(const ConditionExpect& c, const WorldMonitor& monitor, SimWorld& world) {
  ExpectationOutcome o;
  std::string ns = c.namespace_;
  const WorldMonitor::Tracked* t = monitor.Find(ns, c.controller);
  bool seen = false;
  std::string reasons;
  if (t != nullptr) {
    if (auto it = t->conditions_seen.find(c.type); it != t->conditions_seen.end()) {
      for (const std::string& r : it->second) {
        seen = seen || c.reason.empty() || r == c.reason;
        reasons += (reasons.empty() ? "" : ", ") + r;
      }
      if (!c.reason.empty() && !seen) reasons += " (not " + c.reason + ")";
    }
  }
  bool at_end = false;
  if (Result<ControllerPtr> rc = world.registry().controllers().Get(ns, c.controller); rc.ok()) {
    for (const ReplicationControllerCondition& cond : (*rc)->status.conditions) {
      at_end = at_end || (cond.type == c.type && cond.status == "True");
    }
  }
  o.passed = seen == c.seen && (!c.final || *c.final == at_end);
  o.measured = json{{"seen", seen}, {"at_end", at_end}};
  o.detail = c.type + (seen ? " seen (" + reasons + ")" : " never seen") +
             (at_end ? ", present at the end" : ", absent at the end");
  return o;
}

ExpectationOutcome CheckFinal(const FinalExpect& c, SimWorld& world) {
  ExpectationOutcome o;
  SimWorld::ControllerView v = world.View(c.namespace_, c.controller);
  o.measured = json{{"running", v.running}, {"replicas_status", v.status.replicas}, {"desired", v.desired}};
  int32_t want_running = c.running.value_or(v.desired);
  bool check_running = c.running.has_value() || !c.replicas_status.has_value();
  o.passed = true;
  o.detail = "running " + std::to_string(v.running);
  if (check_running) {
    o.passed = o.passed && v.running == want_running;
    o.detail += " (want " + std::to_string(want_running) + ")";
  }
  if (c.replicas_status) {
    o.passed = o.passed && v.status.replicas == *c.replicas_status;
    o.detail += ", status.replicas " + std::to_string(v.status.replicas) + " (want " +
                std::to_string(*c.replicas_status) + ")";
  }
  return o;
}

ExpectationOutcome CheckApiCalls(const ApiCallsExpect& c, SimWorld& world) {
  ExpectationOutcome o;
  const ApiFaultCounters& counters = world.manager_api().counters();
  uint64_t calls = c.verb ? counters.calls[static_cast<int>(*c.verb)] : counters.calls_total();
  o.passed = calls <= static_cast<uint64_t>(c.at_most);
  o.measured = calls;
  o.detail = std::to_string(calls) + " " + (c.verb ? std::string(VerbKey(*c.verb)) + " " : "") +
             "calls (at most " + std::to_string(c.at_most) + ")";
  return o;
}

ExpectationOutcome CheckStatusMatches(const StatusMatchesExpect& c, SimWorld& world) {
  ExpectationOutcome o;
  std::string ns = c.namespace_;
  Result<ControllerPtr> rc = world.registry().controllers().Get(ns, c.controller);
  if (!rc.ok()) {
    o.passed = false;
    o.measured = nullptr;
    o.detail = "controller " + ns + "/" + c.controller + " does not exist at the end";
    return o;
  }
  const ReplicationController& ctl = **rc;
  TimePoint now = world.loop().Now();
  ReplicationControllerStatus want;
  const Labels* template_labels = ctl.spec.template_ ? &ctl.spec.template_->metadata.labels : nullptr;
  for (const std::string& key : world.PodsOf(ns, c.controller)) {
    std::size_t slash = key.find('/');
    PodPtr pod = world.GetPod(key.substr(0, slash), key.substr(slash + 1));
    if (!pod || !IsActive(*pod)) continue;
    ++want.replicas;
    if (template_labels && SelectorMapMatches(*template_labels, pod->metadata.labels))
      ++want.fully_labeled_replicas;
    if (IsReady(*pod)) ++want.ready_replicas;
    if (IsAvailable(*pod, ctl.spec.min_ready_seconds, now)) ++want.available_replicas;
  }
  want.observed_generation = ctl.metadata.generation;
  const ReplicationControllerStatus& got = ctl.status;
  auto to_json = [](const ReplicationControllerStatus& st) {
    return json{{"replicas", st.replicas},
                {"fullyLabeledReplicas", st.fully_labeled_replicas},
                {"readyReplicas", st.ready_replicas},
                {"availableReplicas", st.available_replicas},
                {"observedGeneration", st.observed_generation}};
  };
  o.passed = got == want;
  o.measured = json{{"status", to_json(got)}, {"observed", to_json(want)}};
  if (o.passed) {
    o.detail = "status matches (replicas " + std::to_string(got.replicas) + ", ready " +
               std::to_string(got.ready_replicas) + ", generation " +
               std::to_string(got.observed_generation) + ")";
  } else {
    o.detail = "status " + to_json(got).dump() + " but observed " + to_json(want).dump();
  }
  return o;
}

}  // namespace

std::optional<Duration> FirstConvergedAt(const std::vector<SeriesPoint>& series, Duration after,
                                         ConvergedCount count) {
  auto converged = [count](const SeriesPoint& p) {
    return (count == ConvergedCount::kActive ? p.active : p.running) == p.desired;
  };
  auto it = std::upper_bound(series.begin(), series.end(), after,
                             [](Duration t, const SeriesPoint& p) { return t < p.t; });
  if (it != series.begin() && converged(*(it - 1))) return after;
  for (; it != series.end(); ++it) {
    if (converged(*it)) return it->t;
  }
  return std::nullopt;
}

std::vector<std::size_t> PrepareChecks(const Scenario& s, WorldMonitor* monitor) {
  std::vector<std::size_t> probes;
  for (const Expectation& e : s.expect) {
    std::size_t probe = kNoProbe;
    if (const auto* n = std::get_if<NeverAboveExpect>(&e.spec);
        n && (n->after > Duration::zero() || n->until)) {
      probe = monitor->AddWindow(n->namespace_, n->controller, n->after, n->until);
    } else if (const auto* b = std::get_if<NeverBelowExpect>(&e.spec)) {
      probe = monitor->AddWindow(b->namespace_, b->controller, b->after, b->until);
    } else if (const auto* m = std::get_if<PodsMatchingExpect>(&e.spec)) {
      probe = monitor->AddMatcher(m->namespace_, m->selector);
    }
    probes.push_back(probe);
  }
  return probes;
}

ExpectationOutcome CheckExpectation(const Expectation& e, const WorldMonitor& monitor, SimWorld& world,
                                    std::size_t probe) {
  ExpectationOutcome o;
  if (const auto* c = std::get_if<ConvergedExpect>(&e.spec)) {
    o = CheckConverged(*c, monitor);
  } else if (const auto* n = std::get_if<NeverAboveExpect>(&e.spec)) {
    o = CheckNeverAbove(*n, monitor, probe);
  } else if (const auto* b = std::get_if<NeverBelowExpect>(&e.spec)) {
    o = CheckNeverBelow(*b, monitor, probe);
  } else if (const auto* pm = std::get_if<PodsMatchingExpect>(&e.spec)) {
    o = CheckPodsMatching(*pm, monitor, probe);
  } else if (const auto* cd = std::get_if<ConditionExpect>(&e.spec)) {
    o = CheckCondition(*cd, monitor, world);
  } else if (const auto* f = std::get_if<FinalExpect>(&e.spec)) {
    o = CheckFinal(*f, world);
  } else if (const auto* a = std::get_if<ApiCallsExpect>(&e.spec)) {
    o = CheckApiCalls(*a, world);
  } else if (const auto* m = std::get_if<StatusMatchesExpect>(&e.spec)) {
    o = CheckStatusMatches(*m, world);
  } else if (const auto* r = std::get_if<RestartsAtMostExpect>(&e.spec)) {
    const int64_t restarts = world.cluster().restarts();
    o.passed = restarts <= r->at_most;
    o.measured = restarts;
    o.detail = std::to_string(restarts) + " container restarts (at most " + std::to_string(r->at_most) + ")";
  }
  o.kind = e.kind;
  o.text = e.text;
  return o;
}

}  // namespace rcsim
