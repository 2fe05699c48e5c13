// Where and how to reach the API server: a kubeconfig file (as kubectl and kube-controller-manager's
// --kubeconfig read it) or the in-cluster service-account configuration.
//
// LoadKubeconfig: YAML (yaml-cpp) with clusters/users/contexts and current-context; `context`
// (--context) overrides current-context. From the chosen context's cluster: server, certificate-
// authority / certificate-authority-data, insecure-skip-tls-verify, tls-server-name; from its user:
// token, tokenFile, client-certificate(-data), client-key(-data). Relative file paths are relative
// to the kubeconfig's directory, as kubectl resolves them. Errors (kInvalid / kNotFound) name the file and
// the entry.
//
// InClusterConfig: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT, the token and ca.crt under
// /var/run/secrets/kubernetes.io/serviceaccount/ (or `root`); kNotFound when not in a cluster.
#ifndef RCSIM_BACKENDS_HTTPCLIENT_KUBECONFIG_H_
#define RCSIM_BACKENDS_HTTPCLIENT_KUBECONFIG_H_

#include <string>

#include "engine/status.h"

namespace rcsim {

struct ClientConfig {
  std::string server;  // "https://host:port" or "http://host:port"
  std::string token;   // bearer token (read from tokenFile when that was given)
  std::string ca_file;
  std::string ca_data;  // PEM (decoded from base64)
  std::string client_cert_file;
  std::string client_cert_data;
  std::string client_key_file;
  std::string client_key_data;
  bool insecure_skip_tls_verify = false;
  std::string tls_server_name;  // the name the server's certificate must carry, if not the URL's host
  std::string source;           // "kubeconfig FILE (context X)" or "in-cluster", for logs
};

Result<ClientConfig> LoadKubeconfig(const std::string& path, const std::string& context = "");
Result<ClientConfig> InClusterConfig(
    const std::string& root = "/var/run/secrets/kubernetes.io/serviceaccount");

// Reads a token file: trailing whitespace removed; kInvalid if empty.
Result<std::string> ReadTokenFile(const std::string& path);

}  // namespace rcsim

#endif  // RCSIM_BACKENDS_HTTPCLIENT_KUBECONFIG_H_
