#include "fakes/sim_nodes.h"

#include <charconv>
#include <map>
#include <set>
#include <utility>

namespace rcsim {

namespace {

int64_t RevisionOf(const ObjectMeta& meta) {
  int64_t rv = 0;
  const std::string& s = meta.resource_version;
  std::from_chars(s.data(), s.data() + s.size(), rv);
  return rv;
}

// Bound to a node and still counting against it.
bool Occupies(const Pod& pod) {
  return !pod.spec.node_name.empty() && !IsTerminated(pod) && !pod.metadata.deletion_timestamp;
}

void SetCondition(PodStatus& status, const std::string& type, const std::string& value, TimePoint now,
                  const std::string& reason) {
  for (PodCondition& c : status.conditions) {
    if (c.type == type) {
      if (c.status != value) c.last_transition_time = now;
      c.status = value;
      c.reason = reason;
      return;
    }
  }
  PodCondition c;
  c.type = type;
  c.status = value;
  c.last_transition_time = now;
  c.reason = reason;
  status.conditions.push_back(std::move(c));
}

void SetContainersReady(const Pod& pod, PodStatus& status, bool ready) {
  status.container_statuses.clear();
  for (const Container& c : pod.spec.containers) {
    ContainerStatus cs;
    cs.name = c.name;
    cs.ready = ready;
    status.container_statuses.push_back(std::move(cs));
  }
}

}  // namespace

class SimNodes::Core : public std::enable_shared_from_this<Core> {
 public:
  Core(SimNodesOptions options, ApiClient* api, Clock* clock, Executor* executor, Rng* rng,
       TraceSink* trace)
      : options_(std::move(options)), api_(api), clock_(clock), executor_(executor), rng_(rng),
        trace_(trace) {
    for (int i = 0; i < options_.nodes; ++i) nodes_["node-" + std::to_string(i)] = Node{};
  }

  void Start() { Relist(); }

  // ---- Node operations ----

  Status FailNode(const std::string& node) {
    auto it = nodes_.find(node);
    if (it == nodes_.end()) return Status(Code::kNotFound, "node \"" + node + "\" not found");
    if (!it->second.ready) return Status::Ok();
    it->second.ready = false;
    Trace("node-fail", node);
    std::vector<std::string> victims;
    for (const auto& [key, pod] : pods_) {
      if (pod->spec.node_name == node && !IsTerminated(*pod)) victims.push_back(key);
    }
    for (const std::string& key : victims) MaybeKillOnFailedNode(key);
    return Status::Ok();
  }

  Status RecoverNode(const std::string& node) {
    auto it = nodes_.find(node);
    if (it == nodes_.end()) return Status(Code::kNotFound, "node \"" + node + "\" not found");
    if (it->second.ready) return Status::Ok();
    it->second.ready = true;
    Trace("node-recover", node);
    const std::set<std::string> waiting = std::move(unschedulable_);
    unschedulable_.clear();
    for (const std::string& key : waiting) MaybeBind(key);
    return Status::Ok();
  }

