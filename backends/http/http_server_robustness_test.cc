// The HTTP API server against hostile and broken input, over real sockets on the in-memory etcd: each
// test pins one reliability finding of issue 7 and is named after it.
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "backends/http/http_server.h"
#include "backends/http/thread_executor.h"
#include "engine/rng.h"
#include "fakes/mem_store.h"
#include "registry/registry.h"

namespace rcsim {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;
using json = nlohmann::json;

struct Reply {
  int status = 0;  // -1: no response (connection closed or timed out)
  std::string body;
  json Json() const { return json::parse(body, nullptr, false); }
};

// One request per connection, synchronous, with a receive timeout so a dead server fails the test.
Reply Send(uint16_t port, http::verb verb, const std::string& target, const std::string& body = "",
           const std::string& content_type = "application/json") {
  net::io_context ioc;
  tcp::socket socket(ioc);
  beast::error_code ec;
  socket.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port), ec);
  if (ec) return Reply{-1, ec.message()};
  timeval tv{30, 0};
  ::setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  http::request<http::string_body> req(verb, target, 11);
  req.set(http::field::host, "127.0.0.1");
  if (!body.empty()) {
    req.set(http::field::content_type, content_type);
    req.body() = body;
  }
  req.keep_alive(false);
  req.prepare_payload();
  http::write(socket, req, ec);
  if (ec) return Reply{-1, ec.message()};
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(64 << 20);
  http::read(socket, buffer, parser, ec);
  if (ec) return Reply{-1, ec.message()};
  return Reply{static_cast<int>(parser.get().result_int()), parser.get().body()};
}

json PodJson(const std::string& name) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"labels", {{"app", "web"}}}}},
          {"spec", {{"containers", json::array({{{"name", "c"}, {"image", "nginx"}}})}}}};
}

json RcJson(const std::string& name) {
  return {{"apiVersion", "v1"},
          {"kind", "ReplicationController"},
          {"metadata", {{"name", name}}},
          {"spec",
           {{"replicas", 1},
            {"selector", {{"app", name}}},
            {"template",
             {{"metadata", {{"labels", {{"app", name}}}}},
              {"spec", {{"containers", json::array({{{"name", "c"}, {"image", "nginx"}}})}}}}}}}};
}

const std::string kPods = "/api/v1/namespaces/default/pods";
const std::string kRcs = "/api/v1/namespaces/default/replicationcontrollers";

