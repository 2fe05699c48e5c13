#include "engine/codec.h"

#include <gtest/gtest.h>

#include "tests/contract/core_v1_manifests.h"

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
  pod.status.container_statuses.push_back({.name = "web", .ready = true, .restart_count = 3});
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
  rc.status.conditions.push_back(
      {kReplicaFailure, "True", ParseRfc3339("2014-06-06T00:00:03Z"), "FailedCreate", "exceeded quota"});
  auto back = DecodeController(EncodeController(rc));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, rc);
  auto j = ControllerToJson(rc);
  EXPECT_EQ(j["status"]["conditions"][0]["type"], "ReplicaFailure");
  EXPECT_EQ(j["status"]["conditions"][0]["reason"], "FailedCreate");
  EXPECT_EQ(j["status"]["conditions"][0]["lastTransitionTime"], "2014-06-06T00:00:03Z");
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

// Issue 8: fields the engine does not model (ports, env, probes, volumes...) were dropped on decode.
TEST(CodecTest, FullPodSpecSurvivesDecodeEncode) {
  const nlohmann::json want = nlohmann::json::parse(manifests::kFullPodSpec);
  auto pod = DecodePod(manifests::FullPodJson("full"));
  ASSERT_TRUE(pod.ok()) << pod.status().ToString();
  ASSERT_EQ(pod->spec.containers.size(), 2u);
  EXPECT_EQ(pod->spec.containers[0].image, "nginx:1.25");
  EXPECT_EQ(pod->spec.termination_grace_period_seconds, 45);
  const nlohmann::json got = PodToJson(*pod);
  EXPECT_EQ(got["spec"], want) << got["spec"].dump(2);
  EXPECT_EQ(got["metadata"]["annotations"]["example.com/note"], "lossless");
  // Decoding what we emit gives the same object.
  auto again = PodFromJson(got);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *pod);
}

TEST(CodecTest, FullControllerSurvivesDecodeEncode) {
  const nlohmann::json want = nlohmann::json::parse(manifests::FullControllerJson("full"));
  auto rc = DecodeController(want.dump());
  ASSERT_TRUE(rc.ok()) << rc.status().ToString();
  nlohmann::json got = ControllerToJson(*rc);
  got.erase("status");
  EXPECT_EQ(got, want) << got.dump(2);
}

TEST(CodecTest, UnknownFieldsEverywhereAreKeptAndNullsDropped) {
  auto pod = DecodePod(R"({"kind":"Pod","apiVersion":"v1","extraTop":1,
      "metadata":{"name":"p","managedFields":[{"manager":"kubectl"}],"selfLink":null,
                  "ownerReferences":[{"name":"o","uid":"u","extra":true}]},
      "spec":{"containers":[{"name":"c","ports":[{"containerPort":80,"hostIP":null}]}]},
      "status":{"phase":"Running","qosClass":"Burstable",
                "conditions":[{"type":"Ready","status":"True","lastProbeTime":null,"x":"y"}],
                "containerStatuses":[{"name":"c","ready":true,"restartCount":0,"image":"nginx",
                                      "state":{"running":{"startedAt":"2024-01-01T00:00:00Z"}}}]}})");
  ASSERT_TRUE(pod.ok()) << pod.status().ToString();
  const nlohmann::json j = PodToJson(*pod);
  EXPECT_EQ(j["extraTop"], 1);
  EXPECT_EQ(j["metadata"]["managedFields"][0]["manager"], "kubectl");
  EXPECT_FALSE(j["metadata"].contains("selfLink"));
  EXPECT_EQ(j["metadata"]["ownerReferences"][0]["extra"], true);
  EXPECT_EQ(j["spec"]["containers"][0]["ports"], nlohmann::json::parse(R"([{"containerPort":80}])"));
  EXPECT_EQ(j["status"]["qosClass"], "Burstable");
  EXPECT_EQ(j["status"]["conditions"][0]["x"], "y");
  EXPECT_FALSE(j["status"]["conditions"][0].contains("lastProbeTime"));
  EXPECT_EQ(j["status"]["containerStatuses"][0]["image"], "nginx");
  // Typed fields win over nothing: an unknown member never shadows a typed one.
  EXPECT_EQ(j["metadata"]["name"], "p");
}

TEST(CodecTest, SimulatedObjectsCarryNoUnknownFields) {
  Pod pod = SamplePod();
  EXPECT_TRUE(pod.unknown_fields.empty());
  EXPECT_TRUE(pod.spec.unknown_fields.empty());
  auto back = DecodePod(EncodePod(pod));
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(back->spec.unknown_fields.empty());
  EXPECT_TRUE(back->spec.containers[0].unknown_fields.empty());
}

