// OpenSSL contexts (through Boost.Asio ssl) for the API server and its clients.
//
// Server: the certificate chain and key of kube-apiserver's --tls-cert-file / --tls-private-key-file,
// TLS 1.2 or later; with a client CA (--client-ca-file) a client certificate is requested (not
// required: a token may authenticate instead) and, when one is sent, verified against that CA; an
// invalid one fails the handshake. VerifiedPeerIdentity then gives its CN as the user and its O
// entries as the groups, as kube-apiserver's x509 authenticator does.
//
// Client: verifies the server's chain against the given CA (PEM file or data; else the system's
// trust store) and, in PrepareTlsClient, the host name (DNS SAN) or IP address (IP SAN) of the URL,
// as client-go does; insecure_skip_verify turns both checks off. A client certificate and key (file
// or data) are sent when the server asks for one.
//
// Thread-safety: a context is immutable once built and may be shared by every connection.
#ifndef RCSIM_BACKENDS_TLS_TLS_CONTEXT_H_
#define RCSIM_BACKENDS_TLS_TLS_CONTEXT_H_

#include <boost/asio/ssl/context.hpp>
#include <boost/system/error_code.hpp>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/tls/tls_config.h"
#include "engine/status.h"

namespace rcsim {

// kInvalid naming the file and OpenSSL's reason when a file cannot be loaded or the key does not
// match the certificate.
Result<std::shared_ptr<boost::asio::ssl::context>> NewTlsServerContext(const TlsServerFiles& files);

// kInvalid naming what could not be loaded (a certificate without its key, or the reverse, too).
Result<std::shared_ptr<boost::asio::ssl::context>> NewTlsClientContext(const TlsClientConfig& config);

// Before the handshake of one client connection to `host` (the URL's host, without brackets): SNI for
// a DNS name, and the name or IP address the certificate must match unless insecure_skip_verify.
Status PrepareTlsClient(SSL* ssl, const std::string& host, const TlsClientConfig& config);

// Why a handshake failed, in words: the certificate verification result when that was the cause
// ("certificate verify failed: hostname mismatch"), else the error's own message.
std::string TlsHandshakeError(SSL* ssl, const boost::system::error_code& ec);

struct PeerIdentity {
  std::string common_name;                 // the user
  std::vector<std::string> organizations;  // the groups, in certificate order
};

// The identity of the peer's certificate if it sent one and it verified; nullopt otherwise.
std::optional<PeerIdentity> VerifiedPeerIdentity(SSL* ssl);

}  // namespace rcsim

#endif  // RCSIM_BACKENDS_TLS_TLS_CONTEXT_H_
