// The cluster API contract suite: what the cluster components (cluster/) rely on beyond
// api_contract.h: nodes, pods/binding, graceful deletion, finalizers, propagationPolicy and field
// selectors. One typed suite for the in-process client and the HTTP client against an apiserver.
//
// A harness H is api_contract.h's (client(), WaitFor, ns(), Compact()) plus
//   ClusterApi& cluster();
// Nodes are cluster-scoped and shared by every test of one server: tests name them after ns().
//
// Instantiate with:
//   INSTANTIATE_TYPED_TEST_SUITE_P(Name, ClusterApiContractTest, ::testing::Types<MyHarness>);
#ifndef RCSIM_TESTS_CONTRACT_CLUSTER_API_CONTRACT_H_
#define RCSIM_TESTS_CONTRACT_CLUSTER_API_CONTRACT_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "engine/api_client.h"
#include "engine/cluster_api.h"
#include "engine/field_selector.h"
#include "engine/node_types.h"
#include "tests/contract/api_contract.h"

namespace rcsim {

template <typename H>
class ClusterApiContractTest : public ::testing::Test {
 protected:
  using PodPtrT = std::shared_ptr<const Pod>;
  using RcPtrT = std::shared_ptr<const ReplicationController>;

  template <typename R, typename Start>
  R Await(Start start) {
    struct Slot {
      std::mutex mu;
      std::optional<R> value;  // guarded by mu
    };
    auto slot = std::make_shared<Slot>();
    start([slot](R r) {
      std::lock_guard<std::mutex> lock(slot->mu);
      slot->value.emplace(std::move(r));
    });
    const bool replied = h_.WaitFor(
        [&] {
          std::lock_guard<std::mutex> lock(slot->mu);
          return slot->value.has_value();
        },
        api_contract::kReplyTimeout);
    std::lock_guard<std::mutex> lock(slot->mu);
    if (!replied || !slot->value) return R(Status(Code::kTimeout, "no reply from the client"));
    return std::move(*slot->value);
  }

  ResourceClient<Pod>& pods() { return h_.client().pods(); }
  ResourceClient<ReplicationController>& rcs() { return h_.client().controllers(); }
  ResourceClient<Node>& nodes() { return h_.cluster().nodes(); }

  Result<PodPtrT> CreatePod(Pod pod) {
    return Await<Result<PodPtrT>>([&](auto cb) { pods().Create(ns_, std::move(pod), cb); });
  }
  Result<PodPtrT> GetPod(const std::string& name) {
    return Await<Result<PodPtrT>>([&](auto cb) { pods().Get(ns_, name, cb); });
  }
  Result<PodPtrT> UpdatePod(Pod pod) {
    return Await<Result<PodPtrT>>([&](auto cb) { pods().Update(std::move(pod), cb); });
  }
  Result<PodPtrT> UpdatePodStatus(Pod pod) {
    return Await<Result<PodPtrT>>([&](auto cb) { pods().UpdateStatus(std::move(pod), cb); });
  }
  Result<PodPtrT> DeletePod(const std::string& name, DeleteOptions opts = {}) {
    return Await<Result<PodPtrT>>([&](auto cb) { pods().Delete(ns_, name, opts, cb); });
  }
  Result<ObjectList<Pod>> ListPods(const ListOptions& opts, const std::string& ns) {
    return Await<Result<ObjectList<Pod>>>([&](auto cb) { pods().List(ns, opts, cb); });
  }
  Status Bind(const std::string& pod, const std::string& node) {
    Binding b;
    b.metadata.name = pod;
    b.target_name = node;
    return Await<Status>([&](auto cb) { h_.cluster().BindPod(ns_, b, cb); });
  }
  Result<RcPtrT> CreateRc(ReplicationController rc) {
    return Await<Result<RcPtrT>>([&](auto cb) { rcs().Create(ns_, std::move(rc), cb); });
  }
  Result<RcPtrT> GetRc(const std::string& name) {
    return Await<Result<RcPtrT>>([&](auto cb) { rcs().Get(ns_, name, cb); });
  }
  Result<RcPtrT> UpdateRc(ReplicationController rc) {
    return Await<Result<RcPtrT>>([&](auto cb) { rcs().Update(std::move(rc), cb); });
  }
  Result<RcPtrT> DeleteRc(const std::string& name, DeleteOptions opts = {}) {
    return Await<Result<RcPtrT>>([&](auto cb) { rcs().Delete(ns_, name, opts, cb); });
  }
  Result<NodePtr> CreateNode(Node node) {
    return Await<Result<NodePtr>>([&](auto cb) { nodes().Create("", std::move(node), cb); });
  }
  Result<NodePtr> GetNode(const std::string& name) {
    return Await<Result<NodePtr>>([&](auto cb) { nodes().Get("", name, cb); });
  }

