// The authorization.k8s.io/v1 self reviews, as `kubectl auth can-i` sends them:
//   POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews  "may I <verb> <resource>?" (or a
//        non-resource path)
//   POST /apis/authorization.k8s.io/v1/selfsubjectrulesreviews   "what may I do in <namespace>?"
// This server authorizes every request it authenticates (it has no RBAC or other authorizer), so every
// review is allowed, and the rules are everything; the answer says why. The review is validated as
// kube-apiserver validates it, and answered with the object sent and its status filled in.
//
// Thread-safety: pure functions.
#ifndef RCSIM_BACKENDS_HTTP_ACCESS_REVIEW_H_
#define RCSIM_BACKENDS_HTTP_ACCESS_REVIEW_H_

#include <nlohmann/json.hpp>
#include <string_view>

#include "engine/status.h"

namespace rcsim {

inline constexpr std::string_view kAccessReviews = "selfsubjectaccessreviews";
inline constexpr std::string_view kRulesReviews = "selfsubjectrulesreviews";

// The answer to a review of `resource` (kAccessReviews or kRulesReviews): `review` with its status.
// kBadRequest for another kind or apiVersion; kInvalid (422) for a spec kube-apiserver refuses (an
// access review with both or neither of resourceAttributes and nonResourceAttributes, a rules review
// without a namespace).
Result<nlohmann::json> AnswerSelfReview(std::string_view resource, nlohmann::json review);

// The authorization.k8s.io and authentication.k8s.io entries of /apis, and their v1 resource lists
// (the self reviews; authentication's selfsubjectreviews is answered by the HTTP server, which knows
// the user).
nlohmann::json AuthorizationGroupJson();
nlohmann::json AuthenticationGroupJson();
nlohmann::json AuthorizationV1ResourcesJson();
nlohmann::json AuthenticationV1ResourcesJson();

}  // namespace rcsim

#endif  // RCSIM_BACKENDS_HTTP_ACCESS_REVIEW_H_
