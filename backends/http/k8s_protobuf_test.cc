#include "backends/http/k8s_protobuf.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace rcsim {
namespace {

using json = nlohmann::json;

// A minimal protobuf writer for the test's bodies.
std::string Varint(uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
  return out;
}
std::string Len(uint32_t field, const std::string& bytes) {
  return Varint(field << 3 | 2) + Varint(bytes.size()) + bytes;
}
std::string Int(uint32_t field, uint64_t v) { return Varint(field << 3) + Varint(v); }
std::string Envelope(const std::string& api_version, const std::string& kind, const std::string& raw) {
  return std::string("k8s\0", 4) + Len(1, Len(1, api_version) + Len(2, kind)) + Len(2, raw) + Len(3, "") +
         Len(4, "");
}

// What kubectl 1.32 sends for `kubectl create namespace foo` (captured): every string field of
// ObjectMeta written though empty, generation 0, an empty creationTimestamp, an empty spec and phase.
TEST(K8sProtobufTest, ReadsKubectlsCreateNamespace) {
  const std::string meta =
      Len(1, "foo") + Len(2, "") + Len(3, "") + Len(4, "") + Len(5, "") + Len(6, "") + Int(7, 0) + Len(8, "");
  const std::string raw = Len(1, meta) + Len(2, "") + Len(3, Len(1, ""));
  Result<ProtobufBody> r = DecodeK8sProtobuf(Envelope("v1", "Namespace", raw));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->unsupported_kind);
  EXPECT_EQ(r->object, json::parse(R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"foo"}})"));
}

TEST(K8sProtobufTest, ReadsLabelsOwnerReferencesFinalizersAndTimes) {
  const std::string owner =
      Len(1, "ReplicationController") + Len(3, "web") + Len(4, "u-1") + Len(5, "v1") + Int(6, 1) + Int(7, 0);
  const std::string meta = Len(1, "team") + Len(11, Len(1, "a") + Len(2, "1")) +
                           Len(11, Len(1, "b") + Len(2, "")) + Len(12, Len(1, "note") + Len(2, "x")) +
                           Len(13, owner) + Len(14, "example.com/f") + Len(8, Int(1, 1767225600)) +
                           Int(10, 0);
  const std::string raw = Len(1, meta) + Len(2, Len(1, "kubernetes")) + Len(3, Len(1, "Active"));
  Result<ProtobufBody> r = DecodeK8sProtobuf(Envelope("v1", "Namespace", raw));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const json& m = r->object["metadata"];
  EXPECT_EQ(m["labels"], json::parse(R"({"a":"1","b":""})"));
  EXPECT_EQ(m["annotations"]["note"], "x");
  EXPECT_EQ(m["ownerReferences"], json::parse(R"([{"kind":"ReplicationController","name":"web","uid":"u-1",
      "apiVersion":"v1","controller":true,"blockOwnerDeletion":false}])"));
  EXPECT_EQ(m["finalizers"], json::array({"example.com/f"}));
  EXPECT_EQ(m["creationTimestamp"], "2026-01-01T00:00:00Z");
  EXPECT_EQ(m["deletionGracePeriodSeconds"], 0);  // a pointer: zero is a value
  EXPECT_EQ(r->object["spec"]["finalizers"], json::array({"kubernetes"}));
  EXPECT_EQ(r->object["status"]["phase"], "Active");
}

// `kubectl drain --grace-period=0` without the eviction API; and an Eviction with its deleteOptions.
TEST(K8sProtobufTest, ReadsDeleteOptionsAndEvictionsKeepingPointerZeros) {
  Result<ProtobufBody> del = DecodeK8sProtobuf(Envelope(
      "v1", "DeleteOptions", Int(1, 0) + Len(2, Len(1, "u-1")) + Len(4, "Foreground") + Len(5, "All")));
  ASSERT_TRUE(del.ok()) << del.status().ToString();
  EXPECT_EQ(del->object, json::parse(R"({"apiVersion":"v1","kind":"DeleteOptions","gracePeriodSeconds":0,
      "preconditions":{"uid":"u-1"},"propagationPolicy":"Foreground","dryRun":["All"]})"));
  Result<ProtobufBody> ev = DecodeK8sProtobuf(Envelope(
      "policy/v1", "Eviction", Len(1, Len(1, "web-1") + Len(3, "default")) + Len(2, Int(1, 30) + Int(3, 0))));
  ASSERT_TRUE(ev.ok()) << ev.status().ToString();
  EXPECT_EQ(ev->object, json::parse(R"({"apiVersion":"policy/v1","kind":"Eviction",
      "metadata":{"name":"web-1","namespace":"default"},
      "deleteOptions":{"gracePeriodSeconds":30,"orphanDependents":false}})"));
}

TEST(K8sProtobufTest, AnotherKindIsReportedNotGuessed) {
  Result<ProtobufBody> r = DecodeK8sProtobuf(Envelope("v1", "Pod", Len(1, Len(1, "p"))));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->unsupported_kind);
  EXPECT_EQ(r->kind, "Pod");
}

TEST(K8sProtobufTest, UnknownFieldsAndMalformedBodiesAreErrorsNeverDropped) {
  // metadata.managedFields (17) is not read: an error naming it, not a silent drop.
  Result<ProtobufBody> unknown =
      DecodeK8sProtobuf(Envelope("v1", "Namespace", Len(1, Len(1, "foo") + Len(17, ""))));
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), Code::kBadRequest);
  EXPECT_NE(unknown.status().message().find("field 17 of ObjectMeta"), std::string::npos)
      << unknown.status().ToString();
  int i = 0;
  for (const std::string& bad : {
           std::string("{\"kind\":\"Namespace\"}"),                                 // no envelope
           Envelope("v1", "Namespace", Len(1, Len(1, "foo"))).substr(0, 20),        // truncated
           Envelope("v1", "Namespace", Int(1, 5)),                                  // wrong wire type
           Envelope("v1", "DeleteOptions", Len(1, "x")),                            // int as bytes
           std::string("k8s\0", 4) + Len(1, Len(2, "Namespace")) + Len(3, "gzip"),  // encoded
       }) {
    Result<ProtobufBody> r = DecodeK8sProtobuf(bad);
    ASSERT_FALSE(r.ok()) << "case " << i;
    ++i;
    EXPECT_EQ(r.status().code(), Code::kBadRequest) << r.status().ToString();
  }
}

TEST(K8sProtobufTest, RecognisesTheMediaType) {
  EXPECT_TRUE(IsProtobufContentType("application/vnd.kubernetes.protobuf"));
  EXPECT_TRUE(IsProtobufContentType("application/vnd.kubernetes.protobuf; charset=utf-8"));
  EXPECT_FALSE(IsProtobufContentType("application/json"));
  EXPECT_FALSE(IsProtobufContentType(""));
}

}  // namespace
}  // namespace rcsim
