#include "backends/http/lease_routes.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "engine/rng.h"
#include "fakes/mem_store.h"
#include "fakes/sim_loop.h"

namespace rcsim {
namespace {

Lease MakeLease(const std::string& name, const std::string& holder) {
  Lease l;
  l.metadata.name = name;
  l.spec.holder_identity = holder;
  l.spec.lease_duration_seconds = 15;
  l.spec.renew_time = TimePoint(std::chrono::seconds(1700000000)) + std::chrono::microseconds(123456);
  l.spec.lease_transitions = 0;
  return l;
}

class LeaseRegistryTest : public ::testing::Test {
 protected:
  LeaseRegistryTest() : store_(&loop_, &loop_), rng_(7), ctx_(&store_, &loop_, &rng_), leases_(&ctx_) {}
  SimLoop loop_;
  MemStore store_;
  Mt19937Rng rng_;
  RegistryContext ctx_;
  LeaseRegistry leases_;
};

class LeaseRoutesTest : public LeaseRegistryTest {
 protected:
  HttpResponse Call(const std::string& method, const std::string& path, const std::string& body = "",
                    const std::string& content_type = "") {
    HttpRequest req;
    req.method = method;
    req.target = path;
    req.body = body;
    req.content_type = content_type;
    std::vector<std::string> seg;
    for (size_t i = 1; i <= path.size();) {
      size_t j = path.find('/', i);
      if (j == std::string::npos) j = path.size();
      seg.push_back(path.substr(i, j - i));
      i = j + 1;
    }
    return ServeLeases(&leases_, req, seg);
  }
};

TEST_F(LeaseRoutesTest, ServesTheCoordinationApi) {
  const std::string base = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases";
  auto created = Call("POST", base, EncodeLease(MakeLease("m", "a")));
  ASSERT_EQ(created.status, 201) << created.body;
  auto got = Call("GET", base + "/m");
  ASSERT_EQ(got.status, 200) << got.body;
  auto lease = DecodeLease(got.body);
  ASSERT_TRUE(lease.ok());
  lease->spec.holder_identity = "b";
  EXPECT_EQ(Call("PUT", base + "/m", EncodeLease(*lease)).status, 200);
  EXPECT_EQ(Call("PUT", base + "/m", EncodeLease(*lease)).status, 409);      // stale resourceVersion
  EXPECT_EQ(Call("PUT", base + "/other", EncodeLease(*lease)).status, 400);  // name mismatch
  EXPECT_EQ(Call("POST", base, "{").status, 400);
  EXPECT_EQ(Call("POST", base, std::string(100000, '[') + std::string(100000, ']')).status, 400);
  EXPECT_EQ(Call("GET", base + "/nope").status, 404);
  EXPECT_EQ(Call("POST", base + "/m").status, 405);
  EXPECT_EQ(Call("GET", "/apis/coordination.k8s.io/v1/leases").status, 200);
  EXPECT_EQ(Call("GET", "/apis/coordination.k8s.io/v1").status, 200);
  EXPECT_EQ(Call("DELETE", base + "/m").status, 200);
  EXPECT_EQ(Call("GET", base + "/m").status, 404);
}

TEST_F(LeaseRoutesTest, PatchesAreAppliedToTheCurrentLeaseAndBadOnesChangeNothing) {
  const std::string base = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases";
  ASSERT_EQ(Call("POST", base, EncodeLease(MakeLease("n", "a"))).status, 201);
  auto merged =
      Call("PATCH", base + "/n", R"({"spec":{"holderIdentity":"b"},"metadata":{"labels":{"x":"y"}}})",
           "application/merge-patch+json");
  ASSERT_EQ(merged.status, 200) << merged.body;
  auto strategic = Call("PATCH", base + "/n", R"({"spec":{"leaseDurationSeconds":15}})",
                        "application/strategic-merge-patch+json");
  ASSERT_EQ(strategic.status, 200) << strategic.body;
  auto json_patch =
      Call("PATCH", base + "/n", R"([{"op":"replace","path":"/spec/holderIdentity","value":"c"}])",
           "application/json-patch+json");
  ASSERT_EQ(json_patch.status, 200) << json_patch.body;
  auto lease = DecodeLease(Call("GET", base + "/n").body);
  ASSERT_TRUE(lease.ok());
  EXPECT_EQ(lease->spec.holder_identity, "c");
  EXPECT_EQ(lease->spec.lease_duration_seconds, 15);
  EXPECT_EQ(lease->metadata.labels.at("x"), "y");
  const std::string rv = lease->metadata.resource_version;
  // Refused, and the lease is as it was: a stale resourceVersion named in the patch, a bad patch, a
  // changed name, server-side apply, an unknown media type, a missing lease.
  EXPECT_EQ(
      Call("PATCH", base + "/n", R"({"metadata":{"resourceVersion":"1"},"spec":{"holderIdentity":"d"}})",
           "application/merge-patch+json")
          .status,
      409);
  EXPECT_EQ(Call("PATCH", base + "/n", "{", "application/merge-patch+json").status, 400);
  EXPECT_EQ(
      Call("PATCH", base + "/n", R"([{"op":"remove","path":"/nope"}])", "application/json-patch+json").status,
      422);
  EXPECT_EQ(Call("PATCH", base + "/n", R"({"metadata":{"name":"m"}})", "application/merge-patch+json").status,
            400);
  EXPECT_EQ(Call("PATCH", base + "/n", "{}", "application/apply-patch+yaml").status, 415);
  EXPECT_EQ(Call("PATCH", base + "/n", "{}", "text/plain").status, 415);
  EXPECT_EQ(Call("PATCH", base + "/none", "{}", "application/merge-patch+json").status, 404);
  EXPECT_EQ(DecodeLease(Call("GET", base + "/n").body)->metadata.resource_version, rv);
}

// Watches and selected lists go through the API handler, as the HTTP server serves them.
class LeaseWatchTest : public LeaseRegistryTest {
 protected:
  class Lines final : public WatchSink {
   public:
    void OnLine(WatchLine line) override { lines.push_back(nlohmann::json::parse(*line)); }
    void OnEnd() override { ended = true; }
    std::vector<nlohmann::json> lines;
    bool ended = false;
  };