  static Node MakeNode(const std::string& name) {
    Node n;
    n.metadata.name = name;
    n.metadata.labels = {{"kubernetes.io/hostname", name}};
    n.status.capacity = {{"pods", "110"}};
    NodeCondition ready;
    ready.type = "Ready";
    ready.status = "True";
    ready.last_heartbeat_time = TimePoint(std::chrono::seconds(1700000000));
    n.status.conditions.push_back(ready);
    return n;
  }

  static DeleteOptions Policy(const char* policy) {
    DeleteOptions o;
    o.propagation_policy = policy;
    return o;
  }
  static DeleteOptions Grace(int64_t seconds) {
    DeleteOptions o;
    o.grace_period_seconds = seconds;
    return o;
  }
  static bool HasFinalizer(const ObjectMeta& m, const std::string& f) {
    return std::find(m.finalizers.begin(), m.finalizers.end(), f) != m.finalizers.end();
  }

  H h_;
  const std::string ns_ = h_.ns();
};

TYPED_TEST_SUITE_P(ClusterApiContractTest);

TYPED_TEST_P(ClusterApiContractTest, NodesAreClusterScopedAndKeepTheirStatus) {
  const std::string name = this->ns_ + "-node";
  auto created = this->CreateNode(this->MakeNode(name));
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ((*created)->metadata.namespace_, "");
  EXPECT_FALSE((*created)->metadata.uid.empty());
  EXPECT_TRUE(IsNodeReady(**created)) << "a node agent registers with its status";
  EXPECT_EQ(NodePodCapacity(**created), 110);
  EXPECT_EQ(this->CreateNode(this->MakeNode(name)).status().code(), Code::kAlreadyExists);

  Node heartbeat = **created;
  heartbeat.status.conditions[0].last_heartbeat_time = TimePoint(std::chrono::seconds(1700000010));
  heartbeat.spec.unschedulable = true;  // ignored by a status write
  auto beat =
      this->template Await<Result<NodePtr>>([&](auto cb) { this->nodes().UpdateStatus(heartbeat, cb); });
  ASSERT_TRUE(beat.ok()) << beat.status().ToString();
  EXPECT_EQ(*(*beat)->status.conditions[0].last_heartbeat_time, TimePoint(std::chrono::seconds(1700000010)));
  EXPECT_FALSE((*beat)->spec.unschedulable);

  Node tainted = **beat;
  Taint t;
  t.key = kTaintUnreachable;
  t.effect = "NoExecute";
  tainted.spec.taints.push_back(t);
  auto updated = this->template Await<Result<NodePtr>>([&](auto cb) { this->nodes().Update(tainted, cb); });
  ASSERT_TRUE(updated.ok()) << updated.status().ToString();
  EXPECT_TRUE(HasTaint(**updated, kTaintUnreachable));

  ListOptions by_name;
  by_name.field_name = name;
  auto list =
      this->template Await<Result<ObjectList<Node>>>([&](auto cb) { this->nodes().List("", by_name, cb); });
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  ASSERT_EQ(list->items.size(), 1u);
  EXPECT_EQ(list->items[0]->metadata.name, name);

  Node bad = this->MakeNode(this->ns_ + "-bad");
  bad.status.conditions[0].status = "Maybe";
  EXPECT_EQ(this->CreateNode(bad).status().code(), Code::kInvalid);

  auto deleted = this->template Await<Result<NodePtr>>(
      [&](auto cb) { this->nodes().Delete("", name, DeleteOptions{}, cb); });
  ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
  EXPECT_EQ(this->GetNode(name).status().code(), Code::kNotFound);
}

// Node heartbeats: one Lease per node in kube-node-lease, renewed with optimistic concurrency, listed.
TYPED_TEST_P(ClusterApiContractTest, NodeLeasesAreCreatedRenewedAndListed) {
  LeaseClient& leases = this->h_.cluster().leases();
  const std::string ns = kNodeLeaseNamespace;
  const std::string name = this->ns_ + "-node";
  Lease lease;
  lease.metadata.name = name;
  lease.spec.holder_identity = name;
  lease.spec.lease_duration_seconds = 40;
  lease.spec.renew_time = TimePoint(std::chrono::seconds(1700000000));
  auto created = this->template Await<Result<LeasePtr>>([&](auto cb) { leases.Create(ns, lease, cb); });
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ((*created)->metadata.namespace_, ns);
  EXPECT_FALSE((*created)->metadata.uid.empty());
  EXPECT_FALSE((*created)->metadata.resource_version.empty());
  EXPECT_EQ(
      this->template Await<Result<LeasePtr>>([&](auto cb) { leases.Create(ns, lease, cb); }).status().code(),
      Code::kAlreadyExists);

  Lease renewed = **created;
  renewed.spec.renew_time = TimePoint(std::chrono::seconds(1700000010));
  auto r1 = this->template Await<Result<LeasePtr>>([&](auto cb) { leases.Update(renewed, cb); });
  ASSERT_TRUE(r1.ok()) << r1.status().ToString();
  EXPECT_NE((*r1)->metadata.resource_version, (*created)->metadata.resource_version);
  EXPECT_EQ((*r1)->metadata.uid, (*created)->metadata.uid);
  // A renewal from the version before: another writer renewed meanwhile.
  renewed.spec.renew_time = TimePoint(std::chrono::seconds(1700000020));
  EXPECT_EQ(
      this->template Await<Result<LeasePtr>>([&](auto cb) { leases.Update(renewed, cb); }).status().code(),
      Code::kConflict);
  renewed.metadata.resource_version.clear();  // unconditional
  auto r2 = this->template Await<Result<LeasePtr>>([&](auto cb) { leases.Update(renewed, cb); });
  ASSERT_TRUE(r2.ok()) << r2.status().ToString();

  auto got = this->template Await<Result<LeasePtr>>([&](auto cb) { leases.Get(ns, name, cb); });
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ((*got)->spec.renew_time, TimePoint(std::chrono::seconds(1700000020)));
  EXPECT_EQ((*got)->spec.holder_identity, name);
  EXPECT_EQ((*got)->spec.lease_duration_seconds, 40);
  EXPECT_EQ((*got)->metadata.resource_version, (*r2)->metadata.resource_version);

  auto list = this->template Await<Result<ObjectList<Lease>>>([&](auto cb) { leases.List(ns, {}, cb); });
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  EXPECT_FALSE(list->resource_version.empty());
  const Lease* listed = nullptr;
  for (const LeasePtr& l : list->items) {
    EXPECT_EQ(l->metadata.namespace_, ns);
    if (l->metadata.name == name) listed = l.get();
  }
  ASSERT_NE(listed, nullptr);
  EXPECT_EQ(listed->spec.renew_time, TimePoint(std::chrono::seconds(1700000020)));

  Lease missing = lease;
  missing.metadata.name = this->ns_ + "-absent";
  EXPECT_EQ(
      this->template Await<Result<LeasePtr>>([&](auto cb) { leases.Update(missing, cb); }).status().code(),
      Code::kNotFound);
  EXPECT_EQ(
      this->template Await<Result<LeasePtr>>([&](auto cb) { leases.Get(ns, missing.metadata.name, cb); })
          .status()
          .code(),
      Code::kNotFound);
}

// A node's Lease is owned by its Node (the kubelet sets the reference, the garbage collector deletes
// the Lease with the Node): the ownerReference survives a round trip, and Delete honours the uid
// precondition.
TYPED_TEST_P(ClusterApiContractTest, NodeLeaseKeepsItsOwnerAndIsDeletedWithPreconditions) {
  LeaseClient& leases = this->h_.cluster().leases();
  const std::string ns = kNodeLeaseNamespace;
  const std::string name = this->ns_ + "-owned";
  Lease lease;
  lease.metadata.name = name;
  OwnerReference owner;
  owner.api_version = "v1";
  owner.kind = "Node";
  owner.name = name;
  owner.uid = "node-uid-1";
  owner.controller = false;
  owner.block_owner_deletion = false;
  lease.metadata.owner_references.push_back(owner);
  lease.spec.holder_identity = name;
  auto created = this->template Await<Result<LeasePtr>>([&](auto cb) { leases.Create(ns, lease, cb); });
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  auto got = this->template Await<Result<LeasePtr>>([&](auto cb) { leases.Get(ns, name, cb); });
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_EQ((*got)->metadata.owner_references.size(), 1u);
  EXPECT_EQ((*got)->metadata.owner_references[0], owner);

  DeleteOptions stale;
  stale.precondition_uid = "another-uid";
  EXPECT_EQ(this->template Await<Result<LeasePtr>>([&](auto cb) { leases.Delete(ns, name, stale, cb); })
                .status()
                .code(),
            Code::kConflict);
  DeleteOptions same;
  same.precondition_uid = (*created)->metadata.uid;
  auto deleted = this->template Await<Result<LeasePtr>>([&](auto cb) { leases.Delete(ns, name, same, cb); });
  ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
  EXPECT_EQ((*deleted)->metadata.uid, (*created)->metadata.uid);
  EXPECT_EQ(
      this->template Await<Result<LeasePtr>>([&](auto cb) { leases.Get(ns, name, cb); }).status().code(),
      Code::kNotFound);
  EXPECT_EQ(
      this->template Await<Result<LeasePtr>>([&](auto cb) { leases.Delete(ns, name, DeleteOptions{}, cb); })
          .status()
          .code(),
      Code::kNotFound);
}

// The node lifecycle controller watches kube-node-lease: a watch from a list's version sees a lease's
// creation, its renewal and its deletion, in order, at the versions the writes returned; a selector on
// metadata.name keeps the other leases out.
TYPED_TEST_P(ClusterApiContractTest, NodeLeaseWatchSeesCreationRenewalAndDeletion) {
  LeaseClient& leases = this->h_.cluster().leases();
  const std::string ns = kNodeLeaseNamespace;
  const std::string name = this->ns_ + "-watched";
  ListOptions only;
  ASSERT_TRUE(ParseFieldSelector("metadata.name=" + name, &only).ok());
  auto list = this->template Await<Result<ObjectList<Lease>>>([&](auto cb) { leases.List(ns, only, cb); });
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  EXPECT_TRUE(list->items.empty());
  api_contract::WatchRecorder<Lease> rec;
  auto watch = leases.Watch(ns, only, list->resource_version, rec.Callback());

  Lease other;
  other.metadata.name = this->ns_ + "-other";
  ASSERT_TRUE(this->template Await<Result<LeasePtr>>([&](auto cb) { leases.Create(ns, other, cb); }).ok());
  Lease lease;
  lease.metadata.name = name;
  lease.spec.holder_identity = name;
  lease.spec.renew_time = TimePoint(std::chrono::seconds(1700000000));
  auto created = this->template Await<Result<LeasePtr>>([&](auto cb) { leases.Create(ns, lease, cb); });
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  Lease renewed = **created;
  renewed.spec.renew_time = TimePoint(std::chrono::seconds(1700000010));
  auto r1 = this->template Await<Result<LeasePtr>>([&](auto cb) { leases.Update(renewed, cb); });
  ASSERT_TRUE(r1.ok()) << r1.status().ToString();
  ASSERT_TRUE(
      this->template Await<Result<LeasePtr>>([&](auto cb) { leases.Delete(ns, name, DeleteOptions{}, cb); })
          .ok());

  ASSERT_TRUE(this->h_.WaitFor([&] { return rec.size() >= 3; }, api_contract::kReplyTimeout));
  using Type = ApiWatchEvent<Lease>::Type;
  auto ev = rec.events();
  ASSERT_EQ(ev.size(), 3u);  // the other lease, written first, would have come first
  EXPECT_EQ(ev[0].type, static_cast<int>(Type::kAdded));
  EXPECT_EQ(ev[0].name, name);
  EXPECT_EQ(ev[0].resource_version, (*created)->metadata.resource_version);
  EXPECT_EQ(ev[1].type, static_cast<int>(Type::kModified));
  EXPECT_EQ(ev[1].resource_version, (*r1)->metadata.resource_version);
  EXPECT_EQ(ev[2].type, static_cast<int>(Type::kDeleted));
  EXPECT_EQ(ev[2].name, name);
}

// As every watch: from a compacted version it ends at once with kGone, and the watcher re-lists.
TYPED_TEST_P(ClusterApiContractTest, NodeLeaseWatchFromACompactedVersionIsGone) {
  LeaseClient& leases = this->h_.cluster().leases();
  const std::string ns = kNodeLeaseNamespace;
  Lease lease;
  lease.metadata.name = this->ns_ + "-compacted";
  auto created = this->template Await<Result<LeasePtr>>([&](auto cb) { leases.Create(ns, lease, cb); });
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  Lease renewed = **created;
  for (int i = 0; i < 3; ++i) {
    renewed.spec.renew_time = TimePoint(std::chrono::seconds(1700000000 + i));
    renewed.metadata.resource_version.clear();
    ASSERT_TRUE(this->template Await<Result<LeasePtr>>([&](auto cb) { leases.Update(renewed, cb); }).ok());
  }
  if (!this->h_.Compact()) GTEST_SKIP() << "the harness cannot compact";
  api_contract::WatchRecorder<Lease> rec;
  auto watch = leases.Watch(ns, {}, (*created)->metadata.resource_version, rec.Callback());
  ASSERT_TRUE(this->h_.WaitFor([&] { return rec.size() >= 1; }, api_contract::kReplyTimeout));
  auto ev = rec.events();
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].type, static_cast<int>(ApiWatchEvent<Lease>::Type::kError));
  EXPECT_EQ(ev[0].error, Code::kGone);
}

