// NodePodIndex: serves the node agents' "pods bound to me" lists and watches (fieldSelector
// spec.nodeName=<node>) from one watch of every pod, indexed by spec.nodeName, as kube-apiserver's
// watch cache indexes pods for its kubelets. Without it every agent's watch would see (and filter)
// every pod event: agents x events deliveries, which a simulation of hundreds of nodes cannot afford.
//
// client() is an ApiClient + ClusterApi over the wrapped one: pods().List and pods().Watch in every
// namespace ("") with exactly one field requirement `spec.nodeName=<node>` and no other selector are
// served from the index; everything else passes through. What it serves keeps the registry's watch
// semantics: a list gives the node's pods and the revision the index had applied (as a list served
// by kube-apiserver's watch cache, it may lag a write whose event the index's watch has not delivered
// yet; the watch from its revision then delivers it); a watch from that revision delivers ADDED when
// a pod becomes bound to the node, MODIFIED while it stays, DELETED when it goes, in revision order.
// A watch from a revision the index no longer covers (it keeps the last `log_limit` node events) or
// any error of the underlying watch ends the watch with one kError (kGone); the watcher re-lists, as
// with the registry.
//
// Deterministic: hash maps only where nothing iterates them in an order that reaches a caller (a list
// sorts the node's pods by key; EndAll goes through the nodes in name order). Thread-safety: none; runs on
// the simulation's Executor (the wrapped client must call back there too).
#ifndef RCSIM_FAKES_NODE_POD_INDEX_H_
#define RCSIM_FAKES_NODE_POD_INDEX_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/api_client.h"
#include "engine/cluster_api.h"
#include "engine/executor.h"
#include "engine/time.h"

namespace rcsim {

class NodePodIndex {
 public:
  // Neither pointer is owned; both must outlive the index. The inner client must be both an
  // ApiClient and a ClusterApi (the in-process client is). Starts watching at once.
  NodePodIndex(ApiClient* api, ClusterApi* cluster, Executor* executor, std::size_t log_limit = 4096);
  ~NodePodIndex();
  NodePodIndex(const NodePodIndex&) = delete;
  NodePodIndex& operator=(const NodePodIndex&) = delete;

  class PodsOnNodes;  // the pods() of client(); defined in the .cc
  class Client final : public ApiClient, public ClusterApi {
   public:
    Client(NodePodIndex* index, ApiClient* api, ClusterApi* cluster);
    ~Client() override;
    ResourceClient<Pod>& pods() override;
    ResourceClient<ReplicationController>& controllers() override { return api_->controllers(); }
    ResourceClient<Node>& nodes() override { return cluster_->nodes(); }
    LeaseClient& leases() override { return cluster_->leases(); }
    void BindPod(const std::string& ns, Binding binding, Callback<Status> done) override {
      cluster_->BindPod(ns, std::move(binding), std::move(done));
    }

   private:
    ApiClient* const api_;
    ClusterApi* const cluster_;
    std::unique_ptr<PodsOnNodes> pods_;
  };
  Client& client() { return *client_; }

  // Pods bound to `node`, as the index last saw them.
  std::size_t pods_on(const std::string& node) const;
  uint64_t relists() const { return relists_; }

 private:
  friend class PodsOnNodes;
  struct Subscriber {
    std::string node;
    std::function<void(const ApiWatchEvent<Pod>&)> on_event;
    std::deque<ApiWatchEvent<Pod>> queue;
    bool drain_posted = false;
    bool open = true;
  };
  using SubscriberPtr = std::shared_ptr<Subscriber>;
  struct Entry {
    int64_t revision;
    std::string node;
    ApiWatchEvent<Pod> event;
  };

  void Relist();
  void OnEvent(const ApiWatchEvent<Pod>& ev);
  void Apply(const PodPtr& pod, bool deleted, int64_t revision);
  // Where a pod bound to a node is: the node, and its entry in by_node_ (an element of a hash map
  // stays where it is until erased), so that an update of a pod that stays costs one lookup.
  struct Placement {
    std::string node;
    PodPtr* slot = nullptr;
  };
  using PlacementMap = std::unordered_map<std::string, Placement>;
  // Adds a pod bound to a node, not in the index yet; Unplace removes one, returning its node.
  void Place(const std::string& key, const PodPtr& pod);
  std::string Unplace(PlacementMap::iterator known);
  void Emit(const std::string& node, typename ApiWatchEvent<Pod>::Type type, const PodPtr& pod,
            int64_t revision);
  void Deliver(const SubscriberPtr& s, const ApiWatchEvent<Pod>& ev);
  void EndAll();

  // What client() serves.
  void List(const std::string& node, Callback<Result<ObjectList<Pod>>> done);
  std::unique_ptr<ApiWatch> Watch(const std::string& node, const std::string& resource_version,
                                  std::function<void(const ApiWatchEvent<Pod>&)> on_event);

  ApiClient* const api_;
  Executor* const executor_;
  const std::size_t log_limit_;
  std::unique_ptr<Client> client_;
  std::unique_ptr<ApiWatch> watch_;
  bool synced_ = false;
  int64_t revision_ = 0;   // last revision applied
  int64_t log_floor_ = 0;  // the log holds every node event after this revision
  // node -> key -> pod (a list sorts them by key), and key -> where it is.
  std::unordered_map<std::string, std::unordered_map<std::string, PodPtr>> by_node_;
  PlacementMap node_of_;
  std::deque<Entry> log_;
  // node -> its watchers, in the order they subscribed (the order they are delivered to).
  std::unordered_map<std::string, std::vector<SubscriberPtr>> subscribers_;
  std::vector<std::function<void()>> waiting_lists_;  // lists asked before the first sync
  uint64_t relists_ = 0;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace rcsim

#endif  // RCSIM_FAKES_NODE_POD_INDEX_H_
