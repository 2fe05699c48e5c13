// EtcdStore against a real etcd 3.4 started for this run (tests/etcd_fixture): put rate with one
// caller, and with 64 callers in flight (threads sharing one EtcdStore, hence one gRPC channel).
//
//   etcd_store_benchmark --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include <cstdio>
#include <memory>
#include <string>

#include "backends/etcd/etcd_store.h"
#include "tests/etcd_fixture/etcd_process.h"

namespace rcsim {
namespace {

EtcdProcess* g_etcd = nullptr;

EtcdStore& SharedStore() {
  static EtcdStore* store = [] {
    EtcdStoreOptions o;
    o.endpoints = {g_etcd->endpoint()};
    return new EtcdStore(o);
  }();
  return *store;
}

void RunPuts(benchmark::State& state, const std::string& prefix) {
  EtcdStore& store = SharedStore();
  const std::string value(256, 'x');  // about the size of a small encoded pod
  int64_t i = 0;
  int64_t errors = 0;
  for (auto _ : state) {
    PutRequest p;
    p.key = prefix + std::to_string(state.thread_index()) + "/" + std::to_string(i++ % 1000);
    p.value = Value(value);
    if (!store.Put(p).ok()) ++errors;
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["errors"] = benchmark::Counter(static_cast<double>(errors), benchmark::Counter::kAvgThreads);
}

void BM_EtcdPutSequential(benchmark::State& state) { RunPuts(state, "/bench/seq/"); }
BENCHMARK(BM_EtcdPutSequential)->UseRealTime()->MinTime(3.0);

void BM_EtcdPutInFlight(benchmark::State& state) { RunPuts(state, "/bench/par/"); }
BENCHMARK(BM_EtcdPutInFlight)->Threads(64)->UseRealTime()->MinTime(3.0);

void BM_EtcdGetSequential(benchmark::State& state) {
  EtcdStore& store = SharedStore();
  PutRequest p;
  p.key = "/bench/get";
  p.value = Value(std::string(256, 'x'));
  if (!store.Put(p).ok()) state.SkipWithError("put failed");
  for (auto _ : state) benchmark::DoNotOptimize(store.Get("/bench/get"));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EtcdGetSequential)->UseRealTime()->MinTime(2.0);

}  // namespace
}  // namespace rcsim

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  auto etcd = rcsim::EtcdProcess::Start();
  if (!etcd.ok()) {
    std::fprintf(stderr, "cannot start etcd: %s\n", etcd.status().ToString().c_str());
    return 1;
  }
  rcsim::g_etcd = etcd->get();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
