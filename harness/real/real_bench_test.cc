// rcsim bench --real at its smallest sizes, over real processes (etcd, apps/apiserver,
// apps/controller-manager): every figure is measured and every ratio is the quotient of its figures.
// No figure is judged: a benchmark's numbers belong to scripts/bench, not to a test.
#include "harness/real/real_bench.h"

#include <gtest/gtest.h>

#include <string>

#ifndef RCSIM_APISERVER_BINARY
#error "RCSIM_APISERVER_BINARY must name the apiserver executable"
#endif

namespace rcsim {
namespace {

TEST(RealBenchTest, QuickRunMeasuresEveryFigureAndDividesThem) {
  RealBenchOptions o = QuickRealBenchOptions();
  o.apiserver_binary = RCSIM_APISERVER_BINARY;
  o.controller_manager_binary = RCSIM_CONTROLLER_MANAGER_BINARY;
  Result<nlohmann::json> r = RunRealBench(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const nlohmann::json& f = *r;
  const std::string big = "pods_per_s_1x" + std::to_string(o.big_rc);
  const std::string small = "pods_per_s_" + std::to_string(o.small_rcs) + "x" + std::to_string(o.small_rc);
  for (const std::string& rate :
       {std::string("put_seq_per_s"), std::string("put_parallel_per_s"),
        std::string("txn_create_parallel_per_s"), std::string("api_creates_per_s"), big, small}) {
    ASSERT_TRUE(f.contains(rate)) << rate << " missing from " << f.dump();
    EXPECT_GT(f[rate].get<double>(), 0) << rate;
  }
  EXPECT_EQ(f["put_errors"], 0);
  EXPECT_EQ(f["txn_create_errors"], 0);
  EXPECT_EQ(f["api_create_errors"], 0);
  EXPECT_EQ(f["replacement_samples"], o.samples);
  EXPECT_GT(f["replacement_p50_ms"].get<double>(), 0);
  EXPECT_LE(f["replacement_p50_ms"].get<double>(), f["replacement_p99_ms"].get<double>());
  EXPECT_EQ(f["sizes"]["big_rc"], o.big_rc);
  EXPECT_EQ(f["sizes"]["raw_creates"], o.raw_creates);

  auto ratio = [&](const std::string& name, const std::string& num, const std::string& den) {
    ASSERT_TRUE(f.contains(name)) << name;
    EXPECT_DOUBLE_EQ(f[name].get<double>(), f[num].get<double>() / f[den].get<double>()) << name;
  };
  ratio("ratio_pods_1rc_to_seq_puts", big, "put_seq_per_s");
  ratio("ratio_pods_100rc_to_seq_puts", small, "put_seq_per_s");
  ratio("ratio_pods_1rc_to_parallel_puts", big, "put_parallel_per_s");
  ratio("ratio_parallel_txn_creates_to_parallel_puts", "txn_create_parallel_per_s", "put_parallel_per_s");
  ratio("ratio_pods_1rc_to_parallel_txn_creates", big, "txn_create_parallel_per_s");
  ratio("ratio_pods_1rc_to_api_creates", big, "api_creates_per_s");
  ratio("ratio_api_creates_to_parallel_puts", "api_creates_per_s", "put_parallel_per_s");
  ratio("ratio_api_creates_to_parallel_txn_creates", "api_creates_per_s", "txn_create_parallel_per_s");
}

}  // namespace
}  // namespace rcsim
