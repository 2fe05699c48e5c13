#include "cluster/node_lifecycle_controller.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace rcsim {

NodeLifecycleController::NodeLifecycleController(NodeLifecycleOptions options, ApiClient* api,
                                                 ClusterApi* cluster, Clock* clock, Executor* executor,
                                                 TraceSink* trace, SharedCaches* caches)
    : options_(options), api_(api), cluster_(cluster), clock_(clock), executor_(executor), trace_(trace) {
  if (caches == nullptr) {
    own_caches_ = std::make_unique<SharedCaches>(api, cluster, executor);
    caches = own_caches_.get();
  }
  caches_ = caches;
  ObjectCache<Node>::Handlers nh;  // the caches may outlive this controller: the handlers check
  nh.on_upsert = [this, alive = alive_](const NodePtr&, const NodePtr& n) {
    if (*alive) OnNode(n);
  };
  nh.on_delete = [this, alive = alive_](const NodePtr& n) {
    if (*alive) probes_.erase(n->metadata.name);
  };
  nodes_ = &caches->nodes();
  nodes_->AddHandlers(std::move(nh));
  pods_ = &caches->pods();
  ObjectCache<Lease>::Handlers lh;
  lh.on_upsert = [this, alive = alive_](const LeasePtr&, const LeasePtr& l) {
    if (*alive) OnLease(*l);
  };
  leases_ = &caches->node_leases();
  leases_->AddHandlers(std::move(lh));
}

NodeLifecycleController::~NodeLifecycleController() { *alive_ = false; }

void NodeLifecycleController::Trace(const std::string& event) {
  if (trace_ != nullptr && trace_->enabled()) trace_->Record("nodelifecycle", event);
}

void NodeLifecycleController::Start() {
  started_ = clock_->Now();
  caches_->Start();
  executor_->Schedule(options_.monitor_period, [this, alive = alive_] {
    if (*alive) Monitor();
  });
}

void NodeLifecycleController::OnNode(const NodePtr& node) {
  const NodeCondition* ready = FindNodeCondition(node->status, "Ready");
  Probe& p = probes_[node->metadata.name];
  const bool first = p.seen == TimePoint{};
  std::optional<TimePoint> beat = ready ? ready->last_heartbeat_time : std::nullopt;
  if (first || beat != p.heartbeat) {
    p.heartbeat = beat;
    p.seen = clock_->Now();
  }
  if (first) {  // its lease may have come first
    if (LeasePtr lease = leases_->Get(kNodeLeaseNamespace, node->metadata.name)) OnLease(*lease);
  }
  if (IsNodeReady(*node) && HasTaint(*node, kTaintUnreachable)) SetTaint(node, false);
}

void NodeLifecycleController::OnLease(const Lease& lease) {
  auto it = probes_.find(lease.metadata.name);  // a lease of a node the controller knows
  if (it == probes_.end() || !lease.spec.renew_time) return;
  Probe& p = it->second;
  if (!p.lease_renew || *p.lease_renew < *lease.spec.renew_time) {
    p.lease_renew = lease.spec.renew_time;
    p.seen = clock_->Now();
  }
}

void NodeLifecycleController::Monitor() {
  executor_->Schedule(options_.monitor_period, [this, alive = alive_] {
    if (*alive) Monitor();
  });
  // Without every renewal a node cannot be judged: nothing is judged while the lease watch is down.
  if (!nodes_->synced() || !pods_->synced() || !leases_->live()) return;
  Judge();
}

void NodeLifecycleController::Judge() {
  const TimePoint now = clock_->Now();
  for (const auto& [name, node] : nodes_->objects()) {
    const Probe& p = probes_[name];
    const TimePoint since = std::max(p.seen, started_);
    const NodeCondition* ready = FindNodeCondition(node->status, "Ready");
    const bool unknown = ready != nullptr && ready->status == "Unknown";
    if (!unknown) {
      if (now - since > options_.grace_period) MarkUnknown(node);
      continue;
    }
    if (!HasTaint(*node, kTaintUnreachable)) SetTaint(node, true);
    MarkPodsNotReady(name);
    const TimePoint unknown_since = ready->last_transition_time.value_or(since);
    if (now - unknown_since >= options_.eviction_timeout) Evict(name);
  }
}