// The python client sends "+00:00"; times are stored to the second and emitted with Z.
TEST(CodecTest, TimestampsWithOffsetsAreAcceptedAndEmittedAsZ) {
  auto pod = DecodePod(R"({"kind":"Pod","metadata":{"name":"p",
      "creationTimestamp":"2024-05-01T12:00:00.123456+00:00"},
      "status":{"startTime":"2024-05-01T14:00:05+02:00"}})");
  ASSERT_TRUE(pod.ok()) << pod.status().ToString();
  const nlohmann::json j = PodToJson(*pod);
  EXPECT_EQ(j["metadata"]["creationTimestamp"], "2024-05-01T12:00:00Z");
  EXPECT_EQ(j["status"]["startTime"], "2024-05-01T12:00:05Z");
}

// Issue 10: containerStatuses carried only name, ready and restartCount as typed fields; the
// kubelet's state, lastState, image, imageID, containerID and started are typed now and survive
// a round trip exactly, with members we do not model kept at every level.
TEST(CodecTest, ContainerStatusStatesRoundTrip) {
  const nlohmann::json status = nlohmann::json::parse(R"({
      "phase": "Running",
      "containerStatuses": [
        {"name": "web",
         "state": {"running": {"startedAt": "2024-05-01T12:00:10Z"}},
         "lastState": {"terminated": {"exitCode": 137, "signal": 9, "reason": "Error", "message": "killed",
                       "startedAt": "2024-05-01T12:00:00Z", "finishedAt": "2024-05-01T12:00:09Z",
                       "containerID": "rcsim://c1", "extra": true}},
         "ready": true, "restartCount": 1, "image": "nginx:1.25", "imageID": "sha256:abc",
         "containerID": "rcsim://c2", "started": true,
         "allocatedResources": {"cpu": "1"}},
        {"name": "side",
         "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 10s"}, "future": {}},
         "lastState": {},
         "ready": false, "restartCount": 3, "image": "busybox", "imageID": ""}]})");
  auto pod = PodFromJson({{"kind", "Pod"},
                          {"apiVersion", "v1"},
                          {"metadata", {{"name", "p"}}},
                          {"spec", {{"containers", nlohmann::json::array()}}},
                          {"status", status}});
  ASSERT_TRUE(pod.ok()) << pod.status().ToString();
  const ContainerStatus& web = pod->status.container_statuses.at(0);
  ASSERT_TRUE(web.state.running.has_value());
  ASSERT_TRUE(web.last_state.terminated.has_value());
  EXPECT_EQ(web.last_state.terminated->exit_code, 137);
  EXPECT_EQ(web.last_state.terminated->reason, "Error");
  EXPECT_EQ(web.container_id, "rcsim://c2");
  EXPECT_EQ(web.started, true);
  EXPECT_EQ(pod->status.container_statuses.at(1).state.waiting->reason, "CrashLoopBackOff");
  const nlohmann::json got = PodToJson(*pod)["status"];
  EXPECT_EQ(got, status) << got.dump(2);
  auto again = PodFromJson(PodToJson(*pod));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *pod);
}

// A status written without states reads back with the fields core/v1 always has (state and
// lastState `{}`, image and imageID ""), which clients such as the python one require.
TEST(CodecTest, ContainerStatusHasTheNonOptionalFields) {
  auto pod = DecodePod(R"({"kind":"Pod","metadata":{"name":"p"},
      "status":{"containerStatuses":[{"name":"c","ready":true,"restartCount":0}]}})");
  ASSERT_TRUE(pod.ok()) << pod.status().ToString();
  const nlohmann::json cs = PodToJson(*pod)["status"]["containerStatuses"][0];
  EXPECT_EQ(cs, nlohmann::json::parse(R"({"name":"c","state":{},"lastState":{},"ready":true,
      "restartCount":0,"image":"","imageID":""})"));
}

TEST(CodecTest, MalformedContainerStateNamesTheField) {
  auto pod = DecodePod(R"({"kind":"Pod","metadata":{"name":"p"},
      "status":{"containerStatuses":[{"name":"c","state":{"terminated":{"exitCode":"x"}}}]}})");
  ASSERT_FALSE(pod.ok());
  EXPECT_NE(pod.status().message().find("status.containerStatuses[0].state.terminated.exitCode"),
            std::string::npos)
      << pod.status().message();
  auto bad_state = DecodePod(R"({"kind":"Pod","metadata":{"name":"p"},
      "status":{"containerStatuses":[{"name":"c","lastState":[]}]}})");
  ASSERT_FALSE(bad_state.ok());
  EXPECT_NE(bad_state.status().message().find("status.containerStatuses[0].lastState"), std::string::npos)
      << bad_state.status().message();
}

}  // namespace
}  // namespace rcsim
