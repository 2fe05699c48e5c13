// HTTPS end to end over sockets: the API server (backends/http) on the in-memory etcd, with
// certificates made by scripts/make-certs, driven by a small synchronous Beast TLS client.
#include "backends/tls/tls_context.h"

#include <gtest/gtest.h>
#include <openssl/ssl.h>
#include <sys/socket.h>

#include <atomic>
#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <future>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

#include "backends/http/http_server.h"
#include "backends/http/thread_executor.h"
#include "backends/http/token_auth.h"
#include "backends/httpclient/http_api_client.h"
#include "engine/rng.h"
#include "fakes/mem_store.h"
#include "registry/registry.h"

namespace rcsim {
namespace {

namespace net = boost::asio;
namespace ssl = net::ssl;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;
using json = nlohmann::json;

std::string g_certs;  // the temp folder of the certificates (SetUpTestSuite)

// Runs scripts/make-certs into g_certs/<name>.
void MakeCerts(const std::string& name, const std::string& args) {
  const std::string cmd =
      std::string(RCSIM_MAKE_CERTS) + " " + g_certs + "/" + name + " " + args + " 2>/dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
}
std::string Cert(const std::string& name, const std::string& file) {
  return g_certs + "/" + name + "/" + file;
}

struct Reply {
  int status = 0;  // -1: the exchange failed, `body` says why
  std::string body;
  json Json() const { return json::parse(body, nullptr, false); }
};

// A keep-alive HTTPS client on one connection, synchronous, with a receive timeout.
class TlsClient {
 public:
  TlsClient(uint16_t port, TlsClientConfig config, std::string host = "127.0.0.1")
      : port_(port), config_(std::move(config)), host_(std::move(host)) {}

  // Connects and handshakes; "" on success, else why not.
  std::string Connect() {
    Result<std::shared_ptr<ssl::context>> ctx = NewTlsClientContext(config_);
    if (!ctx.ok()) return ctx.status().ToString();
    ctx_ = *ctx;
    stream_.emplace(ioc_, *ctx_);
    beast::error_code ec;
    stream_->next_layer().connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port_), ec);
    if (ec) return ec.message();
    timeval tv{30, 0};
    ::setsockopt(stream_->next_layer().native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    if (Status s = PrepareTlsClient(stream_->native_handle(), host_, config_); !s.ok()) return s.ToString();
    stream_->handshake(ssl::stream_base::client, ec);
    if (ec) return "handshake: " + TlsHandshakeError(stream_->native_handle(), ec);
    return "";
  }

  Reply Do(http::verb verb, const std::string& target, const std::string& body = "",
           const std::string& token = "") {
    if (!stream_) {
      if (std::string err = Connect(); !err.empty()) return Reply{-1, err};
    }
    http::request<http::string_body> req(verb, target, 11);
    req.set(http::field::host, host_);
    if (!token.empty()) req.set(http::field::authorization, "Bearer " + token);
    if (!body.empty()) {
      req.set(http::field::content_type, "application/json");
      req.body() = body;
    }
    req.prepare_payload();
    beast::error_code ec;
    http::write(*stream_, req, ec);
    if (ec) return Reply{-1, "write: " + ec.message()};
    http::response<http::string_body> res;
    http::read(*stream_, buffer_, res, ec);
    if (ec) return Reply{-1, "read: " + ec.message()};
    return Reply{static_cast<int>(res.result_int()), res.body()};
  }

