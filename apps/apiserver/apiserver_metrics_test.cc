// The apiserver's /metrics end to end: a real etcd and a real apiserver process requiring a token.
// /metrics needs the token (the health paths do not), counts requests by kube-apiserver's verb,
// resource, subresource and code, holds a live watch in apiserver_longrunning_requests until the
// client goes, times etcd calls by operation and type, counts stored objects, and passes
// `promtool check metrics`.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
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
#include "tests/api_http_contract/apiserver_process.h"
#include "tests/etcd_fixture/etcd_process.h"

#if !defined(RCSIM_APISERVER_BINARY)
#error "the apiserver binary must be given"
#endif

namespace rcsim {
namespace {

constexpr const char* kToken = "metrics-test-token";

Result<HttpReply> Send(HttpApiClient& client, const std::string& method, const std::string& target,
                       const std::string& body = "") {
  std::mutex mu;
  std::condition_variable cv;
  std::optional<Result<HttpReply>> out;
  client.Send(method, target, body, [&](Result<HttpReply> r) {
    std::lock_guard<std::mutex> lock(mu);
    out.emplace(std::move(r));
    cv.notify_all();
  });
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [&] { return out.has_value(); });
  return std::move(*out);
}

bool Eventually(const std::function<bool()>& pred) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!pred()) {
    if (std::chrono::steady_clock::now() >= deadline) return pred();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return true;
}

// The value of the first sample of `name` whose labels include every one of `labels` (`key="value"`
// each), or nullopt.
std::optional<double> Sample(const std::string& text, const std::string& name,
                             const std::vector<std::string>& labels) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(name + "{", 0) != 0 && line.rfind(name + " ", 0) != 0) continue;
    bool all = true;
    for (const std::string& l : labels) all = all && line.find(l) != std::string::npos;
    if (!all) continue;
    return std::stod(line.substr(line.rfind(' ') + 1));
  }
  return std::nullopt;
}

// A watch held open on a raw socket (no client library in between), closed by Close.
class RawWatch {
 public:
  RawWatch(int port, const std::string& target) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return;
    const std::string req =
        "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + kToken + "\r\n\r\n";
    if (write(fd_, req.data(), req.size()) != static_cast<ssize_t>(req.size())) return;
    char buf[4096];
    while (header_.find("\r\n\r\n") == std::string::npos) {
      const ssize_t n = read(fd_, buf, sizeof buf);
      if (n <= 0) break;
      header_.append(buf, static_cast<std::size_t>(n));
    }
  }
  ~RawWatch() { Close(); }
  RawWatch(const RawWatch&) = delete;
  RawWatch& operator=(const RawWatch&) = delete;
  const std::string& header() const { return header_; }
  void Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
  std::string header_;
};

