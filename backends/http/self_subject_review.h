// Who the API server takes a request's sender to be, and the authentication.k8s.io SelfSubjectReview
// that tells them (`kubectl auth whoami`): POST /apis/authentication.k8s.io/{v1,v1beta1}/selfsubjectreviews
// answers 201 with status.userInfo {username, uid, groups}, as kube-apiserver does.
//
// Users come from a verified client certificate (CN the name, O entries the groups) or a bearer token;
// an authenticated user also gets the group "system:authenticated"; a request on a server without any
// authentication is "system:anonymous" in "system:unauthenticated".
//
// Thread-safety: free functions over values.
#ifndef RCSIM_BACKENDS_HTTP_SELF_SUBJECT_REVIEW_H_
#define RCSIM_BACKENDS_HTTP_SELF_SUBJECT_REVIEW_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backends/http/token_auth.h"

namespace rcsim {

// The user of a client certificate's subject.
TokenUser UserFromCertificate(std::string common_name, std::vector<std::string> organizations);

// The API version ("v1", "v1beta1") when `method` and `target` are a SelfSubjectReview create.
std::optional<std::string> SelfSubjectReviewVersion(std::string_view method, std::string_view target);

// The 201 body for `user` (nullopt: the anonymous user of a server without authentication).
std::string SelfSubjectReviewBody(const std::optional<TokenUser>& user, std::string_view version);

}  // namespace rcsim

#endif  // RCSIM_BACKENDS_HTTP_SELF_SUBJECT_REVIEW_H_
