#include "backends/http/access_review.h"

#include <gtest/gtest.h>

namespace rcsim {
namespace {

using json = nlohmann::json;

TEST(AccessReviewTest, AnAccessReviewIsAllowedAndEchoesItsSpec) {
  const json review = {{"apiVersion", "authorization.k8s.io/v1"},
                       {"kind", "SelfSubjectAccessReview"},
                       {"spec", {{"resourceAttributes", {{"verb", "create"}, {"resource", "pods"}}}}}};
  Result<json> answer = AnswerSelfReview(kAccessReviews, review);
  ASSERT_TRUE(answer.ok()) << answer.status().ToString();
  EXPECT_EQ((*answer)["status"]["allowed"], true);
  EXPECT_FALSE((*answer)["status"]["reason"].get<std::string>().empty());
  EXPECT_EQ((*answer)["spec"], review["spec"]);
}

TEST(AccessReviewTest, AnAccessReviewNeedsExactlyOneKindOfAttributes) {
  json both = {{"spec", {{"resourceAttributes", json::object()}, {"nonResourceAttributes", json::object()}}}};
  EXPECT_EQ(AnswerSelfReview(kAccessReviews, both).status().code(), Code::kInvalid);
  EXPECT_EQ(AnswerSelfReview(kAccessReviews, json::object()).status().code(), Code::kInvalid);
  json other = {{"kind", "SubjectAccessReview"}, {"spec", {{"nonResourceAttributes", json::object()}}}};
  EXPECT_EQ(AnswerSelfReview(kAccessReviews, other).status().code(), Code::kBadRequest);
  EXPECT_EQ(AnswerSelfReview(kAccessReviews, json::array()).status().code(), Code::kBadRequest);
}

TEST(AccessReviewTest, ARulesReviewNeedsANamespaceAndGrantsEverything) {
  EXPECT_EQ(AnswerSelfReview(kRulesReviews, json::object()).status().code(), Code::kInvalid);
  Result<json> answer = AnswerSelfReview(kRulesReviews, {{"spec", {{"namespace", "default"}}}});
  ASSERT_TRUE(answer.ok()) << answer.status().ToString();
  EXPECT_EQ((*answer)["kind"], "SelfSubjectRulesReview");
  EXPECT_EQ((*answer)["status"]["resourceRules"][0]["verbs"], json::array({"*"}));
  EXPECT_EQ((*answer)["status"]["nonResourceRules"][0]["nonResourceURLs"], json::array({"*"}));
  EXPECT_EQ((*answer)["status"]["incomplete"], false);
}

}  // namespace
}  // namespace rcsim