  // Sends a watch request and reads until `needle` arrives in the body; false on close or timeout.
  bool StartWatch(const std::string& target, const std::string& token = "") {
    if (!stream_ && !Connect().empty()) return false;
    http::request<http::string_body> req(http::verb::get, target, 11);
    req.set(http::field::host, host_);
    if (!token.empty()) req.set(http::field::authorization, "Bearer " + token);
    beast::error_code ec;
    http::write(*stream_, req, ec);
    if (ec) return false;
    watch_parser_.emplace();
    watch_parser_->body_limit(std::numeric_limits<std::uint64_t>::max());
    http::read_header(*stream_, buffer_, *watch_parser_, ec);
    return !ec && watch_parser_->get().result_int() == 200;
  }
  bool WaitFor(const std::string& needle) {
    while (watched_.find(needle) == std::string::npos) {
      char chunk[4096];
      watch_parser_->get().body().data = chunk;
      watch_parser_->get().body().size = sizeof chunk;
      beast::error_code ec;
      http::read_some(*stream_, buffer_, *watch_parser_, ec);
      watched_.append(chunk, sizeof chunk - watch_parser_->get().body().size);
      if (ec && ec != http::error::need_buffer) return false;
    }
    return true;
  }
  // Keeps the kernel from absorbing a stream this client does not read.
  void ShrinkReceiveBuffer() {
    int rcvbuf = 4096;
    ::setsockopt(stream_->next_layer().native_handle(), SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
  }
  // The local port: the same for every request of a kept-alive connection.
  uint16_t local_port() { return stream_->next_layer().local_endpoint().port(); }

 private:
  const uint16_t port_;
  const TlsClientConfig config_;
  const std::string host_;
  net::io_context ioc_;
  std::shared_ptr<ssl::context> ctx_;
  std::optional<beast::ssl_stream<tcp::socket>> stream_;
  beast::flat_buffer buffer_;
  std::optional<http::response_parser<http::buffer_body>> watch_parser_;
  std::string watched_;
};

json PodJson(const std::string& name) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"labels", {{"app", "web"}}}}},
          {"spec", {{"containers", json::array({{{"name", "c"}, {"image", "nginx"}}})}}}};
}

const std::string kPods = "/api/v1/namespaces/default/pods";
const std::string kWhoAmI = "/apis/authentication.k8s.io/v1/selfsubjectreviews";
const std::string kReview =
    R"({"kind":"SelfSubjectReview","apiVersion":"authentication.k8s.io/v1","metadata":{}})";

TlsClientConfig Trusting(const std::string& name) {
  TlsClientConfig c;
  c.ca_file = Cert(name, "ca.crt");
  return c;
}
TlsClientConfig WithClientCert(const std::string& name) {
  TlsClientConfig c = Trusting(name);
  c.cert_file = Cert(name, "client.crt");
  c.key_file = Cert(name, "client.key");
  return c;
}

class TlsServerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    char tmpl[] = "/tmp/rcsim-tls-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    g_certs = tmpl;
    MakeCerts("good", "--user alice --groups dev,ops --token s3cret");
    MakeCerts("other", "--user mallory");
    MakeCerts("wronghost", "--sans DNS:other.example");
  }
  static void TearDownTestSuite() {
    if (!g_certs.empty()) std::system(("rm -rf " + g_certs).c_str());
  }

  // HTTPS with the "good" server certificate, plus `tweak`.
  void StartServer(const std::function<void(HttpServerOptions&)>& tweak = nullptr,
                   const std::string& certs = "good") {
    HttpServerOptions opts;
    opts.port = 0;
    opts.tls_cert_file = Cert(certs, "server.crt");
    opts.tls_key_file = Cert(certs, "server.key");
    if (tweak) tweak(opts);
    server_.reset();
    server_ = std::make_unique<HttpServer>(&registry_, &clock_, opts);
    const Status s = server_->Start();
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  uint16_t port() const { return server_->port(); }

  SystemClock clock_;
  ThreadExecutor executor_;
  MemStore store_{&clock_, &executor_};
  Mt19937Rng rng_{42};
  Registry registry_{&store_, &clock_, &rng_};
  std::unique_ptr<HttpServer> server_;
};

TEST_F(TlsServerTest, TokenOverHttpsOnOneKeptAliveConnection) {
  TokenAuthenticator tokens;
  tokens.Add("s3cret", TokenUser{"bob", "bob-uid", {"team"}});
  StartServer([&](HttpServerOptions& o) { o.authenticator = &tokens; });
  TlsClient client(port(), Trusting("good"));
  Reply denied = client.Do(http::verb::get, kPods);
  EXPECT_EQ(denied.status, 401) << denied.body;
  const uint16_t local = client.local_port();
  Reply created = client.Do(http::verb::post, kPods, PodJson("p1").dump(), "s3cret");
  EXPECT_EQ(created.status, 201) << created.body;
  Reply listed = client.Do(http::verb::get, kPods, "", "s3cret");
  ASSERT_EQ(listed.status, 200) << listed.body;
  EXPECT_EQ(listed.Json()["items"][0]["metadata"]["name"], "p1");
  Reply who = client.Do(http::verb::post, kWhoAmI, kReview, "s3cret");
  ASSERT_EQ(who.status, 201) << who.body;
  EXPECT_EQ(who.Json()["status"]["userInfo"]["username"], "bob");
  EXPECT_EQ(who.Json()["status"]["userInfo"]["uid"], "bob-uid");
  EXPECT_EQ(client.local_port(), local) << "each request should reuse the one TLS connection";
  // Health paths need no token, over TLS as over HTTP.
  EXPECT_EQ(client.Do(http::verb::get, "/healthz").status, 200);
}

