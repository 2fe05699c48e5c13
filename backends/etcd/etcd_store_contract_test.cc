// The Store contract suite (tests/contract/store_contract.h) against a real etcd: one etcd process shared
// by the whole binary (each test writes under its own prefix), and a fresh process for the tests that
// need an empty store.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
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
      : own_(std::move(own)), endpoint_(endpoint), fresh_(fresh) {
    EtcdStoreOptions options;
    options.endpoints = {endpoint};
    // etcd is healthy (EtcdProcess polled /health), but on a loaded machine, and under TSan, the gRPC
    // handshake can take longer than the 2 s default: no contract case is about connect time.
    options.dial_timeout = std::chrono::seconds(10);
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
  bool RestartServer(bool abrupt) override {
    if (own_ == nullptr) return false;
    if (abrupt) own_->Kill();
    return own_->Restart().ok();
  }
  bool has_other_process() override { return true; }
  // etcdctl put -w json prints {"header":{...,"revision":N,...}}.
  Result<int64_t> PutFromAnotherProcess(const std::string& key, const std::string& value) override {
    const std::string cmd = "ETCDCTL_API=3 /usr/bin/etcdctl --dial-timeout=5s --endpoints=" + endpoint_ +
                            " put -w json '" + key + "' '" + value + "' 2>&1";
    FILE* pipe = popen(cmd.c_str(), "r");
    if (pipe == nullptr) return Status(Code::kInternal, "popen etcdctl failed");
    std::string out;
    char buf[512];
    while (size_t n = fread(buf, 1, sizeof buf, pipe)) out.append(buf, n);
    const int rc = pclose(pipe);
    const size_t at = out.find("\"revision\":");
    if (rc != 0 || at == std::string::npos) return Status(Code::kUnavailable, "etcdctl put: " + out);
    return std::stoll(out.substr(at + 11));
  }

 private:
  std::unique_ptr<EtcdProcess> own_;  // a fresh etcd owned by this harness (destroyed after store_)
  std::string endpoint_;
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
