// Malformed values written straight into etcd under /registry/ (bad JSON, the wrong kind, a 10 MB
// value that does not decode), under the real stack: apps/apiserver and apps/controller-manager (which
// reads controllers straight from etcd with --etcd_servers, the 2014 mode, so its own informer meets
// them too) over a real etcd. Each value is skipped and reported, never fatal:
// - the API server's lists answer 200 without them, its watches go on (no ERROR, no re-list), each
//   key is named in its log, and /metrics counts them (apiserver_storage_malformed_values_total);
// - the manager skips the bad controllers with a log line naming the key and counts them
//   (informer_malformed_objects_total), and keeps managing the good controller;
// - both processes are still running at the end.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "backends/etcd/etcd_store.h"
#include "engine/codec.h"
#include "tests/api_http_contract/apiserver_process.h"
#include "tests/api_http_contract/controller_manager_process.h"
#include "tests/etcd_fixture/etcd_process.h"
#include "tests/faults/fault_fixture.h"

#if !defined(RCSIM_APISERVER_BINARY) || !defined(RCSIM_CONTROLLER_MANAGER_BINARY)
#error "the apiserver and controller-manager binaries must be given"
#endif

namespace rcsim::faults {
namespace {

constexpr auto kConverge = std::chrono::seconds(60);

bool Alive(pid_t pid) {
  int status = 0;
  return pid > 0 && waitpid(pid, &status, WNOHANG) == 0;
}

// The value of a Prometheus sample `name` in `text`, or -1.
double Sample(const std::string& text, const std::string& name) {
  const size_t at = text.find("\n" + name + " ");
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + name.size() + 2));
}

