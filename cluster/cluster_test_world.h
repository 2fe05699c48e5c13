// Test support for cluster/*_test.cc: the in-process API over the in-memory etcd on the virtual
// clock, with helpers to create and read objects synchronously (through the registry).
#ifndef RCSIM_CLUSTER_CLUSTER_TEST_WORLD_H_
#define RCSIM_CLUSTER_CLUSTER_TEST_WORLD_H_

#include <string>
#include <vector>

#include "engine/node_types.h"
#include "fakes/inprocess_api_client.h"
#include "fakes/mem_store.h"
#include "fakes/sim_loop.h"
#include "registry/registry.h"

namespace rcsim {

class ClusterTestWorld {
 public:
  ClusterTestWorld()
      : store_(&loop_, &loop_), rng_(7), registry_(&store_, &loop_, &rng_), api_(&registry_, &loop_) {}

  SimLoop& loop() { return loop_; }
  MemStore& store() { return store_; }
  Registry& registry() { return registry_; }
  InProcessApiClient& api() { return api_; }
  Rng& rng() { return rng_; }

  static Pod MakePod(const std::string& name, const std::string& restart_policy = "Always") {
    Pod pod;
    pod.metadata.name = name;
    pod.metadata.labels = {{"app", "web"}};
    pod.spec.restart_policy = restart_policy;
    Container c;
    c.name = "main";
    c.image = "busybox";
    c.command = {"sleep", "3600"};
    pod.spec.containers.push_back(c);
    return pod;
  }
  static Node MakeNode(const std::string& name, TimePoint heartbeat, int64_t pods = 110) {
    Node n;
    n.metadata.name = name;
    n.status.capacity = {{"pods", std::to_string(pods)}};
    NodeCondition ready;
    ready.type = "Ready";
    ready.status = "True";
    ready.last_heartbeat_time = heartbeat;
    ready.last_transition_time = heartbeat;
    n.status.conditions.push_back(ready);
    return n;
  }

  PodPtr CreatePod(Pod pod, const std::string& ns = "default") {
    auto r = registry_.pods().Create(ns, std::move(pod));
    return r.ok() ? *r : nullptr;
  }
  PodPtr GetPod(const std::string& name, const std::string& ns = "default") {
    auto r = registry_.pods().Get(ns, name);
    return r.ok() ? *r : nullptr;
  }
  NodePtr CreateNode(Node node) {
    auto r = registry_.nodes().Create("", std::move(node));
    return r.ok() ? *r : nullptr;
  }
  NodePtr GetNode(const std::string& name) {
    auto r = registry_.nodes().Get("", name);
    return r.ok() ? *r : nullptr;
  }
  std::vector<PodPtr> Pods(const std::string& ns = "") {
    auto r = registry_.pods().List(ns, ListOptions{});
    return r.ok() ? r->items : std::vector<PodPtr>{};
  }
  // Runs the loop until pred() holds or `limit` of virtual time passes.
  template <typename Pred>
  bool RunUntil(Pred pred, Duration limit = std::chrono::minutes(10)) {
    const TimePoint deadline = loop_.Now() + limit;
    while (!pred()) {
      auto next = loop_.NextDue();
      if (!next || *next > deadline) {
        loop_.RunUntil(deadline);
        return pred();
      }
      loop_.RunOne();
    }
    return true;
  }

 private:
  SimLoop loop_;
  MemStore store_;
  Mt19937Rng rng_;
  Registry registry_;
  InProcessApiClient api_;
};

}  // namespace rcsim

#endif  // RCSIM_CLUSTER_CLUSTER_TEST_WORLD_H_
