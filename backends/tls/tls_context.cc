#include "backends/tls/tls_context.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <boost/asio/buffer.hpp>
#include <boost/asio/ip/address.hpp>

namespace rcsim {
namespace {

namespace ssl = boost::asio::ssl;
using ErrorCode = boost::system::error_code;

Status Invalid(const std::string& what, const ErrorCode& ec) {
  return Status(Code::kInvalid, what + ": " + ec.message());
}

// TLS 1.2 and 1.3 only, as kube-apiserver's default minimum; no compression or renegotiation.
Status Harden(ssl::context& ctx) {
  ctx.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                  ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 | ssl::context::no_compression);
  if (SSL_CTX_set_min_proto_version(ctx.native_handle(), TLS1_2_VERSION) != 1) {
    return Status(Code::kInternal, "OpenSSL refuses TLS 1.2 as the minimum version");
  }
  SSL_CTX_set_options(ctx.native_handle(), SSL_OP_NO_RENEGOTIATION);
  return Status::Ok();
}

std::string Utf8(const ASN1_STRING* s) {
  unsigned char* out = nullptr;
  const int n = ASN1_STRING_to_UTF8(&out, s);
  if (n < 0) return std::string();
  std::string text(reinterpret_cast<const char*>(out), static_cast<std::size_t>(n));
  OPENSSL_free(out);
  return text;
}

}  // namespace

Result<std::shared_ptr<ssl::context>> NewTlsServerContext(const TlsServerFiles& files) {
  if (files.cert_file.empty() || files.key_file.empty()) {
    return Status(Code::kInvalid, "TLS serving needs both a certificate file and a private key file");
  }
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
  if (Status s = Harden(*ctx); !s.ok()) return s;
  ErrorCode ec;
  ctx->use_certificate_chain_file(files.cert_file, ec);
  if (ec) return Invalid("certificate file " + files.cert_file, ec);
  ctx->use_private_key_file(files.key_file, ssl::context::pem, ec);
  if (ec) return Invalid("private key file " + files.key_file, ec);
  if (SSL_CTX_check_private_key(ctx->native_handle()) != 1) {
    ERR_clear_error();
    return Status(Code::kInvalid,
                  "private key " + files.key_file + " does not match certificate " + files.cert_file);
  }
  if (!files.client_ca_file.empty()) {
    ctx->load_verify_file(files.client_ca_file, ec);
    if (ec) return Invalid("client CA file " + files.client_ca_file, ec);
    // Name the acceptable CAs in the CertificateRequest: Go clients (kubectl) send a certificate
    // only when its issuer is listed.
    STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(files.client_ca_file.c_str());
    if (names == nullptr) {
      ERR_clear_error();
      return Status(Code::kInvalid, "client CA file " + files.client_ca_file + ": no certificates in it");
    }
    SSL_CTX_set_client_CA_list(ctx->native_handle(), names);
    ctx->set_verify_mode(ssl::verify_peer);  // ask, do not require: a token may authenticate instead
  } else {
    ctx->set_verify_mode(ssl::verify_none);
  }
  return ctx;
}

