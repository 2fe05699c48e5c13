// FaultProxy in front of a real apps/apiserver process over a real etcd: HttpApiClient -> proxy ->
// apiserver. Every fault is checked to act while its window lasts and to stop when it ends; the
// pass-through cases check that what is not broken is relayed faithfully (watch streams included).
#include "backends/faultproxy/fault_proxy.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "backends/httpclient/http_api_client.h"
#include "tests/api_http_contract/apiserver_process.h"
#include "tests/etcd_fixture/etcd_process.h"

#ifndef RCSIM_APISERVER_BINARY
#error "RCSIM_APISERVER_BINARY must name the apiserver executable"
#endif

namespace rcsim {
namespace {

using SteadyClock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

Pod MakePod(const std::string& name) {
  Pod pod;
  pod.metadata.name = name;
  pod.metadata.namespace_ = "default";
  pod.metadata.labels = {{"app", "proxy-test"}};
  Container c;
  c.name = "c";
  c.image = "busybox";
  pod.spec.containers.push_back(c);
  return pod;
}

template <typename T>
T Wait(std::function<void(Callback<T>)> call) {
  auto p = std::make_shared<std::promise<T>>();
  std::future<T> f = p->get_future();
  call([p](T v) { p->set_value(std::move(v)); });
  return f.get();
}

// Collects the events of one watch, thread-safely.
struct Events {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::pair<SteadyClock::time_point, ApiWatchEvent<Pod>>> got;
  void Add(const ApiWatchEvent<Pod>& e) {
    std::lock_guard<std::mutex> lock(mu);
    got.emplace_back(SteadyClock::now(), e);
    cv.notify_all();
  }
  // Waits (bounded) until `pred(events)` holds; true if it did.
  bool WaitFor(const std::function<
                   bool(const std::vector<std::pair<SteadyClock::time_point, ApiWatchEvent<Pod>>>&)>& pred,
               Duration timeout = seconds(10)) {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, timeout, [&] { return pred(got); });
  }
  std::size_t size() {
    std::lock_guard<std::mutex> lock(mu);
    return got.size();
  }
};

bool HasAdded(const std::vector<std::pair<SteadyClock::time_point, ApiWatchEvent<Pod>>>& ev,
              const std::string& name, SteadyClock::time_point* at = nullptr) {
  for (const auto& [t, e] : ev) {
    if (e.type == ApiWatchEvent<Pod>::Type::kAdded && e.object && e.object->metadata.name == name) {
      if (at) *at = t;
      return true;
    }
  }
  return false;
}

class FaultProxyTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto etcd = EtcdProcess::Start();
    ASSERT_TRUE(etcd.ok()) << etcd.status().ToString();
    etcd_ = std::move(etcd).value().release();
    ApiServerProcessOptions o;
    o.binary = RCSIM_APISERVER_BINARY;
    o.etcd_servers = etcd_->endpoint();
    auto api = ApiServerProcess::Start(o);
    ASSERT_TRUE(api.ok()) << api.status().ToString();
    apiserver_ = std::move(api).value().release();
  }
  static void TearDownTestSuite() {
    delete apiserver_;
    delete etcd_;
  }

  void SetUp() override {
    ASSERT_NE(apiserver_, nullptr);
    FaultProxyOptions po;
    po.upstream_port = static_cast<uint16_t>(apiserver_->port());
    po.timeout = milliseconds(300);
    auto proxy = FaultProxy::Start(po);
    ASSERT_TRUE(proxy.ok()) << proxy.status().ToString();
    proxy_ = std::move(proxy).value();
    client_ = NewClient(proxy_->url());
    direct_ = NewClient(apiserver_->url());
  }
  void TearDown() override {
    // Remove this test's pods, straight through the API server.
    auto list = List(*direct_);
    if (list.ok()) {
      for (const auto& p : list->items) {
        (void)Wait<Result<PodPtr>>(
            [&](auto cb) { direct_->pods().Delete("default", p->metadata.name, {}, cb); });
      }
    }
    client_.reset();
    direct_.reset();
    proxy_.reset();
  }

  static std::unique_ptr<HttpApiClient> NewClient(const std::string& url) {
    HttpApiClientOptions o;
    o.base_url = url;
    o.request_timeout = seconds(5);
    o.connect_timeout = seconds(2);
    auto c = HttpApiClient::Create(o);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? std::move(c).value() : nullptr;
  }
  static Result<PodPtr> Create(HttpApiClient& c, const std::string& name) {
    return Wait<Result<PodPtr>>([&](auto cb) { c.pods().Create("default", MakePod(name), cb); });
  }
  static Result<ObjectList<Pod>> List(HttpApiClient& c) {
    ListOptions o;
    o.label_selector = LabelSelector::FromMap({{"app", "proxy-test"}});
    return Wait<Result<ObjectList<Pod>>>([&](auto cb) { c.pods().List("default", o, cb); });
  }
  std::unique_ptr<ApiWatch> Watch(HttpApiClient& c, Events* events, const std::string& rv = "") {
    ListOptions o;
    o.label_selector = LabelSelector::FromMap({{"app", "proxy-test"}});
    return c.pods().Watch("default", o, rv, [events](const ApiWatchEvent<Pod>& e) { events->Add(e); });
  }

  static EtcdProcess* etcd_;
  static ApiServerProcess* apiserver_;
  std::unique_ptr<FaultProxy> proxy_;
  std::unique_ptr<HttpApiClient> client_;
  std::unique_ptr<HttpApiClient> direct_;
};

