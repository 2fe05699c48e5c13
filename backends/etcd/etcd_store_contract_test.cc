// The Store contract suite (tests/contract/store_contract.h) against a real etcd: one etcd process shared
// by the whole binary (each test writes under its own prefix), and a fresh process for the tests that
// need an empty store.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <thread>

#include "backends/etcd/etcd_store.h"
#include "tests/contract/store_contract.h"
#include "tests/etcd_fixture/etcd_process.h"

namespace rcsim {
namespace {

// The etcd shared by all non-fresh tests; started on first use from the test's main thread, stopped
// at exit.
EtcdProcess* SharedEtcd() {
  static std::unique_ptr<EtcdProcess> etcd = [] {
    auto started = EtcdProcess::Start();
    if (!started.ok()) {
      ADD_FAILURE() << "cannot start etcd: " << started.status().ToString();
      return std::unique_ptr<EtcdProcess>();
    }
    return std::move(started).value();
  }();
  return etcd.get();
}

class EtcdHarness final : public contract::StoreHarness {
 public:
  EtcdHarness(std::unique_ptr<EtcdProcess> own, const std::string& endpoint, bool fresh)
      : own_(std::move(own)), fresh_(fresh) {
    EtcdStoreOptions options;
    options.endpoints = {endpoint};
    store_ = std::make_unique<EtcdStore>(options);
  }

  Store& store() override { return *store_; }
  bool WaitFor(const std::function<bool()>& pred, Duration timeout) override {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!pred()) {
      if (std::chrono::steady_clock::now() >= deadline) return pred();
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return true;
  }
  void Elapse(Duration d) override { std::this_thread::sleep_for(d); }
  std::string prefix() override {
    static std::atomic<int> next{0};
    return "/contract/" + std::to_string(next.fetch_add(1)) + "/";
  }
  bool fresh_store() override { return fresh_; }

 private:
  std::unique_ptr<EtcdProcess> own_;  // a fresh etcd owned by this harness (destroyed after store_)
  bool fresh_;
  std::unique_ptr<EtcdStore> store_;
};

struct RealEtcdFactory {
  std::unique_ptr<contract::StoreHarness> Make(bool fresh) {
    if (fresh) {
      auto etcd = EtcdProcess::Start();
      if (!etcd.ok()) {
        ADD_FAILURE() << "cannot start etcd: " << etcd.status().ToString();
        return nullptr;
      }
      const std::string endpoint = (*etcd)->endpoint();
      return std::make_unique<EtcdHarness>(std::move(etcd).value(), endpoint, true);
    }
    EtcdProcess* shared = SharedEtcd();
    if (shared == nullptr) return nullptr;
    return std::make_unique<EtcdHarness>(nullptr, shared->endpoint(), false);
  }
};

}  // namespace
}  // namespace rcsim

namespace rcsim::contract {
INSTANTIATE_TYPED_TEST_SUITE_P(RealEtcd, StoreContractTest, ::testing::Types<rcsim::RealEtcdFactory>);
}  // namespace rcsim::contract
