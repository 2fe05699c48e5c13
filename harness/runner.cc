#include "harness/runner.h"

#include <algorithm>
#include <chrono>
#include <numeric>

#include "engine/api_client.h"
#include "fakes/faulty_api_client.h"
#include "fakes/sim_world.h"
#include "harness/checkers.h"
#include "harness/event_injector.h"
#include "harness/manager_2014.h"
#include "harness/world_monitor.h"

namespace rcsim {
namespace {

SimWorldOptions WorldOptions(const Scenario& s, uint64_t seed, bool keep_trace) {
  SimWorldOptions o;
  o.seed = seed;
  o.nodes = s.cluster.nodes;
  o.pod_start_min = s.cluster.pod_start_latency.min;
  o.pod_start_max = s.cluster.pod_start_latency.max;
  o.api_latency_min = s.cluster.api_latency.min;
  o.api_latency_max = s.cluster.api_latency.max;
  o.watch_latency_min = s.cluster.watch_latency.min;
  o.watch_latency_max = s.cluster.watch_latency.max;
  o.node_monitor_grace_period = s.cluster.node_monitor_grace_period;
  o.pod_eviction_timeout = s.cluster.pod_eviction_timeout;
  o.max_pods = s.cluster.max_pods;
  // The kubelet's status updates (10s) and the controller's checks (5s) are well inside the default
  // 40s grace; a shorter grace (real mode's 3s) shortens them to a quarter of it, as real mode's
  // agents heartbeat every 500ms, so healthy nodes are never taken for lost.
  o.heartbeat_interval = std::min(o.heartbeat_interval, s.cluster.node_monitor_grace_period / 4);
  o.node_monitor_period = std::min(o.node_monitor_period, s.cluster.node_monitor_grace_period / 4);
  o.manager.workers = s.manager.workers;
  o.manager.resync_period = s.manager.resync;
  o.manager.burst_replicas = s.manager.burst_replicas;
  o.keep_trace_lines = keep_trace;
  return o;
}

bool IsPlainShellWord(const std::string& s) {
  if (s.empty()) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.' || c == '/' || c == '+' || c == ',' || c == ':' || c == '=';
  });
}

}  // namespace

std::string ReplayCommand(const std::string& file, uint64_t seed, const std::string& manager) {
  std::string quoted = file;
  if (!IsPlainShellWord(file)) {
    quoted = "'";
    for (char c : file) {
      if (c == '\'') {
        quoted += "'\\''";
      } else {
        quoted += c;
      }
    }
    quoted += "'";
  }
  return "rcsim replay " + quoted + " --seed " + std::to_string(seed) +
         (manager.empty() ? "" : " --manager " + manager);
}

std::string ReplayCommandFor(const RunResult& r) {
  if (r.mode != "real") return ReplayCommand(r.file, r.seed, r.manager_from_flag ? r.manager_kind : "");
  std::string cmd = ReplayCommand(r.file, r.seed);  // "rcsim replay <quoted file> --seed N"
  cmd = cmd.substr(0, cmd.rfind(" --seed "));
  return "rcsim run --real " + cmd.substr(std::string("rcsim replay ").size()) + " --seed " +
         std::to_string(r.seed);
}

