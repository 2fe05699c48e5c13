#include "fakes/sim_world.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "engine/codec.h"
#include "engine/node_types.h"
#include "fakes/faulty_store.h"
#include "fakes/inprocess_api_client.h"
#include "fakes/mem_store.h"
#include "registry/event_registry.h"
#include "registry/registry.h"

namespace rcsim {

namespace {

// Rng streams of one seed (DeriveSeed); fixed so that traces stay comparable across versions.
enum Stream : uint64_t {
  kScenarioStream = 0,
  kRegistryStream = 1,
  kStoreFaultStream = 2,
  kApiFaultStream = 3,
  kNodesStream = 4,
  kManagerStreamBase = 100,  // + the manager's start count
};

constexpr Duration kAwaitTimeout = std::chrono::seconds(60);
const char kRegistryPrefix[] = "/registry/";
const char kPodsPrefix[] = "/registry/pods/";
const char kControllersPrefix[] = "/registry/controllers/";

std::string OwnerName(const PodPtr& pod) {
  if (!pod) return "";
  const OwnerReference* ref = pod->metadata.ControllerRef();
  return ref ? ref->name : "";
}

}  // namespace

SimWorld::SimWorld(SimWorldOptions options)
    : options_(std::move(options)),
      rng_(DeriveSeed(options_.seed, kScenarioStream)),
      registry_rng_(DeriveSeed(options_.seed, kRegistryStream)),
      store_fault_rng_(DeriveSeed(options_.seed, kStoreFaultStream)),
      api_fault_rng_(DeriveSeed(options_.seed, kApiFaultStream)),
      nodes_rng_(DeriveSeed(options_.seed, kNodesStream)),
      trace_(&loop_, options_.keep_trace_lines) {
  store_ = std::make_unique<MemStore>(&loop_, &loop_);
  registry_ = std::make_unique<Registry>(store_.get(), &loop_, &registry_rng_);
  // Before any client lists, so that every watch is served by the caches (the store is empty: this
  // cannot fail).
  (void)registry_->StartWatchCaches();
  manager_store_ = std::make_unique<FaultyStore>(store_.get(), &loop_, &loop_, &store_fault_rng_);
  manager_inner_api_ = std::make_unique<InProcessApiClient>(registry_.get(), &loop_);
  manager_api_ = std::make_unique<FaultyApiClient>(manager_inner_api_.get(), store_.get(), &loop_, &loop_,
                                                   &api_fault_rng_);
  manager_api_->SetLatencyAll(options_.api_latency_min, options_.api_latency_max);
  manager_api_->SetWatchDelay(options_.watch_latency_min, options_.watch_latency_max);
  cluster_api_ = std::make_unique<InProcessApiClient>(registry_.get(), &loop_);
  admin_api_ = std::make_unique<InProcessApiClient>(registry_.get(), &loop_);
  events_ = std::make_unique<EventRegistry>(&registry_->context());
  event_sink_ = std::make_unique<RegistryEventSink>(events_.get());

  StartMirrorWatch(0);

  SimClusterOptions c;
  c.nodes = options_.nodes;
  c.max_pods = options_.max_pods;
  c.runtime.start_min = options_.pod_start_min;
  c.runtime.start_max = options_.pod_start_max;
  c.heartbeat_interval = options_.heartbeat_interval;
  c.node_lifecycle.grace_period = options_.node_monitor_grace_period;
  c.node_lifecycle.eviction_timeout = options_.pod_eviction_timeout;
  c.node_lifecycle.monitor_period = options_.node_monitor_period;
  c.pod_gc.terminated_threshold = options_.terminated_pod_gc_threshold;
  cluster_ = std::make_unique<SimCluster>(c, cluster_api_.get(), cluster_api_.get(), &loop_, &loop_,
                                          &nodes_rng_, &trace_);
}

SimWorld::~SimWorld() {
  // The manager first (it holds watches on the views), then the components in reverse order of use.
  if (manager_) manager_->Stop();
  manager_.reset();
  if (other_manager_) other_manager_->Stop();
  other_manager_.reset();
  cluster_.reset();
  mirror_watch_.reset();
}

MemStore& SimWorld::store() { return *store_; }
Registry& SimWorld::registry() { return *registry_; }
SimCluster& SimWorld::cluster() { return *cluster_; }
FaultyApiClient& SimWorld::manager_api() { return *manager_api_; }
FaultyStore& SimWorld::manager_store() { return *manager_store_; }
ApiClient& SimWorld::admin_api() { return *admin_api_; }
EventRegistry& SimWorld::events() { return *events_; }

void SimWorld::StartManager() {
  if (manager_ || other_manager_) return;
  manager_rng_ =
      std::make_unique<Mt19937Rng>(DeriveSeed(options_.seed, kManagerStreamBase + manager_starts_));
  ++manager_starts_;
  trace_.Record("world", "manager-start " + std::to_string(manager_starts_));
  if (options_.manager_factory) {
    other_manager_ = options_.manager_factory(SimManagerPorts{
        manager_store_.get(), manager_api_.get(), &loop_, &loop_, manager_rng_.get(), &trace_, &logger_});
    other_manager_->Start();
    return;
  }
  Store* controller_source = options_.manager_controllers_from_store ? manager_store_.get() : nullptr;
  manager_ = std::make_unique<ReplicationManager>(options_.manager, controller_source, manager_api_.get(),
                                                  &loop_, &loop_, manager_rng_.get(), &trace_, &logger_);
  event_recorder_ = std::make_unique<EventRecorder>(EventRecorderOptions{}, &loop_, event_sink_.get());
  manager_->set_event_recorder(event_recorder_.get());
  manager_->Start();
}

const ManagerMetrics* SimWorld::manager_metrics() const {
  if (manager_) return &manager_->metrics();
  if (other_manager_) return &other_manager_->metrics();
  return nullptr;
}

void SimWorld::StopManager() {
  if (!manager_ && !other_manager_) return;
  trace_.Record("world", "manager-stop");
  if (other_manager_) other_manager_->Stop();
  other_manager_.reset();
  if (manager_) manager_->Stop();
  manager_.reset();
  event_recorder_.reset();
  // The crashed process's in-flight replies are lost with it; its requests may still apply.
  manager_api_->AbandonPending();
}

// ---- Mirror ----

void SimWorld::StartMirrorWatch(int64_t from_revision) {
  WatchRequest req;
  req.key = kRegistryPrefix;
  req.range_end = PrefixEnd(kRegistryPrefix);
  req.start_revision = from_revision;
  mirror_watch_ = store_->StartWatch(req, [this](const WatchResponse& resp) { OnStoreEvent(resp); });
  if (options_.compaction_interval > Duration::zero()) ScheduleCompaction();
}

void SimWorld::OnStoreEvent(const WatchResponse& resp) {
  if (resp.canceled) {
    // Fell behind a compaction (or the store failed): rebuild the mirror from a fresh read. Changes in
    // the gap are not observed one by one; observers get one call for the resync.
    loop_.Post([this] {
      mirror_watch_.reset();
      auto range = store_->GetPrefix(kRegistryPrefix);
      if (!range.ok()) {
        loop_.Schedule(std::chrono::milliseconds(100), [this] { StartMirrorWatch(observed_revision_ + 1); });
        return;
      }
      pods_by_owner_.clear();  // first: its groups view pods_'s keys
      pods_.clear();
      controllers_.clear();
      active_pods_ = 0;
      running_pods_ = 0;
      for (const KeyValue& kv : range->kvs) {
        if (kv.key.starts_with(kPodsPrefix)) {
          PodPtr pod = kv.value.pod();
          if (!pod) {
            auto decoded = DecodePod(kv.value.bytes());
            if (decoded.ok()) pod = std::make_shared<const Pod>(std::move(decoded).value());
          }
          if (pod) ApplyPod(kv.key, pod, kv.mod_revision);
        } else if (kv.key.starts_with(kControllersPrefix)) {
          ControllerPtr rc = kv.value.controller();
          if (!rc) {
            auto decoded = DecodeController(kv.value.bytes());
            if (decoded.ok()) rc = std::make_shared<const ReplicationController>(std::move(decoded).value());
          }
          if (rc) ApplyController(kv.key, rc, kv.mod_revision);
        }
      }
      observed_revision_ = range->revision;
      last_change_ = WorldChange{};
      last_change_.revision = range->revision;
      for (const auto& observer : observers_) observer();
      StartMirrorWatch(range->revision + 1);
    });
    return;
  }
  for (const WatchEvent& ev : resp.events) {
    const KeyValue& kv = ev.kv;
    const bool deleted = ev.type == WatchEvent::Type::kDelete;
    if (kv.key.starts_with(kPodsPrefix)) {
      PodPtr pod;
      if (!deleted) {
        pod = kv.value.pod();
        if (!pod) {
          auto decoded = DecodePod(kv.value.bytes());
          if (!decoded.ok()) continue;  // not a pod the registry wrote; invisible to every reader
          pod = std::make_shared<const Pod>(std::move(decoded).value());
        }
      }
      ApplyPod(kv.key, pod, kv.mod_revision);
    } else if (kv.key.starts_with(kControllersPrefix)) {
      ControllerPtr rc;
      if (!deleted) {
        rc = kv.value.controller();
        if (!rc) {
          auto decoded = DecodeController(kv.value.bytes());
          if (!decoded.ok()) continue;
          rc = std::make_shared<const ReplicationController>(std::move(decoded).value());
        }
      }
      ApplyController(kv.key, rc, kv.mod_revision);
    } else {
      observed_revision_ = kv.mod_revision;  // events, leases: nothing to mirror, no observer call
      continue;
    }
    observed_revision_ = kv.mod_revision;
    for (const auto& observer : observers_) observer();
  }
  if (!compaction_pending_ && options_.compaction_interval > Duration::zero()) ScheduleCompaction();
  CompactByRevisions();
}

void SimWorld::CompactByRevisions() {
  const int64_t keep = options_.compaction_revisions;
  if (keep <= 0) return;
  const int64_t current = store_->revision();
  if (current - store_->compact_revision() <= 2 * keep) return;
  const int64_t target = current - keep;
  if (store_->Compact(target).ok()) trace_.Record("world", "compact " + std::to_string(target));
}

void SimWorld::ApplyPod(const std::string& key, const PodPtr& pod, int64_t revision) {
  auto it = pods_.find(key);
  const PodPtr old = it == pods_.end() ? nullptr : it->second;
  if (!old && !pod) return;
  const ObjectMeta& meta = pod ? pod->metadata : old->metadata;
  last_change_ = WorldChange{};
  last_change_.revision = revision;
  last_change_.kind = WorldChange::Kind::kPod;
  last_change_.deleted = !pod;
  last_change_.ns = meta.namespace_;
  last_change_.name = meta.name;
  last_change_.pod = pod;
  last_change_.owner_before = OwnerName(old);
  last_change_.owner_after = OwnerName(pod);
  last_change_.was_active = old && IsActive(*old);
  last_change_.is_active = pod && IsActive(*pod);
  auto running = [](const PodPtr& p) { return p && IsActive(*p) && p->status.phase == phase::kRunning; };
  active_pods_ += static_cast<int>(last_change_.is_active) - static_cast<int>(last_change_.was_active);
  running_pods_ += static_cast<int>(running(pod)) - static_cast<int>(running(old));
  if (old && pod && last_change_.owner_before == last_change_.owner_after) {
    // Same owner (most changes: binding, status): its group keeps the key; only the tallies move.
    auto owner = pods_by_owner_.find(OwnerKeyView(meta.namespace_, last_change_.owner_before));
    if (owner != pods_by_owner_.end()) {
      it->second = pod;
      const ReplicationController* rc = GroupController(meta.namespace_, last_change_.owner_before);
      Contribute(owner->second, rc, *old, -1);
      Contribute(owner->second, rc, *pod, +1);
      return;
    }
  }
  if (old) {
    auto owner = pods_by_owner_.find(OwnerKeyView(meta.namespace_, last_change_.owner_before));
    if (owner != pods_by_owner_.end()) {
      Contribute(owner->second, GroupController(meta.namespace_, last_change_.owner_before), *old, -1);
      owner->second.keys.erase(key);
      if (owner->second.keys.empty()) pods_by_owner_.erase(owner);
    }
  }
  if (pod) {
    if (it != pods_.end()) {
      it->second = pod;
    } else {
      it = pods_.emplace(key, pod).first;
    }
    OwnerGroup& group = pods_by_owner_[{meta.namespace_, last_change_.owner_after}];
    group.keys.insert(std::string_view(it->first));
    Contribute(group, GroupController(meta.namespace_, last_change_.owner_after), *pod, +1);
  } else {
    pods_.erase(it);
  }
}

void SimWorld::ApplyController(const std::string& key, const ControllerPtr& rc, int64_t revision) {
  auto it = controllers_.find(key);
  const ControllerPtr old = it == controllers_.end() ? nullptr : it->second;
  if (!old && !rc) return;
  const ObjectMeta& meta = rc ? rc->metadata : old->metadata;
  last_change_ = WorldChange{};
  last_change_.revision = revision;
  last_change_.kind = WorldChange::Kind::kController;
  last_change_.deleted = !rc;
  last_change_.ns = meta.namespace_;
  last_change_.name = meta.name;
  if (rc) {
    controllers_[key] = rc;
  } else {
    controllers_.erase(it);
  }
  if (!old || !rc || old->metadata.uid != rc->metadata.uid ||
      EffectiveSelector(*old) != EffectiveSelector(*rc)) {
    RecountGroup(meta.namespace_, meta.name);
  }
}

const ReplicationController* SimWorld::GroupController(const std::string& ns,
                                                       const std::string& owner) const {
  if (owner.empty()) return nullptr;
  auto it = controllers_.find(ControllerKey(ns, owner));
  return it == controllers_.end() ? nullptr : it->second.get();
}

void SimWorld::Contribute(OwnerGroup& group, const ReplicationController* rc, const Pod& pod, int sign) {
  if (rc == nullptr || !IsActive(pod)) return;
  const OwnerReference* ref = pod.metadata.ControllerRef();
  if (!ref || ref->uid != rc->metadata.uid) return;
  const Labels& selector = EffectiveSelector(*rc);
  if (selector.empty() || !SelectorMapMatches(selector, pod.metadata.labels)) return;
  group.active += sign;
  if (pod.status.phase == phase::kRunning) group.running += sign;
  if (IsReady(pod)) group.ready += sign;
}

void SimWorld::RecountGroup(const std::string& ns, const std::string& owner) {
  auto it = pods_by_owner_.find(OwnerKeyView(ns, owner));
  if (it == pods_by_owner_.end()) return;
  OwnerGroup& group = it->second;
  group.active = group.running = group.ready = 0;
  const ReplicationController* rc = GroupController(ns, owner);
  for (std::string_view key : group.keys) Contribute(group, rc, *pods_.find(key)->second, +1);
}

void SimWorld::ScheduleCompaction() {
  if (compaction_pending_) return;
  compaction_pending_ = true;
  loop_.Schedule(options_.compaction_interval, [this] {
    compaction_pending_ = false;
    const int64_t current = store_->revision();
    // Like kube-apiserver: compact to the revision seen one interval ago.
    if (last_compaction_mark_ > store_->compact_revision()) {
      auto r = store_->Compact(last_compaction_mark_);
      if (r.ok()) trace_.Record("world", "compact " + std::to_string(last_compaction_mark_));
    }
    const bool idle = current == last_compaction_mark_;
    last_compaction_mark_ = current;
    // A quiet store stops the timer (so the loop can go idle); the next change restarts it.
    if (!idle) ScheduleCompaction();
  });
}

// ---- Ground truth ----

SimWorld::ControllerView SimWorld::View(const std::string& ns, const std::string& name) const {
  ControllerView view;
  auto it = controllers_.find(ControllerKey(ns, name));
  if (it == controllers_.end()) return view;
  const ReplicationController& rc = *it->second;
  view.exists = true;
  view.desired = rc.spec.replicas;
  view.status = rc.status;
  const Labels& selector = EffectiveSelector(rc);
  if (selector.empty()) return view;
  auto owned = pods_by_owner_.find(OwnerKeyView(ns, name));
  if (owned != pods_by_owner_.end()) {
    view.active = owned->second.active;
    view.running = owned->second.running;
    view.ready = owned->second.ready;
  }
  auto orphans = pods_by_owner_.find(OwnerKeyView(ns, ""));
  if (orphans == pods_by_owner_.end()) return view;
  for (std::string_view key : orphans->second.keys) {
    const Pod& pod = *pods_.find(key)->second;
    if (!IsActive(pod) || !SelectorMapMatches(selector, pod.metadata.labels)) continue;
    ++view.active;
    if (pod.status.phase == phase::kRunning) ++view.running;
    if (IsReady(pod)) ++view.ready;
  }
  return view;
}

std::vector<std::string> SimWorld::ControllerKeys() const {
  std::vector<std::string> keys;
  keys.reserve(controllers_.size());
  for (const auto& [key, rc] : controllers_) keys.push_back(KeyOf(rc->metadata));
  std::sort(keys.begin(), keys.end());
  return keys;
}

PodPtr SimWorld::GetPod(const std::string& ns, const std::string& name) const {
  auto it = pods_.find(PodKey(ns, name));
  return it == pods_.end() ? nullptr : it->second;
}

std::vector<std::string> SimWorld::PodsOf(const std::string& ns, const std::string& name) const {
  std::vector<std::string> keys;
  auto it = controllers_.find(ControllerKey(ns, name));
  if (it == controllers_.end()) return keys;
  const ReplicationController& rc = *it->second;
  const Labels& selector = EffectiveSelector(rc);
  if (selector.empty()) return keys;
  for (const std::string& owner : {name, std::string()}) {
    auto group = pods_by_owner_.find(OwnerKeyView(ns, owner));
    if (group == pods_by_owner_.end()) continue;
    for (std::string_view key : group->second.keys) {
      const Pod& pod = *pods_.find(key)->second;
      const OwnerReference* ref = pod.metadata.ControllerRef();
      if (!owner.empty() && (!ref || ref->uid != rc.metadata.uid)) continue;
      if (SelectorMapMatches(selector, pod.metadata.labels)) keys.push_back(KeyOf(pod.metadata));
    }
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

void SimWorld::OnChange(std::function<void()> observer) { observers_.push_back(std::move(observer)); }

// ---- Synchronous helpers ----

template <typename T>
Result<T> SimWorld::Await(const std::function<void(std::function<void(Result<T>)>)>& start) {
  auto out = std::make_shared<std::optional<Result<T>>>();
  start([out](Result<T> r) { out->emplace(std::move(r)); });
  const TimePoint deadline = loop_.Now() + kAwaitTimeout;
  while (!out->has_value()) {
    auto due = loop_.NextDue();
    if (!due || *due > deadline) break;
    loop_.RunOne();
  }
  if (!out->has_value()) return Status(Code::kTimeout, "the operation did not complete in the simulation");
  return std::move(**out);
}

Result<ControllerPtr> SimWorld::CreateController(const ReplicationController& rc) {
  return Await<ControllerPtr>([this, &rc](std::function<void(Result<ControllerPtr>)> done) {
    admin_api_->controllers().Create(rc.metadata.namespace_, rc, std::move(done));
  });
}

Result<ControllerPtr> SimWorld::ScaleController(const std::string& ns, const std::string& name,
                                                int32_t replicas) {
  for (int attempt = 0; attempt < 10; ++attempt) {
    auto current = Await<ControllerPtr>([&](std::function<void(Result<ControllerPtr>)> done) {
      admin_api_->controllers().Get(ns, name, std::move(done));
    });
    if (!current.ok()) return current.status();
    ReplicationController updated = *current.value();
    updated.spec.replicas = replicas;
    auto r = Await<ControllerPtr>([&](std::function<void(Result<ControllerPtr>)> done) {
      admin_api_->controllers().Update(updated, std::move(done));
    });
    if (r.ok() || r.status().code() != Code::kConflict) return r;
  }
  return Status(Code::kConflict, "scale of " + ns + "/" + name + " kept conflicting");
}

Status SimWorld::DeleteController(const std::string& ns, const std::string& name) {
  auto r = Await<ControllerPtr>([&](std::function<void(Result<ControllerPtr>)> done) {
    DeleteOptions background;
    background.propagation_policy = kPropagationBackground;
    admin_api_->controllers().Delete(ns, name, background, std::move(done));
  });
  return r.status();
}

Status SimWorld::KillPod(const std::string& ns, const std::string& name) {
  Result<PodPtr> pod = registry_->pods().Get(ns, name);
  if (!pod.ok()) return pod.status();
  cluster_->KillPod(**pod);
  return Status::Ok();
}

void SimWorld::RunFor(Duration d) { loop_.RunFor(d); }

bool SimWorld::RunUntil(const std::function<bool()>& pred, Duration timeout) {
  const TimePoint deadline = loop_.Now() + timeout;
  while (!pred()) {
    auto due = loop_.NextDue();
    if (!due || *due > deadline) {
      loop_.RunUntil(deadline);
      return pred();
    }
    loop_.RunOne();
  }
  return true;
}

}  // namespace rcsim
