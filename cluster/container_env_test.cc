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

TEST(ContainerEnvTest, ExecReadinessProbeWithTheKubeletsDefaults) {
  Container c;
  EXPECT_FALSE(ExecReadinessProbe(c));  // none: ready once started
  c.unknown_fields = UnknownFields(nlohmann::json::parse(R"({"readinessProbe": {"httpGet": {"port": 80}}})"));
  EXPECT_FALSE(ExecReadinessProbe(c));  // not run: ready once started
  c.unknown_fields = UnknownFields(
      nlohmann::json::parse(R"({"readinessProbe": {"exec": {"command": ["test", "-f", "ready"]}}})"));
  std::optional<ExecProbe> p = ExecReadinessProbe(c);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->command, (std::vector<std::string>{"test", "-f", "ready"}));
  EXPECT_EQ(p->initial_delay, Duration::zero());
  EXPECT_EQ(p->period, std::chrono::seconds(10));
  EXPECT_EQ(p->timeout, std::chrono::seconds(1));
  EXPECT_EQ(p->success_threshold, 1);
  EXPECT_EQ(p->failure_threshold, 3);
  c.unknown_fields = UnknownFields(nlohmann::json::parse(R"({"readinessProbe": {"exec": {"command": ["true"]},
    "initialDelaySeconds": 2, "periodSeconds": 0, "timeoutSeconds": 5, "successThreshold": 2,
    "failureThreshold": 1}})"));
  p = ExecReadinessProbe(c);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->initial_delay, std::chrono::seconds(2));
  EXPECT_EQ(p->period, std::chrono::seconds(1));  // at least 1
  EXPECT_EQ(p->timeout, std::chrono::seconds(5));
  EXPECT_EQ(p->success_threshold, 2);
  EXPECT_EQ(p->failure_threshold, 1);
}

}  // namespace
}  // namespace rcsim
