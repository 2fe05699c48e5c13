// The in-memory etcd's hot paths: Put (with history compaction), Range by prefix, Put fanned out to
// prefix watchers. Items are store operations (Put) or keys returned (Range).
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "engine/store.h"
#include "engine/types.h"
#include "fakes/mem_store.h"
#include "fakes/sim_loop.h"

namespace rcsim {
namespace {

constexpr int64_t kCompactEvery = 100'000;

std::vector<std::string> PodKeys(int64_t n, int64_t namespaces) {
  std::vector<std::string> keys;
  keys.reserve(n);
  for (int64_t i = 0; i < n; ++i) {
    keys.push_back("/registry/pods/ns-" + std::to_string(i % namespaces) + "/pod-" + std::to_string(i));
  }
  return keys;
}

Value SomePod() {
  auto pod = std::make_shared<Pod>();
  pod->metadata.name = "pod";
  pod->metadata.namespace_ = "default";
  return Value(PodPtr(pod));
}

void Fill(MemStore& store, const std::vector<std::string>& keys, const Value& v) {
  PutRequest req;
  req.value = v;
  for (const std::string& k : keys) {
    req.key = k;
    benchmark::DoNotOptimize(store.Put(req));
  }
}

// Puts over a world of range(0) existing keys (updates), compacting every kCompactEvery revisions.
void BM_Put(benchmark::State& state) {
  SimLoop loop;
  MemStore store(&loop, &loop);
  const std::vector<std::string> keys = PodKeys(state.range(0), 100);
  const Value v = SomePod();
  Fill(store, keys, v);
  PutRequest req;
  req.value = v;
  size_t i = 0;
  for (auto _ : state) {
    req.key = keys[i];
    if (++i == keys.size()) i = 0;
    benchmark::DoNotOptimize(store.Put(req));
    if (store.revision() % kCompactEvery == 0) benchmark::DoNotOptimize(store.Compact(store.revision()));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Put)->Arg(10'000)->Arg(100'000)->Arg(1'000'000)->Unit(benchmark::kNanosecond);

// Ranges one namespace's pods (range(0) keys / 100 namespaces); items are keys returned.
void BM_RangePrefix(benchmark::State& state) {
  SimLoop loop;
  MemStore store(&loop, &loop);
  const int64_t namespaces = 100;
  Fill(store, PodKeys(state.range(0), namespaces), SomePod());
  int64_t returned = 0;
  int64_t n = 0;
  for (auto _ : state) {
    auto r = store.GetPrefix("/registry/pods/ns-" + std::to_string(n++ % namespaces) + "/");
    returned += static_cast<int64_t>(r->kvs.size());
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(returned);
}
BENCHMARK(BM_RangePrefix)->Arg(10'000)->Arg(100'000)->Arg(1'000'000);

// A paginated list of every pod, 500 per page (the reflector's initial list); items are keys returned.
void BM_RangeAllPaginated(benchmark::State& state) {
  SimLoop loop;
  MemStore store(&loop, &loop);
  Fill(store, PodKeys(state.range(0), 100), SomePod());
  int64_t returned = 0;
  for (auto _ : state) {
    RangeRequest req;
    req.key = "/registry/pods/";
    req.range_end = PrefixEnd(req.key);
    req.limit = 500;
    while (true) {
      auto r = store.Range(req);
      returned += static_cast<int64_t>(r->kvs.size());
      if (!r->more) break;
      req.key = r->kvs.back().key + '\0';
      req.revision = r->revision;
    }
  }
  state.SetItemsProcessed(returned);
}
BENCHMARK(BM_RangeAllPaginated)->Arg(100'000)->Unit(benchmark::kMillisecond);

// Puts of pods while 10 watchers watch prefixes; events are delivered by
// running the loop every 1000 puts. Items are puts.
void BM_PutWith10PrefixWatchers(benchmark::State& state) {
  SimLoop loop;
  MemStore store(&loop, &loop);
  const std::vector<std::string> keys = PodKeys(100'000, 100);
  const Value v = SomePod();
  Fill(store, keys, v);
  int64_t delivered = 0;
  std::vector<std::unique_ptr<Watch>> watches;
  // The first two match every put, the third 11% of them (ns-1, ns-10..ns-19), the rest none.
  const char* prefixes[] = {"/registry/pods/", "/registry/", "/registry/pods/ns-1",
                            "/registry/controllers/", "/registry/events/", "/registry/nodes/",
                            "/registry/services/", "/registry/secrets/", "/registry/leases/",
                            "/registry/configmaps/"};
  for (const char* p : prefixes) {
    WatchRequest req;
    req.key = p;
    req.range_end = PrefixEnd(p);
    req.prev_kv = state.range(0) != 0;
    watches.push_back(store.StartWatch(req, [&delivered](const WatchResponse& r) {
      delivered += static_cast<int64_t>(r.events.size());
    }));
  }
  PutRequest req;
  req.value = v;
  size_t i = 0;
  for (auto _ : state) {
    req.key = keys[i];
    if (++i == keys.size()) i = 0;
    benchmark::DoNotOptimize(store.Put(req));
    if (i % 1000 == 0) loop.RunUntilIdle();
    if (store.revision() % kCompactEvery == 0) benchmark::DoNotOptimize(store.Compact(store.revision()));
  }
  loop.RunUntilIdle();
  state.SetItemsProcessed(state.iterations());
  state.counters["events_delivered_per_put"] =
      static_cast<double>(delivered) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_PutWith10PrefixWatchers)->ArgName("prev_kv")->Arg(0)->Arg(1);

}  // namespace
}  // namespace rcsim

BENCHMARK_MAIN();
