// The HTTP client's transport behaviour against scripted servers (blocking sockets on test threads):
// request shape, keep-alive reuse, pool limits, retry over a connection the server closed, timeouts,
// refused connections, and watch streams (chunk splitting, in-stream errors, drops, stopping).
// The API semantics themselves are covered by tests/api_http_contract against the real apiserver.
#include "backends/httpclient/http_api_client.h"

#include <gtest/gtest.h>
#include <sys/socket.h>

#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace rcsim {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

constexpr auto kWait = std::chrono::seconds(10);

// A server whose every connection runs `handler` on its own thread. Stop() (and the destructor) closes
// the listener and every connection and joins the threads.
class ScriptedServer {
 public:
  using Handler = std::function<void(tcp::socket& socket, int conn_index)>;

  explicit ScriptedServer(Handler handler)
      : handler_(std::move(handler)), acceptor_(ioc_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)) {
    accept_thread_ = std::thread([this] { AcceptLoop(); });
  }
  ~ScriptedServer() { Stop(); }

  std::string url() const { return "http://127.0.0.1:" + std::to_string(acceptor_.local_endpoint().port()); }
  int connections() const { return accepted_.load(); }

  void Stop() {
    if (stopped_.exchange(true)) return;
    beast::error_code ec;
    ::shutdown(acceptor_.native_handle(), SHUT_RDWR);  // wakes the blocking accept (Linux)
    accept_thread_.join();
    acceptor_.close(ec);
    {
      std::lock_guard<std::mutex> lock(mu_);
      // A raw shutdown(2): it wakes the handler blocked on the socket without touching Asio's socket
      // state, which only the handler's thread may use. The sockets close when destroyed.
      for (auto& s : sockets_) ::shutdown(s->native_handle(), SHUT_RDWR);
    }
    for (std::thread& t : conn_threads_) t.join();
  }

 private:
  void AcceptLoop() {
    while (true) {
      auto socket = std::make_shared<tcp::socket>(ioc_);
      beast::error_code ec;
      acceptor_.accept(*socket, ec);
      if (ec) return;
      const int index = accepted_++;
      std::lock_guard<std::mutex> lock(mu_);
      sockets_.push_back(socket);
      conn_threads_.emplace_back([this, socket, index] { handler_(*socket, index); });
    }
  }

  Handler handler_;
  asio::io_context ioc_;
  tcp::acceptor acceptor_;
  std::thread accept_thread_;
  std::atomic<int> accepted_{0};
  std::atomic<bool> stopped_{false};
  std::mutex mu_;
  std::vector<std::shared_ptr<tcp::socket>> sockets_;  // guarded by mu_
  std::vector<std::thread> conn_threads_;              // guarded by mu_ until Stop
};

// Reads one request; false when the client closed the connection.
bool ReadRequest(tcp::socket& socket, beast::flat_buffer& buffer, http::request<http::string_body>* req) {
  beast::error_code ec;
  http::read(socket, buffer, *req, ec);
  return !ec;
}

void WriteResponse(tcp::socket& socket, int status, const std::string& body, bool keep_alive = true) {
  http::response<http::string_body> res{static_cast<http::status>(status), 11};
  res.set(http::field::content_type, "application/json");
  res.keep_alive(keep_alive);
  res.body() = body;
  res.prepare_payload();
  beast::error_code ec;
  http::write(socket, res, ec);
}

void WriteRaw(tcp::socket& socket, const std::string& bytes) {
  beast::error_code ec;
  asio::write(socket, asio::buffer(bytes), ec);
}

std::string Chunk(const std::string& data) {
  char size[32];
  std::snprintf(size, sizeof(size), "%zx\r\n", data.size());
  return size + data + "\r\n";
}

const char kStreamHeader[] =
    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";

std::string PodJson(const std::string& name, const std::string& rv) {
  return R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":")" + name +
         R"(","namespace":"ns","resourceVersion":")" + rv + R"("},"spec":{"containers":[{"name":"c"}]}})";
}

