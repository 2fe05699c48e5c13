// The ApiClient contract suite over the simulated stack: SimLoop + MemStore + Registry +
// InProcessApiClient.
#include <functional>
#include <string>

#include "fakes/inprocess_api_client.h"
#include "fakes/mem_store.h"
#include "fakes/sim_loop.h"
#include "registry/registry.h"
#include "tests/contract/api_contract.h"
#include "tests/contract/cluster_api_contract.h"

namespace rcsim {
namespace {

class InProcessApiHarness {
 public:
  InProcessApiHarness()
      : store_(&loop_, &loop_),
        rng_(42),
        registry_(&store_, &loop_, &rng_),
        client_(&registry_, &loop_) {}

  ApiClient& client() { return client_; }
  ClusterApi& cluster() { return client_; }

  // Runs the loop until pred holds, nothing is left to run, or the virtual deadline passes.
  bool WaitFor(const std::function<bool()>& pred, Duration timeout) {
    const TimePoint deadline = loop_.Now() + timeout;
    while (!pred()) {
      auto next = loop_.NextDue();
      if (!next || *next > deadline) return pred();
      loop_.RunOne();
    }
    return true;
  }

  std::string ns() { return "contract"; }

  bool Compact() { return store_.Compact(store_.revision()).ok(); }

 private:
  SimLoop loop_;
  MemStore store_;
  Mt19937Rng rng_;
  Registry registry_;
  InProcessApiClient client_;
};

INSTANTIATE_TYPED_TEST_SUITE_P(InProcess, ApiContractTest, ::testing::Types<InProcessApiHarness>);
INSTANTIATE_TYPED_TEST_SUITE_P(InProcess, ClusterApiContractTest, ::testing::Types<InProcessApiHarness>);

}  // namespace
}  // namespace rcsim
