// The ClusterApi port: what the cluster components (cluster/: scheduler, node agent, garbage
// collector, node lifecycle, pod GC) need beyond engine/api_client.h's pods and replication
// controllers: nodes and the pods/binding subresource. Implemented by the in-process client
// (fakes/inprocess_api_client.h) and the HTTP client (backends/httpclient/http_api_client.h); the
// cluster API contract suite (tests/contract/cluster_api_contract.h) runs against both.
//
// Contract: as ApiClient's (asynchronous, `done` exactly once and never inline, kTimeout = unknown
// outcome). Nodes are cluster-scoped: the namespace argument of every nodes() call is "".
// - nodes().Create keeps the given status (a node agent registers with its capacity and conditions);
//   UpdateStatus writes only .status (heartbeats, conditions); Update writes metadata and spec (taints).
// - BindPod sets spec.nodeName of a pod that has none and adds condition PodScheduled=True; kConflict
//   if the pod is already bound (to any node), kNotFound if it does not exist (or its uid differs from
//   binding.metadata.uid when that is set).
#ifndef RCSIM_ENGINE_CLUSTER_API_H_
#define RCSIM_ENGINE_CLUSTER_API_H_

#include <string>

#include "engine/api_client.h"
#include "engine/node_types.h"
#include "engine/status.h"

namespace rcsim {

class ClusterApi {
 public:
  virtual ~ClusterApi() = default;
  virtual ResourceClient<Node>& nodes() = 0;
  virtual void BindPod(const std::string& ns, Binding binding, Callback<Status> done) = 0;
};

}  // namespace rcsim

#endif  // RCSIM_ENGINE_CLUSTER_API_H_