Result<std::shared_ptr<ssl::context>> NewTlsClientContext(const TlsClientConfig& c) {
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_client);
  if (Status s = Harden(*ctx); !s.ok()) return s;
  ErrorCode ec;
  if (c.ca_file.empty() && c.ca_data.empty()) {
    ctx->set_default_verify_paths(ec);
    if (ec) return Invalid("the system's trusted CAs", ec);
  }
  if (!c.ca_file.empty()) {
    ctx->load_verify_file(c.ca_file, ec);
    if (ec) return Invalid("certificate-authority " + c.ca_file, ec);
  }
  if (!c.ca_data.empty()) {
    ctx->add_certificate_authority(boost::asio::buffer(c.ca_data), ec);
    if (ec) return Invalid("certificate-authority-data", ec);
  }
  const bool has_cert = !c.cert_file.empty() || !c.cert_data.empty();
  const bool has_key = !c.key_file.empty() || !c.key_data.empty();
  if (has_cert != has_key) {
    return Status(Code::kInvalid, has_cert ? "a client certificate is given without its client key"
                                           : "a client key is given without its client certificate");
  }
  if (!c.cert_data.empty()) {
    ctx->use_certificate_chain(boost::asio::buffer(c.cert_data), ec);
    if (ec) return Invalid("client-certificate-data", ec);
  } else if (!c.cert_file.empty()) {
    ctx->use_certificate_chain_file(c.cert_file, ec);
    if (ec) return Invalid("client-certificate " + c.cert_file, ec);
  }
  if (!c.key_data.empty()) {
    ctx->use_private_key(boost::asio::buffer(c.key_data), ssl::context::pem, ec);
    if (ec) return Invalid("client-key-data", ec);
  } else if (!c.key_file.empty()) {
    ctx->use_private_key_file(c.key_file, ssl::context::pem, ec);
    if (ec) return Invalid("client-key " + c.key_file, ec);
  }
  if (has_cert && SSL_CTX_check_private_key(ctx->native_handle()) != 1) {
    ERR_clear_error();
    return Status(Code::kInvalid, "the client key does not match the client certificate");
  }
  ctx->set_verify_mode(c.insecure_skip_verify ? ssl::verify_none : ssl::verify_peer);
  return ctx;
}

Status PrepareTlsClient(SSL* ssl, const std::string& host, const TlsClientConfig& config) {
  const std::string& name = config.server_name.empty() ? host : config.server_name;
  ErrorCode ec;
  boost::asio::ip::make_address(name, ec);
  const bool is_ip = !ec;
  // SNI carries names only (RFC 6066), as Go's client does.
  if (!is_ip && SSL_set_tlsext_host_name(ssl, name.c_str()) != 1) {
    ERR_clear_error();
    return Status(Code::kInvalid, "cannot send \"" + name + "\" as the TLS server name");
  }
  if (config.insecure_skip_verify) return Status::Ok();
  const int set = is_ip ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), name.c_str())
                        : SSL_set1_host(ssl, name.c_str());
  if (set != 1) {
    ERR_clear_error();
    return Status(Code::kInvalid, "cannot verify the server as \"" + name + "\"");
  }
  return Status::Ok();
}

std::string TlsHandshakeError(SSL* ssl, const ErrorCode& ec) {
  if (ssl != nullptr) {
    const long result = SSL_get_verify_result(ssl);
    if (result != X509_V_OK) {
      return std::string("certificate verify failed: ") + X509_verify_cert_error_string(result);
    }
  }
  return ec.message();
}

std::optional<PeerIdentity> VerifiedPeerIdentity(SSL* ssl) {
  if (ssl == nullptr) return std::nullopt;
  X509* cert = SSL_get1_peer_certificate(ssl);
  if (cert == nullptr) return std::nullopt;
  std::optional<PeerIdentity> out;
  if (SSL_get_verify_result(ssl) == X509_V_OK) {
    PeerIdentity id;
    const X509_NAME* subject = X509_get_subject_name(cert);
    for (int i = X509_NAME_get_index_by_NID(subject, NID_commonName, -1); i >= 0 && id.common_name.empty();
         i = X509_NAME_get_index_by_NID(subject, NID_commonName, i)) {
      id.common_name = Utf8(X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, i)));
    }
    for (int i = X509_NAME_get_index_by_NID(subject, NID_organizationName, -1); i >= 0;
         i = X509_NAME_get_index_by_NID(subject, NID_organizationName, i)) {
      std::string o = Utf8(X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, i)));
      if (!o.empty()) id.organizations.push_back(std::move(o));
    }
    // kube-apiserver refuses a certificate without a CN ("x509: subject with cn=\"\" ...").
    if (!id.common_name.empty()) out = std::move(id);
  }
  X509_free(cert);
  return out;
}

}  // namespace rcsim
