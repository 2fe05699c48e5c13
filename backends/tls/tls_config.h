// What TLS needs, as plain values (no OpenSSL headers), for options structs: the server's files and
// a client's trust and credentials. backends/tls/tls_context.h builds OpenSSL contexts from them.
#ifndef RCSIM_BACKENDS_TLS_TLS_CONFIG_H_
#define RCSIM_BACKENDS_TLS_TLS_CONFIG_H_

#include <string>

namespace rcsim {

struct TlsServerFiles {
  std::string cert_file;       // PEM: the server certificate, then any intermediates
  std::string key_file;        // PEM private key
  std::string client_ca_file;  // PEM CA bundle; empty: no client certificates
};

struct TlsClientConfig {
  std::string ca_file;  // PEM CA bundle to verify the server with
  std::string ca_data;  // PEM text (already base64-decoded from a kubeconfig); with ca_file, both count
  std::string cert_file, cert_data;  // client certificate (chain), PEM
  std::string key_file, key_data;    // its private key, PEM
  bool insecure_skip_verify = false;
  std::string server_name;  // verify (and send as SNI) this name instead of the URL's host
};

}  // namespace rcsim

#endif  // RCSIM_BACKENDS_TLS_TLS_CONFIG_H_
