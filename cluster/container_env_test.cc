#include "cluster/container_env.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace rcsim {
namespace {

TEST(ContainerEnvTest, ValuesAndTheDownwardApiInSpecOrderLaterNamesWin) {
  Pod pod;
  pod.metadata.name = "web-1";
  pod.metadata.namespace_ = "shop";
  pod.metadata.uid = "u-1";
  pod.spec.node_name = "node-2";
  Container c;
  c.name = "main";
  c.unknown_fields = UnknownFields(nlohmann::json::parse(R"({"env": [
    {"name": "GREETING", "value": "hello"},
    {"name": "MY_POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
    {"name": "MY_NS", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}},
    {"name": "MY_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
    {"name": "HOST", "valueFrom": {"fieldRef": {"fieldPath": "status.hostIP"}}},
    {"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
    {"name": "SA", "valueFrom": {"fieldRef": {"fieldPath": "spec.serviceAccountName"}}},
    {"name": "SECRET", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}},
    {"name": "LABEL", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['app']"}}},
    {"name": "EMPTY"},
    {"name": "GREETING", "value": "hi again"}
  ]})"));
  const EnvVars env = ContainerEnv(pod, c, "10.244.2.7", "127.0.0.1");
  const EnvVars want = {{"MY_POD", "web-1"},   {"MY_NS", "shop"},       {"MY_IP", "10.244.2.7"},
                        {"HOST", "127.0.0.1"}, {"NODE", "node-2"},      {"SA", "default"},
                        {"EMPTY", ""},         {"GREETING", "hi again"}};
  EXPECT_EQ(env, want);
  EXPECT_TRUE(ContainerEnv(pod, Container{}, "", "").empty());
}

}  // namespace
}  // namespace rcsim
