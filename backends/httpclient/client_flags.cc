#include "backends/httpclient/client_flags.h"

#include <cstdlib>
#include <utility>

namespace rcsim {

Result<ClientConfig> ResolveClientConfig(const ApiServerFlags& flags) {
  ClientConfig config;
  config.server = flags.master.empty() ? flags.apiserver : flags.master;
  config.source = flags.master.empty() ? "--apiserver" : "--master";
  if (!flags.kubeconfig.empty()) {
    Result<ClientConfig> loaded = LoadKubeconfig(flags.kubeconfig, flags.context);
    if (!loaded.ok()) return loaded.status();
    config = std::move(loaded).value();
    if (!flags.master.empty()) config.server = flags.master;
  } else if (!flags.server_given) {
    if (Result<ClientConfig> in_cluster = InClusterConfig(flags.in_cluster_root); in_cluster.ok()) {
      config = std::move(in_cluster).value();
    } else if (in_cluster.status().code() != Code::kNotFound ||
               // NOLINTNEXTLINE(concurrency-mt-unsafe): flags are resolved at startup; nothing sets the env
               std::getenv("KUBERNETES_SERVICE_HOST") != nullptr) {
      return Status(in_cluster.status().code(), "in-cluster config: " + in_cluster.status().message());
    }
  }
  if (!flags.token_file.empty()) {
    Result<std::string> token = ReadTokenFile(flags.token_file);
    if (!token.ok()) return token.status();
    config.token = *token;
  }
  return config;
}

HttpApiClientOptions ClientOptionsFor(const ClientConfig& config) {
  HttpApiClientOptions options;
  options.base_url = config.server;
  options.bearer_token = config.token;
  options.tls.ca_file = config.ca_file;
  options.tls.ca_data = config.ca_data;
  options.tls.cert_file = config.client_cert_file;
  options.tls.cert_data = config.client_cert_data;
  options.tls.key_file = config.client_key_file;
  options.tls.key_data = config.client_key_data;
  options.tls.insecure_skip_verify = config.insecure_skip_tls_verify;
  options.tls.server_name = config.tls_server_name;
  return options;
}

}  // namespace rcsim