TEST_F(TlsServerTest, ClientCertificateAuthenticatesItsCommonNameAndOrganizations) {
  StartServer([](HttpServerOptions& o) { o.client_ca_file = Cert("good", "ca.crt"); });
  TlsClient alice(port(), WithClientCert("good"));
  Reply who = alice.Do(http::verb::post, kWhoAmI, kReview);
  ASSERT_EQ(who.status, 201) << who.body;
  const json info = who.Json()["status"]["userInfo"];
  EXPECT_EQ(info["username"], "alice");
  EXPECT_EQ(info["groups"], json({"dev", "ops", "system:authenticated"}));
  EXPECT_EQ(alice.Do(http::verb::post, kPods, PodJson("by-cert").dump()).status, 201);

  // Without a certificate (and no token) nothing but the health paths is served.
  TlsClient anonymous(port(), Trusting("good"));
  EXPECT_EQ(anonymous.Do(http::verb::get, kPods).status, 401);
  EXPECT_EQ(anonymous.Do(http::verb::get, "/readyz").status, 200);

  // A certificate from another CA fails the handshake: the server does not take it for anyone.
  TlsClientConfig foreign = Trusting("good");
  foreign.cert_file = Cert("other", "client.crt");
  foreign.key_file = Cert("other", "client.key");
  TlsClient mallory(port(), foreign);
  Reply refused = mallory.Do(http::verb::get, kPods);
  EXPECT_EQ(refused.status, -1) << refused.body;
}

TEST_F(TlsServerTest, TokenAndClientCertificateTogether) {
  TokenAuthenticator tokens;
  tokens.Add("s3cret", TokenUser{"bob", "", {}});
  StartServer([&](HttpServerOptions& o) {
    o.authenticator = &tokens;
    o.client_ca_file = Cert("good", "ca.crt");
  });
  TlsClient by_token(port(), Trusting("good"));
  EXPECT_EQ(by_token.Do(http::verb::get, kPods, "", "s3cret").status, 200);
  EXPECT_EQ(by_token.Do(http::verb::get, kPods, "", "wrong").status, 401);
  TlsClient by_cert(port(), WithClientCert("good"));
  EXPECT_EQ(by_cert.Do(http::verb::get, kPods).status, 200);
}

TEST_F(TlsServerTest, ClientRefusesAServerSignedByAnotherCa) {
  StartServer();
  TlsClient client(port(), Trusting("other"));
  const std::string err = client.Connect();
  EXPECT_NE(err.find("certificate verify failed"), std::string::npos) << err;
  // insecure-skip-tls-verify connects anyway.
  TlsClientConfig insecure;
  insecure.insecure_skip_verify = true;
  TlsClient skipping(port(), insecure);
  EXPECT_EQ(skipping.Do(http::verb::get, kPods).status, 200);
}

TEST_F(TlsServerTest, ClientRefusesACertificateForAnotherHostName) {
  StartServer(nullptr, "wronghost");  // SANs: DNS:other.example only
  TlsClient by_ip(port(), Trusting("wronghost"));
  std::string err = by_ip.Connect();
  EXPECT_NE(err.find("IP address mismatch"), std::string::npos) << err;
  TlsClient by_name(port(), Trusting("wronghost"), "localhost");
  err = by_name.Connect();
  EXPECT_NE(err.find("hostname mismatch"), std::string::npos) << err;
  TlsClientConfig named = Trusting("wronghost");
  named.server_name = "other.example";  // kubeconfig's tls-server-name
  TlsClient by_server_name(port(), named);
  EXPECT_EQ(by_server_name.Do(http::verb::get, kPods).status, 200);
  // The good certificate names 127.0.0.1 and localhost.
  StartServer();
  TlsClient good_ip(port(), Trusting("good"));
  EXPECT_EQ(good_ip.Connect(), "");
  TlsClient good_name(port(), Trusting("good"), "localhost");
  EXPECT_EQ(good_name.Connect(), "");
}

TEST_F(TlsServerTest, WatchStreamsOverTls) {
  StartServer();
  TlsClient watcher(port(), Trusting("good"));
  ASSERT_TRUE(watcher.StartWatch(kPods + "?watch=1"));
  TlsClient writer(port(), Trusting("good"));
  ASSERT_EQ(writer.Do(http::verb::post, kPods, PodJson("w1").dump()).status, 201);
  EXPECT_TRUE(watcher.WaitFor("\"w1\""));
  ASSERT_EQ(writer.Do(http::verb::delete_, kPods + "/w1").status, 200);
  EXPECT_TRUE(watcher.WaitFor("DELETED"));
}