std::string Event(const std::string& type, const std::string& object) {
  return R"({"type":")" + type + R"(","object":)" + object + "}\n";
}

std::unique_ptr<HttpApiClient> MakeClient(const std::string& url, HttpApiClientOptions options = {}) {
  options.base_url = url;
  auto client = HttpApiClient::Create(options);
  EXPECT_TRUE(client.ok()) << client.status().ToString();
  return std::move(client).value();
}

template <typename T>
T Await(std::future<T>& f) {
  EXPECT_EQ(f.wait_for(kWait), std::future_status::ready);
  return f.get();
}

using PodResult = Result<PodPtr>;

PodResult GetPod(HttpApiClient& client, const std::string& name) {
  std::promise<PodResult> p;
  auto f = p.get_future();
  client.pods().Get("ns", name, [&p](PodResult r) { p.set_value(std::move(r)); });
  return Await(f);
}

// Collects watch events from the client's thread; the test thread waits on it.
class EventLog {
 public:
  void Add(const ApiWatchEvent<Pod>& ev) {
    std::lock_guard<std::mutex> lock(mu_);
    events_.push_back(ev);
    cv_.notify_all();
  }
  bool WaitForSize(size_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, kWait, [&] { return events_.size() >= n; });
  }
  std::vector<ApiWatchEvent<Pod>> events() {
    std::lock_guard<std::mutex> lock(mu_);
    return events_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<ApiWatchEvent<Pod>> events_;
};

TEST(HttpApiClientTest, RejectsMalformedBaseUrl) {
  for (const char* url : {"ftp://127.0.0.1:1", "127.0.0.1:80", "http://", "http://h:x", "http://h/p",
                          "https://", "https://[::1", "https://[::1]x", "http://h:"}) {
    HttpApiClientOptions o;
    o.base_url = url;
    EXPECT_EQ(HttpApiClient::Create(o).status().code(), Code::kBadRequest) << url;
  }
}

TEST(HttpApiClientTest, GetSendsTheRequestAndDecodesThePod) {
  std::mutex mu;
  std::vector<http::request<http::string_body>> seen;
  ScriptedServer server([&](tcp::socket& s, int) {
    beast::flat_buffer buf;
    http::request<http::string_body> req;
    while (ReadRequest(s, buf, &req)) {
      {
        std::lock_guard<std::mutex> lock(mu);
        seen.push_back(req);
      }
      WriteResponse(s, 200, PodJson("p1", "17"));
      req = {};
    }
  });
  HttpApiClientOptions o;
  o.bearer_token = "s3cret";
  auto client = MakeClient(server.url(), o);
  PodResult r = GetPod(*client, "p1");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)->metadata.name, "p1");
  EXPECT_EQ((*r)->metadata.resource_version, "17");
  std::lock_guard<std::mutex> lock(mu);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].method(), http::verb::get);
  EXPECT_EQ(seen[0].target(), "/api/v1/namespaces/ns/pods/p1");
  EXPECT_EQ(seen[0][http::field::authorization], "Bearer s3cret");
  EXPECT_EQ(seen[0][http::field::accept], "application/json");
}

TEST(HttpApiClientTest, DeleteSendsPreconditionsAndDecodesStatusErrors) {
  std::promise<std::string> body_seen;
  ScriptedServer server([&](tcp::socket& s, int) {
    beast::flat_buffer buf;
    http::request<http::string_body> req;
    if (!ReadRequest(s, buf, &req)) return;
    body_seen.set_value(std::string(req.method_string()) + " " + std::string(req.target()) + " " +
                        req.body());
    WriteResponse(s, 409,
                  R"({"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Conflict",)"
                  R"("code":409,"message":"precondition failed"})");
  });
  auto client = MakeClient(server.url());
  std::promise<PodResult> p;
  auto f = p.get_future();
  DeleteOptions opts;
  opts.precondition_uid = "u1";
  client->pods().Delete("ns", "p1", opts, [&p](PodResult r) { p.set_value(std::move(r)); });
  PodResult r = Await(f);
  EXPECT_EQ(r.status().code(), Code::kConflict);
  EXPECT_EQ(r.status().message(), "precondition failed");
  auto bf = body_seen.get_future();
  EXPECT_EQ(Await(bf), R"(DELETE /api/v1/namespaces/ns/pods/p1 {"apiVersion":"v1","kind":"DeleteOptions",)"
                       R"("preconditions":{"uid":"u1"}})");
}

