// Bearer-token authentication for the API server, as kube-apiserver's --token-auth-file: a CSV file
// with lines `token,user,uid[,"group1,group2"]` (blank lines and lines starting with '#' skipped), and
// the bare token file of --token-file (one token, user "admin").
//
// Authenticate() takes the Authorization header: the scheme "Bearer" in any letter case (RFC 7235),
// one or more spaces, the token; every known token is compared in constant time.
//
// Thread-safety: immutable after construction; Authenticate may be called concurrently.
#ifndef RCSIM_BACKENDS_HTTP_TOKEN_AUTH_H_
#define RCSIM_BACKENDS_HTTP_TOKEN_AUTH_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/status.h"

namespace rcsim {

struct TokenUser {
  std::string name;
  std::string uid;
  std::vector<std::string> groups;
};

class TokenAuthenticator {
 public:
  // kNotFound if unreadable; kInvalid naming the line for a malformed one or a duplicate token.
  static Result<TokenAuthenticator> FromCsvFile(const std::string& path);
  static Result<TokenAuthenticator> FromCsv(std::string_view text, const std::string& source);

  void Add(std::string token, TokenUser user);
  bool empty() const { return entries_.empty(); }
  // The user of a valid "Bearer <token>" header, or nullopt.
  std::optional<TokenUser> Authenticate(std::string_view authorization) const;

 private:
  struct Entry {
    std::string token;
    TokenUser user;
  };
  std::vector<Entry> entries_;
};

// Paths any client may GET without a token, as kube-apiserver allows them to system:unauthenticated:
// /healthz, /livez, /readyz (and their sub-paths).
bool IsUnauthenticatedPath(std::string_view target);

}  // namespace rcsim

#endif  // RCSIM_BACKENDS_HTTP_TOKEN_AUTH_H_
