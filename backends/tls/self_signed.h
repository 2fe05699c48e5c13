// A self-signed serving certificate made in memory, as kube-controller-manager makes one when it is
// given no --tls-cert-file / --tls-private-key-file (k8s.io/client-go's cert.GenerateSelfSignedCertKey):
// an EC P-256 key and a certificate signed by it, valid for a year, CN "<host>@<unix seconds>", SANs
// DNS:localhost, IP:127.0.0.1 and each of `hosts` (an IP address or a DNS name). Clients verify it
// only by trusting it explicitly (or skip verification), as with kube-controller-manager's.
//
// Thread-safety: the functions are thread-safe; a context is immutable once built.
#ifndef RCSIM_BACKENDS_TLS_SELF_SIGNED_H_
#define RCSIM_BACKENDS_TLS_SELF_SIGNED_H_

#include <boost/asio/ssl/context.hpp>
#include <memory>
#include <string>
#include <vector>

#include "engine/status.h"

namespace rcsim {

struct PemCertificate {
  std::string cert_pem;
  std::string key_pem;
};

Result<PemCertificate> NewSelfSignedCertificate(const std::string& host,
                                                const std::vector<std::string>& hosts);

// A server context (TLS 1.2 or later, as NewTlsServerContext) serving `cert` and no client certificates;
// kInvalid if the PEM does not load or the key does not match.
Result<std::shared_ptr<boost::asio::ssl::context>> NewTlsServerContextFromPem(const PemCertificate& cert);

}  // namespace rcsim

#endif  // RCSIM_BACKENDS_TLS_SELF_SIGNED_H_