TYPED_TEST_P(ClusterApiContractTest, BindingSetsNodeNameOnceAndPodScheduled) {
  ASSERT_TRUE(this->CreatePod(api_contract::MakePod("web-1")).ok());
  Status bound = this->Bind("web-1", "node-a");
  ASSERT_TRUE(bound.ok()) << bound.ToString();
  auto got = this->GetPod("web-1");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ((*got)->spec.node_name, "node-a");
  bool scheduled = false;
  for (const PodCondition& c : (*got)->status.conditions) {
    scheduled = scheduled || (c.type == "PodScheduled" && c.status == "True");
  }
  EXPECT_TRUE(scheduled);
  EXPECT_EQ(this->Bind("web-1", "node-b").code(), Code::kConflict) << "a pod is bound once";
  EXPECT_EQ(this->Bind("missing", "node-a").code(), Code::kNotFound);
  EXPECT_EQ(this->Bind("web-1", "").code(), Code::kInvalid);
}

TYPED_TEST_P(ClusterApiContractTest, UnboundPodIsDeletedAtOnce) {
  ASSERT_TRUE(this->CreatePod(api_contract::MakePod("web-1")).ok());
  auto deleted = this->DeletePod("web-1");
  ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
  EXPECT_EQ(this->GetPod("web-1").status().code(), Code::kNotFound);
}