EtcdProcess* FaultProxyTest::etcd_ = nullptr;
ApiServerProcess* FaultProxyTest::apiserver_ = nullptr;

TEST_F(FaultProxyTest, PassesRequestsAndWatchStreamsThrough) {
  Events events;
  auto list0 = List(*client_);
  ASSERT_TRUE(list0.ok()) << list0.status().ToString();
  auto watch = Watch(*client_, &events, list0->resource_version);
  ASSERT_TRUE(Create(*client_, "a").ok());
  auto got = Wait<Result<PodPtr>>([&](auto cb) { client_->pods().Get("default", "a", cb); });
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ((*got)->metadata.name, "a");
  Pod updated = **got;
  updated.metadata.labels["extra"] = "1";
  auto up = Wait<Result<PodPtr>>([&](auto cb) { client_->pods().Update(updated, cb); });
  ASSERT_TRUE(up.ok()) << up.status().ToString();
  auto del = Wait<Result<PodPtr>>([&](auto cb) { client_->pods().Delete("default", "a", {}, cb); });
  ASSERT_TRUE(del.ok()) << del.status().ToString();
  // The stream relays ADDED, MODIFIED and DELETED in order, as the server sent them.
  ASSERT_TRUE(events.WaitFor([](const auto& ev) { return ev.size() >= 3; })) << events.size() << " events";
  std::lock_guard<std::mutex> lock(events.mu);
  EXPECT_EQ(events.got[0].second.type, ApiWatchEvent<Pod>::Type::kAdded);
  EXPECT_EQ(events.got[1].second.type, ApiWatchEvent<Pod>::Type::kModified);
  EXPECT_EQ(events.got[1].second.object->metadata.labels.at("extra"), "1");
  EXPECT_EQ(events.got[2].second.type, ApiWatchEvent<Pod>::Type::kDeleted);
  // A missing object keeps its 404 Status.
  auto missing = Wait<Result<PodPtr>>([&](auto cb) { client_->pods().Get("default", "nope", cb); });
  EXPECT_EQ(missing.status().code(), Code::kNotFound);
  FaultProxyCounters c = proxy_->counters();
  EXPECT_EQ(c.calls[static_cast<int>(Verb::kCreate)], 1u);
  EXPECT_EQ(c.calls[static_cast<int>(Verb::kWatch)], 1u);
  EXPECT_EQ(c.calls[static_cast<int>(Verb::kGet)], 2u);
  EXPECT_GE(c.watch_events, 3u);
}

TEST_F(FaultProxyTest, InjectedErrorsAnswerAStatusAndApplyNothingUntilTheWindowEnds) {
  proxy_->SetErrors({Verb::kCreate}, 1.0, 403, "Forbidden", "exceeded quota: q", milliseconds(500));
  const auto start = SteadyClock::now();
  auto r = Create(*client_, "refused");
  EXPECT_EQ(r.status().code(), Code::kForbidden) << r.status().ToString();
  EXPECT_NE(r.status().message().find("exceeded quota: q"), std::string::npos) << r.status().ToString();
  // Reads are not faulted; nothing was created.
  auto list = List(*client_);
  ASSERT_TRUE(list.ok());
  EXPECT_TRUE(list->items.empty());
  // After the window, creates go through again.
  Result<PodPtr> ok = Status(Code::kInternal, "not tried");
  while (SteadyClock::now() < start + seconds(10)) {
    ok = Create(*client_, "later");
    if (ok.ok()) break;
    EXPECT_EQ(ok.status().code(), Code::kForbidden);
  }
  EXPECT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_GE(SteadyClock::now() - start, milliseconds(500));
  EXPECT_GE(proxy_->counters().errors_injected, 1u);
}

