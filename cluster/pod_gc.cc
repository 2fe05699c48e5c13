#include "cluster/pod_gc.h"

#include <algorithm>
#include <tuple>
#include <utility>
#include <vector>

namespace rcsim {

PodGc::PodGc(PodGcOptions options, ApiClient* api, ClusterApi* cluster, Clock* clock, Executor* executor,
             TraceSink* trace, SharedCaches* caches)
    : options_(options), api_(api), cluster_(cluster), clock_(clock), executor_(executor), trace_(trace) {
  if (caches == nullptr) {
    own_caches_ = std::make_unique<SharedCaches>(api, cluster, executor);
    caches = own_caches_.get();
  }
  caches_ = caches;
  nodes_ = &caches->nodes();
  pods_ = &caches->pods();
}

PodGc::~PodGc() { *alive_ = false; }

void PodGc::Trace(const std::string& event) {
  if (trace_ != nullptr && trace_->enabled()) trace_->Record("podgc", event);
}

void PodGc::Start() {
  caches_->Start();
  executor_->Schedule(options_.period, [this, alive = alive_] {
    if (*alive) Pass();
  });
}

void PodGc::Pass() {
  executor_->Schedule(options_.period, [this, alive = alive_] {
    if (*alive) Pass();
  });
  if (!nodes_->synced() || !pods_->synced()) return;
  const TimePoint now = clock_->Now();
  std::vector<PodPtr> terminated;
  std::set<std::string> missing_nodes;
  // Few pods need a look: test them all, then go through those in key order.
  auto needs_look = [&](const Pod& pod) {
    if (IsTerminated(pod)) return true;
    if (pod.spec.node_name.empty()) return false;
    NodePtr node = nodes_->Get(pod.spec.node_name);
    return !node || (pod.metadata.deletion_timestamp && *pod.metadata.deletion_timestamp <= now &&
                     !IsNodeReady(*node));
  };
  for (const auto& [key, pod] : pods_->objects(needs_look)) {
    if (IsTerminated(*pod)) terminated.push_back(pod);
    const std::string& node_name = pod->spec.node_name;
    if (node_name.empty()) continue;
    NodePtr node = nodes_->Get(node_name);
    if (!node) {
      missing_nodes.insert(node_name);
      continue;
    }
    if (pod->metadata.deletion_timestamp && *pod->metadata.deletion_timestamp <= now && !IsNodeReady(*node)) {
      ForceDelete(pod, &counters_.terminating_deleted, "terminating");
    }
  }
  const int64_t excess = static_cast<int64_t>(terminated.size()) - options_.terminated_threshold;
  if (options_.terminated_threshold > 0 && excess > 0) {
    std::sort(terminated.begin(), terminated.end(), [](const PodPtr& a, const PodPtr& b) {
      return std::tie(a->metadata.creation_timestamp, a->metadata.namespace_, a->metadata.name) <
             std::tie(b->metadata.creation_timestamp, b->metadata.namespace_, b->metadata.name);
    });
    for (int64_t i = 0; i < excess; ++i)
      ForceDelete(terminated[i], &counters_.terminated_deleted, "terminated");
  }
  // The cache may lag behind a node's registration: ask the API before deleting its pods.
  for (const std::string& name : missing_nodes) {
    cluster_->nodes().Get("", name, [this, alive = alive_, name](const Result<NodePtr>& r) {
      if (!*alive || r.ok() || r.status().code() != Code::kNotFound) return;
      for (const auto& [key, pod] : pods_->objects([&](const Pod& p) { return p.spec.node_name == name; })) {
        ForceDelete(pod, &counters_.orphans_deleted, "orphaned");
      }
    });
  }
}

void PodGc::ForceDelete(const PodPtr& pod, uint64_t* counter, const char* why) {
  const std::string uid = pod->metadata.uid;
  if (!in_flight_.insert(uid).second) return;
  DeleteOptions opts;
  opts.precondition_uid = uid;
  opts.grace_period_seconds = 0;
  const std::string key = ObjectCache<Pod>::KeyOf(*pod);
  const std::string what = why;
  api_->pods().Delete(pod->metadata.namespace_, pod->metadata.name, opts,
                      [this, alive = alive_, uid, key, what, counter](const Result<PodPtr>& r) {
                        if (!*alive) return;
                        in_flight_.erase(uid);
                        if (!r.ok()) return;
                        ++*counter;
                        Trace("delete " + what + " " + key);
                      });
}

}  // namespace rcsim
