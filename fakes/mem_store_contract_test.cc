// The Store contract suite against the in-memory etcd, driven by a SimLoop (virtual time).
#include <memory>
#include <string>

#include "fakes/mem_store.h"
#include "fakes/sim_loop.h"
#include "tests/contract/store_contract.h"

namespace rcsim::contract {
namespace {

class MemStoreHarness final : public StoreHarness {
 public:
  MemStoreHarness() : store_(&loop_, &loop_) {}

  Store& store() override { return store_; }
  // Runs loop events one at a time until pred holds, the loop is idle, or the next event is due after
  // the virtual deadline.
  bool WaitFor(const std::function<bool()>& pred, Duration timeout) override {
    const TimePoint deadline = loop_.Now() + timeout;
    while (!pred()) {
      auto due = loop_.NextDue();
      if (!due || *due > deadline) return pred();
      loop_.RunOne();
    }
    return true;
  }
  void Elapse(Duration d) override { loop_.RunFor(d); }
  std::string prefix() override { return "/contract/"; }
  bool fresh_store() override { return store_.revision() == 1 && store_.compact_revision() == 0; }

 private:
  SimLoop loop_;
  MemStore store_;
};

struct MemStoreFactory {
  std::unique_ptr<StoreHarness> Make(bool /*fresh*/) { return std::make_unique<MemStoreHarness>(); }
};

INSTANTIATE_TYPED_TEST_SUITE_P(MemStore, StoreContractTest, ::testing::Types<MemStoreFactory>);

}  // namespace
}  // namespace rcsim::contract