TEST(MalformedValuesTest, BadJsonWrongKindAndHugeValuesAreSkippedAndReportedNeverFatal) {
  EtcdProcessOptions etcd_options;
  etcd_options.extra_args = {"--max-request-bytes=16777216"};  // etcd's 1.5 MiB default refuses 10 MB
  auto etcd = EtcdProcess::Start(etcd_options);
  ASSERT_TRUE(etcd.ok()) << etcd.status().ToString();
  ApiServerProcessOptions api_options;
  api_options.binary = RCSIM_APISERVER_BINARY;
  api_options.etcd_servers = (*etcd)->endpoint();
  auto api = ApiServerProcess::Start(api_options);
  ASSERT_TRUE(api.ok()) << api.status().ToString();
  ControllerManagerProcess manager(RCSIM_CONTROLLER_MANAGER_BINARY,
                                   {"--apiserver=" + (*api)->url(), "--etcd_servers=" + (*etcd)->endpoint(),
                                    "--workers=2", "--resync=1", "--leader-elect=false"});
  auto client = TestClient((*api)->url());
  ASSERT_NE(client, nullptr);
  Status ns = CreateNamespace(*client, "faults");
  ASSERT_TRUE(ns.ok()) << ns.ToString();
  PodTracker web((*api)->url(), "faults");
  ASSERT_TRUE(CreateController(*client, "faults", MakeController("web", 3)).ok());
  ASSERT_TRUE(PollUntil(kConverge, [&] { return web.active() == 3; })) << manager.Log();

  // Straight into etcd, as a bug, a restore gone wrong or an attacker with etcd access would.
  EtcdStoreOptions store_options;
  store_options.endpoints = {(*etcd)->endpoint()};
  EtcdStore store(store_options);
  ReplicationController as_rc = MakeController("posing", 1);
  as_rc.metadata.namespace_ = "faults";
  const std::string rc_json = EncodeController(as_rc);
  nlohmann::json pod_json = nlohmann::json::parse(PodJson("posing", "web"));
  pod_json["metadata"]["namespace"] = "faults";
  const std::string huge =
      "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"huge\",\"labels\":"
      "{\"app\":\"web\"}},\"x\":\"" +
      std::string(10 << 20, 'h');  // 10 MB, never closed
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"/registry/pods/faults/bad-json", "{\"kind\":\"Pod\",\"metadata\":{\"name\":"},
      {"/registry/pods/faults/wrong-kind", rc_json},
      {"/registry/pods/faults/huge", huge},
      {"/registry/controllers/faults/bad-json", "not json at all"},
      {"/registry/controllers/faults/wrong-kind", pod_json.dump()},
      {"/registry/controllers/faults/huge", huge},
  };
  for (const auto& [key, value] : bad) {
    PutRequest put;
    put.key = key;
    put.value = Value(value);
    Result<PutResponse> r = store.Put(put);
    ASSERT_TRUE(r.ok()) << key << ": " << r.status().ToString();
  }

  // The API server: lists work and leave the bad values out, whatever the path.
  const auto list_start = SteadyClock::now();
  for (const std::string path :
       {"/api/v1/namespaces/faults/pods", "/api/v1/pods", "/api/v1/pods?limit=2",
        "/api/v1/namespaces/faults/replicationcontrollers", "/api/v1/replicationcontrollers",
        "/api/v1/namespaces/faults/pods?labelSelector=app%3Dweb"}) {
    Result<HttpReply> r = SendSync(*client, "GET", path);
    ASSERT_TRUE(r.ok()) << path << ": " << r.status().ToString();
    EXPECT_EQ(r->status, 200) << path << ": " << r->body.substr(0, 300);
    const nlohmann::json list = nlohmann::json::parse(r->body, nullptr, false);
    ASSERT_TRUE(list.is_object()) << path;
    for (const auto& item : list.value("items", nlohmann::json::array())) {
      const std::string name = item["metadata"].value("name", "");
      EXPECT_TRUE(name != "bad-json" && name != "wrong-kind" && name != "huge") << path << " served " << name;
    }
  }
  const double list_ms = MillisSince(list_start);
  // A GET of one answers a Status naming the corrupt key (500 InternalError, as kube-apiserver answers
  // for an object it cannot decode), and the server goes on.
  {
    Result<HttpReply> r = SendSync(*client, "GET", "/api/v1/namespaces/faults/pods/huge");
    ASSERT_TRUE(r.ok());
    EXPECT_NE(r->body.find("/registry/pods/faults/huge"), std::string::npos) << r->body.substr(0, 300);
    EXPECT_LT(r->body.size(), 4096u) << "the 10 MB value must not be echoed";
  }

  // The watch opened before the bad writes goes on: a scale-up is still seen, without a re-list.
  ASSERT_TRUE(ScaleController(*client, "faults", "web", 5).ok());
  ASSERT_TRUE(PollUntil(kConverge, [&] { return web.active() == 5; })) << manager.Log();
  EXPECT_EQ(web.relists(), 0) << "the watch ended";
  EXPECT_EQ(web.peak(), 5) << "the manager must not take the posing objects for its pods";

  // Reported: every key in the API server's log, and its metric.
  ASSERT_TRUE(PollUntil(kConverge, [&] {
    const std::string log = (*api)->LogTail();
    return log.find("/registry/pods/faults/wrong-kind") != std::string::npos;
  })) << (*api)->LogTail();
  Result<HttpReply> metrics = SendSync(*client, "GET", "/metrics");
  ASSERT_TRUE(metrics.ok());
  EXPECT_EQ(metrics->status, 200);
  const double api_malformed = Sample(metrics->body, "apiserver_storage_malformed_values_total");
  EXPECT_GE(api_malformed, 3) << metrics->body;
  // The manager's own informer (from etcd) skipped the three bad controllers and said which.
  ASSERT_TRUE(PollUntil(kConverge, [&] {
    const std::string log = manager.Log();
    return log.find("/registry/controllers/faults/bad-json") != std::string::npos &&
           log.find("/registry/controllers/faults/wrong-kind") != std::string::npos &&
           log.find("/registry/controllers/faults/huge") != std::string::npos;
  })) << manager.Log();
  double manager_malformed = -1;
  ASSERT_TRUE(PollUntil(kConverge, [&] {
    const std::string url = manager.StatusUrl();
    if (url.empty()) return false;
    auto status_client = TestClient(url, 1);
    if (status_client == nullptr) return false;
    Result<HttpReply> r = SendSync(*status_client, "GET", "/metrics");
    if (!r.ok() || r->status != 200) return false;
    manager_malformed = Sample(r->body, "informer_malformed_objects_total");
    return manager_malformed >= 3;
  })) << manager_malformed;

  // Never a crash.
  EXPECT_TRUE(Alive((*api)->pid())) << (*api)->LogTail();
  EXPECT_TRUE(Alive(manager.pid())) << manager.Log();
  std::printf(
      "FIGURES malformed values: %zu written; apiserver_storage_malformed_values_total %.0f, manager "
      "informer_malformed_objects_total %.0f; six lists with them in place %.0f ms\n",
      bad.size(), api_malformed, manager_malformed, list_ms);
}

}  // namespace
}  // namespace rcsim::faults