TEST(HttpApiClientTest, SequentialRequestsReuseOneKeepAliveConnection) {
  ScriptedServer server([&](tcp::socket& s, int) {
    beast::flat_buffer buf;
    http::request<http::string_body> req;
    while (ReadRequest(s, buf, &req)) {
      WriteResponse(s, 200, PodJson("p", "1"));
      req = {};
    }
  });
  auto client = MakeClient(server.url());
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(GetPod(*client, "p").ok());
  EXPECT_EQ(server.connections(), 1);
}

TEST(HttpApiClientTest, PoolLimitQueuesRequestsFifo) {
  ScriptedServer server([&](tcp::socket& s, int) {
    beast::flat_buffer buf;
    http::request<http::string_body> req;
    while (ReadRequest(s, buf, &req)) {
      const std::string target(req.target());
      WriteResponse(s, 200, PodJson(target.substr(target.rfind('/') + 1), "1"));
      req = {};
    }
  });
  HttpApiClientOptions o;
  o.max_connections = 1;
  auto client = MakeClient(server.url(), o);
  std::mutex mu;
  std::vector<std::string> order;
  std::promise<void> all_done;
  constexpr int kRequests = 8;
  for (int i = 0; i < kRequests; ++i) {
    client->pods().Get("ns", "p" + std::to_string(i), [&](PodResult r) {
      std::lock_guard<std::mutex> lock(mu);
      order.push_back(r.ok() ? (*r)->metadata.name : r.status().ToString());
      if (order.size() == kRequests) all_done.set_value();
    });
  }
  auto f = all_done.get_future();
  ASSERT_EQ(f.wait_for(kWait), std::future_status::ready);
  std::vector<std::string> want;
  want.reserve(kRequests);
  for (int i = 0; i < kRequests; ++i) want.push_back("p" + std::to_string(i));
  EXPECT_EQ(order, want);
  EXPECT_EQ(server.connections(), 1);
}

TEST(HttpApiClientTest, ServerClosingIdleConnectionIsNotAnError) {
  // Every connection serves one request, claims keep-alive, then closes.
  ScriptedServer server([&](tcp::socket& s, int) {
    beast::flat_buffer buf;
    http::request<http::string_body> req;
    if (!ReadRequest(s, buf, &req)) return;
    WriteResponse(s, 200, PodJson("p", "1"));
    beast::error_code ec;
    s.shutdown(tcp::socket::shutdown_both, ec);
  });
  auto client = MakeClient(server.url());
  for (int i = 0; i < 4; ++i) {
    PodResult r = GetPod(*client, "p");
    ASSERT_TRUE(r.ok()) << i << ": " << r.status().ToString();
  }
  EXPECT_EQ(server.connections(), 4);
}