TYPED_TEST_P(ClusterApiContractTest, BoundPodIsDeletedGracefully) {
  Pod pod = api_contract::MakePod("web-1");
  pod.spec.termination_grace_period_seconds = 20;
  ASSERT_TRUE(this->CreatePod(pod).ok());
  ASSERT_TRUE(this->Bind("web-1", "node-a").ok());

  auto first = this->DeletePod("web-1");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  auto got = this->GetPod("web-1");
  ASSERT_TRUE(got.ok()) << "a bound pod stays until its node agent finishes the deletion";
  ASSERT_TRUE((*got)->metadata.deletion_timestamp.has_value());
  EXPECT_EQ((*got)->metadata.deletion_grace_period_seconds, 20);
  EXPECT_FALSE(IsActive(**got));

  auto longer = this->DeletePod("web-1", this->Grace(60));
  ASSERT_TRUE(longer.ok());
  EXPECT_EQ((*this->GetPod("web-1"))->metadata.deletion_grace_period_seconds, 20) << "grace only shortens";
  ASSERT_TRUE(this->DeletePod("web-1", this->Grace(5)).ok());
  EXPECT_EQ((*this->GetPod("web-1"))->metadata.deletion_grace_period_seconds, 5);

  // The node agent's final delete.
  ASSERT_TRUE(this->DeletePod("web-1", this->Grace(0)).ok());
  EXPECT_EQ(this->GetPod("web-1").status().code(), Code::kNotFound);
}

