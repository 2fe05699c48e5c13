// The lines of a change the watch cache fans out are serialized once and shared by its watchers.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "backends/http/api_handler.h"
#include "backends/http/thread_executor.h"
#include "engine/rng.h"
#include "fakes/mem_store.h"
#include "registry/registry.h"

namespace rcsim {
namespace {

class RecordingSink final : public WatchSink {
 public:
  void OnLine(WatchLine line) override {
    std::lock_guard<std::mutex> lock(mu_);
    lines_.push_back(std::move(line));
  }
  void OnEnd() override {}
  // The line whose object is named `name`, or null.
  WatchLine LineFor(const std::string& name) {
    std::lock_guard<std::mutex> lock(mu_);
    for (const WatchLine& l : lines_) {
      const nlohmann::json j = nlohmann::json::parse(*l);
      if (j["object"]["metadata"].value("name", "") == name) return l;
      if (j["object"].contains("rows") && !j["object"]["rows"].empty() &&
          j["object"]["rows"][0]["object"]["metadata"].value("name", "") == name) {
        return l;
      }
    }
    return nullptr;
  }

 private:
  std::mutex mu_;
  std::vector<WatchLine> lines_;
};

class WatchLineTest : public ::testing::Test {
 protected:
  std::shared_ptr<RecordingSink> StartWatch(const std::string& accept = "") {
    auto sink = std::make_shared<RecordingSink>();
    HttpRequest req;
    req.method = "GET";
    req.target = "/api/v1/namespaces/default/pods?watch=true";
    req.accept = accept;
    ApiOutcome out = handler_.Handle(req, sink);
    EXPECT_EQ(out.response.status, 200) << out.response.body;
    EXPECT_NE(out.watch, nullptr);
    watches_.push_back(std::move(out.watch));
    return sink;
  }
  void CreatePod(const std::string& name, std::size_t annotation_bytes = 0) {
    Pod p;
    p.metadata.name = name;
    if (annotation_bytes > 0) p.metadata.annotations["big"] = std::string(annotation_bytes, 'x');
    Container c;
    c.name = "main";
    c.image = "busybox";
    p.spec.containers.push_back(c);
    ASSERT_TRUE(registry_.pods().Create("default", p).ok());
  }
  // Polls (with a deadline) until `sink` has the line of `name`.
  static WatchLine AwaitLine(RecordingSink* sink, const std::string& name) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      if (WatchLine l = sink->LineFor(name)) return l;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return nullptr;
  }

  SystemClock clock_;
  ThreadExecutor executor_;
  MemStore store_{&clock_, &executor_};
  Mt19937Rng rng_{42};
  Registry registry_{&store_, &clock_, &rng_};
  ApiHandler handler_{&registry_, &clock_};
  std::vector<std::unique_ptr<RegistryWatch>> watches_;  // destroyed before the handler
};

TEST_F(WatchLineTest, WatchersOfOneChangeShareOneSerializedLine) {
  std::shared_ptr<RecordingSink> a = StartWatch(), b = StartWatch(), c = StartWatch();
  CreatePod("shared");
  WatchLine la = AwaitLine(a.get(), "shared"), lb = AwaitLine(b.get(), "shared"),
            lc = AwaitLine(c.get(), "shared");
  ASSERT_NE(la, nullptr);
  ASSERT_NE(lb, nullptr);
  ASSERT_NE(lc, nullptr);
  EXPECT_EQ(la.get(), lb.get()) << "serialized once for every watcher";
  EXPECT_EQ(la.get(), lc.get());
  const nlohmann::json j = nlohmann::json::parse(*la);
  EXPECT_EQ(j["type"], "ADDED");
  EXPECT_EQ(j["object"]["kind"], "Pod");
  EXPECT_FALSE(j["object"]["metadata"].value("resourceVersion", "").empty());
  EXPECT_EQ(la->back(), '\n');
}

TEST_F(WatchLineTest, ATableWatchAndABigObjectGetTheirOwnLinesWithTheSameContent) {
  std::shared_ptr<RecordingSink> plain = StartWatch(), other = StartWatch();
  std::shared_ptr<RecordingSink> table = StartWatch("application/json;as=Table;v=v1;g=meta.k8s.io");
  CreatePod("big", 100 << 10);  // its line is over the size that is remembered for sharing
  WatchLine lp = AwaitLine(plain.get(), "big"), lo = AwaitLine(other.get(), "big");
  WatchLine lt = AwaitLine(table.get(), "big");
  ASSERT_NE(lp, nullptr);
  ASSERT_NE(lo, nullptr);
  ASSERT_NE(lt, nullptr);
  EXPECT_EQ(*lp, *lo);
  EXPECT_GT(lp->size(), std::size_t{100} << 10);
  EXPECT_NE(lt.get(), lp.get());
  EXPECT_EQ(nlohmann::json::parse(*lt)["object"]["kind"], "Table");
}

}  // namespace
}  // namespace rcsim