// Issue 7 (ProcessKillTest.ApiServerSigkilledUnderLoad..., peak 305 of 300): an API server SIGKILLed
// after it applied a create closes the reused connection before answering. The client took that for
// an idle close, sent the create again (connection refused: "unavailable", so not applied), and the
// manager created a replacement for a pod that existed. A write is never re-sent: outcome unknown.
TEST(HttpApiClientTest, AWriteOnAReusedConnectionThatClosesIsUnknownNeverResent) {
  std::atomic<int> creates{0};
  ScriptedServer server([&](tcp::socket& s, int conn) {
    beast::flat_buffer buf;
    http::request<http::string_body> req;
    for (int n = 0; ReadRequest(s, buf, &req); ++n) {
      if (req.method() == http::verb::post) ++creates;
      if (conn == 0 && n == 1) {  // the first connection "dies" after it read its second request
        beast::error_code ec;
        s.shutdown(tcp::socket::shutdown_both, ec);
        return;
      }
      WriteResponse(s, req.method() == http::verb::post ? 201 : 200, PodJson("p", "1"));
      req = {};
    }
  });
  HttpApiClientOptions o;
  o.max_connections = 1;
  auto client = MakeClient(server.url(), o);
  ASSERT_TRUE(GetPod(*client, "p").ok());  // the connection is now idle in the pool
  std::promise<PodResult> p;
  auto f = p.get_future();
  Pod pod;
  pod.metadata.name = "p";
  client->pods().Create("ns", pod, [&p](PodResult r) { p.set_value(std::move(r)); });
  PodResult created = Await(f);
  ASSERT_FALSE(created.ok());
  EXPECT_EQ(created.status().code(), Code::kTimeout) << created.status().ToString();
  EXPECT_EQ(creates.load(), 1) << "the create was sent again";
  ASSERT_TRUE(GetPod(*client, "p").ok());  // on a new connection
}

TEST(HttpApiClientTest, ConnectionRefusedIsUnavailable) {
  std::string url;
  {
    ScriptedServer server([](tcp::socket&, int) {});
    url = server.url();
  }  // closed: nothing listens on the port now
  auto client = MakeClient(url);
  EXPECT_EQ(GetPod(*client, "p").status().code(), Code::kUnavailable);
}

TEST(HttpApiClientTest, NoResponseWithinTheTimeoutIsTimeout) {
  ScriptedServer server([&](tcp::socket& s, int) {
    beast::flat_buffer buf;
    http::request<http::string_body> req;
    ReadRequest(s, buf, &req);
    ReadRequest(s, buf, &req);  // blocks until the client gives up and closes
  });
  HttpApiClientOptions o;
  o.request_timeout = std::chrono::milliseconds(200);
  auto client = MakeClient(server.url(), o);
  std::promise<PodResult> p;
  auto f = p.get_future();
  Pod pod;
  pod.metadata.name = "p";
  client->pods().Create("ns", pod, [&p](PodResult r) { p.set_value(std::move(r)); });
  EXPECT_EQ(Await(f).status().code(), Code::kTimeout);
}

TEST(HttpApiClientTest, DestroyingTheClientCompletesPendingCalls) {
  ScriptedServer server([&](tcp::socket& s, int) {
    beast::flat_buffer buf;
    http::request<http::string_body> req;
    ReadRequest(s, buf, &req);
    ReadRequest(s, buf, &req);
  });
  auto client = MakeClient(server.url());
  std::promise<PodResult> p;
  auto f = p.get_future();
  client->pods().Get("ns", "p", [&p](PodResult r) { p.set_value(std::move(r)); });
  client.reset();
  ASSERT_EQ(f.wait_for(std::chrono::seconds(0)), std::future_status::ready);
  EXPECT_EQ(f.get().status().code(), Code::kUnavailable);
}

