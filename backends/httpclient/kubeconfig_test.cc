#include "backends/httpclient/kubeconfig.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace rcsim {
namespace {

class KubeconfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("rcsim-kubeconfig-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
  std::filesystem::path dir_;
};

constexpr const char* kConfig = R"(apiVersion: v1
kind: Config
current-context: prod
clusters:
- name: prod-cluster
  cluster:
    server: https://10.0.0.1:6443
    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==
- name: dev-cluster
  cluster:
    server: http://127.0.0.1:8080
    insecure-skip-tls-verify: true
users:
- name: admin
  user:
    token: abc123
- name: dev
  user:
    tokenFile: dev.token
    client-certificate: certs/dev.crt
    client-key: /abs/dev.key
contexts:
- name: prod
  context: {cluster: prod-cluster, user: admin}
- name: dev
  context: {cluster: dev-cluster, user: dev}
)";

TEST_F(KubeconfigTest, CurrentContextAndContextOverride) {
  const std::string path = Write("config", kConfig);
  Write("dev.token", "devtoken\n");
  auto prod = LoadKubeconfig(path);
  ASSERT_TRUE(prod.ok()) << prod.status().ToString();
  EXPECT_EQ(prod->server, "https://10.0.0.1:6443");
  EXPECT_EQ(prod->token, "abc123");
  EXPECT_EQ(prod->ca_data, "-----BEGIN CERTIFICATE-----\n");
  EXPECT_FALSE(prod->insecure_skip_tls_verify);
  auto dev = LoadKubeconfig(path, "dev");
  ASSERT_TRUE(dev.ok()) << dev.status().ToString();
  EXPECT_EQ(dev->server, "http://127.0.0.1:8080");
  EXPECT_EQ(dev->token, "devtoken");
  EXPECT_TRUE(dev->insecure_skip_tls_verify);
  EXPECT_EQ(dev->client_cert_file, (dir_ / "certs/dev.crt").string());  // relative to the kubeconfig
  EXPECT_EQ(dev->client_key_file, "/abs/dev.key");
}

TEST_F(KubeconfigTest, ErrorsNameTheProblem) {
  const std::string path = Write("config", kConfig);
  auto missing_ctx = LoadKubeconfig(path, "nope");
  ASSERT_FALSE(missing_ctx.ok());
  EXPECT_NE(missing_ctx.status().message().find("no context named \"nope\""), std::string::npos);
  auto bad = LoadKubeconfig(Write("bad", "clusters: [\n"));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Code::kInvalid);
  EXPECT_EQ(LoadKubeconfig((dir_ / "absent").string()).status().code(), Code::kNotFound);
  // The token file of "dev" is missing.
  EXPECT_FALSE(LoadKubeconfig(path, "dev").ok());
}

TEST_F(KubeconfigTest, InClusterFromEnvironmentAndServiceAccount) {
  unsetenv("KUBERNETES_SERVICE_HOST");
  EXPECT_EQ(InClusterConfig(dir_.string()).status().code(), Code::kNotFound);
  setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
  setenv("KUBERNETES_SERVICE_PORT", "443", 1);
  Write("token", "satoken\n");
  auto c = InClusterConfig(dir_.string());
  unsetenv("KUBERNETES_SERVICE_HOST");
  unsetenv("KUBERNETES_SERVICE_PORT");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->server, "https://10.96.0.1:443");
  EXPECT_EQ(c->token, "satoken");
  EXPECT_EQ(c->ca_file, dir_.string() + "/ca.crt");
}

}  // namespace
}  // namespace rcsim