  void KillPod(const std::string& ns, const std::string& name, std::function<void(Status)> done) {
    api_->pods().Get(ns, name, [weak = weak_from_this(), ns, name, done = std::move(done)](
                                   Result<PodPtr> r) mutable {
      auto self = weak.lock();
      if (!self) return;
      if (!r.ok()) {
        if (r.status().code() == Code::kNotFound || !self->Retryable(r.status())) {
          if (done) done(r.status());
          return;
        }
        self->After(self->options_.retry_delay, [weak, ns, name, done = std::move(done)]() mutable {
          if (auto s = weak.lock()) s->KillPod(ns, name, std::move(done));
        });
        return;
      }
      const PodPtr& pod = r.value();
      if (IsTerminated(*pod)) {
        if (done) done(Status::Ok());
        return;
      }
      Pod killed = *pod;
      const TimePoint now = self->clock_->Now();
      killed.status.phase = phase::kFailed;
      killed.status.reason = "Killed";
      SetCondition(killed.status, "Ready", "False", now, "PodFailed");
      SetContainersReady(*pod, killed.status, false);
      self->api_->pods().UpdateStatus(
          std::move(killed), [weak, ns, name, done = std::move(done)](Result<PodPtr> u) mutable {
            auto s = weak.lock();
            if (!s) return;
            if (u.ok()) {
              ++s->counters_.kills;
              s->Trace("kill", ns + "/" + name);
              s->UpsertIfNewer(u.value());
              if (done) done(Status::Ok());
              return;
            }
            if (u.status().code() == Code::kNotFound) {
              if (done) done(u.status());
              return;
            }
            if (u.status().code() == Code::kConflict) ++s->counters_.conflicts;
            const Duration delay =
                u.status().code() == Code::kConflict ? Duration::zero() : s->options_.retry_delay;
            s->After(delay, [weak, ns, name, done = std::move(done)]() mutable {
              if (auto s2 = weak.lock()) s2->KillPod(ns, name, std::move(done));
            });
          });
    });
  }

  std::vector<std::string> node_names() const {
    std::vector<std::string> names;
    for (const auto& [name, node] : nodes_) names.push_back(name);
    return names;
  }
  bool node_ready(const std::string& node) const {
    auto it = nodes_.find(node);
    return it != nodes_.end() && it->second.ready;
  }
  int node_load(const std::string& node) const {
    auto it = nodes_.find(node);
    return it == nodes_.end() ? 0 : it->second.bound;
  }
  int unschedulable_pods() const { return static_cast<int>(unschedulable_.size()); }
  const SimNodesCounters& counters() const { return counters_; }

 private:
  struct Node {
    bool ready = true;
    int bound = 0;     // active pods bound here, per the cache
    int reserved = 0;  // binds in flight to this node
  };

  void Trace(std::string_view what, const std::string& subject) {
    if (!trace_->enabled()) return;
    std::string event(what);
    event.push_back(' ');
    event += subject;
    trace_->Record("nodes", event);
  }

  bool Retryable(const Status& s) const {
    return s.code() == Code::kTimeout || s.code() == Code::kUnavailable || s.code() == Code::kInternal ||
           s.code() == Code::kConflict;
  }

  void After(Duration delay, std::function<void()> fn) {
    executor_->Schedule(delay, [weak = weak_from_this(), fn = std::move(fn)] {
      if (weak.lock()) fn();
    });
  }

  // ---- Cache ----

  void Account(const PodPtr& pod, int delta) {
    if (!pod || !Occupies(*pod)) return;
    auto it = nodes_.find(pod->spec.node_name);
    if (it != nodes_.end()) it->second.bound += delta;
  }

  void Upsert(const PodPtr& pod) {
    const std::string key = KeyOf(pod->metadata);
    PodPtr& slot = pods_[key];
    Account(slot, -1);
    slot = pod;
    Account(slot, +1);
    React(key);
  }

  void UpsertIfNewer(const PodPtr& pod) {
    auto it = pods_.find(KeyOf(pod->metadata));
    if (it != pods_.end() && RevisionOf(it->second->metadata) >= RevisionOf(pod->metadata)) return;
    if (it == pods_.end()) return;  // deleted meanwhile (the watch said so) or not yet seen
    Upsert(pod);
  }

  void Remove(const std::string& key) {
    auto it = pods_.find(key);
    if (it == pods_.end()) return;
    Account(it->second, -1);
    pods_.erase(it);
    unschedulable_.erase(key);
    terminated_since_.erase(key);
  }

