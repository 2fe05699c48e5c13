#include "engine/json_depth.h"

#include <gtest/gtest.h>

#include <string>

namespace rcsim {
namespace {

std::string Nested(int depth, char open = '[', char close = ']') {
  return std::string(depth, open) + std::string(depth, close);
}

TEST(JsonNestingDepthTest, CountsArraysAndObjects) {
  EXPECT_EQ(JsonNestingDepth("1"), 0);
  EXPECT_EQ(JsonNestingDepth("\"x\""), 0);
  EXPECT_EQ(JsonNestingDepth("[]"), 1);
  EXPECT_EQ(JsonNestingDepth(R"({"a":[{"b":[1,2]},{}],"c":{}})"), 4);
  EXPECT_EQ(JsonNestingDepth(Nested(50)), 50);
}

TEST(JsonNestingDepthTest, IgnoresBracketsInsideStrings) {
  EXPECT_EQ(JsonNestingDepth(R"({"a":"[[[[{{{{"})"), 1);
  EXPECT_EQ(JsonNestingDepth(R"({"a\"[[[":"\\"})"), 1);  // escaped quote, then an escaped backslash
  EXPECT_EQ(JsonNestingDepth(R"(["\\\"[[", [1]])"), 2);
}

TEST(JsonNestingDepthTest, StopsCountingPastTheLimit) {
  EXPECT_EQ(JsonNestingDepth(Nested(70000), 1000), 1001);
  EXPECT_EQ(JsonNestingDepth(Nested(1000), 1000), 1000);
}

// Finding 1 (the API server died of a stack overflow on a body ~70k levels deep): the bound is
// checked before the document is built.
TEST(ParseBoundedJsonTest, DeeplyNestedBodyIsBadRequestNotACrash) {
  const std::string body = "{\"kind\":" + Nested(70000) + "}";
  auto r = ParseBoundedJson(body, "the request body");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kBadRequest);
  EXPECT_EQ(r.status().message(), "the request body nests deeper than 1000 levels");
  auto objects = ParseBoundedJson(Nested(5000, '{', '}'), "x");
  EXPECT_EQ(objects.status().code(), Code::kBadRequest);
}

TEST(ParseBoundedJsonTest, AcceptsDocumentsAtTheLimitAndRejectsMalformedOnes) {
  auto at_limit = ParseBoundedJson(Nested(kMaxJsonDepth), "x");
  ASSERT_TRUE(at_limit.ok()) << at_limit.status().ToString();
  EXPECT_FALSE(at_limit->dump().empty());  // the recursive walks fit at the limit
  auto bad = ParseBoundedJson("{\"a\":", "the patch body");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "the patch body is not valid JSON");
  auto ok = ParseBoundedJson(R"({"a":[1,{"b":"]]"}]})", "x");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ((*ok)["a"][1]["b"], "]]");
}

}  // namespace
}  // namespace rcsim
