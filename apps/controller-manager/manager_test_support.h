// What the controller-manager's end-to-end tests share: the controller-manager as a child process, blocking
// calls over the asynchronous API client, polling with deadlines, and a small client-side view of
// controllers and their pods. Test-only (links nothing but the HTTP client).
#ifndef RCSIM_APPS_CONTROLLER_MANAGER_MANAGER_TEST_SUPPORT_H_
#define RCSIM_APPS_CONTROLLER_MANAGER_MANAGER_TEST_SUPPORT_H_

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "backends/httpclient/http_api_client.h"
#include "engine/api_client.h"
#include "engine/labels.h"
#include "tests/api_http_contract/controller_manager_process.h"

#if !defined(RCSIM_CONTROLLER_MANAGER_BINARY)
#error "the controller-manager binary must be given"
#endif

namespace rcsim {

using SteadyClock = std::chrono::steady_clock;
inline constexpr auto kConverge = std::chrono::seconds(60);

// The controller-manager binary under test (tests/api_http_contract/controller_manager_process.h).
class ManagerProcess : public ControllerManagerProcess {
 public:
  ManagerProcess(const std::string& etcd, const std::string& apiserver)
      : ManagerProcess({"--etcd_servers=" + etcd, "--apiserver=" + apiserver, "--workers=2", "--resync=1"}) {}
  explicit ManagerProcess(const std::vector<std::string>& flags)
      : ControllerManagerProcess(RCSIM_CONTROLLER_MANAGER_BINARY, flags) {}
};

// Blocking wrappers over the asynchronous client, for the test thread.
template <typename R>
R Call(const std::function<void(Callback<R>)>& start) {
  std::mutex mu;
  std::condition_variable cv;
  std::optional<R> out;
  start([&](R r) {
    std::lock_guard<std::mutex> lock(mu);
    out.emplace(std::move(r));
    cv.notify_all();
  });
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [&] { return out.has_value(); });
  return std::move(*out);
}

inline bool Eventually(const std::function<bool()>& pred) {
  const auto deadline = SteadyClock::now() + kConverge;
  while (!pred()) {
    if (SteadyClock::now() >= deadline) return pred();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return true;
}

inline ReplicationController WebController(int replicas, const std::string& name = "web") {
  ReplicationController rc;
  rc.metadata.name = name;
  rc.spec.replicas = replicas;
  rc.spec.selector = {{"app", name}};
  PodTemplateSpec t;
  t.metadata.labels = {{"app", name}};
  Container c;
  c.name = "main";
  c.image = "nginx:1.7";
  t.spec.containers.push_back(c);
  rc.spec.template_ = t;
  return rc;
}

// Counts and edits controllers and their pods through the API, for the tests below.
class Cluster {
 public:
  // Creates namespace `ns` first: the apiserver admits objects only into namespaces that exist.
  explicit Cluster(ApiClient* api, std::string ns) : api_(api), ns_(std::move(ns)) {
    auto* http = dynamic_cast<HttpApiClient*>(api);
    if (http == nullptr) return;
    auto made = Call<Result<HttpReply>>([&](auto cb) {
      http->Send("POST", "/api/v1/namespaces",
                 R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":")" + ns_ + R"("}})", cb);
    });
    EXPECT_TRUE(made.ok() && (made->status == 201 || made->status == 409))
        << (made.ok() ? made->body : made.status().ToString());
  }

  Result<ControllerPtr> Create(int replicas, const std::string& name) {
    return Call<Result<ControllerPtr>>(
        [&](auto cb) { api_->controllers().Create(ns_, WebController(replicas, name), cb); });
  }
  // Sets spec.replicas, retrying conflicts with the manager's status writes.
  bool Scale(const std::string& name, int replicas) {
    return Eventually([&] {
      auto rc = Call<Result<ControllerPtr>>([&](auto cb) { api_->controllers().Get(ns_, name, cb); });
      if (!rc.ok()) return false;
      ReplicationController scaled = **rc;
      scaled.spec.replicas = replicas;
      return Call<Result<ControllerPtr>>([&](auto cb) { api_->controllers().Update(scaled, cb); }).ok();
    });
  }
  Status Delete(const std::string& name) {
    DeleteOptions background;  // as kubectl sends it; no policy would orphan (and wait for a GC)
    background.propagation_policy = "Background";
    return Call<Result<ControllerPtr>>(
               [&](auto cb) { api_->controllers().Delete(ns_, name, background, cb); })
        .status();
  }
  // Active pods labelled app=name (-1 if the list failed).
  int ActivePods(const std::string& name) {
    ListOptions sel;
    sel.label_selector = LabelSelector::FromMap({{"app", name}});
    auto list = Call<Result<ObjectList<Pod>>>([&](auto cb) { api_->pods().List(ns_, sel, cb); });
    if (!list.ok()) return -1;
    int n = 0;
    for (const PodPtr& p : list->items) n += IsActive(*p) ? 1 : 0;
    return n;
  }
  // Deletes every pod labelled app=name; false if a call failed.
  bool DeletePods(const std::string& name) {
    ListOptions sel;
    sel.label_selector = LabelSelector::FromMap({{"app", name}});
    auto list = Call<Result<ObjectList<Pod>>>([&](auto cb) { api_->pods().List(ns_, sel, cb); });
    if (!list.ok()) return false;
    for (const PodPtr& p : list->items) {
      Status s =
          Call<Result<PodPtr>>([&](auto cb) { api_->pods().Delete(ns_, p->metadata.name, {}, cb); }).status();
      if (!s.ok() && s.code() != Code::kNotFound) return false;
    }
    return true;
  }

 private:
  ApiClient* api_;
  std::string ns_;
};

inline bool EventuallyWithin(SteadyClock::duration timeout, const std::function<bool()>& pred) {
  const auto deadline = SteadyClock::now() + timeout;
  while (!pred()) {
    if (SteadyClock::now() >= deadline) return pred();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return true;
}

}  // namespace rcsim

#endif  // RCSIM_APPS_CONTROLLER_MANAGER_MANAGER_TEST_SUPPORT_H_
