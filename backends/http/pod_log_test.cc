#include "backends/http/pod_log.h"

#include <gtest/gtest.h>

#include <boost/asio.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "backends/http/api_handler.h"
#include "backends/http/thread_executor.h"
#include "engine/rng.h"
#include "fakes/mem_store.h"
#include "registry/registry.h"

namespace rcsim {
namespace {

class NoSink final : public WatchSink {
 public:
  void OnLine(WatchLine) override {}
  void OnEnd() override {}
};

// A loopback port nothing listens on (bound, then closed).
int ClosedPort() {
  boost::asio::io_context ioc;
  boost::asio::ip::tcp::acceptor a(ioc, {boost::asio::ip::make_address("127.0.0.1"), 0});
  return a.local_endpoint().port();
}

class PodLogTest : public ::testing::Test {
 protected:
  void AddPod(const std::string& name, const std::string& node,
              const std::vector<std::string>& containers = {"main"}) {
    Pod p;
    p.metadata.name = name;
    p.spec.node_name = node;
    for (const std::string& c : containers) {
      Container k;
      k.name = c;
      k.image = "busybox";
      p.spec.containers.push_back(k);
    }
    ASSERT_TRUE(registry_.pods().Create("default", p).ok());
  }
  void AddNode(const std::string& name, int port, const std::string& ip = "127.0.0.1") {
    Node n;
    n.metadata.name = name;
    if (!ip.empty()) n.status.addresses = {{"InternalIP", ip}};
    n.status.kubelet_port = port;
    ASSERT_TRUE(registry_.nodes().Create("", n).ok());
  }
  // The answer's code and, for a Status, its message.
  std::pair<int, std::string> Log(const std::string& pod, const std::string& query = "") {
    HttpRequest req;
    req.method = "GET";
    req.target = "/api/v1/namespaces/default/pods/" + pod + "/log" + query;
    ApiOutcome out = handler_.Handle(req, std::make_shared<NoSink>());
    EXPECT_EQ(out.watch, nullptr);
    const nlohmann::json j = nlohmann::json::parse(out.response.body, nullptr, false);
    return {out.response.status, j.is_object() ? j.value("message", "") : out.response.body};
  }

  SystemClock clock_;
  ThreadExecutor executor_;
  MemStore store_{&clock_, &executor_};
  Mt19937Rng rng_{42};
  Registry registry_{&store_, &clock_, &rng_};
  ApiHandler handler_{&registry_, &clock_};
};

TEST_F(PodLogTest, APodOnNoNodeOrANodeWithoutAnEndpointIsAClear4xx) {
  AddPod("pending", "");
  AddPod("lost", "gone");
  AddPod("quiet", "n-quiet");
  AddNode("n-quiet", 0);
  AddPod("nameless", "n-noaddr");
  AddNode("n-noaddr", 10250, "");
  EXPECT_EQ(Log("pending"), std::make_pair(400, std::string("pod pending does not have a host assigned")));
  const auto lost = Log("lost");
  EXPECT_EQ(lost.first, 404);
  EXPECT_NE(lost.second.find("node gone of pod lost"), std::string::npos) << lost.second;
  const auto quiet = Log("quiet");
  EXPECT_EQ(quiet.first, 400);
  EXPECT_NE(quiet.second.find("node n-quiet has no kubelet endpoint"), std::string::npos) << quiet.second;
  EXPECT_EQ(Log("nameless").first, 400);
  EXPECT_EQ(Log("absent").first, 404);
}

TEST_F(PodLogTest, ContainerMustBeNamedWhenThereAreSeveralAndBeThePods) {
  AddPod("two", "", {"a", "b"});
  EXPECT_EQ(Log("two"),
            std::make_pair(
                400, std::string("a container name must be specified for pod two, choose one of: [a b]")));
  EXPECT_EQ(Log("two", "?container=c"),
            std::make_pair(400, std::string("container c is not valid for pod two")));
  // Named well, it gets as far as the node.
  EXPECT_EQ(Log("two", "?container=b").second, "pod two does not have a host assigned");
  EXPECT_EQ(Log("two", "?container=b&tailLines=x").first, 400);
  EXPECT_EQ(Log("two", "?container=b&follow=maybe").first, 400);
}

TEST_F(PodLogTest, AnUnreachableNodeAgentIs503AndOtherMethods405) {
  AddPod("web", "n1");
  AddNode("n1", ClosedPort());
  const auto r = Log("web");
  EXPECT_EQ(r.first, 503);
  EXPECT_NE(r.second.find("cannot reach the node agent at 127.0.0.1:"), std::string::npos) << r.second;
  HttpRequest req;
  req.method = "POST";
  req.target = "/api/v1/namespaces/default/pods/web/log";
  EXPECT_EQ(handler_.Handle(req, std::make_shared<NoSink>()).response.status, 405);
}

}  // namespace
}  // namespace rcsim
