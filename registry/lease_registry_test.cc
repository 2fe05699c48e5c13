#include "registry/lease_registry.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "engine/rng.h"
#include "fakes/mem_store.h"
#include "fakes/sim_loop.h"

namespace rcsim {
namespace {

Lease MakeLease(const std::string& name, const std::string& holder) {
  Lease l;
  l.metadata.name = name;
  l.spec.holder_identity = holder;
  l.spec.lease_duration_seconds = 15;
  l.spec.renew_time = TimePoint(std::chrono::seconds(1700000000)) + std::chrono::microseconds(123456);
  l.spec.lease_transitions = 0;
  return l;
}

class LeaseRegistryTest : public ::testing::Test {
 protected:
  LeaseRegistryTest() : store_(&loop_, &loop_), rng_(7), ctx_(&store_, &loop_, &rng_), leases_(&ctx_) {}
  SimLoop loop_;
  MemStore store_;
  Mt19937Rng rng_;
  RegistryContext ctx_;
  LeaseRegistry leases_;
};

TEST_F(LeaseRegistryTest, CreateGetUpdateDeleteWithOptimisticConcurrency) {
  auto created = leases_.Create("kube-system", MakeLease("rc-manager", "a"));
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_FALSE((*created)->metadata.uid.empty());
  EXPECT_FALSE((*created)->metadata.resource_version.empty());
  EXPECT_EQ(leases_.Create("kube-system", MakeLease("rc-manager", "b")).status().code(),
            Code::kAlreadyExists);

  auto got = leases_.Get("kube-system", "rc-manager");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(**got, **created);
  EXPECT_EQ((*got)->spec.renew_time, MakeLease("x", "a").spec.renew_time);  // microseconds kept

  Lease next = **got;
  next.spec.holder_identity = "b";
  next.spec.lease_transitions = 1;
  auto updated = leases_.Update(next);
  ASSERT_TRUE(updated.ok()) << updated.status().ToString();
  EXPECT_EQ((*updated)->spec.holder_identity, "b");
  EXPECT_NE((*updated)->metadata.resource_version, (*got)->metadata.resource_version);
  // A second writer holding the old resourceVersion loses: this is what makes election safe.
  Lease stale = **got;
  stale.spec.holder_identity = "c";
  EXPECT_EQ(leases_.Update(stale).status().code(), Code::kConflict);
  EXPECT_EQ((*leases_.Get("kube-system", "rc-manager"))->spec.holder_identity, "b");

  auto list = leases_.List("");
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->items.size(), 1u);
  ASSERT_TRUE(leases_.Delete("kube-system", "rc-manager", {}).ok());
  EXPECT_EQ(leases_.Get("kube-system", "rc-manager").status().code(), Code::kNotFound);
}

TEST_F(LeaseRegistryTest, InvalidLeasesAreRefused) {
  Lease bad = MakeLease("Not_A_Name", "a");
  EXPECT_EQ(leases_.Create("ns", bad).status().code(), Code::kInvalid);
  Lease zero = MakeLease("ok", "a");
  zero.spec.lease_duration_seconds = 0;
  EXPECT_EQ(leases_.Create("ns", zero).status().code(), Code::kInvalid);
}

TEST_F(LeaseRegistryTest, ListsAndWatchesKeepOnlyTheSelectedLeases) {
  Lease a = MakeLease("node-a", "node-a");
  a.metadata.labels["tier"] = "gold";
  ASSERT_TRUE(leases_.Create("kube-node-lease", a).ok());
  ASSERT_TRUE(leases_.Create("kube-node-lease", MakeLease("node-b", "node-b")).ok());
  ASSERT_TRUE(leases_.Create("kube-system", MakeLease("rc-manager", "m")).ok());
  ListOptions gold;
  gold.label_selector = *LabelSelector::Parse("tier=gold");
  auto listed = leases_.List("", gold);
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->items.size(), 1u);
  EXPECT_EQ(listed->items[0]->metadata.name, "node-a");
  ListOptions named;
  named.field_name = "node-b";
  EXPECT_EQ(leases_.List("kube-node-lease", named)->items.size(), 1u);
  ListOptions bad;
  bad.fields.push_back({"spec.holderIdentity", true, "x"});
  EXPECT_EQ(leases_.List("", bad).status().code(), Code::kBadRequest);