TEST_F(FaultProxyTest, TimeoutsLeaveTheOutcomeUnknown) {
  proxy_->SetTimeouts({Verb::kCreate}, 1.0, seconds(30));
  int applied = 0;
  for (int i = 0; i < 8; ++i) {
    const auto start = SteadyClock::now();
    auto r = Create(*client_, "t" + std::to_string(i));
    EXPECT_EQ(r.status().code(), Code::kTimeout) << r.status().ToString();
    EXPECT_GE(SteadyClock::now() - start, milliseconds(290));
    auto got =
        Wait<Result<PodPtr>>([&](auto cb) { direct_->pods().Get("default", "t" + std::to_string(i), cb); });
    applied += got.ok() ? 1 : 0;
  }
  // Half are forwarded: with 8 draws, both outcomes show (the seed is fixed).
  EXPECT_GT(applied, 0);
  EXPECT_LT(applied, 8);
  EXPECT_EQ(proxy_->counters().timeouts_injected, 8u);
}

TEST_F(FaultProxyTest, LatencyDelaysTheChosenVerbsOnly) {
  ASSERT_TRUE(Create(*client_, "l").ok());
  proxy_->SetLatency({Verb::kGet}, milliseconds(300), milliseconds(300), seconds(30));
  auto start = SteadyClock::now();
  ASSERT_TRUE(Wait<Result<PodPtr>>([&](auto cb) { client_->pods().Get("default", "l", cb); }).ok());
  EXPECT_GE(SteadyClock::now() - start, milliseconds(300));
  start = SteadyClock::now();
  ASSERT_TRUE(List(*client_).ok());
  EXPECT_LT(SteadyClock::now() - start, milliseconds(300));
}

TEST_F(FaultProxyTest, DroppedWatchesEndAndNewOnesWork) {
  Events events;
  auto watch = Watch(*client_, &events);
  // The watch is open once an event made it through.
  ASSERT_TRUE(Create(*direct_, "d1").ok());
  ASSERT_TRUE(events.WaitFor([](const auto& ev) { return HasAdded(ev, "d1"); }));
  EXPECT_EQ(proxy_->open_watches(), 1);
  EXPECT_EQ(proxy_->DropWatches(), 1);
  ASSERT_TRUE(events.WaitFor([](const auto& ev) {
    return !ev.empty() && ev.back().second.type == ApiWatchEvent<Pod>::Type::kError;
  }));
  {
    std::lock_guard<std::mutex> lock(events.mu);
    EXPECT_EQ(events.got.back().second.error.code(), Code::kUnavailable);
  }
  Events again;
  auto watch2 = Watch(*client_, &again);
  ASSERT_TRUE(Create(*direct_, "d2").ok());
  EXPECT_TRUE(again.WaitFor([](const auto& ev) { return HasAdded(ev, "d2"); }));
  EXPECT_EQ(proxy_->counters().watches_dropped, 1u);
}

TEST_F(FaultProxyTest, WatchEventsArriveDelayed) {
  Events events;
  auto watch = Watch(*client_, &events);
  ASSERT_TRUE(Create(*direct_, "w0").ok());
  ASSERT_TRUE(events.WaitFor([](const auto& ev) { return HasAdded(ev, "w0"); }));
  proxy_->SetWatchDelay(milliseconds(700), seconds(30));
  const auto created = SteadyClock::now();
  ASSERT_TRUE(Create(*direct_, "w1").ok());
  SteadyClock::time_point at;
  ASSERT_TRUE(events.WaitFor([&](const auto& ev) { return HasAdded(ev, "w1", &at); }));
  EXPECT_GE(at - created, milliseconds(700));
}

