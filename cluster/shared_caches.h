// SharedCaches: one list+watch cache per resource for all the controllers of one process, as
// kube-controller-manager's SharedInformerFactory: the garbage collector, the node lifecycle
// controller and the pod GC each read every pod and every node, and with a cache each they kept three
// copies of the same maps and opened three watches of every pod. Each controller adds its handlers to
// the caches it reads (ObjectCache::AddHandlers) before they start; Start() starts the caches asked for
// so far, once.
//
// The caches are created on first use, with the default relist delay (1 s) and no selector; the node
// Leases' cache holds kube-node-lease only. A controller given no SharedCaches makes its own (tests build
// controllers alone).
//
// Thread-safety: none; as ObjectCache, everything runs on the Executor's thread. Must outlive every
// controller that uses it; their handlers check that their controller is still alive.
#ifndef RCSIM_CLUSTER_SHARED_CACHES_H_
#define RCSIM_CLUSTER_SHARED_CACHES_H_

#include <memory>

#include "cluster/object_cache.h"
#include "engine/api_client.h"
#include "engine/cluster_api.h"
#include "engine/executor.h"
#include "engine/lease.h"
#include "engine/node_types.h"

namespace rcsim {

class SharedCaches {
 public:
  // Not owned; all must outlive the caches. `cluster` may be null when no controller reads nodes.
  SharedCaches(ApiClient* api, ClusterApi* cluster, Executor* executor)
      : api_(api), cluster_(cluster), executor_(executor) {}
  SharedCaches(const SharedCaches&) = delete;
  SharedCaches& operator=(const SharedCaches&) = delete;

  ObjectCache<Pod>& pods() {
    if (!pods_) pods_ = Make(&api_->pods());
    return *pods_;
  }
  ObjectCache<ReplicationController>& controllers() {
    if (!controllers_) controllers_ = Make(&api_->controllers());
    return *controllers_;
  }
  // Needs a ClusterApi.
  ObjectCache<Node>& nodes() {
    if (!nodes_) nodes_ = Make(&cluster_->nodes());
    return *nodes_;
  }

  // The node heartbeat Leases (kube-node-lease). Needs a ClusterApi.
  ObjectCache<Lease>& node_leases() {
    if (!node_leases_) {
      node_leases_ = std::make_unique<ObjectCache<Lease>>(&cluster_->leases(), executor_, kNodeLeaseNamespace,
                                                          ListOptions{}, ObjectCache<Lease>::Handlers{});
    }
    return *node_leases_;
  }

  // Starts every cache asked for so far (each once); call it after every controller added its handlers.
  void Start() {
    if (controllers_) controllers_->Start();
    if (pods_) pods_->Start();
    if (nodes_) nodes_->Start();
    if (node_leases_) node_leases_->Start();
  }

 private:
  template <typename T>
  std::unique_ptr<ObjectCache<T>> Make(ResourceClient<T>* client) {
    return std::make_unique<ObjectCache<T>>(client, executor_, "", ListOptions{},
                                            typename ObjectCache<T>::Handlers{});
  }

  ApiClient* const api_;
  ClusterApi* const cluster_;
  Executor* const executor_;
  std::unique_ptr<ObjectCache<ReplicationController>> controllers_;
  std::unique_ptr<ObjectCache<Pod>> pods_;
  std::unique_ptr<ObjectCache<Node>> nodes_;
  std::unique_ptr<ObjectCache<Lease>> node_leases_;
};

}  // namespace rcsim

#endif  // RCSIM_CLUSTER_SHARED_CACHES_H_
