#include "cluster/scheduler.h"

#include <utility>
#include <vector>

namespace rcsim {
namespace {

bool Occupies(const Pod& pod) {
  return !pod.spec.node_name.empty() && !IsTerminated(pod) && !pod.metadata.deletion_timestamp;
}

bool NeedsScheduling(const Pod& pod) {
  return pod.spec.node_name.empty() && !IsTerminated(pod) && !pod.metadata.deletion_timestamp;
}

bool Schedulable(const Node& node) {
  if (!IsNodeReady(node) || node.spec.unschedulable) return false;
  for (const Taint& t : node.spec.taints) {
    if (t.effect == "NoSchedule" || t.effect == "NoExecute") return false;
  }
  return true;
}

}  // namespace

Scheduler::Scheduler(SchedulerOptions options, ApiClient* api, ClusterApi* cluster, Clock* clock,
                     Executor* executor, TraceSink* trace)
    : options_(options), api_(api), cluster_(cluster), clock_(clock), executor_(executor), trace_(trace) {
  ObjectCache<Node>::Handlers nh;
  nh.on_upsert = [this](const NodePtr&, const NodePtr& n) {
    RefreshNode(n->metadata.name, n);
    OnNode();
  };
  nh.on_delete = [this](const NodePtr& n) {
    RefreshNode(n->metadata.name, nullptr);
    OnNode();
  };
  nodes_ =
      std::make_unique<ObjectCache<Node>>(&cluster_->nodes(), executor_, "", ListOptions{}, std::move(nh));
  ObjectCache<Pod>::Handlers ph;
  ph.on_upsert = [this](const PodPtr& o, const PodPtr& n) { OnPod(o, n); };
  ph.on_delete = [this](const PodPtr& p) { OnPodDelete(p); };
  pods_ = std::make_unique<ObjectCache<Pod>>(&api_->pods(), executor_, "", ListOptions{}, std::move(ph));
}

Scheduler::~Scheduler() { *alive_ = false; }

void Scheduler::Start() {
  nodes_->Start();
  pods_->Start();
}

int64_t Scheduler::node_load(const std::string& node) const {
  auto it = slots_.find(node);
  return it == slots_.end() ? 0 : it->second.load + it->second.reserved;
}

bool Scheduler::NodeSlot::Fits() const { return exists && schedulable && load + reserved < capacity; }

template <typename F>
void Scheduler::ChangeSlot(const std::string& name, F change) {
  auto it = slots_.try_emplace(name).first;
  NodeSlot& slot = it->second;
  if (slot.Fits()) fitting_.erase({slot.load + slot.reserved, &it->first});
  change(slot);
  if (slot.Fits()) fitting_.insert({slot.load + slot.reserved, &it->first});
}

void Scheduler::RefreshNode(const std::string& name, const NodePtr& node) {
  ChangeSlot(name, [&](NodeSlot& slot) {
    slot.exists = node != nullptr;
    slot.schedulable = node && Schedulable(*node);
    slot.capacity = node ? NodePodCapacity(*node, options_.default_pod_capacity) : 0;
  });
}

void Scheduler::Trace(const std::string& event) {
  if (trace_ != nullptr && trace_->enabled()) trace_->Record("scheduler", event);
}

void Scheduler::Account(const PodPtr& pod, int delta) {
  if (pod && Occupies(*pod)) ChangeSlot(pod->spec.node_name, [delta](NodeSlot& slot) { slot.load += delta; });
}

void Scheduler::Land(const std::string& key) {
  auto it = landing_.find(key);
  if (it == landing_.end()) return;
  ChangeSlot(it->second, [](NodeSlot& slot) { --slot.reserved; });
  landing_.erase(it);
}

void Scheduler::OnPod(const PodPtr& old_pod, const PodPtr& pod) {
  // Most updates (status) leave a bound pod where it was: its node's load is unchanged.
  const bool same_place =
      old_pod && Occupies(*old_pod) && Occupies(*pod) && old_pod->spec.node_name == pod->spec.node_name;
  if (!same_place) {
    Account(old_pod, -1);
    Account(pod, +1);
  }
  const std::string key = ObjectCache<Pod>::KeyOf(*pod);
  if (!pod->spec.node_name.empty() || !NeedsScheduling(*pod)) Land(key);
  if (NeedsScheduling(*pod)) {
    Enqueue(key);
  } else {
    unschedulable_.erase(key);
    // A pod leaving a node makes room.
    if (old_pod && Occupies(*old_pod) && !Occupies(*pod)) OnNode();
  }
}

void Scheduler::OnPodDelete(const PodPtr& pod) {
  Account(pod, -1);
  const std::string key = ObjectCache<Pod>::KeyOf(*pod);
  Land(key);
  unschedulable_.erase(key);
  marked_.erase(pod->metadata.uid);
  if (Occupies(*pod)) OnNode();
}

void Scheduler::OnNode() {
  if (unschedulable_.empty()) return;
  std::set<std::string> waiting = std::move(unschedulable_);
  unschedulable_.clear();
  for (const std::string& key : waiting) Enqueue(key);
}

void Scheduler::Enqueue(const std::string& key) {
  if (!queued_.insert(key).second) return;
  queue_.push_back(key);
  SchedulePump();
}

void Scheduler::SchedulePump() {
  if (pump_posted_) return;
  pump_posted_ = true;
  executor_->Post([this, alive = alive_] {
    if (*alive) Pump();
  });
}

void Scheduler::Pump() {
  pump_posted_ = false;
  // Waits for both caches: binding against a partial view of the nodes would pile onto the first.
  if (!nodes_->synced() || !pods_->synced()) {
    executor_->Schedule(options_.retry_delay, [this, alive = alive_] {
      if (*alive) SchedulePump();
    });
    return;
  }
  while (!queue_.empty()) {
    std::string key = std::move(queue_.front());
    queue_.pop_front();
    queued_.erase(key);
    TrySchedule(key);
  }
}

std::string Scheduler::PickNode() const {
  // The least loaded node with room, ties by name: the first of the (load, name) order.
  return fitting_.empty() ? std::string() : *fitting_.begin()->second;
}

void Scheduler::TrySchedule(const std::string& key) {
  const PodPtr pod = pods_->Get(key);
  if (!pod || !NeedsScheduling(*pod) || binding_.count(key)) return;
  const std::string node = PickNode();
  if (node.empty()) {
    unschedulable_.insert(key);
    MarkUnschedulable(pod);
    return;
  }
  unschedulable_.erase(key);
  binding_[key] = node;
  ChangeSlot(node, [](NodeSlot& slot) { ++slot.reserved; });
  Binding b;
  b.metadata.name = pod->metadata.name;
  b.metadata.namespace_ = pod->metadata.namespace_;
  b.metadata.uid = pod->metadata.uid;
  b.target_name = node;
  cluster_->BindPod(pod->metadata.namespace_, std::move(b),
                    [this, alive = alive_, key, node](const Status& s) {
                      if (!*alive) return;
                      binding_.erase(key);
                      ChangeSlot(node, [](NodeSlot& slot) { --slot.reserved; });
                      if (s.ok()) {
                        ++counters_.binds;
                        // Counted against the node until the watch shows it bound.
                        PodPtr cached = pods_->Get(key);
                        if (cached && cached->spec.node_name.empty()) {
                          landing_[key] = node;
                          ChangeSlot(node, [](NodeSlot& slot) { ++slot.reserved; });
                        }
                        Trace("bind " + key + " " + node);
                        return;
                      }
                      if (s.code() == Code::kConflict || s.code() == Code::kNotFound) {
                        ++counters_.bind_conflicts;
                        return;
                      }
                      executor_->Schedule(options_.retry_delay, [this, alive, key] {
                        if (*alive) Enqueue(key);
                      });
                    });
}

void Scheduler::MarkUnschedulable(const PodPtr& pod) {
  if (!marked_.insert(pod->metadata.uid).second) return;
  for (const PodCondition& c : pod->status.conditions) {
    if (c.type == "PodScheduled" && c.status == "False" && c.reason == "Unschedulable") return;
  }
  Pod next = *pod;
  next.metadata.resource_version.clear();
  bool found = false;
  for (PodCondition& c : next.status.conditions) {
    if (c.type != "PodScheduled") continue;
    found = true;
    c.status = "False";
    c.reason = "Unschedulable";
    c.message = "0 nodes are available";
    c.last_transition_time = clock_->Now();
  }
  if (!found) {
    PodCondition c;
    c.type = "PodScheduled";
    c.status = "False";
    c.reason = "Unschedulable";
    c.message = "0 nodes are available";
    c.last_transition_time = clock_->Now();
    next.status.conditions.push_back(std::move(c));
  }
  ++counters_.unschedulable;
  Trace("unschedulable " + ObjectCache<Pod>::KeyOf(*pod));
  api_->pods().UpdateStatus(std::move(next), [](const Result<PodPtr>&) {});
}

}  // namespace rcsim
