#include "backends/httpclient/client_flags.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace rcsim {
namespace {

class ClientFlagsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("rcsim-client-flags-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    flags_.apiserver = "http://127.0.0.1:8080";
    flags_.in_cluster_root = (dir_ / "no-service-account").string();
    unsetenv("KUBERNETES_SERVICE_HOST");  // NOLINT(concurrency-mt-unsafe): these tests run one thread
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
  std::string Kubeconfig(const std::string& server) {
    return Write("config",
                 "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n- name: k\n  cluster:\n"
                 "    server: " +
                     server +
                     "\nusers:\n- name: u\n  user:\n    token: from-config\n"
                     "contexts:\n- name: c\n  context: {cluster: k, user: u}\n");
  }
  std::filesystem::path dir_;
  ApiServerFlags flags_;
};

TEST_F(ClientFlagsTest, DefaultsToTheApiserverFlag) {
  Result<ClientConfig> c = ResolveClientConfig(flags_);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->server, "http://127.0.0.1:8080");
  EXPECT_EQ(c->token, "");
}

TEST_F(ClientFlagsTest, KubeconfigWithMasterOverridingItsServerAndTokenFileItsToken) {
  flags_.kubeconfig = Kubeconfig("http://10.1.1.1:8080");
  Result<ClientConfig> c = ResolveClientConfig(flags_);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->server, "http://10.1.1.1:8080");
  EXPECT_EQ(c->token, "from-config");
  flags_.master = "http://127.0.0.1:9999";
  flags_.token_file = Write("token", "from-file\n");
  c = ResolveClientConfig(flags_);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->server, "http://127.0.0.1:9999");
  EXPECT_EQ(c->token, "from-file");
}

TEST_F(ClientFlagsTest, ClearErrors) {
  flags_.kubeconfig = (dir_ / "missing").string();
  Result<ClientConfig> c = ResolveClientConfig(flags_);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("missing"), std::string::npos);
  flags_.kubeconfig.clear();
  flags_.token_file = (dir_ / "no-token").string();
  c = ResolveClientConfig(flags_);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("cannot read token file"), std::string::npos);
}

TEST_F(ClientFlagsTest, HttpsKubeconfigGivesTheClientItsTlsSettings) {
  flags_.kubeconfig =
      Write("config",
            "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n- name: k\n  cluster:\n"
            "    server: https://10.1.1.1:6443\n    certificate-authority: /etc/ca.crt\n"
            "    tls-server-name: api.example\nusers:\n- name: u\n  user:\n    token: t\n"
            "    client-certificate: /etc/client.crt\n    client-key: /etc/client.key\n"
            "contexts:\n- name: c\n  context: {cluster: k, user: u}\n");
  Result<ClientConfig> c = ResolveClientConfig(flags_);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  HttpApiClientOptions o = ClientOptionsFor(*c);
  EXPECT_EQ(o.base_url, "https://10.1.1.1:6443");
  EXPECT_EQ(o.bearer_token, "t");
  EXPECT_EQ(o.tls.ca_file, "/etc/ca.crt");
  EXPECT_EQ(o.tls.cert_file, "/etc/client.crt");
  EXPECT_EQ(o.tls.key_file, "/etc/client.key");
  EXPECT_EQ(o.tls.server_name, "api.example");
  EXPECT_FALSE(o.tls.insecure_skip_verify);
}

TEST_F(ClientFlagsTest, InClusterWhenTheServiceHostIsSetAndNoServerGiven) {
  setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1", 1);  // NOLINT(concurrency-mt-unsafe): one thread
  Result<ClientConfig> c = ResolveClientConfig(flags_);
  unsetenv("KUBERNETES_SERVICE_HOST");  // NOLINT(concurrency-mt-unsafe): one thread
  ASSERT_FALSE(c.ok());                 // no service account files under in_cluster_root
  EXPECT_NE(c.status().message().find("in-cluster config"), std::string::npos);
  flags_.server_given = true;                        // --apiserver on the command line wins
  setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1", 1);  // NOLINT(concurrency-mt-unsafe): one thread
  c = ResolveClientConfig(flags_);
  unsetenv("KUBERNETES_SERVICE_HOST");  // NOLINT(concurrency-mt-unsafe): one thread
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->server, "http://127.0.0.1:8080");
}

}  // namespace
}  // namespace rcsim
