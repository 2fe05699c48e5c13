#include "fakes/sim_cluster.h"

#include <utility>

namespace rcsim {

SimCluster::SimCluster(SimClusterOptions options, ApiClient* api, ClusterApi* cluster, Clock* clock,
                       Executor* executor, Rng* rng, TraceSink* trace)
    : clock_(clock), executor_(executor), trace_(trace), api_(api), cluster_(cluster) {
  scheduler_ = std::make_unique<Scheduler>(options.scheduler, api, cluster, clock, executor, trace);
  // The controller manager's controllers share one cache per resource, as in kube-controller-manager
  // (the scheduler is a process of its own there: it keeps its own).
  caches_ = std::make_unique<SharedCaches>(api, cluster, executor);
  gc_ = std::make_unique<GarbageCollector>(options.garbage_collector, api, cluster, executor, trace,
                                           caches_.get());
  node_lifecycle_ = std::make_unique<NodeLifecycleController>(options.node_lifecycle, api, cluster, clock,
                                                              executor, trace, caches_.get());
  pod_gc_ = std::make_unique<PodGc>(options.pod_gc, api, cluster, clock, executor, trace, caches_.get());
  for (int i = 0; i < options.nodes; ++i) {
    const std::string name = "node-" + std::to_string(i);
    SimNode& n = nodes_[name];
    n.runtime = std::make_unique<SimRuntime>(options.runtime, executor, rng, name);
    NodeAgentOptions& a = n.options;
    a.node_name = name;
    a.max_pods = options.max_pods;
    a.heartbeat_interval = options.heartbeat_interval;
    a.host_ip = "10.0." + std::to_string(i / 256 % 256) + "." + std::to_string(i % 256);
    a.pod_ip_prefix = "10." + std::to_string(1 + i / 256 % 250) + "." + std::to_string(i % 256) + ".";
  }
  for (auto& [name, n] : nodes_) StartNewAgent(n);
  scheduler_->Start();
  gc_->Start();
  node_lifecycle_->Start();
  pod_gc_->Start();
}

SimCluster::~SimCluster() {
  // Agents before their runtimes.
  for (auto& [name, n] : nodes_) n.agent.reset();
  nodes_.clear();
  pod_gc_.reset();
  node_lifecycle_.reset();
  gc_.reset();
  caches_.reset();
  scheduler_.reset();
}

void SimCluster::Trace(const std::string& event) {
  if (trace_ != nullptr && trace_->enabled()) trace_->Record("nodes", event);
}

void SimCluster::StartNewAgent(SimNode& n) {
  n.agent =
      std::make_unique<NodeAgent>(n.options, api_, cluster_, n.runtime.get(), clock_, executor_, trace_);
  n.agent->Start();
}

SimCluster::SimNode* SimCluster::Find(const std::string& node) {
  auto it = nodes_.find(node);
  return it == nodes_.end() ? nullptr : &it->second;
}

const SimCluster::SimNode* SimCluster::Find(const std::string& node) const {
  auto it = nodes_.find(node);
  return it == nodes_.end() ? nullptr : &it->second;
}

int SimCluster::KillPod(const Pod& pod) {
  SimNode* n = Find(pod.spec.node_name);
  if (n == nullptr) return 0;
  const int exited = n->runtime->Exit(pod.metadata.uid, 137);
  counters_.kills += static_cast<uint64_t>(exited);
  Trace("kill " + KeyOf(pod.metadata) + " containers=" + std::to_string(exited));
  return exited;
}

Status SimCluster::FailNode(const std::string& node) {
  SimNode* n = Find(node);
  if (n == nullptr) return Status(Code::kNotFound, "node \"" + node + "\" not found");
  if (n->runtime->failed()) return Status::Ok();
  ++counters_.node_failures;
  Trace("node-fail " + node);
  if (n->agent) retired_restarts_ += static_cast<int64_t>(n->agent->counters().restarts);
  n->agent.reset();
  n->runtime->Fail();
  return Status::Ok();
}

Status SimCluster::RecoverNode(const std::string& node) {
  SimNode* n = Find(node);
  if (n == nullptr) return Status(Code::kNotFound, "node \"" + node + "\" not found");
  if (!n->runtime->failed()) return Status::Ok();
  Trace("node-recover " + node);
  n->runtime->Recover();  // what ran is gone; nobody listens
  StartNewAgent(*n);
  return Status::Ok();
}

Status SimCluster::StopAgent(const std::string& node) {
  SimNode* n = Find(node);
  if (n == nullptr) return Status(Code::kNotFound, "node \"" + node + "\" not found");
  if (!n->agent || !n->agent->running()) return Status::Ok();
  ++counters_.agent_stops;
  Trace("agent-stop " + node);
  n->agent->Stop();
  return Status::Ok();
}

Status SimCluster::StartAgent(const std::string& node) {
  SimNode* n = Find(node);
  if (n == nullptr) return Status(Code::kNotFound, "node \"" + node + "\" not found");
  if (!n->agent || n->agent->running() || n->runtime->failed()) return Status::Ok();
  Trace("agent-start " + node);
  n->agent->Start();
  return Status::Ok();
}

void SimCluster::CrashLoop(const Pod& pod, bool on) {
  SimNode* n = Find(pod.spec.node_name);
  if (n == nullptr) return;
  n->runtime->CrashLoop(pod.metadata.uid, on);
  if (on) {
    const int exited = n->runtime->Exit(pod.metadata.uid, 1);
    Trace("crash-loop " + KeyOf(pod.metadata) + " containers=" + std::to_string(exited));
  }
}

int SimCluster::SetReady(const Pod& pod, bool ready) {
  SimNode* n = Find(pod.spec.node_name);
  if (n == nullptr) return 0;
  const int changed = n->runtime->SetReady(pod.metadata.uid, ready);
  Trace(std::string(ready ? "set-ready " : "set-not-ready ") + KeyOf(pod.metadata) +
        " containers=" + std::to_string(changed));
  return changed;
}

Status SimCluster::SetNodeCapacity(const std::string& node, int64_t pods) {
  SimNode* n = Find(node);
  if (n == nullptr) return Status(Code::kNotFound, "node \"" + node + "\" not found");
  Trace("capacity " + node + " pods=" + std::to_string(pods));
  n->options.max_pods = pods;
  if (n->agent) n->agent->SetMaxPods(pods);
  return Status::Ok();
}

std::vector<std::string> SimCluster::node_names() const {
  std::vector<std::string> out;
  for (const auto& [name, n] : nodes_) out.push_back(name);
  return out;
}

bool SimCluster::node_ready(const std::string& node) const {
  const SimNode* n = Find(node);
  return n != nullptr && n->agent && n->agent->running() && !n->runtime->failed();
}

int64_t SimCluster::restarts() const {
  int64_t total = retired_restarts_;
  for (const auto& [name, n] : nodes_) {
    if (n.agent) total += static_cast<int64_t>(n.agent->counters().restarts);
  }
  return total;
}

}  // namespace rcsim