TEST_F(TlsServerTest, LimitsHoldOverTls) {
  StartServer([](HttpServerOptions& o) {
    o.max_connections = 1;
    o.max_header_bytes = 4096;
  });
  TlsClient first(port(), Trusting("good"));
  ASSERT_EQ(first.Do(http::verb::get, kPods).status, 200);
  // Beyond max_connections: 429 after the handshake, as over plain HTTP.
  TlsClient second(port(), Trusting("good"));
  Reply refused = second.Do(http::verb::get, kPods);
  EXPECT_EQ(refused.status, 429) << refused.body;
  EXPECT_EQ(refused.Json()["reason"], "TooManyRequests");
  // Oversized headers: 431.
  Reply big = first.Do(http::verb::get, kPods + "?x=" + std::string(8192, 'a'));
  EXPECT_EQ(big.status, 431) << big.body;
}

TEST_F(TlsServerTest, SlowWatchClientIsClosedOverTls) {
  StartServer([](HttpServerOptions& o) { o.max_watch_buffer_bytes = 256 << 10; });
  TlsClient slow(port(), Trusting("good"));
  ASSERT_TRUE(slow.StartWatch(kPods + "?watch=1"));
  slow.ShrinkReceiveBuffer();
  TlsClient writer(port(), Trusting("good"));
  json pod = PodJson("p");
  pod["metadata"]["annotations"] = {{"blob", std::string(64 << 10, 'x')}};
  for (int i = 0; i < 200; ++i) {
    pod["metadata"]["name"] = "p" + std::to_string(i);
    ASSERT_EQ(writer.Do(http::verb::post, kPods, pod.dump()).status, 201);
  }
  // The server hung up on the client that did not read: it cannot read all 200 pods.
  EXPECT_FALSE(slow.WaitFor("\"p199\""));
  TlsClient fresh(port(), Trusting("good"));
  EXPECT_TRUE(fresh.StartWatch(kPods + "?watch=1&timeoutSeconds=1"));
}

TEST_F(TlsServerTest, PlainHttpToTheHttpsPortGetsNoAnswer) {
  StartServer();
  net::io_context ioc;
  tcp::socket socket(ioc);
  socket.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port()));
  timeval tv{30, 0};
  ::setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  const std::string req = "GET " + kPods + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  net::write(socket, net::buffer(req));
  beast::flat_buffer buffer;
  http::response<http::string_body> res;
  beast::error_code ec;
  http::read(socket, buffer, res, ec);
  EXPECT_TRUE(ec) << "a plain request on the TLS port was answered: " << res.result_int();
  // And the server still serves TLS.
  TlsClient client(port(), Trusting("good"));
  EXPECT_EQ(client.Do(http::verb::get, kPods).status, 200);
}

TEST_F(TlsServerTest, StartRefusesUnusableCertificates) {
  auto start = [&](const std::function<void(HttpServerOptions&)>& tweak) {
    HttpServerOptions opts;
    opts.port = 0;
    tweak(opts);
    HttpServer server(&registry_, &clock_, opts);
    return server.Start();
  };
  Status s = start([](HttpServerOptions& o) {
    o.tls_cert_file = Cert("good", "server.crt");
    o.tls_key_file = Cert("other", "server.key");
  });
  EXPECT_EQ(s.code(), Code::kInvalid);
  EXPECT_NE(s.message().find("mismatch"), std::string::npos) << s.ToString();
  s = start([](HttpServerOptions& o) {
    o.tls_cert_file = g_certs + "/missing.crt";
    o.tls_key_file = Cert("good", "server.key");
  });
  EXPECT_EQ(s.code(), Code::kInvalid);
  EXPECT_NE(s.message().find("missing.crt"), std::string::npos) << s.ToString();
  s = start([](HttpServerOptions& o) { o.tls_cert_file = Cert("good", "server.crt"); });
  EXPECT_EQ(s.code(), Code::kInvalid) << s.ToString();
  s = start([](HttpServerOptions& o) { o.client_ca_file = Cert("good", "ca.crt"); });
  EXPECT_EQ(s.code(), Code::kInvalid) << s.ToString();
}

