#include "engine/codec.h"

#include <gtest/gtest.h>

namespace rcsim {
namespace {

Pod SamplePod() {
  Pod pod;
  pod.metadata.name = "web-abcde";
  pod.metadata.namespace_ = "default";
  pod.metadata.uid = "u-1";
  pod.metadata.resource_version = "42";
  pod.metadata.labels = {{"app", "web"}, {"tier", "fe"}};
  pod.metadata.owner_references.push_back({"v1", "ReplicationController", "web", "rc-uid", true, true});
  pod.metadata.creation_timestamp = ParseRfc3339("2014-06-06T00:00:01Z");
  pod.spec.node_name = "node-1";
  pod.spec.containers.push_back({"web", "nginx", {"sleep", "3600"}, {}});
  pod.status.phase = phase::kRunning;
  pod.status.conditions.push_back({"Ready", "True", ParseRfc3339("2014-06-06T00:00:02Z"), "", ""});
  pod.status.container_statuses.push_back({"web", true, 3});
  return pod;
}

TEST(CodecTest, PodRoundTrips) {
  Pod pod = SamplePod();
  auto back = DecodePod(EncodePod(pod));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, pod);
}

TEST(CodecTest, PodUsesCoreV1FieldNames) {
  auto j = PodToJson(SamplePod());
  EXPECT_EQ(j["kind"], "Pod");
  EXPECT_EQ(j["apiVersion"], "v1");
  EXPECT_EQ(j["metadata"]["resourceVersion"], "42");
  EXPECT_EQ(j["metadata"]["ownerReferences"][0]["blockOwnerDeletion"], true);
  EXPECT_EQ(j["spec"]["nodeName"], "node-1");
  EXPECT_EQ(j["status"]["containerStatuses"][0]["restartCount"], 3);
  EXPECT_EQ(j["metadata"]["creationTimestamp"], "2014-06-06T00:00:01Z");
}

TEST(CodecTest, ControllerRoundTrips) {
  ReplicationController rc;
  rc.metadata.name = "web";
  rc.metadata.namespace_ = "default";
  rc.metadata.generation = 3;
  rc.spec.replicas = 7;
  rc.spec.selector = {{"app", "web"}};
  rc.spec.template_ = PodTemplateSpec{};
  rc.spec.template_->metadata.labels = {{"app", "web"}};
  rc.spec.template_->spec.containers.push_back({"web", "nginx", {}, {}});
  rc.status.replicas = 5;
  rc.status.ready_replicas = 4;
  rc.status.observed_generation = 3;
  auto back = DecodeController(EncodeController(rc));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, rc);
}

TEST(CodecTest, WrongTypeNamesTheField) {
  auto r = DecodeController(R"({"kind":"ReplicationController","spec":{"replicas":"three"}})");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kBadRequest);
  EXPECT_NE(r.status().message().find("spec.replicas"), std::string::npos) << r.status().message();
}

TEST(CodecTest, WrongKindIsRefused) {
  auto r = DecodePod(R"({"kind":"ReplicationController","metadata":{"name":"x"}})");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("kind"), std::string::npos);
}

TEST(CodecTest, MalformedJsonIsAnErrorNotACrash) {
  for (const char* bad : {"", "{", "[1,2", "null", "42", R"({"metadata":[]})",
                          R"({"spec":{"containers":[1]}})", R"({"metadata":{"labels":{"a":1}}})"}) {
    auto r = DecodePod(bad);
    EXPECT_FALSE(r.ok()) << bad;
  }
}

TEST(CodecTest, StatusCarriesKubernetesShape) {
  Status s(Code::kInvalid, "ReplicationController \"web\" is invalid",
           {{"spec.replicas", "FieldValueInvalid", "must be greater than or equal to 0"}});
  auto j = StatusToJson(s);
  EXPECT_EQ(j["kind"], "Status");
  EXPECT_EQ(j["code"], 422);
  EXPECT_EQ(j["reason"], "Invalid");
  EXPECT_EQ(j["details"]["causes"][0]["field"], "spec.replicas");
  EXPECT_EQ(HttpCodeOf(Code::kAlreadyExists), 409);
  EXPECT_EQ(HttpCodeOf(Code::kGone), 410);
}

}  // namespace
}  // namespace rcsim