  // Decides what the pod needs now: binding, starting, failing (node down), or collection later.
  void React(const std::string& key) {
    const PodPtr& pod = pods_[key];
    if (IsTerminated(*pod)) {
      unschedulable_.erase(key);
      if (terminated_since_.emplace(key, clock_->Now()).second) EnsureGcTimer();
      return;
    }
    terminated_since_.erase(key);
    if (pod->metadata.deletion_timestamp) {
      if (!pod->spec.node_name.empty()) MaybeFinishDeletion(key);
      return;
    }
    if (pod->spec.node_name.empty()) {
      MaybeBind(key);
      return;
    }
    auto b = binding_.find(key);
    if (b != binding_.end() && b->second.landed == false) {
      b->second.landed = true;
      ReleaseReservation(key);
    }
    if (!node_ready(pod->spec.node_name)) {
      MaybeKillOnFailedNode(key);
      return;
    }
    if (pod->status.phase == phase::kPending) MaybeScheduleStart(key);
  }

  // ---- Scheduler ----

  void MaybeBind(const std::string& key) {
    auto it = pods_.find(key);
    if (it == pods_.end()) return;
    const PodPtr pod = it->second;
    if (!pod->spec.node_name.empty() || IsTerminated(*pod) || pod->metadata.deletion_timestamp) return;
    if (binding_.count(key)) return;
    std::string best;
    int best_load = 0;
    for (const auto& [name, node] : nodes_) {
      if (!node.ready) continue;
      const int load = node.bound + node.reserved;
      if (best.empty() || load < best_load) {
        best = name;
        best_load = load;
      }
    }
    if (best.empty()) {
      unschedulable_.insert(key);
      return;
    }
    unschedulable_.erase(key);
    binding_[key] = Binding{best, false};
    ++nodes_[best].reserved;
    Pod bound = *pod;
    bound.spec.node_name = best;
    api_->pods().Update(std::move(bound), [weak = weak_from_this(), key, best](Result<PodPtr> r) {
      auto self = weak.lock();
      if (!self) return;
      self->OnBindDone(key, best, r);
    });
  }

  void ReleaseReservation(const std::string& key) {
    auto b = binding_.find(key);
    if (b == binding_.end()) return;
    auto n = nodes_.find(b->second.node);
    if (n != nodes_.end() && n->second.reserved > 0 && !b->second.released) {
      --n->second.reserved;
      b->second.released = true;
    }
  }

  void OnBindDone(const std::string& key, const std::string& node, const Result<PodPtr>& r) {
    ReleaseReservation(key);
    binding_.erase(key);
    if (r.ok()) {
      ++counters_.binds;
      Trace("bind", key + " " + node);
      // Caching the bound pod schedules its start (React), unless the watch already did.
      UpsertIfNewer(r.value());
      return;
    }
    const Code code = r.status().code();
    if (code == Code::kNotFound) return;
    if (code == Code::kConflict) {
      ++counters_.conflicts;
      Reread(key, [this, key] { MaybeBind(key); });
      return;
    }
    After(options_.retry_delay, [this, key] { MaybeBind(key); });
  }

  // Gets the pod, folds it into the cache, then runs `then` (unless the pod is gone).
  void Reread(const std::string& key, std::function<void()> then) {
    const auto slash = key.find('/');
    const std::string ns = key.substr(0, slash);
    const std::string name = key.substr(slash + 1);
    api_->pods().Get(ns, name, [weak = weak_from_this(), key, then = std::move(then)](Result<PodPtr> r) {
      auto self = weak.lock();
      if (!self) return;
      if (r.ok()) {
        self->UpsertIfNewer(r.value());
        then();
      } else if (r.status().code() != Code::kNotFound) {
        self->After(self->options_.retry_delay, [self = self.get(), key, then] { self->Reread(key, then); });
      }
    });
  }

  // ---- Kubelet ----

  void MaybeScheduleStart(const std::string& key) {
    const PodPtr& pod = pods_[key];
    auto it = starting_.find(key);
    if (it != starting_.end() && it->second == pod->metadata.uid) return;
    const std::string uid = pod->metadata.uid;
    starting_[key] = uid;
    const Duration delay = rng_->Uniform(options_.pod_start_min, options_.pod_start_max);
    After(delay, [this, key, uid] { StartPod(key, uid); });
  }