TEST_F(FaultProxyTest, StalledWatchesDeliverNothingUntilTheStallEnds) {
  Events events;
  auto watch = Watch(*client_, &events);
  ASSERT_TRUE(Create(*direct_, "s0").ok());
  ASSERT_TRUE(events.WaitFor([](const auto& ev) { return HasAdded(ev, "s0"); }));
  const auto stalled = SteadyClock::now();
  proxy_->StallWatches(milliseconds(800));
  ASSERT_TRUE(Create(*direct_, "s1").ok());
  ASSERT_TRUE(Create(*direct_, "s2").ok());
  SteadyClock::time_point at1, at2;
  ASSERT_TRUE(
      events.WaitFor([&](const auto& ev) { return HasAdded(ev, "s1", &at1) && HasAdded(ev, "s2", &at2); }));
  EXPECT_GE(at1 - stalled, milliseconds(790));
  EXPECT_LE(at1, at2);
}

TEST_F(FaultProxyTest, PartitionCutsEverythingForItsWindow) {
  Events events;
  auto watch = Watch(*client_, &events);
  ASSERT_TRUE(Create(*direct_, "p0").ok());
  ASSERT_TRUE(events.WaitFor([](const auto& ev) { return HasAdded(ev, "p0"); }));
  const auto start = SteadyClock::now();
  proxy_->Partition(seconds(2));
  // The watch ends, a write gets no answer and is not applied, a read fails.
  ASSERT_TRUE(events.WaitFor([](const auto& ev) {
    return !ev.empty() && ev.back().second.type == ApiWatchEvent<Pod>::Type::kError;
  }));
  auto w = Create(*client_, "p1");
  EXPECT_EQ(w.status().code(), Code::kTimeout) << w.status().ToString();
  auto r = List(*client_);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(Wait<Result<PodPtr>>([&](auto cb) { direct_->pods().Get("default", "p1", cb); }).status().code(),
            Code::kNotFound);
  // The direct path is unaffected; once the window is over the proxy serves again.
  Result<ObjectList<Pod>> after = Status(Code::kInternal, "not tried");
  while (SteadyClock::now() < start + seconds(15)) {
    after = List(*client_);
    if (after.ok()) break;
  }
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_GE(SteadyClock::now() - start, seconds(2));
  EXPECT_GE(proxy_->counters().partitioned_requests, 2u);
}

TEST_F(FaultProxyTest, ReadLagServesTheWorldAsItWas) {
  proxy_->SetReadLag(milliseconds(600), seconds(30));
  const auto start = SteadyClock::now();
  auto list = List(*client_);  // fetched at once, delivered late
  ASSERT_TRUE(list.ok());
  EXPECT_GE(SteadyClock::now() - start, milliseconds(600));
  // A pod created right after the list was fetched is not in it.
  EXPECT_TRUE(list->items.empty());
  // Writes are not delayed: with reads lagging 20 s, a write that came back in less was not held
  // (a bound far from any machine's noise; 600 ms failed once on a loaded 2-core box).
  proxy_->SetReadLag(seconds(20), seconds(30));
  const auto w = SteadyClock::now();
  ASSERT_TRUE(Create(*client_, "r").ok());
  EXPECT_LT(SteadyClock::now() - w, seconds(20));
}

