#include "backends/http/strategic_merge.h"

#include <gtest/gtest.h>

namespace rcsim {
namespace {

using json = nlohmann::json;

const json kRc = json::parse(R"({"kind":"ReplicationController","apiVersion":"v1",
  "metadata":{"name":"web","labels":{"app":"web"},"finalizers":["a"]},
  "spec":{"replicas":2,"selector":{"app":"web"},"template":{"metadata":{"labels":{"app":"web"}},
    "spec":{"containers":[
      {"name":"web","image":"nginx:1","command":["nginx"],
       "ports":[{"containerPort":80,"name":"http"},{"containerPort":443,"name":"https"}],
       "env":[{"name":"A","value":"1"},{"name":"B","value":"2"}],
       "volumeMounts":[{"name":"data","mountPath":"/data"}],
       "resources":{"limits":{"cpu":"1","memory":"1Gi"}}}],
     "volumes":[{"name":"data","emptyDir":{}}],
     "tolerations":[{"key":"a","operator":"Exists"}]}}}})");

json Patch(const char* patch) {
  auto r = StrategicMergePatch(kRc, json::parse(patch), "V1ReplicationController");
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : json();
}

const json& Container(const json& rc, std::size_t i = 0) {
  return rc["spec"]["template"]["spec"]["containers"][i];
}

// Issue 8: an apply changing one image failed or dropped `command`.
TEST(StrategicMergeTest, ChangingOneImageKeepsEverythingElse) {
  json r = Patch(R"({"spec":{"template":{"spec":{"containers":[{"name":"web","image":"nginx:2"}]}}}})");
  EXPECT_EQ(Container(r)["image"], "nginx:2");
  EXPECT_EQ(Container(r)["command"], json::array({"nginx"}));
  EXPECT_EQ(Container(r)["ports"].size(), 2u);
  EXPECT_EQ(r["spec"]["template"]["spec"]["volumes"], kRc["spec"]["template"]["spec"]["volumes"]);
}

// Issue 8: a patch adding a sidecar replaced the containers list.
TEST(StrategicMergeTest, AddingASidecarMergesContainersByName) {
  json r = Patch(R"({"spec":{"template":{"spec":{"containers":[{"name":"log","image":"busybox"}]}}}})");
  const json& cs = r["spec"]["template"]["spec"]["containers"];
  ASSERT_EQ(cs.size(), 2u);
  EXPECT_EQ(cs[0]["name"], "web");
  EXPECT_EQ(cs[0]["image"], "nginx:1");
  EXPECT_EQ(cs[1]["name"], "log");
}

TEST(StrategicMergeTest, PortsMergeByContainerPortEnvByNameMountsByMountPath) {
  json r = Patch(R"({"spec":{"template":{"spec":{"containers":[{"name":"web",
      "ports":[{"containerPort":443,"name":"tls"},{"containerPort":8080}],
      "env":[{"name":"B","value":"20"},{"name":"C","value":"3"}],
      "volumeMounts":[{"mountPath":"/data","readOnly":true}]}]}}}})");
  const json& c = Container(r);
  ASSERT_EQ(c["ports"].size(), 3u);
  EXPECT_EQ(c["ports"][0], json::parse(R"({"containerPort":80,"name":"http"})"));
  EXPECT_EQ(c["ports"][1], json::parse(R"({"containerPort":443,"name":"tls"})"));
  EXPECT_EQ(c["ports"][2], json::parse(R"({"containerPort":8080})"));
  EXPECT_EQ(c["env"],
            json::parse(R"([{"name":"A","value":"1"},{"name":"B","value":"20"},{"name":"C","value":"3"}])"));
  EXPECT_EQ(c["volumeMounts"], json::parse(R"([{"name":"data","mountPath":"/data","readOnly":true}])"));
}

TEST(StrategicMergeTest, ListsWithoutAMergeStrategyAreReplaced) {
  json r = Patch(R"({"spec":{"template":{"spec":{"tolerations":[{"key":"b","operator":"Exists"}],
      "containers":[{"name":"web","command":["sh"]}]}}}})");
  EXPECT_EQ(r["spec"]["template"]["spec"]["tolerations"],
            json::parse(R"([{"key":"b","operator":"Exists"}])"));
  EXPECT_EQ(Container(r)["command"], json::array({"sh"}));
}

