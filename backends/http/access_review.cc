#include "backends/http/access_review.h"

#include <string>

#include "registry/validation.h"

namespace rcsim {
namespace {

using json = nlohmann::json;

constexpr const char* kReason = "rcsim's API server authorizes every authenticated request (no authorizer)";

json Group(const char* name) {
  const json version = {{"groupVersion", std::string(name) + "/v1"}, {"version", "v1"}};
  return {{"name", name}, {"versions", json::array({version})}, {"preferredVersion", version}};
}

json CreateOnly(const char* name, const char* kind) {
  return {{"name", name},
          {"singularName", ""},
          {"namespaced", false},
          {"kind", kind},
          {"verbs", json::array({"create"})}};
}

bool HasObject(const json& spec, const char* field) {
  auto it = spec.find(field);
  return it != spec.end() && it->is_object();
}

}  // namespace

Result<json> AnswerSelfReview(std::string_view resource, json review) {
  if (!review.is_object()) return Status(Code::kBadRequest, "the review must be an object");
  const std::string kind = resource == kAccessReviews ? "SelfSubjectAccessReview" : "SelfSubjectRulesReview";
  if (review.value("kind", kind) != kind ||
      review.value("apiVersion", "authorization.k8s.io/v1") != "authorization.k8s.io/v1") {
    return Status(Code::kBadRequest, "the body of a " + std::string(resource) +
                                         " request must be an authorization.k8s.io/v1 " + kind);
  }
  review["kind"] = kind;
  review["apiVersion"] = "authorization.k8s.io/v1";
  if (!review.contains("metadata") || !review["metadata"].is_object()) review["metadata"] = json::object();
  review["metadata"]["creationTimestamp"] = nullptr;
  if (!review.contains("spec") || !review["spec"].is_object()) review["spec"] = json::object();
  const json& spec = review["spec"];
  FieldErrors errs;
  if (resource == kAccessReviews) {
    const bool res = HasObject(spec, "resourceAttributes");
    const bool non_res = HasObject(spec, "nonResourceAttributes");
    if (res == non_res) {
      errs.Invalid("spec.resourceAttributes", res ? "both" : "none",
                   "exactly one of nonResourceAttributes or resourceAttributes must be specified");
    }
    if (Status s = errs.ToStatus(kind, ""); !s.ok()) return s;
    review["status"] = {{"allowed", true}, {"reason", kReason}};
    return review;
  }
  auto ns = spec.find("namespace");
  if (ns == spec.end() || !ns->is_string() || ns->get<std::string>().empty()) {
    errs.Required("spec.namespace");
    return errs.ToStatus(kind, "");
  }
  review["status"] = {
      {"resourceRules", json::array({{{"verbs", {"*"}}, {"apiGroups", {"*"}}, {"resources", {"*"}}}})},
      {"nonResourceRules", json::array({{{"verbs", {"*"}}, {"nonResourceURLs", {"*"}}}})},
      {"incomplete", false}};
  return review;
}

json AuthorizationGroupJson() { return Group("authorization.k8s.io"); }
json AuthenticationGroupJson() { return Group("authentication.k8s.io"); }

json AuthorizationV1ResourcesJson() {
  return {{"kind", "APIResourceList"},
          {"apiVersion", "v1"},
          {"groupVersion", "authorization.k8s.io/v1"},
          {"resources", json::array({CreateOnly("selfsubjectaccessreviews", "SelfSubjectAccessReview"),
                                     CreateOnly("selfsubjectrulesreviews", "SelfSubjectRulesReview")})}};
}

json AuthenticationV1ResourcesJson() {
  return {{"kind", "APIResourceList"},
          {"apiVersion", "v1"},
          {"groupVersion", "authentication.k8s.io/v1"},
          {"resources", json::array({CreateOnly("selfsubjectreviews", "SelfSubjectReview")})}};
}

}  // namespace rcsim