TEST_F(FaultProxyTest, WithAPinnerCacheListsAreServedAtTheRevisionItGivesAndTheRestFresh) {
  auto a = Create(*client_, "a");
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(Create(*client_, "b").ok());
  const std::string at_a = (*a)->metadata.resource_version;
  std::mutex mu;
  std::vector<ListOptions> asked;  // guarded by mu
  // As real mode's pinner: a list a cache may serve (a resourceVersion, not Exact, no continue) goes to
  // the revision of `a`'s creation.
  auto pin = [&](ListOptions* opts) {
    std::lock_guard<std::mutex> lock(mu);
    asked.push_back(*opts);
    if (opts->resource_version.empty() || !opts->continue_token.empty()) return false;
    opts->resource_version = at_a;
    opts->resource_version_match = ResourceVersionMatch::kExact;
    return true;
  };
  // A lag of 20 s: an answer that came back in less was not held (a bound far from any machine's noise).
  proxy_->SetReadLag(seconds(20), seconds(30), pin);
  const auto start = SteadyClock::now();
  ListOptions cached;
  cached.label_selector = LabelSelector::FromMap({{"app", "proxy-test"}});
  cached.resource_version = "0";
  auto stale = Wait<Result<ObjectList<Pod>>>([&](auto cb) { client_->pods().List("default", cached, cb); });
  ASSERT_TRUE(stale.ok()) << stale.status().ToString();
  ASSERT_EQ(stale->items.size(), 1u);  // the world as it was at `a`'s creation
  EXPECT_EQ(stale->items[0]->metadata.name, "a");
  EXPECT_EQ(stale->resource_version, at_a);
  auto consistent = List(*client_);  // resourceVersion "": a quorum read
  ASSERT_TRUE(consistent.ok());
  EXPECT_EQ(consistent->items.size(), 2u);
  auto got = Wait<Result<PodPtr>>([&](auto cb) { client_->pods().Get("default", "b", cb); });
  EXPECT_TRUE(got.ok()) << got.status().ToString();  // GETs are fresh
  EXPECT_LT(SteadyClock::now() - start, seconds(20));
  EXPECT_EQ(proxy_->counters().stale_lists, 1u);
  {
    std::lock_guard<std::mutex> lock(mu);
    ASSERT_EQ(asked.size(), 2u);  // the two lists; never the GET
    EXPECT_EQ(asked[0].resource_version, "0");
    EXPECT_EQ(asked[0].resource_version_match, ResourceVersionMatch::kNotOlderThan);
    EXPECT_EQ(asked[1].resource_version, "");
  }
  // Once the window is over nothing is pinned.
  proxy_->ClearFaults();
  auto fresh = Wait<Result<ObjectList<Pod>>>([&](auto cb) { client_->pods().List("default", cached, cb); });
  ASSERT_TRUE(fresh.ok());
  EXPECT_EQ(fresh->items.size(), 2u);
  EXPECT_EQ(proxy_->counters().stale_lists, 1u);
}

TEST(ExactListTargetTest, ReplacesTheResourceVersionAndKeepsTheRest) {
  EXPECT_EQ(
      ExactListTarget("/api/v1/pods?labelSelector=a%3Db&resourceVersion=0&resourceVersionMatch=NotOlderThan"
                      "&limit=500",
                      "12"),
      "/api/v1/pods?labelSelector=a%3Db&limit=500&resourceVersion=12&resourceVersionMatch=Exact");
  EXPECT_EQ(ExactListTarget("/api/v1/pods", "7"),
            "/api/v1/pods?resourceVersion=7&resourceVersionMatch=Exact");
  EXPECT_EQ(ExactListTarget("/api/v1/pods?resourceVersion=3", "7"),
            "/api/v1/pods?resourceVersion=7&resourceVersionMatch=Exact");
}

TEST(ClassifyCallTest, VerbsAndResources) {
  EXPECT_EQ(ClassifyCall("GET", "/api/v1/namespaces/d/pods?watch=true&resourceVersion=5").verb, Verb::kWatch);
  EXPECT_TRUE(ClassifyCall("GET", "/api/v1/namespaces/d/pods?watch=true").watch);
  EXPECT_EQ(ClassifyCall("GET", "/api/v1/namespaces/d/pods?labelSelector=a%3Db").verb, Verb::kList);
  EXPECT_EQ(ClassifyCall("GET", "/api/v1/pods").verb, Verb::kList);
  EXPECT_EQ(ClassifyCall("GET", "/api/v1/namespaces/d/pods/p").verb, Verb::kGet);
  EXPECT_EQ(ClassifyCall("PUT", "/api/v1/namespaces/d/replicationcontrollers/r/status").verb, Verb::kUpdate);
  EXPECT_TRUE(ClassifyCall("PUT", "/api/v1/namespaces/d/replicationcontrollers/r/status").faultable);
  EXPECT_EQ(ClassifyCall("POST", "/api/v1/namespaces/d/pods").verb, Verb::kCreate);
  EXPECT_EQ(ClassifyCall("DELETE", "/api/v1/namespaces/d/pods/p").verb, Verb::kDelete);
  EXPECT_FALSE(ClassifyCall("POST", "/api/v1/namespaces/d/events").faultable);
  EXPECT_FALSE(ClassifyCall("PUT", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/x").faultable);
  EXPECT_FALSE(ClassifyCall("GET", "/api/v1/namespaces/pods").faultable);  // the namespace named "pods"
  EXPECT_FALSE(ClassifyCall("GET", "/version").faultable);
}

}  // namespace
}  // namespace rcsim