TEST(HttpApiClientTest, WatchDeliversEventsSplitAcrossChunksThenGone) {
  std::promise<std::string> target_seen;
  ScriptedServer server([&](tcp::socket& s, int) {
    beast::flat_buffer buf;
    http::request<http::string_body> req;
    if (!ReadRequest(s, buf, &req)) return;
    target_seen.set_value(std::string(req.target()));
    const std::string added = Event("ADDED", PodJson("a", "5"));
    const std::string both = added.substr(20) + Event("MODIFIED", PodJson("a", "6"));
    WriteRaw(s, kStreamHeader + Chunk(added.substr(0, 20)));
    WriteRaw(s, Chunk(both));
    WriteRaw(s, Chunk(Event("ERROR", R"({"kind":"Status","code":410,"reason":"Expired","message":"old"})")));
    ReadRequest(s, buf, &req);  // hold the stream open until the client closes it
  });
  auto client = MakeClient(server.url());
  EventLog log;
  ListOptions opts;
  opts.label_selector = LabelSelector::FromMap({{"app", "web"}});
  auto watch = client->pods().Watch("ns", opts, "4", [&](const ApiWatchEvent<Pod>& ev) { log.Add(ev); });
  ASSERT_TRUE(log.WaitForSize(3));
  auto events = log.events();
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].type, ApiWatchEvent<Pod>::Type::kAdded);
  EXPECT_EQ(events[0].object->metadata.resource_version, "5");
  EXPECT_EQ(events[1].type, ApiWatchEvent<Pod>::Type::kModified);
  EXPECT_EQ(events[1].object->metadata.resource_version, "6");
  EXPECT_EQ(events[2].type, ApiWatchEvent<Pod>::Type::kError);
  EXPECT_EQ(events[2].error.code(), Code::kGone);
  auto tf = target_seen.get_future();
  EXPECT_EQ(Await(tf), "/api/v1/namespaces/ns/pods?labelSelector=app%3Dweb&watch=true&resourceVersion=4");
}

TEST(HttpApiClientTest, WatchRefusedWithGoneStatus) {
  ScriptedServer server([&](tcp::socket& s, int) {
    beast::flat_buffer buf;
    http::request<http::string_body> req;
    if (!ReadRequest(s, buf, &req)) return;
    WriteResponse(s, 410, R"({"kind":"Status","code":410,"reason":"Expired","message":"too old"})", false);
  });
  auto client = MakeClient(server.url());
  EventLog log;
  auto watch = client->pods().Watch("", {}, "1", [&](const ApiWatchEvent<Pod>& ev) { log.Add(ev); });
  ASSERT_TRUE(log.WaitForSize(1));
  EXPECT_EQ(log.events()[0].type, ApiWatchEvent<Pod>::Type::kError);
  EXPECT_EQ(log.events()[0].error.code(), Code::kGone);
  EXPECT_EQ(log.events()[0].error.message(), "too old");
}

TEST(HttpApiClientTest, WatchConnectionDropIsUnavailable) {
  ScriptedServer server([&](tcp::socket& s, int) {
    beast::flat_buffer buf;
    http::request<http::string_body> req;
    if (!ReadRequest(s, buf, &req)) return;
    WriteRaw(s, kStreamHeader + Chunk(Event("ADDED", PodJson("a", "5"))));
    beast::error_code ec;
    s.shutdown(tcp::socket::shutdown_both, ec);
  });
  auto client = MakeClient(server.url());
  EventLog log;
  auto watch = client->pods().Watch("ns", {}, "", [&](const ApiWatchEvent<Pod>& ev) { log.Add(ev); });
  ASSERT_TRUE(log.WaitForSize(2));
  auto events = log.events();
  EXPECT_EQ(events[0].type, ApiWatchEvent<Pod>::Type::kAdded);
  EXPECT_EQ(events[1].type, ApiWatchEvent<Pod>::Type::kError);
  EXPECT_EQ(events[1].error.code(), Code::kUnavailable);
}

TEST(HttpApiClientTest, WatchEndsWithOneErrorAfterAMalformedEvent) {
  ScriptedServer server([&](tcp::socket& s, int) {
    beast::flat_buffer buf;
    http::request<http::string_body> req;
    if (!ReadRequest(s, buf, &req)) return;
    WriteRaw(s, kStreamHeader + Chunk("{not json\n" + Event("ADDED", PodJson("a", "5"))));
    ReadRequest(s, buf, &req);
  });
  auto client = MakeClient(server.url());
  EventLog log;
  auto watch = client->pods().Watch("ns", {}, "", [&](const ApiWatchEvent<Pod>& ev) { log.Add(ev); });
  ASSERT_TRUE(log.WaitForSize(1));
  // The stream is over: a second event must never come. Destroy the client to flush its threads.
  client.reset();
  auto events = log.events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].type, ApiWatchEvent<Pod>::Type::kError);
  EXPECT_EQ(events[0].error.code(), Code::kInternal);
}