TYPED_TEST_P(ClusterApiContractTest, TerminatedBoundPodIsDeletedAtOnce) {
  ASSERT_TRUE(this->CreatePod(api_contract::MakePod("web-1")).ok());
  ASSERT_TRUE(this->Bind("web-1", "node-a").ok());
  Pod done = **this->GetPod("web-1");
  done.status.phase = phase::kSucceeded;
  ASSERT_TRUE(this->UpdatePodStatus(done).ok());
  ASSERT_TRUE(this->DeletePod("web-1").ok());
  EXPECT_EQ(this->GetPod("web-1").status().code(), Code::kNotFound);
}

TYPED_TEST_P(ClusterApiContractTest, FinalizersHoldTheObjectUntilRemoved) {
  Pod pod = api_contract::MakePod("web-1");
  pod.metadata.finalizers = {"example.com/hold"};
  ASSERT_TRUE(this->CreatePod(pod).ok());
  ASSERT_TRUE(this->DeletePod("web-1").ok());
  auto held = this->GetPod("web-1");
  ASSERT_TRUE(held.ok()) << "a finalizer keeps the object";
  ASSERT_TRUE((*held)->metadata.deletion_timestamp.has_value());
  EXPECT_EQ((*held)->metadata.deletion_grace_period_seconds, 0);

  Pod released = **held;
  released.metadata.finalizers.clear();
  auto last = this->UpdatePod(released);
  ASSERT_TRUE(last.ok()) << last.status().ToString();
  EXPECT_EQ(this->GetPod("web-1").status().code(), Code::kNotFound)
      << "removing the last finalizer of a deleted object deletes it";
}

