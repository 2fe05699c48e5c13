#include "backends/http/self_subject_review.h"

#include <nlohmann/json.hpp>

namespace rcsim {

TokenUser UserFromCertificate(std::string common_name, std::vector<std::string> organizations) {
  return TokenUser{std::move(common_name), "", std::move(organizations)};
}

std::optional<std::string> SelfSubjectReviewVersion(std::string_view method, std::string_view target) {
  if (method != "POST") return std::nullopt;
  const std::string_view path = target.substr(0, target.find('?'));
  constexpr std::string_view kPrefix = "/apis/authentication.k8s.io/";
  constexpr std::string_view kSuffix = "/selfsubjectreviews";
  if (path.size() <= kPrefix.size() + kSuffix.size() || path.substr(0, kPrefix.size()) != kPrefix ||
      path.substr(path.size() - kSuffix.size()) != kSuffix) {
    return std::nullopt;
  }
  const std::string_view version = path.substr(kPrefix.size(), path.size() - kPrefix.size() - kSuffix.size());
  if (version != "v1" && version != "v1beta1" && version != "v1alpha1") return std::nullopt;
  return std::string(version);
}

std::string SelfSubjectReviewBody(const std::optional<TokenUser>& user, std::string_view version) {
  nlohmann::json info;
  if (user) {
    info["username"] = user->name;
    if (!user->uid.empty()) info["uid"] = user->uid;
    nlohmann::json groups = user->groups;
    groups.push_back("system:authenticated");
    info["groups"] = std::move(groups);
  } else {
    info["username"] = "system:anonymous";
    info["groups"] = {"system:unauthenticated"};
  }
  nlohmann::json review = {{"kind", "SelfSubjectReview"},
                           {"apiVersion", "authentication.k8s.io/" + std::string(version)},
                           {"metadata", {{"creationTimestamp", nullptr}}},
                           {"status", {{"userInfo", std::move(info)}}}};
  return review.dump();
}

}  // namespace rcsim