TEST(HttpApiClientTest, DestroyingTheWatchInsideItsCallbackStopsIt) {
  ScriptedServer server([&](tcp::socket& s, int) {
    beast::flat_buffer buf;
    http::request<http::string_body> req;
    if (!ReadRequest(s, buf, &req)) return;
    // Several events in one chunk: the client would deliver them all without the stop.
    std::string events;
    for (int i = 0; i < 5; ++i) events += Event("ADDED", PodJson("p" + std::to_string(i), "9"));
    WriteRaw(s, kStreamHeader + Chunk(events));
    ReadRequest(s, buf, &req);
  });
  auto client = MakeClient(server.url());
  std::unique_ptr<ApiWatch> watch;
  std::mutex mu;
  std::atomic<int> calls{0};
  std::promise<void> first;
  {
    std::lock_guard<std::mutex> lock(mu);
    watch = client->pods().Watch("ns", {}, "", [&](const ApiWatchEvent<Pod>&) {
      if (calls++ == 0) {
        std::lock_guard<std::mutex> lock(mu);
        watch.reset();
        first.set_value();
      }
    });
  }
  auto f = first.get_future();
  ASSERT_EQ(f.wait_for(kWait), std::future_status::ready);
  client.reset();  // joins the I/O thread: anything still queued would have run by now
  EXPECT_EQ(calls.load(), 1);
}

TEST(HttpApiClientTest, NoCallbackAfterTheWatchDestructorReturns) {
  std::atomic<bool> stop_streaming{false};
  ScriptedServer server([&](tcp::socket& s, int) {
    beast::flat_buffer buf;
    http::request<http::string_body> req;
    if (!ReadRequest(s, buf, &req)) return;
    WriteRaw(s, kStreamHeader);
    for (int i = 0; !stop_streaming.load(); ++i) {
      beast::error_code ec;
      const std::string c = Chunk(Event("MODIFIED", PodJson("p", std::to_string(i))));
      asio::write(s, asio::buffer(c), ec);
      if (ec) return;
    }
  });
  auto client = MakeClient(server.url());
  std::atomic<bool> destroyed{false};
  std::atomic<int> late_calls{0};
  EventLog log;
  auto watch = client->pods().Watch("ns", {}, "", [&](const ApiWatchEvent<Pod>& ev) {
    if (destroyed.load()) ++late_calls;
    log.Add(ev);
  });
  ASSERT_TRUE(log.WaitForSize(20));
  watch.reset();
  destroyed = true;
  stop_streaming = true;
  client.reset();
  EXPECT_EQ(late_calls.load(), 0);
  for (const auto& ev : log.events()) ASSERT_EQ(ev.type, ApiWatchEvent<Pod>::Type::kModified);
}

TEST(HttpApiClientTest, WatchHandleMayOutliveTheClient) {
  ScriptedServer server([&](tcp::socket& s, int) {
    beast::flat_buffer buf;
    http::request<http::string_body> req;
    if (!ReadRequest(s, buf, &req)) return;
    WriteRaw(s, kStreamHeader + Chunk(Event("ADDED", PodJson("a", "5"))));
    ReadRequest(s, buf, &req);
  });
  auto client = MakeClient(server.url());
  EventLog log;
  auto watch = client->pods().Watch("ns", {}, "", [&](const ApiWatchEvent<Pod>& ev) { log.Add(ev); });
  ASSERT_TRUE(log.WaitForSize(1));
  client.reset();
  watch.reset();
  EXPECT_EQ(log.events().size(), 1u);
}

}  // namespace
}  // namespace rcsim