  void StartPod(const std::string& key, const std::string& uid) {
    auto st = starting_.find(key);
    if (st == starting_.end() || st->second != uid) return;
    auto it = pods_.find(key);
    if (it == pods_.end() || it->second->metadata.uid != uid) {
      starting_.erase(st);  // gone, or replaced by a pod of the same name (which has its own start)
      return;
    }
    const PodPtr pod = it->second;
    if (IsTerminated(*pod) || pod->metadata.deletion_timestamp || pod->status.phase != phase::kPending ||
        pod->spec.node_name.empty() || !node_ready(pod->spec.node_name)) {
      starting_.erase(st);
      return;
    }
    Pod running = *pod;
    const TimePoint now = clock_->Now();
    running.status.phase = phase::kRunning;
    running.status.reason.clear();
    SetCondition(running.status, "Ready", "True", now, "");
    SetContainersReady(*pod, running.status, true);
    if (!running.status.start_time) running.status.start_time = now;
    api_->pods().UpdateStatus(std::move(running), [weak = weak_from_this(), key, uid](Result<PodPtr> r) {
      auto self = weak.lock();
      if (!self) return;
      if (r.ok()) {
        self->starting_.erase(key);
        ++self->counters_.starts;
        self->Trace("start", key);
        self->UpsertIfNewer(r.value());
        return;
      }
      const Code code = r.status().code();
      if (code == Code::kNotFound) {
        self->starting_.erase(key);
        return;
      }
      if (code == Code::kConflict) {
        ++self->counters_.conflicts;
        self->Reread(key, [self = self.get(), key, uid] { self->StartPod(key, uid); });
        return;
      }
      self->After(self->options_.retry_delay, [self = self.get(), key, uid] { self->StartPod(key, uid); });
    });
  }

  void MaybeKillOnFailedNode(const std::string& key) {
    if (!killing_.insert(key).second) return;
    const auto slash = key.find('/');
    KillPod(key.substr(0, slash), key.substr(slash + 1),
            [weak = weak_from_this(), key](Status) {
              if (auto self = weak.lock()) self->killing_.erase(key);
            });
  }

  // The kubelet's part of a graceful deletion, at once: the final delete with grace 0.
  void MaybeFinishDeletion(const std::string& key) {
    const PodPtr& pod = pods_[key];
    if (!finishing_.insert(key).second) return;
    DeleteOptions opts;
    opts.precondition_uid = pod->metadata.uid;
    opts.grace_period_seconds = 0;
    api_->pods().Delete(pod->metadata.namespace_, pod->metadata.name, opts,
                        [weak = weak_from_this(), key](Result<PodPtr> r) {
                          auto self = weak.lock();
                          if (!self) return;
                          self->finishing_.erase(key);
                          const Code code = r.status().code();
                          if (r.ok() || code == Code::kNotFound || code == Code::kConflict) return;
                          self->After(self->options_.retry_delay, [self = self.get(), key] {
                            if (self->pods_.count(key)) self->React(key);
                          });
                        });
  }

  // ---- Pod GC ----

  void EnsureGcTimer() {
    if (gc_timer_pending_) return;
    gc_timer_pending_ = true;
    After(options_.gc_interval, [this] { RunGc(); });
  }

  void RunGc() {
    gc_timer_pending_ = false;
    const TimePoint now = clock_->Now();
    for (const auto& [key, since] : terminated_since_) {
      if (now - since < options_.pod_gc_threshold || gc_inflight_.count(key)) continue;
      const PodPtr& pod = pods_[key];
      gc_inflight_.insert(key);
      DeleteOptions opts;
      opts.precondition_uid = pod->metadata.uid;
      api_->pods().Delete(pod->metadata.namespace_, pod->metadata.name, opts,
                          [weak = weak_from_this(), key = key](Result<PodPtr> r) {
                            auto self = weak.lock();
                            if (!self) return;
                            self->gc_inflight_.erase(key);
                            if (r.ok()) {
                              ++self->counters_.gc_deletes;
                              self->Trace("gc", key);
                            }
                            // Failures are retried by the next GC pass while the pod stays terminated.
                          });
    }
    if (!terminated_since_.empty()) EnsureGcTimer();
  }