TEST(StrategicMergeTest, PatchDeleteRemovesAnElementByKey) {
  json r = Patch(R"({"spec":{"template":{"spec":{"containers":[{"name":"web",
      "env":[{"name":"A","$patch":"delete"}],"ports":[{"containerPort":80,"$patch":"delete"}]}]}}}})");
  EXPECT_EQ(Container(r)["env"], json::parse(R"([{"name":"B","value":"2"}])"));
  EXPECT_EQ(Container(r)["ports"], json::parse(R"([{"containerPort":443,"name":"https"}])"));
}

TEST(StrategicMergeTest, PatchReplaceOnAListAndOnAMap) {
  json r = Patch(
      R"({"spec":{"template":{"spec":{"containers":[{"$patch":"replace"},{"name":"only","image":"x"}]}}}})");
  EXPECT_EQ(r["spec"]["template"]["spec"]["containers"], json::parse(R"([{"name":"only","image":"x"}])"));
  json m = Patch(R"({"spec":{"template":{"spec":{"containers":[{"name":"web",
      "resources":{"$patch":"replace","limits":{"cpu":"2"}}}]}}}})");
  EXPECT_EQ(Container(m)["resources"], json::parse(R"({"limits":{"cpu":"2"}})"));
  json d = Patch(
      R"({"spec":{"template":{"spec":{"containers":[{"name":"web","resources":{"$patch":"delete"}}]}}}})");
  EXPECT_FALSE(Container(d).contains("resources"));
}

TEST(StrategicMergeTest, NullDeletesAKeyAndMapsMerge) {
  json r = Patch(R"({"metadata":{"labels":{"app":null,"tier":"fe"}},
      "spec":{"template":{"spec":{"containers":[{"name":"web","resources":{"limits":{"memory":null}}}]}}}})");
  EXPECT_EQ(r["metadata"]["labels"], json::parse(R"({"tier":"fe"})"));
  EXPECT_EQ(Container(r)["resources"]["limits"], json::parse(R"({"cpu":"1"})"));
}

TEST(StrategicMergeTest, SetElementOrderOrdersTheMergedList) {
  json r = Patch(R"({"spec":{"template":{"spec":{
      "$setElementOrder/containers":[{"name":"log"},{"name":"web"}],
      "containers":[{"name":"log","image":"busybox"}]}}}})");
  const json& cs = r["spec"]["template"]["spec"]["containers"];
  ASSERT_EQ(cs.size(), 2u);
  EXPECT_EQ(cs[0]["name"], "log");
  EXPECT_EQ(cs[1]["name"], "web");
  EXPECT_FALSE(r["spec"]["template"]["spec"].contains("$setElementOrder/containers"));
  json e = Patch(R"({"spec":{"template":{"spec":{"containers":[{"name":"web",
      "$setElementOrder/env":[{"name":"B"},{"name":"A"}]}]}}}})");
  EXPECT_EQ(Container(e)["env"][0]["name"], "B");
}

TEST(StrategicMergeTest, RetainKeysClearsTheOtherKeysOfAVolume) {
  json r = Patch(R"({"spec":{"template":{"spec":{"volumes":[{"name":"data",
      "$retainKeys":["name","hostPath"],"hostPath":{"path":"/srv"}}]}}}})");
  EXPECT_EQ(r["spec"]["template"]["spec"]["volumes"],
            json::parse(R"([{"name":"data","hostPath":{"path":"/srv"}}])"));
}

TEST(StrategicMergeTest, PrimitiveListsMergeAsSetsAndDeleteFromPrimitiveList) {
  json r = Patch(R"({"metadata":{"finalizers":["b","a"]}})");
  EXPECT_EQ(r["metadata"]["finalizers"], json::array({"a", "b"}));
  json d = Patch(R"({"metadata":{"$deleteFromPrimitiveList/finalizers":["a"]}})");
  EXPECT_EQ(d["metadata"]["finalizers"], json::array());
}

TEST(StrategicMergeTest, MalformedPatchesAreBadRequests) {
  for (const char* bad :
       {R"({"spec":{"template":{"spec":{"containers":[{"image":"no-name"}]}}}})",
        R"({"spec":{"template":{"spec":{"containers":[7]}}}})", R"({"metadata":{"$patch":"frobnicate"}})",
        R"({"metadata":{"$retainKeys":"x"}})", R"({"$patch":"delete"})", R"([1])"}) {
    auto r = StrategicMergePatch(kRc, json::parse(bad), "V1ReplicationController");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), Code::kBadRequest) << bad;
  }
}

}  // namespace
}  // namespace rcsim
