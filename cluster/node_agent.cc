#include "cluster/node_agent.h"

#include <algorithm>
#include <string_view>
#include <utility>

#include "cluster/container_env.h"

namespace rcsim {
namespace {

void SetCondition(std::vector<PodCondition>& conds, std::string_view type, bool value, TimePoint now,
                  const std::vector<PodCondition>& previous) {
  const std::string_view status = value ? "True" : "False";
  PodCondition& c = conds.emplace_back();
  c.type = type;
  c.status = status;
  c.last_transition_time = now;
  for (const PodCondition& p : previous) {
    if (p.type == type && p.status == status) c.last_transition_time = p.last_transition_time;
  }
}

// Status times are whole seconds (metav1.Time): what is written is what is read back, so an
// unchanged status compares equal after a round trip through the API.
TimePoint WholeSeconds(TimePoint t) { return std::chrono::floor<std::chrono::seconds>(t); }

// As the CRI runtimes name containers in containerStatuses ("containerd://<id>").
std::string ContainerIdOf(const std::string& id) { return "rcsim://" + id; }

bool ShouldRestart(const std::string& policy, int exit_code) {
  if (policy == "Never") return false;
  if (policy == "OnFailure") return exit_code != 0;
  return true;  // Always (and anything unknown, as the API defaults it)
}

}  // namespace

NodeAgent::NodeAgent(NodeAgentOptions options, ApiClient* api, ClusterApi* cluster, Runtime* runtime,
                     Clock* clock, Executor* executor, TraceSink* trace)
    : options_(std::move(options)),
      api_(api),
      cluster_(cluster),
      runtime_(runtime),
      clock_(clock),
      executor_(executor),
      trace_(trace),
      host_ip_(options_.host_ip),
      max_pods_(options_.max_pods) {
  runtime_->SetExitListener([this, alive = alive_](const std::string& id, int code) {
    if (*alive) OnExit(id, code);
  });
  runtime_->SetReadinessListener([this, alive = alive_](const std::string& id, bool ready) {
    if (*alive) OnReadiness(id, ready);
  });
}

NodeAgent::~NodeAgent() { *alive_ = false; }

void NodeAgent::Trace(const std::string& event) {
  if (trace_ != nullptr && trace_->enabled()) trace_->Record(options_.node_name, event);
}

void NodeAgent::Start() {
  if (running_) return;
  running_ = true;
  ++epoch_;
  lease_.reset();  // read afresh: another agent of this node may have renewed it meanwhile
  Register();
  ListOptions mine;
  mine.fields.push_back({"spec.nodeName", true, options_.node_name});
  ObjectCache<Pod>::Handlers h;
  h.on_upsert = [this](const PodPtr&, const PodPtr& pod) { OnPod(pod); };
  h.on_delete = [this](const PodPtr& pod) { OnPodGone(pod); };
  cache_ = std::make_unique<ObjectCache<Pod>>(&api_->pods(), executor_, "", std::move(mine), std::move(h));
  cache_->Start();
}

void NodeAgent::Stop() {
  if (!running_) return;
  running_ = false;
  ++epoch_;
  cache_.reset();
  for (auto& [uid, st] : pods_) {
    for (ContainerRecord& c : st.containers) {
      if (c.backoff_timer != 0) executor_->Cancel(c.backoff_timer);
      c.backoff_timer = 0;
    }
  }
}

// ---- Node registration and heartbeats ----

Node NodeAgent::DesiredNode(const NodePtr& current) const {
  Node n = current ? *current : Node();
  n.metadata.resource_version.clear();
  n.metadata.name = options_.node_name;
  n.metadata.labels["kubernetes.io/hostname"] = options_.node_name;
  n.status.capacity["pods"] = std::to_string(max_pods_);
  n.status.allocatable["pods"] = std::to_string(max_pods_);
  const TimePoint now = clock_->Now();
  NodeCondition* ready = nullptr;
  for (NodeCondition& c : n.status.conditions) {
    if (c.type == "Ready") ready = &c;
  }
  if (ready == nullptr) {
    n.status.conditions.emplace_back();
    ready = &n.status.conditions.back();
    ready->type = "Ready";
  }
  if (ready->status != "True") ready->last_transition_time = now;
  ready->status = "True";
  ready->reason = "KubeletReady";
  ready->message = "kubelet is posting ready status";
  ready->last_heartbeat_time = now;
  n.status.addresses = {{"InternalIP", options_.host_ip}, {"Hostname", options_.node_name}};
  n.status.kubelet_port = options_.kubelet_port;
  return n;
}

void NodeAgent::Register() {
  const uint64_t epoch = epoch_;
  cluster_->nodes().Get("", options_.node_name, [this, alive = alive_, epoch](Result<NodePtr> got) {
    if (!*alive || epoch != epoch_) return;
    auto after = [this, alive, epoch](const Result<NodePtr>& r) {
      if (!*alive || epoch != epoch_) return;
      if (r.ok()) {
        node_uid_ = (*r)->metadata.uid;
        NoteStatusPosted();
        Trace("register");
        RenewLease([this] { ScheduleHeartbeat(); });
      } else {
        executor_->Schedule(options_.retry_delay, [this, alive, epoch] {
          if (*alive && epoch == epoch_) Register();
        });
      }
    };
    if (got.ok()) {
      cluster_->nodes().UpdateStatus(DesiredNode(*got), std::move(after));
    } else if (got.status().code() == Code::kNotFound) {
      cluster_->nodes().Create("", DesiredNode(nullptr), std::move(after));
    } else {
      after(got.status());
    }
  });
}

void NodeAgent::ScheduleHeartbeat() {
  const uint64_t epoch = epoch_;
  executor_->Schedule(options_.heartbeat_interval, [this, alive = alive_, epoch] {
    if (*alive && epoch == epoch_) Heartbeat();
  });
}

void NodeAgent::Heartbeat() {
  RenewLease([this] { SyncNodeStatus(); });
}

Lease NodeAgent::RenewedLease(const LeasePtr& current) const {
  Lease l = current ? *current : Lease();
  l.metadata.name = options_.node_name;
  l.metadata.namespace_ = kNodeLeaseNamespace;
  l.spec.holder_identity = options_.node_name;
  l.spec.lease_duration_seconds = options_.lease_duration_seconds;
  l.spec.renew_time = clock_->Now();
  // Owned by the Node (as the kubelet's setNodeOwnerFunc), so the garbage collector deletes the Lease
  // with it; a Node registered again (a new uid) takes over the reference.
  auto& refs = l.metadata.owner_references;
  if (!node_uid_.empty()) {
    refs.erase(
        std::remove_if(refs.begin(), refs.end(), [](const OwnerReference& r) { return r.kind == "Node"; }),
        refs.end());
    OwnerReference owner;
    owner.api_version = "v1";
    owner.kind = "Node";
    owner.name = options_.node_name;
    owner.uid = node_uid_;
    owner.controller = false;
    owner.block_owner_deletion = false;
    refs.insert(refs.begin(), std::move(owner));
  }
  return l;
}

void NodeAgent::RenewLease(const std::function<void()>& then, bool retry) {
  const uint64_t epoch = epoch_;
  auto done = [this, alive = alive_, epoch, then, retry](const Result<LeasePtr>& r) {
    if (!*alive || epoch != epoch_) return;
    if (r.ok()) {
      lease_ = *r;
      ++counters_.lease_renewals;
      return then();
    }
    // Another writer, or the lease is gone: read it afresh and try once more (as the kubelet does).
    lease_.reset();
    if (retry) return RenewLease(then, /*retry=*/false);
    then();
  };
  if (lease_) {
    cluster_->leases().Update(RenewedLease(lease_), std::move(done));
    return;
  }
  cluster_->leases().Get(
      kNodeLeaseNamespace, options_.node_name,
      [this, alive = alive_, epoch, then, done = std::move(done)](const Result<LeasePtr>& got) mutable {
        if (!*alive || epoch != epoch_) return;
        if (got.ok()) {
          cluster_->leases().Update(RenewedLease(*got), std::move(done));
        } else if (got.status().code() == Code::kNotFound) {
          cluster_->leases().Create(kNodeLeaseNamespace, RenewedLease(nullptr), std::move(done));
        } else {
          then();
        }
      });
}

// Everything DesiredNode writes but the Ready heartbeat time.
bool NodeAgent::StatusChanged(const Node& current, const Node& desired) {
  NodeStatus a = current.status;
  const NodeCondition* want = FindNodeCondition(desired.status, "Ready");
  for (NodeCondition& c : a.conditions) {
    if (c.type == "Ready" && want != nullptr) c.last_heartbeat_time = want->last_heartbeat_time;
  }
  return !(a == desired.status);
}

void NodeAgent::SyncNodeStatus() {
  const uint64_t epoch = epoch_;
  cluster_->nodes().Get("", options_.node_name, [this, alive = alive_, epoch](Result<NodePtr> got) {
    if (!*alive || epoch != epoch_) return;
    if (!got.ok()) {
      if (got.status().code() == Code::kNotFound) return Register();  // deleted: register again
      return ScheduleHeartbeat();
    }
    node_uid_ = (*got)->metadata.uid;
    Node desired = DesiredNode(*got);
    if (!StatusChanged(**got, desired) &&
        clock_->Now() - last_status_post_ < options_.status_report_interval) {
      return ScheduleHeartbeat();
    }
    cluster_->nodes().UpdateStatus(std::move(desired), [this, alive, epoch](const Result<NodePtr>& r) {
      if (!*alive || epoch != epoch_) return;
      if (r.ok()) {
        NoteStatusPosted();
      }
      ScheduleHeartbeat();
    });
  });
}

void NodeAgent::NoteStatusPosted() {
  ++counters_.status_posts;
  last_status_post_ = clock_->Now();
}

void NodeAgent::SetMaxPods(int64_t pods) {
  if (pods == max_pods_) return;
  max_pods_ = pods;
  if (!running_) return;  // Start() registers with it
  Trace("capacity pods=" + std::to_string(pods));
  // Posted at once, outside the heartbeat cycle (a failure is repaired by the next status sync, which
  // sees the capacity differ).
  const uint64_t epoch = epoch_;
  cluster_->nodes().Get("", options_.node_name, [this, alive = alive_, epoch](Result<NodePtr> got) {
    if (!*alive || epoch != epoch_ || !got.ok()) return;
    cluster_->nodes().UpdateStatus(DesiredNode(*got), [this, alive, epoch](const Result<NodePtr>& r) {
      if (!*alive || epoch != epoch_ || !r.ok()) return;
      NoteStatusPosted();
    });
  });
}

// ---- Pods ----

void NodeAgent::OnPod(const PodPtr& pod) {
  const std::string& uid = pod->metadata.uid;
  auto it = pods_.find(uid);
  if (it == pods_.end()) {
    if (pod->metadata.deletion_timestamp) {
      // Nothing of it runs here: finish the deletion.
      PodState st;
      st.key = ObjectCache<Pod>::KeyOf(*pod);
      st.pod = pod;
      st.stopping = true;
      pods_.emplace(uid, std::move(st));
      FinishDeletion(uid);
      return;
    }
    if (IsTerminated(*pod)) return;  // ran here before a restart of the agent, or elsewhere
    Admit(pod);
    return;
  }
  PodState& st = it->second;
  st.pod = pod;
  if (pod->metadata.deletion_timestamp && !st.stopping) {
    StopPod(uid, std::chrono::seconds(pod->metadata.deletion_grace_period_seconds.value_or(0)));
    return;
  }
  if (st.stopping) return;
  // After a restart of the agent: containers that exited while it was stopped (or whose restart it
  // had scheduled) start again, and the status it could not write is written.
  for (std::size_t i = 0; i < st.containers.size(); ++i) {
    ContainerRecord& c = st.containers[i];
    if (!c.id.empty() || c.starting || c.done || c.backoff_timer != 0) continue;
    const Duration delay = BackoffFor(c);
    c.backoff_delay = delay;
    c.backoff_timer = executor_->Schedule(delay, [this, alive = alive_, uid, i] {
      if (*alive) StartContainer(uid, i);
    });
  }
  if (st.status_dirty) WriteStatus(uid);
}

void NodeAgent::OnPodGone(const PodPtr& pod) {
  auto it = pods_.find(pod->metadata.uid);
  if (it == pods_.end()) return;
  PodState& st = it->second;
  st.deleting = true;  // nothing left to delete
  if (!st.stopping) StopPod(pod->metadata.uid, Duration::zero());
}

void NodeAgent::Admit(const PodPtr& pod) {
  PodState st;
  st.key = ObjectCache<Pod>::KeyOf(*pod);
  st.pod = pod;
  st.start_time = pod->status.start_time.value_or(clock_->Now());
  st.pod_ip = pod->status.pod_ip;
  if (st.pod_ip.empty()) st.pod_ip = options_.pod_ip_prefix + std::to_string(2 + (next_ip_++ % 253));
  for (const Container& c : pod->spec.containers) {
    ContainerRecord cs;
    cs.name = c.name;
    cs.image = c.image;
    for (const ContainerStatus& s : pod->status.container_statuses) {
      if (s.name != c.name) continue;
      // What an earlier run of the agent reported, so lastState survives its restart.
      cs.restarts = s.restart_count;
      if (s.state.terminated) {
        cs.last_termination = s.state.terminated;
        cs.previous_termination = s.last_state.terminated;
      } else {
        cs.last_termination = s.last_state.terminated;
      }
    }
    st.containers.push_back(std::move(cs));
  }
  const std::string uid = pod->metadata.uid;
  pods_.emplace(uid, std::move(st));
  Trace("admit " + ObjectCache<Pod>::KeyOf(*pod));
  // Containers an earlier run of this agent left running (a kubelet restart) are claimed, not
  // created: the pod's status already says what the claims will report, so nothing is written
  // before them (a ContainerCreating, not Ready status would flap Ready of a pod that never stopped).
  const auto& records = pods_[uid].containers;
  const bool adopting =
      !records.empty() && std::all_of(records.begin(), records.end(), [&](const ContainerRecord& c) {
        return runtime_->Adoptable(uid, c.name);
      });
  if (!adopting) WriteStatus(uid);
  for (std::size_t i = 0; i < pods_[uid].containers.size(); ++i) StartContainer(uid, i);
}

void NodeAgent::StartContainer(const std::string& uid, std::size_t index) {
  auto it = pods_.find(uid);
  if (it == pods_.end() || it->second.stopping || !running_) return;
  PodState& st = it->second;
  ContainerRecord& c = st.containers[index];
  if (c.starting || !c.id.empty() || c.done) return;
  c.backoff_timer = 0;
  c.starting = true;
  const Container& spec = st.pod->spec.containers[index];
  ContainerConfig config;
  config.pod_namespace = st.pod->metadata.namespace_;
  config.pod_name = st.pod->metadata.name;
  config.pod_uid = uid;
  config.container_name = spec.name;
  config.image = spec.image;
  config.command = spec.command;
  config.args = spec.args;
  config.env = ContainerEnv(*st.pod, spec, st.pod_ip, options_.host_ip);
  config.readiness_probe = ExecReadinessProbe(spec);
  runtime_->Start(config, [this, alive = alive_, uid, index](Result<std::string> r) {
    if (!*alive) return;
    auto it = pods_.find(uid);
    if (it == pods_.end()) {
      if (r.ok()) runtime_->Stop(*r, Duration::zero(), [](const Status&) {});
      return;
    }
    PodState& st = it->second;
    ContainerRecord& c = st.containers[index];
    c.starting = false;
    if (!r.ok()) {
      // Treated as an exit with code 128 (as a failed exec): restart policy and backoff apply.
      RecordTermination(c, 128, r.status().message());
      if (ShouldRestart(st.pod->spec.restart_policy, 128) && !st.stopping) {
        const Duration delay = BackoffFor(c);
        c.backoff_delay = delay;
        c.backoff_timer = executor_->Schedule(delay, [this, alive, uid, index] {
          if (*alive) StartContainer(uid, index);
        });
      } else {
        c.done = true;
      }
      WriteStatus(uid);
      return;
    }
    c.id = *r;
    c.container_id = ContainerIdOf(c.id);
    c.ready = runtime_->Ready(c.id);
    c.started_at = clock_->Now();
    by_container_[c.id] = {uid, index};
    ++counters_.starts;
    Trace("start " + st.key + " " + c.name.str());
    if (st.stopping) {
      runtime_->Stop(c.id, Duration::zero(), [](const Status&) {});
      return;
    }
    WriteStatus(uid);
  });
}

Duration NodeAgent::BackoffFor(ContainerRecord& c) {
  if (c.started_at != TimePoint{} && clock_->Now() - c.started_at >= options_.backoff_reset)
    c.backoff_step = 0;
  Duration delay = Duration::zero();
  if (c.backoff_step > 0) {
    delay = options_.backoff_initial;
    for (int i = 1; i < c.backoff_step && delay < options_.backoff_max; ++i) delay *= 2;
    delay = std::min(delay, options_.backoff_max);
  }
  ++c.backoff_step;
  return delay;
}

void NodeAgent::OnExit(const std::string& id, int exit_code) {
  if (id.empty()) return;
  auto where = by_container_.find(id);
  if (where == by_container_.end()) return;
  // Copies, not a structured binding: the lambdas below capture them (clang before 16 cannot).
  const std::string uid = where->second.first;
  const auto index = where->second.second;
  by_container_.erase(where);
  ++counters_.exits;
  auto it = pods_.find(uid);
  if (it == pods_.end()) return;
  PodState& st = it->second;
  ContainerRecord& c = st.containers[index];
  RecordTermination(c, exit_code, "");
  c.id.clear();
  Trace("exit " + st.key + " " + c.name.str() + " " + std::to_string(exit_code));
  if (st.stopping) {
    bool all_stopped = true;
    for (const ContainerRecord& x : st.containers) all_stopped = all_stopped && x.id.empty() && !x.starting;
    if (all_stopped) FinishDeletion(uid);
    return;
  }
  if (ShouldRestart(st.pod->spec.restart_policy, exit_code)) {
    ++c.restarts;
    ++counters_.restarts;
    if (running_) {
      const Duration delay = BackoffFor(c);
      c.backoff_delay = delay;
      c.backoff_timer = executor_->Schedule(delay, [this, alive = alive_, uid, index] {
        if (*alive) StartContainer(uid, index);
      });
    }  // else restarted when the agent starts again (OnPod)
  } else {
    c.done = true;
  }
  WriteStatus(uid);
}

void NodeAgent::OnReadiness(const std::string& id, bool ready) {
  auto where = by_container_.find(id);
  if (where == by_container_.end()) return;
  const std::string uid = where->second.first;
  auto it = pods_.find(uid);
  if (it == pods_.end()) return;
  ContainerRecord& c = it->second.containers[where->second.second];
  if (c.id != id || c.ready == ready) return;
  c.ready = ready;
  Trace(std::string(ready ? "ready " : "not-ready ") + it->second.key + " " + c.name.str());
  WriteStatus(uid);
}

void NodeAgent::StopPod(const std::string& uid, Duration grace) {
  auto it = pods_.find(uid);
  if (it == pods_.end()) return;
  PodState& st = it->second;
  st.stopping = true;
  ++counters_.stops;
  Trace("stop " + st.key);
  bool any = false;
  for (ContainerRecord& c : st.containers) {
    if (c.backoff_timer != 0) executor_->Cancel(c.backoff_timer);
    c.backoff_timer = 0;
    if (!c.id.empty()) {
      any = true;
      runtime_->Stop(c.id, grace, [](const Status&) {});
    }
    any = any || c.starting;
  }
  if (!any) FinishDeletion(uid);
}

void NodeAgent::FinishDeletion(const std::string& uid) {
  auto it = pods_.find(uid);
  if (it == pods_.end()) return;
  PodState& st = it->second;
  if (st.deleting || !running_) {
    if (st.deleting) pods_.erase(it);
    return;
  }
  st.deleting = true;
  DeleteOptions opts;
  opts.precondition_uid = uid;
  opts.grace_period_seconds = 0;
  const PodPtr pod = st.pod;
  api_->pods().Delete(pod->metadata.namespace_, pod->metadata.name, opts,
                      [this, alive = alive_, uid](const Result<PodPtr>& r) {
                        if (!*alive) return;
                        auto it = pods_.find(uid);
                        if (it == pods_.end()) return;
                        const Code code = r.status().code();
                        if (r.ok() || code == Code::kNotFound || code == Code::kConflict) {
                          ++counters_.final_deletes;
                          Trace("deleted " + it->second.key);
                          pods_.erase(it);
                          return;
                        }
                        it->second.deleting = false;
                        executor_->Schedule(options_.retry_delay, [this, alive, uid] {
                          if (*alive) FinishDeletion(uid);
                        });
                      });
}

PodStatus NodeAgent::DesiredStatus(const PodState& st) const {
  const TimePoint now = clock_->Now();
  const PodStatus& prev = st.pod->status;
  PodStatus s;
  bool all_started = true, all_running = true, all_done = true, all_ok = true, all_ready = true;
  for (const ContainerRecord& c : st.containers) {
    const bool ran = !c.id.empty() || c.restarts > 0 || c.done;
    all_started = all_started && ran;
    all_running = all_running && !c.id.empty();
    all_done = all_done && c.done;
    all_ok = all_ok && (!c.last_termination || c.last_termination->exit_code == 0);
    all_ready = all_ready && !c.id.empty() && c.ready;
  }
  for (std::size_t i = 0; i < st.containers.size(); ++i)
    s.container_statuses.push_back(ContainerStatusOf(st, i));
  if (st.containers.empty()) all_running = false;
  if (all_done && !st.containers.empty()) {
    s.phase = all_ok ? phase::kSucceeded : phase::kFailed;
  } else if (all_started) {
    s.phase = phase::kRunning;
  } else {
    s.phase = phase::kPending;
  }
  const bool ready = all_running && all_ready && !st.stopping && s.phase == phase::kRunning;
  // In the kubelet's order (generateAPIPodStatus): Initialized, Ready, ContainersReady, PodScheduled.
  // Ready second also makes every reader's scan for it (IsReady) short.
  s.conditions.reserve(4);
  SetCondition(s.conditions, "Initialized", true, now, prev.conditions);
  SetCondition(s.conditions, "Ready", ready, now, prev.conditions);
  SetCondition(s.conditions, "ContainersReady", ready, now, prev.conditions);
  SetCondition(s.conditions, "PodScheduled", true, now, prev.conditions);
  s.host_ip = host_ip_;
  s.pod_ip = st.pod_ip;
  s.start_time = st.start_time;
  return s;
}

void NodeAgent::RecordTermination(ContainerRecord& c, int exit_code, const std::string& message) {
  ContainerStateTerminated t;
  t.exit_code = exit_code;
  if (!message.empty()) {
    t.reason = "ContainerCannotRun";
    t.message = message;
  } else {
    t.reason = exit_code == 0 ? "Completed" : "Error";
  }
  const TimePoint now = WholeSeconds(clock_->Now());
  t.started_at = c.id.empty() ? now : WholeSeconds(c.started_at);
  t.finished_at = now;
  if (!c.id.empty()) t.container_id = ContainerIdOf(c.id);
  c.previous_termination = std::move(c.last_termination);
  c.last_termination = std::move(t);
}

ContainerStatus NodeAgent::ContainerStatusOf(const PodState& st, std::size_t index) const {
  const ContainerRecord& c = st.containers[index];
  ContainerStatus cs;
  cs.name = c.name;
  const std::string& image = st.pod->spec.containers[index].image;  // an update may change it
  cs.image = c.image == image ? c.image : SharedString(image);
  cs.ready = !c.id.empty() && c.ready && !st.stopping;
  cs.restart_count = c.restarts;
  cs.started = !c.id.empty();
  const Boxed<ContainerStateTerminated>* older = &c.last_termination;  // the lastState
  if (!c.id.empty()) {
    cs.state.running = ContainerStateRunning{WholeSeconds(c.started_at), {}};
    cs.container_id = c.container_id;
  } else if (c.backoff_timer != 0 && c.backoff_delay > Duration::zero() && c.last_termination) {
    const ObjectMeta& m = st.pod->metadata;
    cs.state.waiting = ContainerStateWaiting{
        "CrashLoopBackOff",
        "back-off " + FormatDuration(c.backoff_delay) + " restarting failed container=" + c.name.str() +
            " pod=" + m.name + "_" + m.namespace_ + "(" + m.uid.str() + ")",
        {}};
  } else if (c.last_termination) {
    cs.state.terminated = c.last_termination;
    cs.container_id = c.last_termination->container_id;
    older = &c.previous_termination;
  } else {
    cs.state.waiting = ContainerStateWaiting{"ContainerCreating", "", {}};
  }
  if (older->has_value()) cs.last_state.terminated = **older;
  return cs;
}

void NodeAgent::WriteStatus(const std::string& uid) {
  auto it = pods_.find(uid);
  if (it == pods_.end()) return;
  PodState& st = it->second;
  if (st.status_in_flight || !running_) {
    st.status_dirty = true;  // a stopped agent writes nothing; it catches up once started
    return;
  }
  PodStatus desired = DesiredStatus(st);
  if (desired == st.pod->status) return;
  st.status_in_flight = true;
  st.status_dirty = false;
  // Everything but the status it replaces (copying that too was 2.3% of ten-thousand-pods).
  Pod next;
  next.metadata = st.pod->metadata;
  next.metadata.resource_version.clear();  // the agent owns the status: unconditional
  next.spec = st.pod->spec;
  next.unknown_fields = st.pod->unknown_fields;
  next.status = std::move(desired);
  ++counters_.status_writes;
  api_->pods().UpdateStatus(std::move(next), [this, alive = alive_, uid](const Result<PodPtr>& r) {
    if (!*alive) return;
    auto it = pods_.find(uid);
    if (it == pods_.end()) return;
    PodState& st = it->second;
    st.status_in_flight = false;
    if (r.ok()) {
      if ((*r)->metadata.uid == uid) st.pod = *r;
    } else if (r.status().code() != Code::kNotFound) {
      st.status_dirty = true;
    }
    if (st.status_dirty && r.status().code() != Code::kNotFound) WriteStatus(uid);
  });
}

}  // namespace rcsim
