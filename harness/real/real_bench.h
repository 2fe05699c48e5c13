// rcsim bench --real: production-mode figures measured in one run on one etcd (issue 12).
//
// On a RealStack of its own (no hollow nodes: pods need not run to be counted): raw etcd put
// throughput from our gRPC client (EtcdStore), sequential and with `in_flight` threads, and the same
// for create-if-absent Txns under a prefix watch (what each API create costs etcd); pods created
// per second by the controller-manager (through the fault proxy, no fault set) for one RC of
// `big_rc` replicas and for `small_rcs` RCs of `small_rc` replicas, from the first create to the last
// pod seen by a watch; and the delete -> replacement latency (a pod of a 10-replica RC deleted through
// the API until the manager's replacement appears in the watch), `samples` times; and, last, the
// ceiling the manager works under: `raw_creates` pods created straight through the API (HttpApiClient,
// all issued at once, its pool of 32 connections in flight). The figures to improve are pods/s / puts/s,
// pods/s / create Txns/s and pods/s / API creates/s.
//
// Thread-safety: run from the main thread (the children's PR_SET_PDEATHSIG).
#ifndef RCSIM_HARNESS_REAL_REAL_BENCH_H_
#define RCSIM_HARNESS_REAL_REAL_BENCH_H_

#include <nlohmann/json.hpp>
#include <string>

#include "engine/status.h"

namespace rcsim {

struct RealBenchOptions {
  std::string etcd_binary = "/usr/bin/etcd";
  std::string apiserver_binary;
  std::string controller_manager_binary;
  int sequential_puts = 2000;
  int in_flight = 64;
  int puts_per_thread = 100;
  int big_rc = 1000;
  int small_rcs = 100;
  int small_rc = 10;
  int samples = 100;
  int raw_creates = 1000;  // pods created straight through the API at the end (api_creates_per_s); 0: none
  int workers = 5;         // --concurrent-rc-syncs
};

// The smallest sizes (seconds instead of about a minute): for smoke runs (CI, tests), whose figures
// are too short to compare.
RealBenchOptions QuickRealBenchOptions();

// The figures as JSON (put_seq_per_s, put_parallel_per_s, txn_create_parallel_per_s, pods_per_s_1x1000,
// pods_per_s_100x10, replacement_p50_ms, replacement_p99_ms, api_creates_per_s, ratio_*; the sizes are
// in the names, and in "sizes"), or why the run could not be made.
Result<nlohmann::json> RunRealBench(const RealBenchOptions& options);

}  // namespace rcsim

#endif  // RCSIM_HARNESS_REAL_REAL_BENCH_H_
