#include "backends/http/lease_routes.h"

#include <gtest/gtest.h>

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
  HttpResponse Call(const std::string& method, const std::string& path, const std::string& body = "") {
    HttpRequest req;
    req.method = method;
    req.target = path;
    req.body = body;
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
  EXPECT_EQ(Call("PATCH", base + "/m").status, 405);
  EXPECT_EQ(Call("GET", "/apis/coordination.k8s.io/v1/leases").status, 200);
  EXPECT_EQ(Call("GET", "/apis/coordination.k8s.io/v1").status, 200);
  EXPECT_EQ(Call("DELETE", base + "/m").status, 200);
  EXPECT_EQ(Call("GET", base + "/m").status, 404);
}

}  // namespace
}  // namespace rcsim
