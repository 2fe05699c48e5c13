#include "engine/field_selector.h"

#include <gtest/gtest.h>

#include "engine/node_codec.h"

namespace rcsim {
namespace {

TEST(FieldSelectorTest, ParsesEveryOperatorAndKeepsNameFastPath) {
  ListOptions opts;
  ASSERT_TRUE(ParseFieldSelector("metadata.name=web,spec.nodeName==n1, status.phase!=Failed", &opts).ok());
  EXPECT_EQ(opts.field_name, "web");
  ASSERT_EQ(opts.fields.size(), 2u);
  EXPECT_EQ(opts.fields[0], (FieldRequirement{"spec.nodeName", true, "n1"}));
  EXPECT_EQ(opts.fields[1], (FieldRequirement{"status.phase", false, "Failed"}));
  EXPECT_EQ(FormatFieldSelector(opts), "metadata.name=web,spec.nodeName=n1,status.phase!=Failed");
}

TEST(FieldSelectorTest, EmptyValueAndNegatedNameAreRequirements) {
  ListOptions opts;
  ASSERT_TRUE(ParseFieldSelector("spec.nodeName=,metadata.name!=a", &opts).ok());
  EXPECT_EQ(opts.field_name, "");
  ASSERT_EQ(opts.fields.size(), 2u);
  EXPECT_EQ(opts.fields[0].value, "");
  EXPECT_FALSE(opts.fields[1].equal);
}

TEST(FieldSelectorTest, MalformedTermsAreBadRequest) {
  for (const char* bad : {"spec.nodeName", "=x", "a=b=c", "a!=!b"}) {
    ListOptions opts;
    EXPECT_EQ(ParseFieldSelector(bad, &opts).code(), Code::kBadRequest) << bad;
  }
}

TEST(NodeCodecTest, RoundTripsEveryField) {
  Node n;
  n.metadata.name = "node-1";
  n.metadata.labels = {{"kubernetes.io/hostname", "node-1"}};
  n.spec.unschedulable = true;
  n.spec.taints.push_back({kTaintUnreachable, "", "NoExecute", TimePoint(std::chrono::seconds(100))});
  n.status.capacity = {{"pods", "110"}};
  n.status.allocatable = {{"pods", "100"}};
  n.status.conditions.push_back({"Ready", "Unknown", TimePoint(std::chrono::seconds(90)),
                                 TimePoint(std::chrono::seconds(95)), "NodeStatusUnknown", "gone"});
  n.status.addresses.push_back({"InternalIP", "10.0.0.1"});
  Result<Node> back = DecodeNode(EncodeNode(n));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, n);
  EXPECT_EQ(NodePodCapacity(*back), 110);
  EXPECT_FALSE(IsNodeReady(*back));
}

TEST(NodeCodecTest, WrongShapesNameThePath) {
  auto r = NodeFromJson(nlohmann::json::parse(R"({"kind":"Node","status":{"conditions":[{"type":1}]}})"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("status.conditions[0].type"), std::string::npos)
      << r.status().message();
  auto b = BindingFromJson(nlohmann::json::parse(R"({"kind":"Binding","metadata":{"name":"p"}})"));
  EXPECT_EQ(b.status().code(), Code::kBadRequest);
}

}  // namespace
}  // namespace rcsim
