// The ApiClient contract suite over HTTP: HttpApiClient -> apps/apiserver (a real process) -> a real
// etcd (tests/etcd_fixture). One etcd and one apiserver serve every test of the process; each test
// gets its own namespace. Compact() compacts etcd through its JSON gateway (/v3/kv/compaction).
// The suite runs three times: over plain HTTP (Http), and over HTTPS (Https) with the certificates and
// kubeconfig of scripts/make-certs, once with its token (context rcsim) and once with its client
// certificate inline (context rcsim-data), the client configured from the kubeconfig as the
// controller-manager is.
//
// Known differences from the in-process suite (server bugs, owned by backends/http), as of 15:30 UTC:
// - ListByLabelSelectorAndFieldSelector fails: GET ...?fieldSelector=metadata.name%3Dmissing gets no
//   list (seen: the apiserver aborting with "nlohmann type_error 316: invalid UTF-8 byte").
//   Cause: backends/http/api_handler.cc ListOptionsOf binds a std::string_view to the temporary
//   std::string made by `q.params.count(..) ? q.params.at(..) : ""` (the conditional's common type is
//   std::string), so the field selector is read from freed memory. The other 17 cases pass.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

#include "backends/httpclient/http_api_client.h"
#include "backends/httpclient/kubeconfig.h"
#include "tests/api_http_contract/apiserver_process.h"
#include "tests/contract/api_contract.h"
#include "tests/contract/cluster_api_contract.h"
#include "tests/etcd_fixture/etcd_process.h"

#ifndef RCSIM_APISERVER_BINARY
#error "RCSIM_APISERVER_BINARY must name the apiserver executable"
#endif

namespace rcsim {
namespace {

// etcd + apiserver, started by the first test that needs them (on the main thread, as the processes'
// PR_SET_PDEATHSIG requires) and stopped by the test environment's TearDown.
class HttpStack : public ::testing::Environment {
 public:
  explicit HttpStack(bool https) : https_(https) {}
  static HttpStack* Instance() { return instance_; }
  static HttpStack* TlsInstance() { return tls_instance_; }
  // The kubeconfig of scripts/make-certs naming this stack's server (https only; after Url()).
  const std::string& kubeconfig() const { return kubeconfig_; }

  // The apiserver's URL, starting the stack on first use; an error if it cannot start.
  Result<std::string> Url() {
    if (!started_) {
      started_ = true;
      status_ = StartAll();
    }
    if (!status_.ok()) return status_;
    return apiserver_->url();
  }
  const std::string& etcd_url() const { return etcd_url_; }

  void TearDown() override {
    apiserver_.reset();
    etcd_.reset();
    if (!certs_.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(certs_, ec);
    }
  }

 private:
  Status StartAll() {
    auto etcd = EtcdProcess::Start();
    if (!etcd.ok()) return etcd.status();
    etcd_ = std::move(etcd).value();
    etcd_url_ = etcd_->endpoint();
    ApiServerProcessOptions o;
    o.binary = RCSIM_APISERVER_BINARY;
    o.etcd_servers = etcd_url_;
    if (https_) {
      char tmpl[] = "/tmp/rcsim-contract-certs-XXXXXX";
      if (mkdtemp(tmpl) == nullptr) return Status(Code::kInternal, "mkdtemp failed");
      certs_ = tmpl;
      o.certs_dir = certs_ + "/certs";
      const std::string cmd = std::string(RCSIM_MAKE_CERTS) + " " + o.certs_dir +
                              " --server https://127.0.0.1:PORT --user contract 2>/dev/null";
      // NOLINTNEXTLINE(concurrency-mt-unsafe): the fixture's setup, before any client thread
      if (std::system(cmd.c_str()) != 0) return Status(Code::kInternal, "failed: " + cmd);
    }
    auto api = ApiServerProcess::Start(o);
    if (!api.ok()) return api.status();
    apiserver_ = std::move(api).value();
    if (https_) {  // the kubeconfig names the real port
      kubeconfig_ = o.certs_dir + "/kubeconfig";
      std::ifstream in(kubeconfig_);
      std::stringstream text;
      text << in.rdbuf();
      std::string k = text.str();
      for (size_t p; (p = k.find("https://127.0.0.1:PORT")) != std::string::npos;) {
        k.replace(p, 22, apiserver_->url());
      }
      std::ofstream(kubeconfig_) << k;
    }
    return Status::Ok();
  }