  // ---- Watch ----

  void Relist() {
    watch_.reset();
    api_->pods().List("", ListOptions{}, [weak = weak_from_this()](Result<ObjectList<Pod>> r) {
      auto self = weak.lock();
      if (!self) return;
      if (!r.ok()) {
        self->After(self->options_.retry_delay, [self = self.get()] { self->Relist(); });
        return;
      }
      std::set<std::string> listed;
      for (const PodPtr& pod : r.value().items) listed.insert(KeyOf(pod->metadata));
      std::vector<std::string> gone;
      for (const auto& [key, pod] : self->pods_) {
        if (!listed.count(key)) gone.push_back(key);
      }
      for (const std::string& key : gone) self->Remove(key);
      for (const PodPtr& pod : r.value().items) self->Upsert(pod);
      self->StartWatch(r.value().resource_version);
    });
  }

  void StartWatch(const std::string& resource_version) {
    watch_ = api_->pods().Watch(
        "", ListOptions{}, resource_version, [weak = weak_from_this()](const ApiWatchEvent<Pod>& ev) {
          auto self = weak.lock();
          if (!self) return;
          self->OnWatchEvent(ev);
        });
  }

  void OnWatchEvent(const ApiWatchEvent<Pod>& ev) {
    switch (ev.type) {
      case ApiWatchEvent<Pod>::Type::kAdded:
      case ApiWatchEvent<Pod>::Type::kModified:
        Upsert(ev.object);
        return;
      case ApiWatchEvent<Pod>::Type::kDeleted:
        Remove(KeyOf(ev.object->metadata));
        return;
      case ApiWatchEvent<Pod>::Type::kBookmark:
        return;
      case ApiWatchEvent<Pod>::Type::kError:
        ++counters_.relists;
        // Not from inside the watch's own callback: the watch is destroyed by Relist.
        After(Duration::zero(), [this] { Relist(); });
        return;
    }
  }

  struct Binding {
    std::string node;
    bool landed = false;    // the watch has shown the pod bound
    bool released = false;  // the node's reservation was given back
  };

  const SimNodesOptions options_;
  ApiClient* const api_;
  Clock* const clock_;
  Executor* const executor_;
  Rng* const rng_;
  TraceSink* const trace_;

  std::map<std::string, Node> nodes_;
  std::map<std::string, PodPtr> pods_;  // by "ns/name", as last seen
  std::map<std::string, Binding> binding_;
  std::map<std::string, std::string> starting_;  // key -> uid with a start scheduled or in flight
  std::set<std::string> killing_;
  std::set<std::string> finishing_;  // final deletes in flight
  std::set<std::string> unschedulable_;
  std::map<std::string, TimePoint> terminated_since_;
  std::set<std::string> gc_inflight_;
  bool gc_timer_pending_ = false;
  std::unique_ptr<ApiWatch> watch_;
  SimNodesCounters counters_;
};

SimNodes::SimNodes(SimNodesOptions options, ApiClient* api, Clock* clock, Executor* executor, Rng* rng,
                   TraceSink* trace)
    : core_(std::make_shared<Core>(std::move(options), api, clock, executor, rng, trace)) {
  core_->Start();
}

SimNodes::~SimNodes() = default;

void SimNodes::KillPod(const std::string& ns, const std::string& name, std::function<void(Status)> done) {
  core_->KillPod(ns, name, std::move(done));
}
Status SimNodes::FailNode(const std::string& node) { return core_->FailNode(node); }
Status SimNodes::RecoverNode(const std::string& node) { return core_->RecoverNode(node); }
std::vector<std::string> SimNodes::node_names() const { return core_->node_names(); }
bool SimNodes::node_ready(const std::string& node) const { return core_->node_ready(node); }
int SimNodes::node_load(const std::string& node) const { return core_->node_load(node); }
int SimNodes::unschedulable_pods() const { return core_->unschedulable_pods(); }
const SimNodesCounters& SimNodes::counters() const { return core_->counters(); }

}  // namespace rcsim