TYPED_TEST_P(ClusterApiContractTest, ControllerDeletionDefaultsToOrphan) {
  ASSERT_TRUE(this->CreateRc(api_contract::MakeController("web", 1)).ok());
  auto deleted = this->DeleteRc("web");
  ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
  auto held = this->GetRc("web");
  ASSERT_TRUE(held.ok()) << "with no policy a core/v1 replication controller orphans its pods";
  EXPECT_TRUE(this->HasFinalizer((*held)->metadata, kOrphanFinalizer));
  EXPECT_TRUE((*held)->metadata.deletion_timestamp.has_value());
  // What the garbage collector does once the dependents are orphaned.
  ReplicationController done = **held;
  done.metadata.finalizers.clear();
  ASSERT_TRUE(this->UpdateRc(done).ok());
  EXPECT_EQ(this->GetRc("web").status().code(), Code::kNotFound);
}

TYPED_TEST_P(ClusterApiContractTest, PropagationPolicySetsTheFinalizers) {
  ASSERT_TRUE(this->CreateRc(api_contract::MakeController("fg", 1)).ok());
  ASSERT_TRUE(this->DeleteRc("fg", this->Policy("Foreground")).ok());
  auto fg = this->GetRc("fg");
  ASSERT_TRUE(fg.ok());
  EXPECT_TRUE(this->HasFinalizer((*fg)->metadata, kForegroundFinalizer));
  EXPECT_FALSE(this->HasFinalizer((*fg)->metadata, kOrphanFinalizer));
  // A second request with another policy swaps the finalizer.
  ASSERT_TRUE(this->DeleteRc("fg", this->Policy("Orphan")).ok());
  auto orphan = this->GetRc("fg");
  ASSERT_TRUE(orphan.ok());
  EXPECT_TRUE(this->HasFinalizer((*orphan)->metadata, kOrphanFinalizer));
  EXPECT_FALSE(this->HasFinalizer((*orphan)->metadata, kForegroundFinalizer));
  // Background drops both: nothing holds the object any more.
  ASSERT_TRUE(this->DeleteRc("fg", this->Policy("Background")).ok());
  EXPECT_EQ(this->GetRc("fg").status().code(), Code::kNotFound);

  ASSERT_TRUE(this->CreateRc(api_contract::MakeController("bg", 1)).ok());
  ASSERT_TRUE(this->DeleteRc("bg", this->Policy("Background")).ok());
  EXPECT_EQ(this->GetRc("bg").status().code(), Code::kNotFound);

  ASSERT_TRUE(this->CreateRc(api_contract::MakeController("bad", 1)).ok());
  EXPECT_EQ(this->DeleteRc("bad", this->Policy("Sideways")).status().code(), Code::kInvalid);
  EXPECT_TRUE(this->GetRc("bad").ok());
}