RunResult RunScenario(const Scenario& s, uint64_t seed, const RunOptions& options) {
  const auto wall_start = std::chrono::steady_clock::now();
  RunResult r;
  r.scenario = s.name;
  r.file = s.file;
  r.seed = seed;
  r.tier = s.tier;
  r.manager_kind = options.manager.empty() ? s.manager.kind : options.manager;
  r.manager_from_flag = r.manager_kind != s.manager.kind;
  if (r.manager_from_flag) r.scenario += "." + r.manager_kind;

  SimWorldOptions world_options = WorldOptions(s, seed, options.keep_trace);
  if (r.manager_kind == kManager2014) world_options.manager_factory = Manager2014Factory();
  SimWorld world(std::move(world_options));
  SimLoop& loop = world.loop();
  const TimePoint origin = loop.Now();
  WorldMonitor monitor(&world);
  const std::vector<std::size_t> probes = PrepareChecks(s, &monitor);
  ManagerMetrics metrics;
  EventInjector injector(&world, s.cluster, &metrics);
  auto fail = [&r](std::string why) {
    if (r.error.empty()) r.error = std::move(why);
  };

  for (std::size_t i = 0; i < s.controllers.size(); ++i) {
    Status st = injector.CreateController(s.controllers[i]);
    if (!st.ok()) fail("/controllers/" + std::to_string(i) + ": the API refused it: " + st.ToString());
  }
  world.StartManager();

  std::vector<std::size_t> order(s.events.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return s.events[a].at < s.events[b].at; });
  for (std::size_t i : order) {
    loop.Schedule(s.events[i].at, [&, i] {
      const ScenarioEvent& e = s.events[i];
      r.events.push_back(EventMark{monitor.Elapsed(), e.kind, e.text});
      Status st = injector.Fire(e);
      if (!st.ok()) fail("/events/" + std::to_string(i) + " (" + e.kind + ") failed: " + st.ToString());
    });
  }

  const TimePoint hard_end = origin + s.duration;
  const TimePoint settle = origin + s.SettleTime();
  const Duration quiet = s.QuietPeriod();
  uint64_t steps = 0;
  while (true) {
    // Every event due at the end instant runs before the run ends.
    // The quiet period counts only after every event window is over: a world that is quiet because a
    // fault holds it still has not shown that it recovers.
    TimePoint quiet_end = std::max(settle, origin + monitor.last_change()) + quiet;
    TimePoint limit = std::max(loop.Now(), std::min(quiet_end, hard_end));
    std::optional<TimePoint> next = loop.NextDue();
    if (!next || *next > limit) {
      loop.RunUntil(limit);
      r.end_reason = limit < hard_end ? "quiet" : "duration";
      break;
    }
    loop.RunOne();
    if (options.wall_timeout_seconds > 0 && (++steps & 0xfff) == 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count() >
            options.wall_timeout_seconds) {
      fail("wall-clock timeout: still running after " + std::to_string(options.wall_timeout_seconds) +
           " s (--timeout), at virtual " + std::to_string(ToSeconds(loop.Now() - origin)) + " s");
      r.end_reason = "timeout";
      break;
    }
  }
  r.virtual_time = loop.Now() - origin;

  if (const ManagerMetrics* m = world.manager_metrics()) AddMetrics(&metrics, *m);
  r.manager = metrics;
  r.manager_starts = world.manager_starts();
  const ApiFaultCounters& calls = world.manager_api().counters();
  for (int v = 0; v < kApiVerbCount; ++v) r.api_calls[VerbKey(static_cast<Verb>(v))] = calls.calls[v];
  r.api_calls_total = calls.calls_total();

  r.passed = true;
  for (std::size_t i = 0; i < s.expect.size(); ++i) {
    const Expectation& e = s.expect[i];
    ExpectationOutcome o = CheckExpectation(e, monitor, world, probes[i]);
    r.passed = r.passed && o.passed;
    if (std::holds_alternative<ConvergedExpect>(e.spec)) {
      if (o.measured.is_number()) {
        Duration d =
            std::chrono::duration_cast<Duration>(std::chrono::duration<double>(o.measured.get<double>()));
        r.convergence = r.convergence ? std::max(*r.convergence, d) : d;
      } else {
        r.any_not_converged = true;
      }
    }
    r.expectations.push_back(std::move(o));
  }
  if (options.verify_counts) {
    for (const std::string& m : monitor.CountMismatches()) fail("monitor count mismatch: " + m);
  }
  if (!r.error.empty()) r.passed = false;

  r.controllers = monitor.Outcomes();
  r.totals = monitor.totals();
  r.peak_active = monitor.peak_total_active();
  r.changes = monitor.changes();
  r.loop_events = loop.events_run();
  r.trace_digest = world.digest();
  r.trace_lines = world.trace().line_count();
  if (options.keep_trace) r.trace = world.trace().lines();
  r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return r;
}

}  // namespace rcsim
