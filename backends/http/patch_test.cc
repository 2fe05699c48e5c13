#include "backends/http/patch.h"

#include <gtest/gtest.h>

namespace rcsim {
namespace {

using json = nlohmann::json;

const json kTarget = {{"metadata", {{"name", "a"}, {"labels", {{"x", "1"}, {"y", "2"}}}}},
                      {"spec", {{"containers", json::array({{{"name", "c"}}})}}}};

TEST(PatchTest, ContentTypes) {
  PatchType t;
  EXPECT_TRUE(PatchTypeOf("application/merge-patch+json", &t));
  EXPECT_EQ(t, PatchType::kMerge);
  EXPECT_TRUE(PatchTypeOf("application/strategic-merge-patch+json; charset=utf-8", &t));
  EXPECT_EQ(t, PatchType::kStrategicMerge);
  EXPECT_TRUE(PatchTypeOf("application/json-patch+json", &t));
  EXPECT_EQ(t, PatchType::kJsonPatch);
  EXPECT_TRUE(PatchTypeOf("application/apply-patch+yaml", &t));
  EXPECT_EQ(t, PatchType::kApply);
  EXPECT_FALSE(PatchTypeOf("application/json", &t));
}

TEST(PatchTest, MergePatchMergesMapsAndDeletesNulls) {
  Result<json> r = ApplyPatch(kTarget, PatchType::kMerge, R"({"metadata":{"labels":{"x":null,"z":"3"}}})");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)["metadata"]["labels"], json({{"y", "2"}, {"z", "3"}}));
  EXPECT_EQ((*r)["spec"], kTarget["spec"]);
}

TEST(PatchTest, StrategicMergeWithoutASchemaDropsDirectivesAndReplacesLists) {
  Result<json> r = ApplyPatch(
      kTarget, PatchType::kStrategicMerge,
      R"({"$setElementOrder/containers":[{"name":"d"}],"spec":{"containers":[{"name":"d","$patch":"replace"}]}})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->contains("$setElementOrder/containers"));
  EXPECT_EQ((*r)["spec"]["containers"], json::array({{{"name", "d"}}}));
}

TEST(PatchTest, JsonPatch) {
  Result<json> r = ApplyPatch(kTarget, PatchType::kJsonPatch,
                              R"([{"op":"replace","path":"/metadata/labels/x","value":"9"}])");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)["metadata"]["labels"]["x"], "9");
}

TEST(PatchTest, BadPatchesAreErrorsNotExceptions) {
  EXPECT_EQ(ApplyPatch(kTarget, PatchType::kMerge, "{").status().code(), Code::kBadRequest);
  EXPECT_EQ(ApplyPatch(kTarget, PatchType::kMerge, "[1]").status().code(), Code::kBadRequest);
  EXPECT_EQ(ApplyPatch(kTarget, PatchType::kJsonPatch, "{}").status().code(), Code::kBadRequest);
  EXPECT_EQ(ApplyPatch(kTarget, PatchType::kJsonPatch, R"([{"path":"/a"}])").status().code(),
            Code::kBadRequest);
  EXPECT_EQ(
      ApplyPatch(kTarget, PatchType::kJsonPatch, R"([{"op":"remove","path":"/nope/x"}])").status().code(),
      Code::kInvalid);
  EXPECT_EQ(
      ApplyPatch(kTarget, PatchType::kJsonPatch, R"([{"op":"frobnicate","path":"/a"}])").status().code(),
      Code::kInvalid);
}

}  // namespace
}  // namespace rcsim