TEST(TlsClientContext, RefusesACertificateWithoutItsKey) {
  TlsClientConfig c;
  c.cert_data = "-----BEGIN CERTIFICATE-----\n";
  Result<std::shared_ptr<ssl::context>> ctx = NewTlsClientContext(c);
  ASSERT_FALSE(ctx.ok());
  EXPECT_NE(ctx.status().message().find("without its client key"), std::string::npos);
  TlsClientConfig bad_ca;
  bad_ca.ca_data = "not a certificate";
  EXPECT_FALSE(NewTlsClientContext(bad_ca).ok());
}

// --- HttpApiClient (backends/httpclient) over HTTPS against the same server. ---

using PodResult = Result<std::shared_ptr<const Pod>>;

Pod MakePod(const std::string& name) {
  Pod pod;
  pod.metadata.name = name;
  pod.metadata.namespace_ = "default";
  pod.metadata.labels = {{"app", "web"}};
  pod.spec.containers.push_back(Container{"c", "nginx", {}, {}});
  return pod;
}

class HttpApiClientOverTlsTest : public TlsServerTest {
 protected:
  std::unique_ptr<HttpApiClient> NewClient(TlsClientConfig tls, const std::string& token = "",
                                           const std::string& host = "127.0.0.1") {
    HttpApiClientOptions o;
    o.base_url = "https://" + host + ":" + std::to_string(port());
    o.tls = std::move(tls);
    o.bearer_token = token;
    Result<std::unique_ptr<HttpApiClient>> c = HttpApiClient::Create(std::move(o));
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? std::move(c).value() : nullptr;
  }
  static PodResult Get(HttpApiClient& c, const std::string& name) {
    std::promise<PodResult> p;
    c.pods().Get("default", name, [&](PodResult r) { p.set_value(std::move(r)); });
    return p.get_future().get();
  }
  static PodResult Create(HttpApiClient& c, const std::string& name) {
    std::promise<PodResult> p;
    c.pods().Create("default", MakePod(name), [&](PodResult r) { p.set_value(std::move(r)); });
    return p.get_future().get();
  }
};