  static HttpStack* const instance_;
  static HttpStack* const tls_instance_;
  const bool https_;
  std::string certs_;
  std::string kubeconfig_;
  bool started_ = false;
  Status status_;
  std::unique_ptr<EtcdProcess> etcd_;
  std::string etcd_url_;
  std::unique_ptr<ApiServerProcess> apiserver_;
};

// gtest owns and deletes registered environments.
HttpStack* const HttpStack::instance_ =
    static_cast<HttpStack*>(::testing::AddGlobalTestEnvironment(new HttpStack(/*https=*/false)));
HttpStack* const HttpStack::tls_instance_ =
    static_cast<HttpStack*>(::testing::AddGlobalTestEnvironment(new HttpStack(/*https=*/true)));

Result<HttpReply> PostSync(HttpApiClient& client, const std::string& target, std::string body) {
  std::mutex mu;
  std::condition_variable cv;
  std::optional<Result<HttpReply>> reply;
  client.Send("POST", target, std::move(body), [&](Result<HttpReply> r) {
    std::lock_guard<std::mutex> lock(mu);
    reply.emplace(std::move(r));
    cv.notify_all();
  });
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [&] { return reply.has_value(); });
  return std::move(*reply);
}

// The client options of a kubeconfig context, as the controller-manager builds them.
HttpApiClientOptions FromKubeconfig(const std::string& path, const std::string& context) {
  HttpApiClientOptions o;
  Result<ClientConfig> c = LoadKubeconfig(path, context);
  if (!c.ok()) {
    ADD_FAILURE() << c.status().ToString();
    o.base_url = "http://127.0.0.1:1";
    return o;
  }
  o.base_url = c->server;
  o.bearer_token = c->token;
  o.tls.ca_file = c->ca_file;
  o.tls.ca_data = c->ca_data;
  o.tls.cert_file = c->client_cert_file;
  o.tls.cert_data = c->client_cert_data;
  o.tls.key_file = c->client_key_file;
  o.tls.key_data = c->client_key_data;
  o.tls.insecure_skip_verify = c->insecure_skip_tls_verify;
  o.tls.server_name = c->tls_server_name;
  return o;
}

// kContext empty: plain HTTP, no credentials; else HTTPS through that context of the kubeconfig.
template <const char* kContext>
class HttpApiHarnessT {
 public:
  HttpApiHarnessT() {
    const bool https = kContext[0] != '\0';
    HttpStack* stack = https ? HttpStack::TlsInstance() : HttpStack::Instance();
    Result<std::string> url = stack->Url();
    HttpApiClientOptions o;
    if (url.ok()) {
      o = https ? FromKubeconfig(stack->kubeconfig(), kContext) : HttpApiClientOptions{};
      if (!https) o.base_url = *url;
    } else {
      ADD_FAILURE() << "cannot start etcd + apiserver: " << url.status().ToString();
      o.base_url = "http://127.0.0.1:1";  // every call then fails fast with kUnavailable
    }
    etcd_url_ = stack->etcd_url();
    auto client = HttpApiClient::Create(o);
    if (!client.ok()) ADD_FAILURE() << client.status().ToString();
    client_ = std::move(client).value();
  }

  ApiClient& client() { return *client_; }
  ClusterApi& cluster() { return *client_; }

  bool WaitFor(const std::function<bool()>& pred, Duration timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!pred()) {
      if (std::chrono::steady_clock::now() >= deadline) return pred();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
  }

  // A fresh namespace, created first: the apiserver refuses objects in a namespace that does not exist.
  std::string ns() {
    static int counter = 0;  // one per harness type: the context names the namespace too
    std::string name =
        std::string("http-contract-") + (kContext[0] ? kContext : "plain") + "-" + std::to_string(++counter);
    Result<HttpReply> r =
        PostSync(*client_, "/api/v1/namespaces",
                 R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":")" + name + R"("}})");
    if (!r.ok() || r->status != 201) {
      ADD_FAILURE() << "cannot create namespace " << name << ": "
                    << (r.ok() ? std::to_string(r->status) + " " + r->body : r.status().ToString());
    }
    return name;
  }

  // Compacts etcd at its current revision through the v3 JSON gateway.
  bool Compact() {
    HttpApiClientOptions o;
    o.base_url = etcd_url_;
    auto etcd = HttpApiClient::Create(o);
    if (!etcd.ok()) return false;
    Result<HttpReply> range = PostSync(**etcd, "/v3/kv/range", R"({"key":"AA=="})");
    if (!range.ok() || range->status != 200) return false;
    nlohmann::json j = nlohmann::json::parse(range->body, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.contains("header") || !j["header"].contains("revision")) return false;
    const std::string revision = j["header"]["revision"].get<std::string>();
    Result<HttpReply> compacted =
        PostSync(**etcd, "/v3/kv/compaction", R"({"revision":")" + revision + R"(","physical":true})");
    return compacted.ok() && compacted->status == 200;
  }

 private:
  std::unique_ptr<HttpApiClient> client_;
  std::string etcd_url_;
};

constexpr char kPlain[] = "";
constexpr char kTokenContext[] = "rcsim";
constexpr char kCertContext[] = "rcsim-data";
using HttpApiHarness = HttpApiHarnessT<kPlain>;
using HttpsTokenHarness = HttpApiHarnessT<kTokenContext>;
using HttpsClientCertHarness = HttpApiHarnessT<kCertContext>;

INSTANTIATE_TYPED_TEST_SUITE_P(Http, ApiContractTest, ::testing::Types<HttpApiHarness>);
using HttpsHarnesses = ::testing::Types<HttpsTokenHarness, HttpsClientCertHarness>;
INSTANTIATE_TYPED_TEST_SUITE_P(Https, ApiContractTest, HttpsHarnesses);
INSTANTIATE_TYPED_TEST_SUITE_P(Http, ClusterApiContractTest, ::testing::Types<HttpApiHarness>);

}  // namespace
}  // namespace rcsim