  // From "": every selected lease as ADDED, then each change of a selected one, as Get gives it.
  std::vector<nlohmann::json> events;
  ListOptions node_leases;
  auto w = leases_.Watch(
      "kube-node-lease", node_leases, "", [&](const nlohmann::json& ev) { events.push_back(ev); }, [] {});
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0]["type"], "ADDED");
  EXPECT_EQ(events[0]["object"]["metadata"]["name"], "node-a");
  auto b = leases_.Get("kube-node-lease", "node-b");
  Lease renewed = **b;
  renewed.spec.renew_time = *renewed.spec.renew_time + std::chrono::seconds(10);
  auto updated = leases_.Update(renewed);
  ASSERT_TRUE(updated.ok());
  Lease other = **leases_.Get("kube-system", "rc-manager");
  other.spec.holder_identity = "n";
  ASSERT_TRUE(leases_.Update(other).ok());  // another namespace: never seen by this watch
  ASSERT_TRUE(leases_.Delete("kube-node-lease", "node-a", DeleteOptions()).ok());
  loop_.RunUntilIdle();
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[2]["type"], "MODIFIED");
  EXPECT_EQ(events[2]["object"]["metadata"]["resourceVersion"], (*updated)->metadata.resource_version);
  EXPECT_EQ(DecodeLease(events[2]["object"].dump())->spec.renew_time, renewed.spec.renew_time);
  EXPECT_EQ(events[3]["type"], "DELETED");
  EXPECT_EQ(events[3]["object"]["metadata"]["name"], "node-a");

  // From a resourceVersion: only what changed after it, and only the leases selected.
  std::vector<nlohmann::json> gold_events;
  auto gw = leases_.Watch(
      "", gold, listed->resource_version, [&](const nlohmann::json& ev) { gold_events.push_back(ev); },
      [] {});
  ASSERT_TRUE(gw.ok());
  loop_.RunUntilIdle();
  ASSERT_EQ(gold_events.size(), 1u);  // node-a's deletion; node-b is not gold
  EXPECT_EQ(gold_events[0]["type"], "DELETED");
  EXPECT_EQ(leases_
                .Watch(
                    "", bad, "", [](const nlohmann::json&) {}, [] {})
                .status()
                .code(),
            Code::kBadRequest);
}

// Reads decode a stored lease once per revision: the same object comes back until the key changes, and a
// write behind the registry's back (new revision, new bytes, or bytes that do not decode) is seen at once.
TEST_F(LeaseRegistryTest, ReadsDecodeEachRevisionOnceAndSeeEveryWrite) {
  ASSERT_TRUE(leases_.Create("kube-node-lease", MakeLease("node-a", "node-a")).ok());
  auto first = leases_.Get("kube-node-lease", "node-a");
  ASSERT_TRUE(first.ok());
  auto listed = leases_.List("");
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->items.size(), 1u);
  EXPECT_EQ(listed->items[0].get(), first->get());  // decoded once
  EXPECT_EQ(leases_.Get("kube-node-lease", "node-a")->get(), first->get());

  Lease renewed = **first;
  renewed.spec.renew_time = *renewed.spec.renew_time + std::chrono::seconds(10);
  auto updated = leases_.Update(renewed);
  ASSERT_TRUE(updated.ok());
  auto again = leases_.Get("kube-node-lease", "node-a");
  ASSERT_TRUE(again.ok());
  EXPECT_NE(again->get(), first->get());
  EXPECT_EQ((*again)->spec.renew_time, renewed.spec.renew_time);
  EXPECT_EQ((*again)->metadata.resource_version, (*updated)->metadata.resource_version);

  // Written straight to the store: another holder, then bytes that do not decode.
  Lease other = **again;
  other.spec.holder_identity = "someone-else";
  other.metadata.resource_version.clear();
  PutRequest put;
  put.key = LeaseKey("kube-node-lease", "node-a");
  put.value = Value(EncodeLease(other));
  ASSERT_TRUE(store_.Put(put).ok());
  EXPECT_EQ((*leases_.Get("kube-node-lease", "node-a"))->spec.holder_identity, "someone-else");
  put.value = Value("{not json");
  ASSERT_TRUE(store_.Put(put).ok());
  EXPECT_EQ(leases_.Get("kube-node-lease", "node-a").status().code(), Code::kInternal);
  EXPECT_TRUE(leases_.List("")->items.empty());

  // Deleted and created again: the new lease, not the old one.
  put.value = Value(EncodeLease(other));
  ASSERT_TRUE(store_.Put(put).ok());
  ASSERT_TRUE(leases_.Delete("kube-node-lease", "node-a", {}).ok());
  ASSERT_TRUE(leases_.Create("kube-node-lease", MakeLease("node-a", "node-a-again")).ok());
  EXPECT_EQ((*leases_.Get("kube-node-lease", "node-a"))->spec.holder_identity, "node-a-again");
}

