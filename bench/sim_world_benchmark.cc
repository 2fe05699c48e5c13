// Full simulated stack sync throughput: the replication manager, the API registry, the in-memory etcd
// and the simulated nodes, all in one SimWorld. One iteration creates N/100 controllers of 100 replicas
// on max(100, N/100) nodes, runs until every pod is Running, scales every controller to 0 and runs until
// every pod is gone.
// items_per_second counts pod creations + deletions (2N per iteration) per second of wall time;
// converge_wall_s and converge_cpu_us_per_pod measure the first phase alone (N pods converging from empty).
// scripts/bench runs each size in its own process (for its peak RSS) and writes the figures as JSON.
#include <benchmark/benchmark.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "fakes/sim_world.h"

namespace rcsim {
namespace {

double ProcessCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

ReplicationController MakeController(const std::string& name, int32_t replicas) {
  ReplicationController rc;
  rc.metadata.name = name;
  rc.metadata.namespace_ = "default";
  rc.spec.replicas = replicas;
  rc.spec.selector = {{"app", name}};
  PodTemplateSpec t;
  t.metadata.labels = {{"app", name}};
  Container c;
  c.name = "main";
  c.image = "nginx";
  t.spec.containers.push_back(c);
  rc.spec.template_ = t;
  return rc;
}

void BM_FullStackCreateThenDelete(benchmark::State& state) {
  const int64_t pods = state.range(0);
  const int64_t controllers = pods / 100;
  uint64_t events = 0;
  double virtual_seconds = 0;
  double converge_wall = 0;
  double converge_cpu = 0;
  for (auto _ : state) {
    state.PauseTiming();
    SimWorldOptions options;
    options.seed = 1;
    // One node per 100 pods (at least 100): every size fits under the nodes' default 110 pods each.
    options.nodes = static_cast<int>(std::max<int64_t>(100, pods / 100));
    // Throughput setting: enough workers and requeue budget that the manager is not the limit by
    // configuration.
    options.manager.workers = 64;
    options.manager.qps = 1e6;
    options.manager.burst = 1000000;
    auto world = std::make_unique<SimWorld>(options);
    world->StartManager();
    state.ResumeTiming();

    const TimePoint start = world->loop().Now();
    const uint64_t events_before = world->loop().events_run();
    const auto wall0 = std::chrono::steady_clock::now();
    const double cpu0 = ProcessCpuSeconds();
    for (int64_t i = 0; i < controllers; ++i) {
      auto r = world->CreateController(MakeController("rc-" + std::to_string(i), 100));
      if (!r.ok()) {
        state.SkipWithError(r.status().ToString().c_str());
        return;
      }
    }
    if (!world->RunUntil([&] { return world->running_pods() == pods; }, std::chrono::hours(1))) {
      state.SkipWithError("did not converge");
      return;
    }
    converge_wall += std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    converge_cpu += ProcessCpuSeconds() - cpu0;
    for (int64_t i = 0; i < controllers; ++i) {
      auto r = world->ScaleController("default", "rc-" + std::to_string(i), 0);
      if (!r.ok()) {
        state.SkipWithError(r.status().ToString().c_str());
        return;
      }
    }
    if (!world->RunUntil([&] { return world->pod_count() == 0; }, std::chrono::hours(1))) {
      state.SkipWithError("did not scale down");
      return;
    }
    events += world->loop().events_run() - events_before;
    virtual_seconds += ToSeconds(world->loop().Now() - start);

    state.PauseTiming();
    world.reset();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * pods * 2);
  state.counters["loop_events"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kAvgIterations);
  state.counters["virtual_s"] = benchmark::Counter(virtual_seconds, benchmark::Counter::kAvgIterations);
  state.counters["converge_wall_s"] = benchmark::Counter(converge_wall, benchmark::Counter::kAvgIterations);
  state.counters["converge_cpu_us_per_pod"] =
      benchmark::Counter(converge_cpu * 1e6 / static_cast<double>(pods), benchmark::Counter::kAvgIterations);
}
BENCHMARK(BM_FullStackCreateThenDelete)
    ->Arg(1000)
    ->Arg(10000)
    ->Arg(100000)
    ->Arg(1000000)  // ~6 GB and minutes today: scripts/bench runs it with --sizes 1m (the default set)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

}  // namespace
}  // namespace rcsim

BENCHMARK_MAIN();