TEST(ApiServerMetricsTest, KubeApiserverMetricsBehindTheTokenPassPromtool) {
  auto etcd = EtcdProcess::Start();
  ASSERT_TRUE(etcd.ok()) << etcd.status().ToString();
  ApiServerProcessOptions options;
  options.binary = RCSIM_APISERVER_BINARY;
  options.etcd_servers = (*etcd)->endpoint();
  options.bearer_token = kToken;
  auto apiserver = ApiServerProcess::Start(options);
  ASSERT_TRUE(apiserver.ok()) << apiserver.status().ToString();

  HttpApiClientOptions anonymous_options;
  anonymous_options.base_url = (*apiserver)->url();
  auto anonymous = HttpApiClient::Create(anonymous_options);
  ASSERT_TRUE(anonymous.ok());
  HttpApiClientOptions client_options = anonymous_options;
  client_options.bearer_token = kToken;
  auto client = HttpApiClient::Create(client_options);
  ASSERT_TRUE(client.ok());

  // The health paths stay open; /metrics follows the authentication rules of every other path.
  auto healthz = Send(**anonymous, "GET", "/healthz");
  ASSERT_TRUE(healthz.ok());
  EXPECT_EQ(healthz->status, 200);
  auto refused = Send(**anonymous, "GET", "/metrics");
  ASSERT_TRUE(refused.ok());
  EXPECT_EQ(refused->status, 401) << refused->body;

  auto ns = Send(**client, "POST", "/api/v1/namespaces",
                 R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"m"}})");
  ASSERT_TRUE(ns.ok() && ns->status == 201) << (ns.ok() ? ns->body : ns.status().ToString());
  const std::string pod =
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"i"}]}})";
  auto created = Send(**client, "POST", "/api/v1/namespaces/m/pods", pod);
  ASSERT_TRUE(created.ok() && created->status == 201) << (created.ok() ? created->body : "");
  auto again = Send(**client, "POST", "/api/v1/namespaces/m/pods", pod);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->status, 409);
  ASSERT_TRUE(Send(**client, "GET", "/api/v1/namespaces/m/pods/p").ok());
  ASSERT_TRUE(Send(**client, "GET", "/api/v1/namespaces/m/pods").ok());
  auto status = Send(**client, "GET", "/api/v1/namespaces/m/pods/p/status");
  ASSERT_TRUE(status.ok() && status->status == 200);

  RawWatch watch((*apiserver)->port(), "/api/v1/namespaces/m/pods?watch=1");
  ASSERT_NE(watch.header().find(" 200 "), std::string::npos) << watch.header();

  auto scrape = [&]() -> std::string {
    auto r = Send(**client, "GET", "/metrics");
    if (!r.ok() || r->status != 200) return "";
    return r->body;
  };
  const std::string text = scrape();
  ASSERT_FALSE(text.empty());
  const std::vector<std::string> pods = {R"(resource="pods")", R"(component="apiserver")", R"(version="v1")"};
  auto with = [&](std::vector<std::string> more) {
    more.insert(more.end(), pods.begin(), pods.end());
    return more;
  };
  EXPECT_EQ(Sample(text, "apiserver_request_total",
                   with({R"(verb="POST")", R"(code="201")", R"(scope="namespace")", R"(subresource="")"})),
            1)
      << text;
  EXPECT_EQ(Sample(text, "apiserver_request_total", with({R"(verb="POST")", R"(code="409")"})), 1);
  EXPECT_EQ(Sample(text, "apiserver_request_total",
                   with({R"(verb="GET")", R"(code="200")", R"(scope="resource")", R"(subresource="")"})),
            1);
  EXPECT_EQ(Sample(text, "apiserver_request_total", with({R"(verb="GET")", R"(subresource="status")"})), 1);
  EXPECT_EQ(Sample(text, "apiserver_request_total", with({R"(verb="LIST")", R"(code="200")"})), 1);
  EXPECT_EQ(Sample(text, "apiserver_request_total", with({R"(verb="WATCH")", R"(code="200")"})), 1);
  EXPECT_EQ(Sample(text, "apiserver_request_total",
                   {R"(resource="namespaces")", R"(verb="POST")", R"(code="201")"}),
            1);
  EXPECT_EQ(Sample(text, "apiserver_request_total", {R"(subresource="/healthz")", R"(verb="GET")"}), 1);
  EXPECT_EQ(Sample(text, "apiserver_request_duration_seconds_count", with({R"(verb="POST")"})), 2);
  // A watch's duration is the client's: counted, not timed.
  EXPECT_FALSE(Sample(text, "apiserver_request_duration_seconds_count", with({R"(verb="WATCH")"})));
  EXPECT_EQ(Sample(text, "apiserver_longrunning_requests", with({R"(verb="WATCH")"})), 1);
  EXPECT_GE(Sample(text, "etcd_request_duration_seconds_count", {R"(operation="create")", R"(type="pods")"})
                .value_or(0),
            1);
  EXPECT_GE(Sample(text, "etcd_request_duration_seconds_count", {R"(operation="get")", R"(type="pods")"})
                .value_or(0),
            1);
  EXPECT_EQ(Sample(text, "apiserver_storage_objects", {R"(resource="pods")"}), 1);
  EXPECT_EQ(Sample(text, "apiserver_storage_objects", {R"(resource="namespaces")"}), 1);
  EXPECT_EQ(Sample(text, "apiserver_storage_malformed_values_total", {}), 0);

  const std::string path = (std::filesystem::temp_directory_path() / "apiserver-metrics-XXXXXX").string();
  std::vector<char> tmpl(path.begin(), path.end());
  tmpl.push_back('\0');
  const int fd = mkstemp(tmpl.data());
  ASSERT_GE(fd, 0);
  close(fd);
  const std::string file(tmpl.data());
  {
    std::ofstream out(file);
    out << text;
  }
  // NOLINTNEXTLINE(concurrency-mt-unsafe): no other thread of this test changes the environment.
  const int rc = std::system(("promtool check metrics < " + file + " > " + file + ".out 2>&1").c_str());
  std::ifstream lint(file + ".out");
  std::stringstream lint_text;
  lint_text << lint.rdbuf();
  EXPECT_EQ(rc, 0) << lint_text.str();
  std::filesystem::remove(file);
  std::filesystem::remove(file + ".out");

  // The client goes: the watch is no longer in progress.
  watch.Close();
  EXPECT_TRUE(Eventually(
      [&] { return Sample(scrape(), "apiserver_longrunning_requests", with({R"(verb="WATCH")"})) == 0; }));
}

}  // namespace
}  // namespace rcsim
