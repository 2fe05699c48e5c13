// The simulated API path: pod lifecycles (Create, bind Update, UpdateStatus, Delete) through
// InProcessApiClient -> Registry -> MemStore -> SimLoop with 0 and 2 all-pod watchers, and the raw
// registry verbs. range(0) pods already exist in the world (the scale curve: cost per op must stay
// flat). Items are pod lifecycles or registry operations.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "engine/api_client.h"
#include "engine/rng.h"
#include "engine/types.h"
#include "fakes/inprocess_api_client.h"
#include "fakes/mem_store.h"
#include "fakes/sim_loop.h"
#include "registry/registry.h"

namespace rcsim {
namespace {

constexpr int64_t kCompactEvery = 50'000;  // revisions between compactions, as an API server would
constexpr int kBatch = 100;                // lifecycles started per loop drain

[[noreturn]] void Die(const char* what, const Status& s) {
  std::fprintf(stderr, "%s: %s\n", what, s.ToString().c_str());
  std::abort();
}

Pod PodTemplate() {
  Pod p;
  p.metadata.generate_name = "web-";
  p.metadata.labels = {{"app", "web"}, {"tier", "front"}};
  p.metadata.owner_references.push_back(
      OwnerReference{"v1", "ReplicationController", "web", "0b7e5a9c-1d2e-4f3a-8b4c-5d6e7f8a9b0c"});
  p.spec.containers.push_back(Container{"main", "nginx:1.7", {}, {}});
  return p;
}

struct World {
  SimLoop loop;
  MemStore store{&loop, &loop};
  Mt19937Rng rng{1};
  Registry registry{&store, &loop, &rng};
  InProcessApiClient client{&registry, &loop};
  int64_t last_compact = 1;

  // `n` pods that stay for the whole run.
  explicit World(int64_t n) {
    const Pod tmpl = PodTemplate();
    for (int64_t i = 0; i < n; ++i) {
      auto r = registry.pods().Create("default", tmpl);
      if (!r.ok()) Die("create", r.status());
    }
    MaybeCompact(true);
  }
  void MaybeCompact(bool force = false) {
    const int64_t rev = store.revision();
    if (force || rev - last_compact >= kCompactEvery) {
      (void)store.Compact(rev).ok();
      last_compact = rev;
    }
  }
};

void StartLifecycle(World& w, const Pod& tmpl, int64_t* done) {
  ResourceClient<Pod>& pods = w.client.pods();
  pods.Create("default", tmpl, [&pods, done](Result<PodPtr> r) {
    if (!r.ok()) Die("create", r.status());
    Pod b = **r;
    b.spec.node_name = "node-1";
    pods.Update(std::move(b), [&pods, done](Result<PodPtr> r2) {
      if (!r2.ok()) Die("bind", r2.status());
      Pod s = **r2;
      s.status.phase = phase::kRunning;
      pods.UpdateStatus(std::move(s), [&pods, done](Result<PodPtr> r3) {
        if (!r3.ok()) Die("status", r3.status());
        pods.Delete("default", (*r3)->metadata.name, {}, [done](const Result<PodPtr>& r4) {
          if (!r4.ok()) Die("delete", r4.status());
          ++*done;
        });
      });
    });
  });
}

// range(0) existing pods, range(1) watchers of all pods.
void BM_PodLifecycle(benchmark::State& state) {
  World w(state.range(0));
  int64_t events = 0;
  std::vector<std::unique_ptr<ApiWatch>> watches;
  for (int64_t i = 0; i < state.range(1); ++i) {
    watches.push_back(w.client.pods().Watch("", {}, std::to_string(w.store.revision()),
                                            [&events](const ApiWatchEvent<Pod>&) { ++events; }));
  }
  const Pod tmpl = PodTemplate();
  int64_t done = 0;
  for (auto _ : state) {
    for (int i = 0; i < kBatch; ++i) StartLifecycle(w, tmpl, &done);
    w.loop.RunUntilIdle();
    w.MaybeCompact();
  }
  if (done != state.iterations() * kBatch) state.SkipWithError("lifecycles did not complete");
  state.SetItemsProcessed(done);
  state.counters["events"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_PodLifecycle)
    ->ArgsProduct({{1'000, 10'000, 100'000}, {0, 2}})
    ->ArgNames({"pods", "watchers"})
    ->Unit(benchmark::kMicrosecond);

// Registry Create + Delete of one pod (2 items per iteration), no client, no watchers.
void BM_RegistryCreateDelete(benchmark::State& state) {
  World w(state.range(0));
  const Pod tmpl = PodTemplate();
  for (auto _ : state) {
    auto created = w.registry.pods().Create("default", tmpl);
    if (!created.ok()) Die("create", created.status());
    auto deleted = w.registry.pods().Delete("default", (*created)->metadata.name, {});
    if (!deleted.ok()) Die("delete", deleted.status());
    w.MaybeCompact();
  }
  state.SetItemsProcessed(2 * state.iterations());
}
BENCHMARK(BM_RegistryCreateDelete)->Arg(1'000)->Arg(10'000)->Arg(100'000)->ArgName("pods");

// Registry UpdateStatus (with the caller's current resourceVersion) over the existing pods in turn.
void BM_RegistryUpdateStatus(benchmark::State& state) {
  World w(state.range(0));
  auto listed = w.registry.pods().List("", {});
  if (!listed.ok()) Die("list", listed.status());
  std::vector<PodPtr> current = listed->items;
  size_t i = 0;
  int64_t flip = 0;
  for (auto _ : state) {
    Pod next = *current[i];
    next.status.phase = (++flip & 1) ? phase::kRunning : phase::kPending;
    auto r = w.registry.pods().UpdateStatus(std::move(next));
    if (!r.ok()) Die("create", r.status());
    current[i] = std::move(*r);
    if (++i == current.size()) i = 0;
    w.MaybeCompact();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_RegistryUpdateStatus)->Arg(1'000)->Arg(10'000)->Arg(100'000)->ArgName("pods");

// Registry Update (binding-like: a label flips) with the caller's current resourceVersion.
void BM_RegistryUpdate(benchmark::State& state) {
  World w(state.range(0));
  auto listed = w.registry.pods().List("", {});
  if (!listed.ok()) Die("list", listed.status());
  std::vector<PodPtr> current = listed->items;
  size_t i = 0;
  int64_t flip = 0;
  for (auto _ : state) {
    Pod next = *current[i];
    next.metadata.labels["gen"] = (++flip & 1) ? "a" : "b";
    auto r = w.registry.pods().Update(std::move(next));
    if (!r.ok()) Die("create", r.status());
    current[i] = std::move(*r);
    if (++i == current.size()) i = 0;
    w.MaybeCompact();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_RegistryUpdate)->Arg(1'000)->Arg(10'000)->Arg(100'000)->ArgName("pods");

}  // namespace
}  // namespace rcsim

BENCHMARK_MAIN();