TEST_F(HttpApiClientOverTlsTest, RequestsAndWatchesOverHttpsWithAToken) {
  TokenAuthenticator tokens;
  tokens.Add("s3cret", TokenUser{"bob", "", {}});
  StartServer([&](HttpServerOptions& o) { o.authenticator = &tokens; });
  std::unique_ptr<HttpApiClient> client = NewClient(Trusting("good"), "s3cret");
  ASSERT_NE(client, nullptr);
  std::promise<std::string> added;
  std::atomic<bool> seen{false};
  std::unique_ptr<ApiWatch> watch =
      client->pods().Watch("default", ListOptions{}, "", [&](const ApiWatchEvent<Pod>& ev) {
        if (ev.type == ApiWatchEvent<Pod>::Type::kAdded && !seen.exchange(true)) {
          added.set_value(ev.object->metadata.name);
        }
      });
  PodResult created = Create(*client, "tls-pod");
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  for (int i = 0; i < 20; ++i) {  // the keep-alive pool carries them over TLS
    PodResult got = Get(*client, "tls-pod");
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ((*got)->metadata.name, "tls-pod");
  }
  std::future<std::string> name = added.get_future();
  ASSERT_EQ(name.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  EXPECT_EQ(name.get(), "tls-pod");
  watch.reset();
  // The same server by name: the certificate names localhost too.
  std::unique_ptr<HttpApiClient> by_name = NewClient(Trusting("good"), "s3cret", "localhost");
  EXPECT_TRUE(Get(*by_name, "tls-pod").ok());
  // Without the token: 401 as kUnauthorized.
  std::unique_ptr<HttpApiClient> anonymous = NewClient(Trusting("good"));
  EXPECT_EQ(Get(*anonymous, "tls-pod").status().code(), Code::kUnauthorized);
}

TEST_F(HttpApiClientOverTlsTest, ClientCertificateFromFilesOrData) {
  StartServer([](HttpServerOptions& o) { o.client_ca_file = Cert("good", "ca.crt"); });
  std::unique_ptr<HttpApiClient> by_files = NewClient(WithClientCert("good"));
  EXPECT_TRUE(Create(*by_files, "by-files").ok());
  auto read = [](const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  TlsClientConfig data;
  data.ca_data = read(Cert("good", "ca.crt"));
  data.cert_data = read(Cert("good", "client.crt"));
  data.key_data = read(Cert("good", "client.key"));
  std::unique_ptr<HttpApiClient> by_data = NewClient(data);
  PodResult got = Get(*by_data, "by-files");
  EXPECT_TRUE(got.ok()) << got.status().ToString();
}

TEST_F(HttpApiClientOverTlsTest, RefusesAnUntrustedServerOrAnotherHostName) {
  StartServer(nullptr, "wronghost");  // SANs: DNS:other.example only
  std::unique_ptr<HttpApiClient> untrusted = NewClient(Trusting("good"));
  PodResult r = Get(*untrusted, "x");
  EXPECT_EQ(r.status().code(), Code::kUnavailable);
  EXPECT_NE(r.status().message().find("certificate verify failed"), std::string::npos)
      << r.status().ToString();
  std::unique_ptr<HttpApiClient> wrong_ip = NewClient(Trusting("wronghost"));
  r = Get(*wrong_ip, "x");
  EXPECT_EQ(r.status().code(), Code::kUnavailable);
  EXPECT_NE(r.status().message().find("IP address mismatch"), std::string::npos) << r.status().ToString();
  // A watch fails the same way: one kError event.
  std::promise<Status> failed;
  std::unique_ptr<ApiWatch> watch =
      wrong_ip->pods().Watch("default", ListOptions{}, "", [&](const ApiWatchEvent<Pod>& ev) {
        if (ev.type == ApiWatchEvent<Pod>::Type::kError) failed.set_value(ev.error);
      });
  std::future<Status> err = failed.get_future();
  ASSERT_EQ(err.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  EXPECT_NE(err.get().message().find("IP address mismatch"), std::string::npos);
  watch.reset();
  TlsClientConfig named = Trusting("wronghost");
  named.server_name = "other.example";
  std::unique_ptr<HttpApiClient> right_name = NewClient(named);
  EXPECT_EQ(Get(*right_name, "x").status().code(), Code::kNotFound);
  TlsClientConfig insecure;
  insecure.insecure_skip_verify = true;
  std::unique_ptr<HttpApiClient> skipping = NewClient(insecure);
  EXPECT_EQ(Get(*skipping, "x").status().code(), Code::kNotFound);
}

TEST_F(HttpApiClientOverTlsTest, BadTlsMaterialIsRefusedAtCreate) {
  StartServer();
  HttpApiClientOptions o;
  o.base_url = "https://127.0.0.1:" + std::to_string(port());
  o.tls.ca_file = g_certs + "/missing-ca.crt";
  Result<std::unique_ptr<HttpApiClient>> c = HttpApiClient::Create(o);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), Code::kInvalid);
  EXPECT_NE(c.status().message().find("missing-ca.crt"), std::string::npos) << c.status().ToString();
}

TEST_F(HttpApiClientOverTlsTest, QpsAndBurstSpaceRequests) {
  StartServer();
  HttpApiClientOptions o;
  o.base_url = "https://127.0.0.1:" + std::to_string(port());
  o.tls = Trusting("good");
  o.qps = 20;
  o.burst = 3;
  Result<std::unique_ptr<HttpApiClient>> c = HttpApiClient::Create(o);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const auto start = std::chrono::steady_clock::now();
  // 3 at once, then one per 50 ms: the 8th is sent no earlier than 250 ms after the first.
  std::vector<std::future<PodResult>> results;
  std::vector<std::promise<PodResult>> promises(8);
  for (auto& p : promises) {
    results.push_back(p.get_future());
    (*c)->pods().Get("default", "none", [&p](PodResult r) { p.set_value(std::move(r)); });
  }
  for (auto& f : results) EXPECT_EQ(f.get().status().code(), Code::kNotFound);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(250));
  // Destroying the client with requests still waiting for the limiter completes them at once.
  std::vector<std::promise<PodResult>> waiting(40);
  std::vector<std::future<PodResult>> waited;
  for (auto& p : waiting) {
    waited.push_back(p.get_future());
    (*c)->pods().Get("default", "none", [&p](PodResult r) { p.set_value(std::move(r)); });
  }
  const auto before_close = std::chrono::steady_clock::now();
  c->reset();
  EXPECT_LT(std::chrono::steady_clock::now() - before_close, std::chrono::milliseconds(1500));
  int shut_down = 0;
  for (auto& f : waited) {
    const Result<std::shared_ptr<const Pod>> r = f.get();
    if (r.status().code() == Code::kUnavailable) ++shut_down;
  }
  EXPECT_GT(shut_down, 0);
}

}  // namespace
}  // namespace rcsim
