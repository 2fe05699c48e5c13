// Where a production binary finds the API server, from the flags kube-controller-manager and the kubelet
// take: --kubeconfig FILE [--context C] (with --master / --apiserver overriding its server), else
// --master / --apiserver when given, else the in-cluster service account when KUBERNETES_SERVICE_HOST is
// set, else the default --apiserver. --token-file, when given, replaces the bearer token.
//
// Errors are ready to print (they name the flag or file). ClientOptionsFor turns the result into the HTTP
// client's options (server, token, and for https:// the CA, client certificate and server name).
#ifndef RCSIM_BACKENDS_HTTPCLIENT_CLIENT_FLAGS_H_
#define RCSIM_BACKENDS_HTTPCLIENT_CLIENT_FLAGS_H_

#include <string>

#include "backends/httpclient/http_api_client.h"
#include "backends/httpclient/kubeconfig.h"
#include "engine/status.h"

namespace rcsim {

struct ApiServerFlags {
  std::string apiserver;      // --apiserver (its default when not given)
  std::string master;         // --master: overrides --apiserver and the kubeconfig's server
  bool server_given = false;  // --apiserver or --master was on the command line
  std::string kubeconfig;     // --kubeconfig
  std::string context;        // --context
  std::string token_file;     // --token-file
  std::string in_cluster_root = "/var/run/secrets/kubernetes.io/serviceaccount";
};

Result<ClientConfig> ResolveClientConfig(const ApiServerFlags& flags);

// The HTTP client's options for `config`: base_url, bearer_token and tls; the rest keep their defaults.
HttpApiClientOptions ClientOptionsFor(const ClientConfig& config);

}  // namespace rcsim

#endif  // RCSIM_BACKENDS_HTTPCLIENT_CLIENT_FLAGS_H_