TEST(LeaseCodecTest, MicroTimeKeepsSixFractionDigits) {
  const TimePoint t{std::chrono::seconds(1700000000)};
  EXPECT_EQ(FormatMicroTime(t), "2023-11-14T22:13:20.000000Z");
  EXPECT_EQ(FormatMicroTime(t + std::chrono::microseconds(42)), "2023-11-14T22:13:20.000042Z");
  EXPECT_EQ(FormatMicroTime(t + std::chrono::nanoseconds(999999999)), "2023-11-14T22:13:20.999999Z");
}

// What the registry writes it keeps as decoded: the watch that delivers a renewal (the node lifecycle
// controller's) and the holder's next read get the very lease the update returned, with no decode (the
// decode was 38% of a renewal's registry cost), and it is what the stored bytes decode to.
TEST_F(LeaseRegistryTest, AWrittenLeaseIsServedWithoutDecoding) {
  auto created = leases_.Create("kube-node-lease", MakeLease("node-a", "node-a"));
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ(leases_.Get("kube-node-lease", "node-a")->get(), created->get());
  std::vector<LeasePtr> seen;
  auto watch = leases_.Watch("kube-node-lease", ListOptions{}, (*created)->metadata.resource_version,
                             [&](const ApiWatchEvent<Lease>& ev) { seen.push_back(ev.object); });
  ASSERT_TRUE(watch.ok()) << watch.status().ToString();

  Lease renewed = **created;
  renewed.spec.renew_time = *renewed.spec.renew_time + std::chrono::seconds(10);
  auto updated = leases_.Update(renewed);
  ASSERT_TRUE(updated.ok()) << updated.status().ToString();
  loop_.RunUntilIdle(1000);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].get(), updated->get());
  EXPECT_EQ(seen[0]->spec.renew_time, renewed.spec.renew_time);
  EXPECT_EQ(leases_.Get("kube-node-lease", "node-a")->get(), updated->get());
  auto stored = store_.Get(LeaseKey("kube-node-lease", "node-a"));
  ASSERT_TRUE(stored.ok() && stored->has_value());
  auto decoded = DecodeLease((*stored)->value.bytes());
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  decoded->metadata.resource_version = std::to_string((*stored)->mod_revision);
  EXPECT_EQ(*decoded, **updated);

  // A deletion is delivered as the last state, at the deletion's revision.
  ASSERT_TRUE(leases_.Delete("kube-node-lease", "node-a", {}).ok());
  loop_.RunUntilIdle(1000);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[1]->spec.renew_time, renewed.spec.renew_time);
  EXPECT_NE(seen[1]->metadata.resource_version, (*updated)->metadata.resource_version);
}

TEST(LeaseCodecTest, RoundTripsInTheKubernetesShape) {
  Lease l = MakeLease("n", "holder-1");
  l.metadata.namespace_ = "ns";
  auto j = LeaseToJson(l);
  EXPECT_EQ(j["apiVersion"], "coordination.k8s.io/v1");
  EXPECT_EQ(j["spec"]["renewTime"], "2023-11-14T22:13:20.123456Z");
  auto back = LeaseFromJson(j);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, l);
  EXPECT_EQ(DecodeLease("{\"spec\":{\"leaseDurationSeconds\":\"x\"}}").status().code(), Code::kBadRequest);
  EXPECT_EQ(DecodeLease("{\"kind\":\"Pod\"}").status().code(), Code::kInvalid);
  EXPECT_EQ(DecodeLease("{").status().code(), Code::kBadRequest);
}

}  // namespace
}  // namespace rcsim
