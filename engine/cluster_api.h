// The ClusterApi port: what the cluster components (cluster/: scheduler, node agent, garbage
// collector, node lifecycle, pod GC) need beyond engine/api_client.h's pods and replication
// controllers: nodes, node heartbeat Leases and the pods/binding subresource. Implemented by the in-process
// client (fakes/inprocess_api_client.h) and the HTTP client (backends/httpclient/http_api_client.h); the
// cluster API contract suite (tests/contract/cluster_api_contract.h) runs against both.
//
// Contract: as ApiClient's (asynchronous, `done` exactly once and never inline, kTimeout = unknown
// outcome). Nodes are cluster-scoped: the namespace argument of every nodes() call is "".
// - nodes().Create keeps the given status (a node agent registers with its capacity and conditions);
//   UpdateStatus writes only .status (heartbeats, conditions); Update writes metadata and spec (taints).
// - leases(): coordination.k8s.io/v1 Leases (the node agents' heartbeats, kube-node-lease/<node>), with
//   registry/lease_registry.h's semantics: Create assigns uid and creationTimestamp (kAlreadyExists if
//   the name is taken); Update is a PUT with optimistic concurrency (a stale non-empty
//   resourceVersion gives kConflict, an empty one is unconditional; kNotFound if absent); List gives a
//   namespace's leases in name order and the revision read at, filtered by the label selector and
//   metadata.name (any other field selector but metadata.namespace is kBadRequest); Watch gives the
//   changes after a revision as ApiClient's watches do (kGone past a compaction); Delete honours the
//   uid and resourceVersion preconditions (kConflict) and gives the deleted lease (kNotFound if
//   absent). The node lifecycle controller watches kube-node-lease (a list+watch cache); the garbage
//   collector lists it when a Node goes.
// - BindPod sets spec.nodeName of a pod that has none and adds condition PodScheduled=True; kConflict
//   if the pod is already bound (to any node), kNotFound if it does not exist (or its uid differs from
//   binding.metadata.uid when that is set).
#ifndef RCSIM_ENGINE_CLUSTER_API_H_
#define RCSIM_ENGINE_CLUSTER_API_H_

#include <string>

#include "engine/api_client.h"
#include "engine/lease.h"
#include "engine/node_types.h"
#include "engine/status.h"

namespace rcsim {

// List and Watch come from ListWatchClient<Lease>.
class LeaseClient : public ListWatchClient<Lease> {
 public:
  virtual void Get(const std::string& ns, const std::string& name, Callback<Result<LeasePtr>> done) = 0;
  virtual void Create(const std::string& ns, Lease lease, Callback<Result<LeasePtr>> done) = 0;
  virtual void Update(Lease lease, Callback<Result<LeasePtr>> done) = 0;
  virtual void Delete(const std::string& ns, const std::string& name, const DeleteOptions& opts,
                      Callback<Result<LeasePtr>> done) = 0;
};

class ClusterApi {
 public:
  virtual ~ClusterApi() = default;
  virtual ResourceClient<Node>& nodes() = 0;
  virtual LeaseClient& leases() = 0;
  virtual void BindPod(const std::string& ns, Binding binding, Callback<Status> done) = 0;
};

}  // namespace rcsim

#endif  // RCSIM_ENGINE_CLUSTER_API_H_
