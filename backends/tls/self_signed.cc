#include "backends/tls/self_signed.h"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <boost/asio/buffer.hpp>
#include <boost/asio/ip/address.hpp>
#include <ctime>
#include <set>

namespace rcsim {
namespace {

namespace ssl = boost::asio::ssl;

constexpr long kValiditySeconds = 365L * 24 * 3600;

struct Deleter {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
  void operator()(X509* p) const { X509_free(p); }
  void operator()(BIO* p) const { BIO_free(p); }
  void operator()(X509_EXTENSION* p) const { X509_EXTENSION_free(p); }
};
template <typename T>
using Owned = std::unique_ptr<T, Deleter>;

// OpenSSL's reason for the last failure, emptying its error queue.
std::string OpenSslError(const std::string& what) {
  const unsigned long e = ERR_get_error();
  ERR_clear_error();
  char buf[256] = {0};
  if (e != 0) ERR_error_string_n(e, buf, sizeof buf);
  return what + (e != 0 ? std::string(": ") + buf : std::string());
}

bool AddExtension(X509* cert, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  Owned<X509_EXTENSION> ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str()));
  return ext != nullptr && X509_add_ext(cert, ext.get(), -1) == 1;
}

std::string Pem(BIO* bio) {
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  return n > 0 ? std::string(data, static_cast<std::size_t>(n)) : std::string();
}

}  // namespace

Result<PemCertificate> NewSelfSignedCertificate(const std::string& host,
                                                const std::vector<std::string>& hosts) {
  Owned<EVP_PKEY> key(EVP_EC_gen("P-256"));
  if (key == nullptr) return Status(Code::kInternal, OpenSslError("cannot make an EC P-256 key"));
  Owned<X509> cert(X509_new());
  if (cert == nullptr) return Status(Code::kInternal, OpenSslError("cannot make a certificate"));
  X509_set_version(cert.get(), 2);  // v3
  unsigned char serial[16];
  if (RAND_bytes(serial, sizeof serial) != 1) return Status(Code::kInternal, OpenSslError("no randomness"));
  serial[0] &= 0x7f;  // positive
  BIGNUM* bn = BN_bin2bn(serial, sizeof serial, nullptr);
  BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get()));
  BN_free(bn);
  std::time_t now = std::time(nullptr);
  X509_time_adj_ex(X509_getm_notBefore(cert.get()), 0, -3600, &now);  // an hour of clock skew
  X509_time_adj_ex(X509_getm_notAfter(cert.get()), 0, kValiditySeconds, &now);
  X509_set_pubkey(cert.get(), key.get());
  const std::string cn = host + "@" + std::to_string(static_cast<long long>(now));
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, reinterpret_cast<const unsigned char*>(cn.c_str()),
                             -1, -1, 0);
  X509_set_issuer_name(cert.get(), name);
  std::set<std::string> sans = {"DNS:localhost", "IP:127.0.0.1"};
  for (const std::string& h : hosts) {
    if (h.empty()) continue;
    boost::system::error_code ec;
    const auto ip = boost::asio::ip::make_address(h, ec);
    if (!ec && ip.is_unspecified()) continue;  // 0.0.0.0 / :: name no host a client dials
    sans.insert((ec ? "DNS:" : "IP:") + h);
  }
  std::string san;
  for (const std::string& s : sans) san += (san.empty() ? "" : ",") + s;
  if (!AddExtension(cert.get(), NID_subject_alt_name, san) ||
      !AddExtension(cert.get(), NID_basic_constraints, "critical,CA:FALSE") ||
      !AddExtension(cert.get(), NID_key_usage, "critical,digitalSignature,keyEncipherment") ||
      !AddExtension(cert.get(), NID_ext_key_usage, "serverAuth")) {
    return Status(Code::kInternal, OpenSslError("cannot add the certificate's extensions (" + san + ")"));
  }
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0) {
    return Status(Code::kInternal, OpenSslError("cannot sign the certificate"));
  }
  Owned<BIO> cert_bio(BIO_new(BIO_s_mem()));
  Owned<BIO> key_bio(BIO_new(BIO_s_mem()));
  if (cert_bio == nullptr || key_bio == nullptr || PEM_write_bio_X509(cert_bio.get(), cert.get()) != 1 ||
      PEM_write_bio_PrivateKey(key_bio.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    return Status(Code::kInternal, OpenSslError("cannot write the certificate as PEM"));
  }
  return PemCertificate{Pem(cert_bio.get()), Pem(key_bio.get())};
}

Result<std::shared_ptr<ssl::context>> NewTlsServerContextFromPem(const PemCertificate& cert) {
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                   ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 | ssl::context::no_compression);
  if (SSL_CTX_set_min_proto_version(ctx->native_handle(), TLS1_2_VERSION) != 1) {
    return Status(Code::kInternal, "OpenSSL refuses TLS 1.2 as the minimum version");
  }
  SSL_CTX_set_options(ctx->native_handle(), SSL_OP_NO_RENEGOTIATION);
  boost::system::error_code ec;
  ctx->use_certificate_chain(boost::asio::buffer(cert.cert_pem), ec);
  if (ec) return Status(Code::kInvalid, "serving certificate: " + ec.message());
  ctx->use_private_key(boost::asio::buffer(cert.key_pem), ssl::context::pem, ec);
  if (ec) return Status(Code::kInvalid, "serving key: " + ec.message());
  if (SSL_CTX_check_private_key(ctx->native_handle()) != 1) {
    ERR_clear_error();
    return Status(Code::kInvalid, "the serving key does not match its certificate");
  }
  return ctx;
}

}  // namespace rcsim