  LeaseWatchTest() { handler_.set_lease_registry(&leases_); }

  ApiOutcome Get(const std::string& target, const std::shared_ptr<Lines>& sink,
                 const std::string& accept = "", const std::string& method = "GET") {
    HttpRequest req;
    req.method = method;
    req.target = target;
    req.accept = accept;
    return handler_.Handle(req, sink);
  }
  void Create(const std::string& ns, const std::string& name, const std::string& label = "") {
    Lease l = MakeLease(name, name);
    if (!label.empty()) l.metadata.labels["tier"] = label;
    ASSERT_TRUE(leases_.Create(ns, l).ok());
  }
  static std::vector<std::string> Names(const Lines& sink) {
    std::vector<std::string> out;
    for (const nlohmann::json& l : sink.lines) {
      out.push_back(l["type"].get<std::string>() + " " + l["object"]["metadata"]["name"].get<std::string>());
    }
    return out;
  }

  Registry registry_{&store_, &loop_, &rng_};
  ApiHandler handler_{&registry_, &loop_};
};

TEST_F(LeaseWatchTest, AWatchOfANamespaceOrOneLeaseGetsItsChanges) {
  Create("kube-node-lease", "node-a");
  auto all = std::make_shared<Lines>(), one = std::make_shared<Lines>();
  ApiOutcome w1 = Get("/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases?watch=true", all);
  ASSERT_EQ(w1.response.status, 200) << w1.response.body;
  ASSERT_NE(w1.watch, nullptr);
  ApiOutcome w2 = Get("/apis/coordination.k8s.io/v1/watch/namespaces/kube-node-lease/leases/node-b", one);
  ASSERT_EQ(w2.response.status, 200) << w2.response.body;
  Create("kube-node-lease", "node-b");
  Create("kube-system", "rc-manager");  // another namespace
  ASSERT_TRUE(leases_.Delete("kube-node-lease", "node-a", DeleteOptions()).ok());
  loop_.RunUntilIdle();
  EXPECT_EQ(Names(*all), (std::vector<std::string>{"ADDED node-a", "ADDED node-b", "DELETED node-a"}));
  EXPECT_EQ(Names(*one), (std::vector<std::string>{"ADDED node-b"}));
  EXPECT_EQ(all->lines[1]["object"]["kind"], "Lease");
  EXPECT_EQ(all->lines[1]["object"]["apiVersion"], "coordination.k8s.io/v1");
  EXPECT_EQ(all->lines[1]["object"]["spec"]["holderIdentity"], "node-b");
  EXPECT_FALSE(all->lines[1]["object"]["metadata"].value("resourceVersion", "").empty());

  EXPECT_EQ(Get("/apis/coordination.k8s.io/v1/watch/namespaces/kube-node-lease/leases", one, "", "POST")
                .response.status,
            405);
  EXPECT_EQ(Get("/apis/coordination.k8s.io/v1/leases?watch=true&fieldSelector=spec.holderIdentity%3Dx", one)
                .response.status,
            400);
  EXPECT_EQ(Get("/apis/coordination.k8s.io/v1/watch/nodes", one).response.status, 404);
}

TEST_F(LeaseWatchTest, ListsHonourSelectorsAndPrintAsATable) {
  Create("kube-node-lease", "node-a", "gold");
  Create("kube-node-lease", "node-b");
  auto sink = std::make_shared<Lines>();
  ApiOutcome gold = Get("/apis/coordination.k8s.io/v1/leases?labelSelector=tier%3Dgold", sink);
  ASSERT_EQ(gold.response.status, 200) << gold.response.body;
  const nlohmann::json list = nlohmann::json::parse(gold.response.body);
  ASSERT_EQ(list["items"].size(), 1u);
  EXPECT_EQ(list["items"][0]["metadata"]["name"], "node-a");

  ApiOutcome table = Get("/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases", sink,
                         "application/json;as=Table;v=v1;g=meta.k8s.io,application/json");
  ASSERT_EQ(table.response.status, 200) << table.response.body;
  EXPECT_EQ(table.response.content_type, kTableContentType);
  const nlohmann::json t = nlohmann::json::parse(table.response.body);
  EXPECT_EQ(t["kind"], "Table");
  ASSERT_EQ(t["columnDefinitions"].size(), 3u);
  EXPECT_EQ(t["columnDefinitions"][1]["name"], "Holder");
  ASSERT_EQ(t["rows"].size(), 2u);
  EXPECT_EQ(t["rows"][1]["cells"][0], "node-b");
  EXPECT_EQ(t["rows"][1]["cells"][1], "node-b");

  // A Table watch: the first event carries the columns, the next ones only rows.
  auto watch = std::make_shared<Lines>();
  ApiOutcome w = Get("/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases?watch=true", watch,
                     "application/json;as=Table;v=v1;g=meta.k8s.io");
  ASSERT_EQ(w.response.status, 200);
  ASSERT_EQ(watch->lines.size(), 2u);
  EXPECT_EQ(watch->lines[0]["object"]["kind"], "Table");
  EXPECT_EQ(watch->lines[0]["object"]["columnDefinitions"].size(), 3u);
  EXPECT_TRUE(watch->lines[1]["object"]["columnDefinitions"].empty());
  EXPECT_EQ(watch->lines[1]["object"]["rows"][0]["cells"][0], "node-b");
}

}  // namespace
}  // namespace rcsim