std::string Nested(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

class HttpServerRobustnessTest : public ::testing::Test {
 protected:
  void SetUp() override { StartServer(HttpServerOptions{}); }

  void StartServer(HttpServerOptions opts) {
    server_.reset();
    opts.port = 0;
    server_ = std::make_unique<HttpServer>(&registry_, &clock_, opts);
    ASSERT_TRUE(server_->Start().ok());
  }
  uint16_t port() const { return server_->port(); }
  Reply Do(http::verb verb, const std::string& target, const std::string& body = "",
           const std::string& content_type = "application/json") {
    return Send(port(), verb, target, body, content_type);
  }

  // The store's revision and contents, to check that a refused request changed nothing.
  std::string Snapshot() {
    Result<RangeResponse> r = store_.GetPrefix("/registry/");
    EXPECT_TRUE(r.ok());
    std::string out = std::to_string(r->revision);
    for (const KeyValue& kv : r->kvs) out += "|" + kv.key + "=" + kv.value.bytes();
    return out;
  }

  SystemClock clock_;
  ThreadExecutor executor_;
  MemStore store_{&clock_, &executor_};
  Mt19937Rng rng_{42};
  Registry registry_{&store_, &clock_, &rng_};
  std::unique_ptr<HttpServer> server_;
};

// Finding 1: one unauthenticated request nesting ~70k levels deep killed the API server (stack
// overflow in the recursive walks over the parsed body). Every body-taking route answers 400 with a
// Status, stores nothing, and the server keeps serving.
TEST_F(HttpServerRobustnessTest, DeeplyNestedBodyIsBadRequestNotAStackOverflow) {
  ASSERT_EQ(Do(http::verb::post, kPods, PodJson("a").dump()).status, 201);
  ASSERT_EQ(Do(http::verb::post, kRcs, RcJson("web").dump()).status, 201);
  const std::string before = Snapshot();
  const std::string deep = Nested(400000);  // the report used ~70k; deeper overflows any stack
  const std::string kind_body = "{\"kind\":" + deep + "}";
  const std::string labels_body = "{\"metadata\":{\"labels\":" + deep + "}}";
  struct Case {
    const char* what;
    http::verb verb;
    std::string target, body, content_type;
  };
  const std::vector<Case> cases = {
      {"create pod", http::verb::post, kPods, kind_body, "application/json"},
      {"update pod", http::verb::put, kPods + "/a", kind_body, "application/json"},
      {"update pod status", http::verb::put, kPods + "/a/status", kind_body, "application/json"},
      {"create rc", http::verb::post, kRcs, kind_body, "application/json"},
      {"update rc", http::verb::put, kRcs + "/web", kind_body, "application/json"},
      {"update scale", http::verb::put, kRcs + "/web/scale", kind_body, "application/json"},
      {"delete options", http::verb::delete_, kPods + "/a", kind_body, "application/json"},
      {"merge patch", http::verb::patch, kPods + "/a", labels_body, "application/merge-patch+json"},
      {"strategic merge patch", http::verb::patch, kRcs + "/web", labels_body,
       "application/strategic-merge-patch+json"},
      {"strategic merge patch of scale", http::verb::patch, kRcs + "/web/scale", labels_body,
       "application/strategic-merge-patch+json"},
      {"json patch value", http::verb::patch, kPods + "/a",
       "[{\"op\":\"add\",\"path\":\"/metadata/labels/x\",\"value\":" + deep + "}]",
       "application/json-patch+json"},
      {"json patch malformed op", http::verb::patch, kPods + "/a", "[" + deep + "]",
       "application/json-patch+json"},
  };
  for (const Case& c : cases) {
    Reply r = Do(c.verb, c.target, c.body, c.content_type);
    EXPECT_EQ(r.status, 400) << c.what << ": " << r.body.substr(0, 300);
    json j = r.Json();
    EXPECT_EQ(j["kind"], "Status") << c.what;
    EXPECT_EQ(j["code"], 400) << c.what;
  }
  EXPECT_EQ(Snapshot(), before);
  EXPECT_EQ(Do(http::verb::get, kPods + "/a").status, 200);
}

// The bound leaves ordinary nesting alone: a patch value nested 500 levels deep is applied (and then
// refused by the decoder only because labels must be strings).
TEST_F(HttpServerRobustnessTest, ModeratelyNestedPatchIsDecodedNormally) {
  ASSERT_EQ(Do(http::verb::post, kPods, PodJson("a").dump()).status, 201);
  Reply r =
      Do(http::verb::patch, kPods + "/a", "{\"metadata\":{\"annotations\":{\"x\":" + Nested(500) + "}}}",
         "application/merge-patch+json");
  EXPECT_NE(r.status, 500) << r.body.substr(0, 300);
  EXPECT_EQ(r.Json()["kind"], "Status");
  Reply ok = Do(http::verb::patch, kPods + "/a", R"({"metadata":{"labels":{"x":"1"}}})",
                "application/merge-patch+json");
  ASSERT_EQ(ok.status, 200) << ok.body;
  EXPECT_EQ(ok.Json()["metadata"]["labels"]["x"], "1");
}

// Finding 3 over HTTP: one value in etcd that does not decode made GET /pods answer 500 for every
// client. The list leaves it out; a watch started after it streams the good objects.
TEST_F(HttpServerRobustnessTest, MalformedStoredPodIsLeftOutOfListsAndWatches) {
  ASSERT_EQ(Do(http::verb::post, kPods, PodJson("a").dump()).status, 201);
  PutRequest put;
  put.key = "/registry/pods/default/bad";
  put.value = Value(std::string("{not json"));
  ASSERT_TRUE(store_.Put(put).ok());
  Reply list = Do(http::verb::get, kPods);
  ASSERT_EQ(list.status, 200) << list.body;
  ASSERT_EQ(list.Json()["items"].size(), 1u);
  EXPECT_EQ(list.Json()["items"][0]["metadata"]["name"], "a");
  Reply all = Do(http::verb::get, "/api/v1/pods?labelSelector=app%3Dweb");
  ASSERT_EQ(all.status, 200) << all.body;
  EXPECT_EQ(all.Json()["items"].size(), 1u);
  EXPECT_GE(registry_.malformed_values(), 2u);
}

// Finding 7: DELETE of an undecodable stored object answered 500 although it deleted it. It answers
// 200 with a success Status that says so, and the key is gone.
TEST_F(HttpServerRobustnessTest, DeleteOfUndecodableStoredObjectAnswers200Status) {
  PutRequest put;
  put.key = "/registry/controllers/default/bad";
  put.value = Value(std::string("[1,2,3]"));
  ASSERT_TRUE(store_.Put(put).ok());
  Reply r = Do(http::verb::delete_, kRcs + "/bad");
  ASSERT_EQ(r.status, 200) << r.body;
  json j = r.Json();
  EXPECT_EQ(j["kind"], "Status");
  EXPECT_EQ(j["status"], "Success");
  EXPECT_EQ(j["details"]["name"], "bad");
  EXPECT_EQ(j["details"]["kind"], "replicationcontrollers");
  EXPECT_NE(j["message"].get<std::string>().find("did not decode"), std::string::npos);
  EXPECT_EQ(Do(http::verb::get, kRcs + "/bad").status, 404);
  EXPECT_EQ(Do(http::verb::delete_, kRcs + "/bad").status, 404);
}

// Finding 7: watch parameters that overflow, and a forged continue token naming a future revision
// (504 before), are client errors: 4xx with a Status.
TEST_F(HttpServerRobustnessTest, OverflowingWatchAndListParametersAre4xx) {
  ASSERT_EQ(Do(http::verb::post, kPods, PodJson("a").dump()).status, 201);
  struct Case {
    std::string target;
    int want;
  };
  const std::vector<Case> cases = {
      {kPods + "?watch=1&timeoutSeconds=9223372037", 400},
      {kPods + "?watch=1&timeoutSeconds=99999999999999999999", 400},
      {kPods + "?watch=1&resourceVersion=9223372036854775807", 410},
      {kPods + "?watch=1&resourceVersion=9223372036854775808", 400},
      {kPods + "?watch=1&resourceVersion=1000000", 410},
      {kPods + "?limit=1&continue=OTk5OTk5Ong", 410},  // base64url("999999:x")
      {kPods + "?limit=9223372036854775808", 400},
  };
  for (const Case& c : cases) {
    Reply r = Do(http::verb::get, c.target);
    EXPECT_EQ(r.status, c.want) << c.target << ": " << r.body;
    EXPECT_EQ(r.Json()["kind"], "Status") << c.target;
  }
  // A timeout that fits is accepted; the stream ends when it passes.
  Reply ok = Do(http::verb::get, kPods + "?watch=1&timeoutSeconds=1");
  EXPECT_EQ(ok.status, 200) << ok.body;
}

// Finding 7: status.startTime of year 9999 was stored as 1816. It is refused with 400, nothing stored.
TEST_F(HttpServerRobustnessTest, TimestampOutsideRepresentableYearsIs400NotWrapped) {
  Reply created = Do(http::verb::post, kPods, PodJson("a").dump());
  ASSERT_EQ(created.status, 201);
  const std::string before = Snapshot();
  json pod = created.Json();
  pod["status"]["startTime"] = "9999-12-31T23:59:59Z";
  Reply r = Do(http::verb::put, kPods + "/a/status", pod.dump());
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(r.Json()["kind"], "Status");
  json fresh = PodJson("b");
  fresh["metadata"]["creationTimestamp"] = "1000-01-01T00:00:00Z";
  EXPECT_EQ(Do(http::verb::post, kPods, fresh.dump()).status, 400);
  EXPECT_EQ(Snapshot(), before);
}

// A raw keep-alive connection: sends request bytes, reads whatever comes back.
class RawConnection {
 public:
  explicit RawConnection(uint16_t port) {
    socket_.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
    timeval tv{30, 0};
    ::setsockopt(socket_.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  }
  // One GET on this connection; the response's status, or -1 if the connection ended.
  int Get(const std::string& target) {
    const std::string req = "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    beast::error_code ec;
    net::write(socket_, net::buffer(req), ec);
    if (ec) return -1;
    http::response_parser<http::string_body> parser;
    http::read(socket_, buffer_, parser, ec);
    return ec ? -1 : static_cast<int>(parser.get().result_int());
  }
  // Sends a watch request and reads only the response header; false if it is not 200.
  bool StartWatch(const std::string& target) {
    const std::string req = "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    beast::error_code ec;
    net::write(socket_, net::buffer(req), ec);
    if (ec) return false;
    http::response_parser<http::empty_body> parser;
    http::read_header(socket_, buffer_, parser, ec);
    return !ec && parser.get().result_int() == 200;
  }
  // Reads until the server closes the connection; the number of bytes read (or -1 on timeout).
  long ReadToEnd() {
    long total = static_cast<long>(buffer_.size());
    char tmp[65536];
    while (true) {
      beast::error_code ec;
      const std::size_t n = socket_.read_some(net::buffer(tmp), ec);
      total += static_cast<long>(n);
      if (ec == net::error::eof || ec == net::error::connection_reset) return total;
      if (ec) return -1;
    }
  }
  tcp::socket& socket() { return socket_; }

 private:
  net::io_context ioc_;
  tcp::socket socket_{ioc_};
  beast::flat_buffer buffer_;
};

bool Eventually(const std::function<bool()>& pred) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!pred()) {
    if (std::chrono::steady_clock::now() >= deadline) return pred();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

// Finding 6: connections and watches had no cap. Beyond max_connections a connection gets 429 and is
// closed; beyond max_watches a watch request gets 429 while plain requests are still served.
TEST_F(HttpServerRobustnessTest, ConnectionsAndWatchesBeyondTheirCapsGet429) {
  HttpServerOptions opts;
  opts.max_connections = 2;
  opts.max_watches = 1;
  StartServer(opts);
  RawConnection watch(port());
  ASSERT_TRUE(watch.StartWatch(kPods + "?watch=1"));
  Reply refused_watch = Do(http::verb::get, kPods + "?watch=1");
  EXPECT_EQ(refused_watch.status, 429) << refused_watch.body;
  EXPECT_EQ(refused_watch.Json()["reason"], "TooManyRequests");

  // Once the refused connection is gone, a second one is served and held open: the cap is reached.
  std::unique_ptr<RawConnection> second;
  ASSERT_TRUE(Eventually([&] {
    second = std::make_unique<RawConnection>(port());
    return second->Get(kPods) == 200;
  }));
  Reply refused = Do(http::verb::get, kPods);
  EXPECT_EQ(refused.status, 429) << refused.body;
  EXPECT_EQ(refused.Json()["code"], 429);
  second.reset();
  EXPECT_TRUE(Eventually([&] { return Do(http::verb::get, kPods).status == 200; }));
}

// Finding 6: a watch client that never reads was buffered up to 64 MB (20 of them: 941 MB RSS). It is
// closed once it falls max_watch_buffer_bytes behind, and its budget is given back.
TEST_F(HttpServerRobustnessTest, SlowWatchClientIsClosedNotBufferedWithoutBound) {
  HttpServerOptions opts;
  opts.max_watch_buffer_bytes = 256 << 10;
  StartServer(opts);
  RawConnection slow(port());
  int rcvbuf = 4096;  // keep the kernel from absorbing the stream for the client
  ::setsockopt(slow.socket().native_handle(), SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
  ASSERT_TRUE(slow.StartWatch(kPods + "?watch=1"));
  json pod = PodJson("p");
  pod["metadata"]["annotations"] = {{"blob", std::string(64 << 10, 'x')}};
  long produced = 0;
  for (int i = 0; i < 200; ++i) {
    pod["metadata"]["name"] = "p" + std::to_string(i);
    const std::string body = pod.dump();
    ASSERT_EQ(Do(http::verb::post, kPods, body).status, 201);
    produced += static_cast<long>(body.size());
  }
  const long read = slow.ReadToEnd();  // the server hangs up on the slow client
  ASSERT_GE(read, 0) << "the slow watch was not closed";
  EXPECT_LT(read, produced / 2);
  // The server still serves watches to clients that keep up.
  RawConnection fresh(port());
  EXPECT_TRUE(fresh.StartWatch(kPods + "?watch=1&timeoutSeconds=1"));
}

// Finding 6: request headers are bounded (431), as bodies are (413).
TEST_F(HttpServerRobustnessTest, OversizedRequestHeaderGets431) {
  RawConnection c(port());
  const std::string req =
      "GET " + kPods + " HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + std::string(128 << 10, 'a') + "\r\n\r\n";
  beast::error_code ec;
  net::write(c.socket(), net::buffer(req), ec);
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  http::read(c.socket(), buffer, parser, ec);
  ASSERT_FALSE(ec) << ec.message();
  EXPECT_EQ(parser.get().result_int(), 431u);
  EXPECT_EQ(json::parse(parser.get().body(), nullptr, false)["kind"], "Status");
  EXPECT_EQ(Do(http::verb::get, kPods).status, 200);
}

}  // namespace
}  // namespace rcsim