TYPED_TEST_P(ClusterApiContractTest, FieldSelectorsOnNodeNamePhaseAndNamespace) {
  for (const char* name : {"a", "b", "c"}) ASSERT_TRUE(this->CreatePod(api_contract::MakePod(name)).ok());
  ASSERT_TRUE(this->Bind("a", "node-1").ok());
  ASSERT_TRUE(this->Bind("b", "node-2").ok());
  Pod failed = **this->GetPod("b");
  failed.status.phase = phase::kFailed;
  ASSERT_TRUE(this->UpdatePodStatus(failed).ok());

  auto names = [&](const std::string& selector, const std::string& ns) {
    ListOptions opts;
    Status s = ParseFieldSelector(selector, &opts);
    EXPECT_TRUE(s.ok()) << s.ToString();
    auto list = this->ListPods(opts, ns);
    std::vector<std::string> out;
    if (!list.ok()) {
      out.push_back("error: " + list.status().ToString());
      return out;
    }
    for (const auto& p : list->items) {
      if (p->metadata.namespace_ == this->ns_) out.push_back(p->metadata.name);
    }
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(names("spec.nodeName=node-1", this->ns_), V{"a"});
  EXPECT_EQ(names("spec.nodeName==node-2", this->ns_), V{"b"});
  EXPECT_EQ(names("spec.nodeName=", this->ns_), V{"c"}) << "unbound pods";
  EXPECT_EQ(names("spec.nodeName!=node-1", this->ns_), (V{"b", "c"}));
  EXPECT_EQ(names("status.phase!=Failed,spec.nodeName!=", this->ns_), V{"a"});
  EXPECT_EQ(names("status.phase=Failed", ""), V{"b"}) << "all namespaces";
  EXPECT_EQ(names("metadata.namespace=" + this->ns_ + ",metadata.name=c", ""), V{"c"});
  EXPECT_EQ(names("metadata.name!=a", this->ns_), (V{"b", "c"}));

  ListOptions unsupported;
  ASSERT_TRUE(ParseFieldSelector("spec.hostname=x", &unsupported).ok());
  EXPECT_EQ(this->ListPods(unsupported, this->ns_).status().code(), Code::kBadRequest);
}

TYPED_TEST_P(ClusterApiContractTest, WatchByNodeNameSeesThePodOnceBound) {
  ListOptions mine;
  ASSERT_TRUE(ParseFieldSelector("spec.nodeName=node-w", &mine).ok());
  auto list = this->ListPods(mine, this->ns_);
  ASSERT_TRUE(list.ok());
  api_contract::WatchRecorder<Pod> rec;
  auto watch = this->pods().Watch(this->ns_, mine, list->resource_version, rec.Callback());
  ASSERT_TRUE(this->CreatePod(api_contract::MakePod("w")).ok());
  ASSERT_TRUE(this->CreatePod(api_contract::MakePod("other")).ok());
  ASSERT_TRUE(this->Bind("other", "node-x").ok());
  ASSERT_TRUE(this->Bind("w", "node-w").ok());
  ASSERT_TRUE(this->DeletePod("w", this->Grace(0)).ok());
  ASSERT_TRUE(this->h_.WaitFor([&] { return rec.size() >= 2; }, api_contract::kReplyTimeout));
  using Type = ApiWatchEvent<Pod>::Type;
  auto ev = rec.events();
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].type, static_cast<int>(Type::kAdded));
  EXPECT_EQ(ev[0].name, "w");
  EXPECT_EQ(ev[1].type, static_cast<int>(Type::kDeleted));
}

REGISTER_TYPED_TEST_SUITE_P(ClusterApiContractTest, NodesAreClusterScopedAndKeepTheirStatus,
                            NodeLeasesAreCreatedRenewedAndListed,
                            NodeLeaseKeepsItsOwnerAndIsDeletedWithPreconditions,
                            NodeLeaseWatchSeesCreationRenewalAndDeletion,
                            NodeLeaseWatchFromACompactedVersionIsGone, BindingSetsNodeNameOnceAndPodScheduled,
                            UnboundPodIsDeletedAtOnce, BoundPodIsDeletedGracefully,
                            TerminatedBoundPodIsDeletedAtOnce, FinalizersHoldTheObjectUntilRemoved,
                            ControllerDeletionDefaultsToOrphan, PropagationPolicySetsTheFinalizers,
                            FieldSelectorsOnNodeNamePhaseAndNamespace, WatchByNodeNameSeesThePodOnceBound);

}  // namespace rcsim

#endif  // RCSIM_TESTS_CONTRACT_CLUSTER_API_CONTRACT_H_