void NodeLifecycleController::MarkUnknown(const NodePtr& node) {
  const std::string key = "node:" + node->metadata.name;
  if (!in_flight_.insert(key).second) return;
  Node next = *node;
  next.metadata.resource_version.clear();
  const TimePoint now = clock_->Now();
  for (NodeCondition& c : next.status.conditions) {
    if (c.type != "Ready") continue;
    c.status = "Unknown";
    c.reason = "NodeStatusUnknown";
    c.message = "Kubelet stopped posting node status.";
    c.last_transition_time = now;
  }
  const std::string name = node->metadata.name;
  // Conditional on the version seen: a heartbeat that lands meanwhile wins.
  next.metadata.resource_version = node->metadata.resource_version;
  cluster_->nodes().UpdateStatus(std::move(next), [this, alive = alive_, key, name](Result<NodePtr> r) {
    if (!*alive) return;
    in_flight_.erase(key);
    if (!r.ok()) return;
    ++counters_.marked_unknown;
    Trace("unknown " + name);
    SetTaint(*r, true);
    MarkPodsNotReady(name);
  });
}

void NodeLifecycleController::SetTaint(const NodePtr& node, bool present) {
  const std::string key = "taint:" + node->metadata.name;
  if (HasTaint(*node, kTaintUnreachable) == present || !in_flight_.insert(key).second) return;
  Node next = *node;
  auto& taints = next.spec.taints;
  if (present) {
    Taint t;
    t.key = kTaintUnreachable;
    t.effect = "NoExecute";
    t.time_added = clock_->Now();
    taints.push_back(std::move(t));
  } else {
    taints.erase(std::remove_if(taints.begin(), taints.end(),
                                [](const Taint& t) { return t.key == kTaintUnreachable; }),
                 taints.end());
  }
  const std::string name = node->metadata.name;
  cluster_->nodes().Update(std::move(next),
                           [this, alive = alive_, key, name, present](const Result<NodePtr>& r) {
                             if (!*alive) return;
                             in_flight_.erase(key);
                             if (r.ok() && !present) {
                               ++counters_.taints_removed;
                               Trace("ready " + name);
                             }
                           });
}

void NodeLifecycleController::MarkPodsNotReady(const std::string& node) {
  for (const auto& [key, pod] : pods_->objects(
           [&](const Pod& p) { return p.spec.node_name == node && IsReady(p) && !IsTerminated(p); })) {
    const std::string k = "pod:" + key;
    if (!in_flight_.insert(k).second) continue;
    Pod next = *pod;
    next.metadata.resource_version.clear();
    for (PodCondition& c : next.status.conditions) {
      if (c.type == "Ready" || c.type == "ContainersReady") {
        c.status = "False";
        c.reason = "NodeLost";
        c.last_transition_time = clock_->Now();
      }
    }
    for (ContainerStatus& cs : next.status.container_statuses) cs.ready = false;
    api_->pods().UpdateStatus(std::move(next), [this, alive = alive_, k](const Result<PodPtr>& r) {
      if (!*alive) return;
      in_flight_.erase(k);
      if (r.ok()) ++counters_.pods_marked_not_ready;
    });
  }
}

void NodeLifecycleController::Evict(const std::string& node) {
  for (const auto& [key, pod] : pods_->objects(
           [&](const Pod& p) { return p.spec.node_name == node && !p.metadata.deletion_timestamp; })) {
    if (!evicted_.insert(pod->metadata.uid).second) continue;
    DeleteOptions opts;
    opts.precondition_uid = pod->metadata.uid;
    const std::string k = key;
    const std::string uid = pod->metadata.uid;
    api_->pods().Delete(
        pod->metadata.namespace_, pod->metadata.name, opts,
        [this, alive = alive_, k, uid](const Result<PodPtr>& r) {
          if (!*alive) return;
          if (r.ok()) {
            ++counters_.evictions;
            Trace("evict " + k);
          } else if (r.status().code() != Code::kNotFound && r.status().code() != Code::kConflict) {
            evicted_.erase(uid);  // retried by the next pass
          }
        });
  }
}

}  // namespace rcsim
