#include "registry/validation.h"

#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace rcsim {
namespace {

Pod ValidPod() {
  Pod pod;
  pod.metadata.name = "web-1";
  pod.metadata.namespace_ = "default";
  pod.metadata.labels = {{"app", "web"}};
  pod.spec.containers.push_back(Container{"main", "nginx", {}, {}});
  return pod;
}

ReplicationController ValidController() {
  ReplicationController rc;
  rc.metadata.name = "web";
  rc.metadata.namespace_ = "default";
  rc.spec.replicas = 2;
  rc.spec.selector = {{"app", "web"}};
  PodTemplateSpec t;
  t.metadata.labels = {{"app", "web"}, {"tier", "front"}};
  t.spec.containers.push_back(Container{"main", "nginx", {}, {}});
  rc.spec.template_ = t;
  return rc;
}

std::vector<std::string> Fields(const Status& s) {
  std::vector<std::string> out;
  for (const auto& c : s.causes()) out.push_back(c.field);
  return out;
}

TEST(NameRulesTest, Dns1123Subdomain) {
  EXPECT_TRUE(IsDns1123Subdomain("web"));
  EXPECT_TRUE(IsDns1123Subdomain("web-1.example.com"));
  EXPECT_TRUE(IsDns1123Subdomain("0abc"));
  EXPECT_TRUE(IsDns1123Subdomain(std::string(253, 'a')));
  EXPECT_FALSE(IsDns1123Subdomain(std::string(254, 'a')));
  EXPECT_FALSE(IsDns1123Subdomain(""));
  EXPECT_FALSE(IsDns1123Subdomain("Web"));
  EXPECT_FALSE(IsDns1123Subdomain("web_1"));
  EXPECT_FALSE(IsDns1123Subdomain("-web"));
  EXPECT_FALSE(IsDns1123Subdomain("web-"));
  EXPECT_FALSE(IsDns1123Subdomain("a..b"));
  EXPECT_FALSE(IsDns1123Subdomain("a.-b"));
  EXPECT_FALSE(IsDns1123Subdomain("web/1"));
}

TEST(NameRulesTest, Dns1123Label) {
  EXPECT_TRUE(IsDns1123Label("default"));
  EXPECT_TRUE(IsDns1123Label(std::string(63, 'a')));
  EXPECT_FALSE(IsDns1123Label(std::string(64, 'a')));
  EXPECT_FALSE(IsDns1123Label("a.b"));
  EXPECT_FALSE(IsDns1123Label(""));
}

TEST(NameRulesTest, LabelKeysAndValues) {
  EXPECT_TRUE(IsQualifiedName("app"));
  EXPECT_TRUE(IsQualifiedName("App_Name.x-1"));
  EXPECT_TRUE(IsQualifiedName("example.com/app"));
  EXPECT_FALSE(IsQualifiedName("Example.com/app"));
  EXPECT_FALSE(IsQualifiedName("a/b/c"));
  EXPECT_FALSE(IsQualifiedName("/app"));
  EXPECT_FALSE(IsQualifiedName("example.com/"));
  EXPECT_FALSE(IsQualifiedName("bad key"));
  EXPECT_FALSE(IsQualifiedName(std::string(64, 'a')));
  EXPECT_TRUE(IsValidLabelValue(""));
  EXPECT_TRUE(IsValidLabelValue("v1.2_x-y"));
  EXPECT_FALSE(IsValidLabelValue("-v"));
  EXPECT_FALSE(IsValidLabelValue("a b"));
  EXPECT_FALSE(IsValidLabelValue(std::string(64, 'a')));
}

TEST(QuoteTest, EscapesLikeGo) {
  EXPECT_EQ(Quote("web"), "\"web\"");
  EXPECT_EQ(Quote("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(Quote(std::string("a\nb")), "\"a\\x0ab\"");
}

TEST(ValidatePodTest, ValidPodPasses) { EXPECT_TRUE(ValidatePod(ValidPod()).ok()); }

TEST(ValidatePodTest, MissingNameIsRequired) {
  Pod pod = ValidPod();
  pod.metadata.name.clear();
  Status s = ValidatePod(pod);
  EXPECT_EQ(s.code(), Code::kInvalid);
  ASSERT_EQ(s.causes().size(), 1u);
  EXPECT_EQ(s.causes()[0].field, "metadata.name");
  EXPECT_EQ(s.causes()[0].reason, "FieldValueRequired");
  EXPECT_EQ(s.causes()[0].message, "Required value: name or generateName is required");
  pod.metadata.generate_name = "web-";
  EXPECT_TRUE(ValidatePod(pod).ok());
  pod.metadata.generate_name = "Web-";
  EXPECT_EQ(Fields(ValidatePod(pod)), std::vector<std::string>{"metadata.generateName"});
}

TEST(ValidatePodTest, BadNameNamespaceAndLabels) {
  Pod pod = ValidPod();
  pod.metadata.name = "Web";
  pod.metadata.namespace_ = "my.ns";
  pod.metadata.labels = {{"bad key", "ok"}, {"ok", "bad value"}};
  Status s = ValidatePod(pod);
  EXPECT_EQ(Fields(s), (std::vector<std::string>{"metadata.name", "metadata.namespace", "metadata.labels",
                                                 "metadata.labels"}));
  EXPECT_EQ(s.message().rfind("Pod \"Web\" is invalid: [metadata.name: Invalid value: \"Web\": a "
                              "lowercase RFC 1123 subdomain",
                              0),
            0u)
      << s.message();
}

TEST(ValidatePodTest, MissingNamespaceIsRequired) {
  Pod pod = ValidPod();
  pod.metadata.namespace_.clear();
  EXPECT_EQ(Fields(ValidatePod(pod)), std::vector<std::string>{"metadata.namespace"});
}

TEST(ValidatePodTest, ContainersAreChecked) {
  Pod pod = ValidPod();
  pod.spec.containers.clear();
  Status s = ValidatePod(pod);
  EXPECT_EQ(s.message(), "Pod \"web-1\" is invalid: spec.containers: Required value");
  EXPECT_EQ(Fields(s), std::vector<std::string>{"spec.containers"});

  pod = ValidPod();
  pod.spec.containers.push_back(Container{"main", "", {}, {}});
  pod.spec.containers.push_back(Container{"", "busybox", {}, {}});
  EXPECT_EQ(Fields(ValidatePod(pod)),
            (std::vector<std::string>{"spec.containers[1].name", "spec.containers[1].image",
                                      "spec.containers[2].name"}));
  EXPECT_EQ(ValidatePod(pod).causes()[0].reason, "FieldValueDuplicate");
}

TEST(ValidatePodTest, RestartPolicyAndGracePeriod) {
  Pod pod = ValidPod();
  pod.spec.restart_policy = "Sometimes";
  pod.spec.termination_grace_period_seconds = -1;
  Status s = ValidatePod(pod);
  EXPECT_EQ(Fields(s),
            (std::vector<std::string>{"spec.restartPolicy", "spec.terminationGracePeriodSeconds"}));
  EXPECT_EQ(s.causes()[0].message,
            "Unsupported value: \"Sometimes\": supported values: \"Always\", \"OnFailure\", "
            "\"Never\"");
}

TEST(ValidatePodTest, TwoControllerOwnersAreInvalid) {
  Pod pod = ValidPod();
  pod.metadata.owner_references = {OwnerReference{"v1", "ReplicationController", "a", "u1"},
                                   OwnerReference{"v1", "ReplicationController", "b", "u2"}};
  EXPECT_EQ(Fields(ValidatePod(pod)), std::vector<std::string>{"metadata.ownerReferences"});
  pod.metadata.owner_references[1].controller = false;
  EXPECT_TRUE(ValidatePod(pod).ok());
}

TEST(ValidateControllerTest, ValidControllerPasses) {
  EXPECT_TRUE(ValidateController(ValidController()).ok());
}

TEST(ValidateControllerTest, NegativeReplicasMessageIsKubernetes) {
  ReplicationController rc = ValidController();
  rc.spec.replicas = -1;
  Status s = ValidateController(rc);
  EXPECT_EQ(s.code(), Code::kInvalid);
  EXPECT_EQ(s.message(),
            "ReplicationController \"web\" is invalid: spec.replicas: Invalid value: -1: must be "
            "greater than or equal to 0");
  ASSERT_EQ(s.causes().size(), 1u);
  EXPECT_EQ(s.causes()[0], (StatusCause{"spec.replicas", "FieldValueInvalid",
                                        "Invalid value: -1: must be greater than or equal to 0"}));
}

TEST(ValidateControllerTest, SelectorAndTemplate) {
  ReplicationController rc = ValidController();
  rc.spec.selector.clear();
  EXPECT_EQ(Fields(ValidateController(rc)), std::vector<std::string>{"spec.selector"});

  rc = ValidController();
  rc.spec.template_.reset();
  EXPECT_EQ(Fields(ValidateController(rc)), std::vector<std::string>{"spec.template"});

  rc = ValidController();
  rc.spec.selector = {{"app", "db"}};
  Status s = ValidateController(rc);
  EXPECT_EQ(Fields(s), std::vector<std::string>{"spec.template.metadata.labels"});
  EXPECT_EQ(s.causes()[0].message,
            "Invalid value: map[string]string{\"app\":\"web\", \"tier\":\"front\"}: `selector` "
            "does not match template `labels`");

  rc = ValidController();
  rc.spec.template_->spec.restart_policy = "Never";
  EXPECT_EQ(Fields(ValidateController(rc)), std::vector<std::string>{"spec.template.spec.restartPolicy"});

  rc = ValidController();
  rc.spec.template_->spec.containers.clear();
  rc.spec.min_ready_seconds = -3;
  EXPECT_EQ(Fields(ValidateController(rc)),
            (std::vector<std::string>{"spec.minReadySeconds", "spec.template.spec.containers"}));
}

TEST(ValidatePodUpdateTest, BindingOnceAndImagesOnly) {
  Pod old = ValidPod();
  Pod next = old;
  next.spec.node_name = "node-1";
  EXPECT_TRUE(ValidatePodUpdate(next, old).ok());
  next.spec.containers[0].image = "nginx:2";
  EXPECT_TRUE(ValidatePodUpdate(next, old).ok());

  Pod bound = old;
  bound.spec.node_name = "node-1";
  Pod moved = bound;
  moved.spec.node_name = "node-2";
  EXPECT_EQ(Fields(ValidatePodUpdate(moved, bound)), std::vector<std::string>{"spec.nodeName"});
  Pod unbound = bound;
  unbound.spec.node_name.clear();
  EXPECT_EQ(ValidatePodUpdate(unbound, bound).code(), Code::kInvalid);

  Pod renamed = old;
  renamed.spec.containers[0].name = "other";
  Status s = ValidatePodUpdate(renamed, old);
  EXPECT_EQ(Fields(s), std::vector<std::string>{"spec"});
  EXPECT_EQ(s.causes()[0].reason, "FieldValueForbidden");
}

// ValidatePodUpdate compares each member but the two it allows: a change to any other is forbidden.
TEST(ValidatePodUpdateTest, EveryOtherSpecMemberIsImmutable) {
  const Pod old = ValidPod();
  std::vector<std::pair<std::string, std::function<void(PodSpec&)>>> changes = {
      {"restartPolicy", [](PodSpec& s) { s.restart_policy = "Never"; }},
      {"terminationGracePeriodSeconds", [](PodSpec& s) { s.termination_grace_period_seconds = 5; }},
      {"spec unknown fields",
       [](PodSpec& s) {
         s.unknown_fields = UnknownFields(nlohmann::json{{"hostNetwork", true}});
       }},
      {"a container more", [](PodSpec& s) { s.containers.push_back(s.containers[0]); }},
      {"no container", [](PodSpec& s) { s.containers.clear(); }},
      {"container name", [](PodSpec& s) { s.containers[0].name = "other"; }},
      {"container command", [](PodSpec& s) { s.containers[0].command = {"sleep"}; }},
      {"container args", [](PodSpec& s) { s.containers[0].args = {"1"}; }},
      {"container unknown fields",
       [](PodSpec& s) {
         s.containers[0].unknown_fields = UnknownFields(nlohmann::json{{"env", nlohmann::json::array()}});
       }},
  };
  for (const auto& [what, change] : changes) {
    Pod next = old;
    change(next.spec);
    EXPECT_EQ(Fields(ValidatePodUpdate(next, old)), std::vector<std::string>{"spec"}) << what;
  }
}

TEST(ValidateStatusTest, ControllerStatusCounts) {
  ReplicationController rc = ValidController();
  rc.status.replicas = 2;
  rc.status.ready_replicas = 2;
  rc.status.available_replicas = 1;
  EXPECT_TRUE(ValidateControllerStatus(rc).ok());
  rc.status.ready_replicas = 3;
  rc.status.observed_generation = -1;
  EXPECT_EQ(Fields(ValidateControllerStatus(rc)),
            (std::vector<std::string>{"status.observedGeneration", "status.readyReplicas"}));
}

TEST(ValidateStatusTest, PodPhase) {
  Pod pod = ValidPod();
  pod.status.phase = phase::kRunning;
  EXPECT_TRUE(ValidatePodStatus(pod).ok());
  pod.status.phase = "Sleeping";
  EXPECT_EQ(Fields(ValidatePodStatus(pod)), std::vector<std::string>{"status.phase"});
}

}  // namespace
}  // namespace rcsim
