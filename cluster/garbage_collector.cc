#include "cluster/garbage_collector.h"

#include <algorithm>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/labels.h"
#include "engine/node_types.h"

namespace rcsim {
namespace {

bool HasFinalizer(const ObjectMeta& m, const char* f) {
  return std::find(m.finalizers.begin(), m.finalizers.end(), f) != m.finalizers.end();
}

bool IsOwnerKind(const OwnerReference& ref) { return ref.kind == "ReplicationController"; }

}  // namespace

GarbageCollector::GarbageCollector(GarbageCollectorOptions options, ApiClient* api, ClusterApi* cluster,
                                   Executor* executor, TraceSink* trace, SharedCaches* caches)
    : options_(options), api_(api), cluster_(cluster), executor_(executor), trace_(trace) {
  if (caches == nullptr) {
    own_caches_ = std::make_unique<SharedCaches>(api, cluster, executor);
    caches = own_caches_.get();
  }
  caches_ = caches;
  // The caches may outlive this collector: every handler checks that it is still alive.
  ObjectCache<ReplicationController>::Handlers rh;
  rh.on_upsert = [this, alive = alive_](const ControllerPtr&, const ControllerPtr& rc) {
    if (*alive) OnController(rc);
  };
  rh.on_delete = [this, alive = alive_](const ControllerPtr& rc) {
    if (*alive) OnControllerGone(rc);
  };
  rh.on_synced = [this, alive = alive_] {
    if (*alive) Post();
  };
  rcs_ = &caches->controllers();
  rcs_->AddHandlers(std::move(rh));
  ObjectCache<Pod>::Handlers ph;
  ph.on_upsert = [this, alive = alive_](const PodPtr& o, const PodPtr& n) {
    if (*alive) OnPod(o, n);
  };
  ph.on_delete = [this, alive = alive_](const PodPtr& p) {
    if (*alive) OnPodGone(p);
  };
  ph.on_synced = [this, alive = alive_] {
    if (*alive) Post();
  };
  pods_ = &caches->pods();
  pods_->AddHandlers(std::move(ph));
  if (cluster_ != nullptr) {
    ObjectCache<Node>::Handlers nh;
    nh.on_delete = [this, alive = alive_](const NodePtr&) {
      if (*alive) CollectLeases();
    };
    nh.on_synced = [this, alive = alive_] {
      if (*alive) CollectLeases();
    };
    nodes_ = &caches->nodes();
    nodes_->AddHandlers(std::move(nh));
  }
}

GarbageCollector::~GarbageCollector() { *alive_ = false; }

void GarbageCollector::Start() {
  caches_->Start();
  executor_->Schedule(options_.resync_period, [this, alive = alive_] {
    if (*alive) Resync();
  });
}

void GarbageCollector::Trace(const std::string& event) {
  if (trace_ != nullptr && trace_->enabled()) trace_->Record("gc", event);
}

void GarbageCollector::Resync() {
  for (const auto& [key, rc] : rcs_->objects()) {
    if (rc->metadata.deletion_timestamp) dirty_owners_.insert(rc->metadata.uid);
  }
  // Only dependents with an owner not known present: the pass would leave every other one alone.
  for (const auto& [key, pod] : pods_->objects([this](const Pod& p) { return HasOwnerNotPresent(p); })) {
    dirty_pods_.insert(key);
  }
  Post();
  CollectLeases();
  executor_->Schedule(options_.resync_period, [this, alive = alive_] {
    if (*alive) Resync();
  });
}

void GarbageCollector::OnController(const ControllerPtr& rc) {
  rc_by_uid_[rc->metadata.uid] = ObjectCache<ReplicationController>::KeyOf(*rc);
  if (rc->metadata.deletion_timestamp) {
    dirty_owners_.insert(rc->metadata.uid);
    Post();
  }
}

void GarbageCollector::OnControllerGone(const ControllerPtr& rc) {
  rc_by_uid_.erase(rc->metadata.uid);
  auto it = dependents_.find(rc->metadata.uid);
  if (it == dependents_.end()) return;
  for (const std::string& key : it->second) dirty_pods_.insert(key);
  Post();
}

void GarbageCollector::IndexPod(const PodPtr& pod, bool add) {
  const std::string key = ObjectCache<Pod>::KeyOf(*pod);
  for (const OwnerReference& ref : pod->metadata.owner_references) {
    if (add) {
      dependents_[ref.uid].insert(key);
    } else if (auto it = dependents_.find(ref.uid); it != dependents_.end()) {
      it->second.erase(key);
      if (it->second.empty()) dependents_.erase(it);
    }
  }
}

void GarbageCollector::OnPod(const PodPtr& old_pod, const PodPtr& pod) {
  // Most changes (binding, status) leave the ownerReferences alone: re-index only when they moved.
  const bool same_owners = old_pod && old_pod->metadata.owner_references == pod->metadata.owner_references;
  if (!same_owners) {
    if (old_pod) IndexPod(old_pod, false);
    IndexPod(pod, true);
  }
  bool dirty = false;
  for (const OwnerReference& ref : pod->metadata.owner_references) {
    if (!IsOwnerKind(ref)) continue;
    auto rc = rc_by_uid_.find(ref.uid);
    if (rc == rc_by_uid_.end()) {
      dirty = true;  // owner not (yet) seen: verify
    } else {
      ControllerPtr owner = rcs_->Get(rc->second);
      if (owner && owner->metadata.deletion_timestamp) dirty_owners_.insert(ref.uid);
    }
  }
  if (dirty) dirty_pods_.insert(ObjectCache<Pod>::KeyOf(*pod));
  // A dependent that changed may unblock (or need) work on its deleting owners. With the same
  // references, the loop above has already marked those of the owner kind.
  if (old_pod) {
    for (const OwnerReference& ref : old_pod->metadata.owner_references) {
      if (same_owners && IsOwnerKind(ref)) continue;
      if (auto rc = rc_by_uid_.find(ref.uid); rc != rc_by_uid_.end()) {
        ControllerPtr owner = rcs_->Get(rc->second);
        if (owner && owner->metadata.deletion_timestamp) dirty_owners_.insert(ref.uid);
      }
    }
  }
  if (!dirty_owners_.empty() || !dirty_pods_.empty()) Post();
}

void GarbageCollector::OnPodGone(const PodPtr& pod) {
  IndexPod(pod, false);
  for (const OwnerReference& ref : pod->metadata.owner_references) {
    if (rc_by_uid_.count(ref.uid)) dirty_owners_.insert(ref.uid);
  }
  dirty_pods_.erase(ObjectCache<Pod>::KeyOf(*pod));
  if (!dirty_owners_.empty()) Post();
}

void GarbageCollector::Post() {
  if (posted_) return;
  posted_ = true;
  executor_->Post([this, alive = alive_] {
    if (*alive) Pass();
  });
}

void GarbageCollector::Pass() {
  posted_ = false;
  if (!rcs_->synced() || !pods_->synced()) return;  // on_synced posts again
  std::set<std::string> owners = std::move(dirty_owners_);
  dirty_owners_.clear();
  for (const std::string& uid : owners) ProcessOwner(uid);
  std::set<std::string> pods = std::move(dirty_pods_);
  dirty_pods_.clear();
  for (const std::string& key : pods) ProcessDependent(key);
}

GarbageCollector::Owner GarbageCollector::OwnerState(const std::string& ns, const OwnerReference& ref) {
  if (!IsOwnerKind(ref)) return Owner::kPresent;
  if (absent_.count(ref.uid)) return Owner::kAbsent;
  ControllerPtr rc = rcs_->Get(ns, ref.name);
  if (rc && rc->metadata.uid == ref.uid) return Owner::kPresent;
  return Owner::kUnknown;  // the cache may lag: ask the API
}

bool GarbageCollector::HasOwnerNotPresent(const Pod& pod) {
  for (const OwnerReference& ref : pod.metadata.owner_references) {
    if (OwnerState(pod.metadata.namespace_, ref) != Owner::kPresent) return true;
  }
  return false;
}

void GarbageCollector::LookUpOwner(const std::string& ns, const OwnerReference& ref) {
  if (!looking_up_.insert(ref.uid).second) return;
  ++counters_.owner_lookups;
  const std::string uid = ref.uid;
  api_->controllers().Get(ns, ref.name, [this, alive = alive_, uid](const Result<ControllerPtr>& r) {
    if (!*alive) return;
    looking_up_.erase(uid);
    if (r.ok() && (*r)->metadata.uid == uid) return;              // present: the cache will show it
    if (!r.ok() && r.status().code() != Code::kNotFound) return;  // unknown: the resync retries
    absent_.insert(uid);
    auto it = dependents_.find(uid);
    if (it != dependents_.end()) {
      for (const std::string& key : it->second) dirty_pods_.insert(key);
    }
    Post();
  });
}

void GarbageCollector::ProcessDependent(const std::string& key) {
  const PodPtr pod = pods_->Get(key);
  if (!pod || pod->metadata.owner_references.empty() || in_flight_.count(key)) return;
  std::set<std::string> absent;
  bool any_present = false, any_unknown = false;
  for (const OwnerReference& ref : pod->metadata.owner_references) {
    switch (OwnerState(pod->metadata.namespace_, ref)) {
      case Owner::kPresent: any_present = true; break;
      case Owner::kAbsent: absent.insert(ref.uid); break;
      case Owner::kUnknown:
        any_unknown = true;
        LookUpOwner(pod->metadata.namespace_, ref);
        break;
    }
  }
  if (any_unknown || absent.empty()) return;
  if (any_present) {
    RemoveReferences(pod, absent);
  } else if (!pod->metadata.deletion_timestamp) {
    DeleteDependent(pod);
  }
}

void GarbageCollector::ProcessOwner(const std::string& uid) {
  auto k = rc_by_uid_.find(uid);
  if (k == rc_by_uid_.end()) return;
  const ControllerPtr rc = rcs_->Get(k->second);
  if (!rc || !rc->metadata.deletion_timestamp) return;
  std::vector<PodPtr> deps;
  if (auto it = dependents_.find(uid); it != dependents_.end()) {
    for (const std::string& key : it->second) {
      if (PodPtr p = pods_->Get(key)) deps.push_back(std::move(p));
    }
  }
  if (HasFinalizer(rc->metadata, kOrphanFinalizer)) {
    for (const PodPtr& p : deps) RemoveReferences(p, {uid});
    if (deps.empty()) RemoveFinalizerIfNoDependents(rc, kOrphanFinalizer);
    return;
  }
  if (HasFinalizer(rc->metadata, kForegroundFinalizer)) {
    bool blocking = false;
    for (const PodPtr& p : deps) {
      for (const OwnerReference& ref : p->metadata.owner_references) {
        if (ref.uid == uid && ref.block_owner_deletion) blocking = true;
      }
      if (!p->metadata.deletion_timestamp) DeleteDependent(p);
    }
    if (!blocking) RemoveFinalizerIfNoDependents(rc, kForegroundFinalizer);
  }
}

void GarbageCollector::RemoveFinalizerIfNoDependents(const ControllerPtr& rc, const char* finalizer) {
  const std::string uid = rc->metadata.uid;
  const std::string verify_key = "verify:" + uid;
  if (!in_flight_.insert(verify_key).second) return;
  const std::string rc_key = ObjectCache<ReplicationController>::KeyOf(*rc);
  ListOptions opts;
  opts.label_selector = LabelSelector::FromMap(rc->spec.selector);
  api_->pods().List(
      rc->metadata.namespace_, opts,
      [this, alive = alive_, verify_key, rc_key, uid, finalizer](const Result<ObjectList<Pod>>& r) {
        if (!*alive) return;
        in_flight_.erase(verify_key);
        if (!r.ok()) return;  // the resync retries every deleting owner
        const bool orphan = std::string_view(finalizer) == kOrphanFinalizer;
        bool left = false;
        for (const PodPtr& p : r->items) {
          for (const OwnerReference& ref : p->metadata.owner_references) {
            if (ref.uid != uid) continue;
            if (orphan) {
              RemoveReferences(p, {uid});
              left = true;
            } else {
              if (!p->metadata.deletion_timestamp) DeleteDependent(p);
              left = left || ref.block_owner_deletion;
            }
          }
        }
        if (left) return;  // the writes' outcomes bring this owner back
        const ControllerPtr now = rcs_->Get(rc_key);
        if (now && now->metadata.uid == uid && HasFinalizer(now->metadata, finalizer)) {
          RemoveFinalizer(now, finalizer);
        }
      });
}

void GarbageCollector::RemoveReferences(const PodPtr& pod, const std::set<std::string>& uids) {
  const std::string key = ObjectCache<Pod>::KeyOf(*pod);
  if (!in_flight_.insert(key).second) return;
  Pod next = *pod;
  auto& refs = next.metadata.owner_references;
  refs.erase(
      std::remove_if(refs.begin(), refs.end(), [&](const OwnerReference& r) { return uids.count(r.uid); }),
      refs.end());
  const std::string rv = pod->metadata.resource_version;
  api_->pods().Update(std::move(next), [this, alive = alive_, key, rv, uids](const Result<PodPtr>& r) {
    if (!*alive) return;
    in_flight_.erase(key);
    if (r.ok()) {
      ++counters_.references_removed;
      Trace("orphan " + key);
    }
    if (r.ok() ? !pods_->Get(key) : (r.status().code() == Code::kConflict && CacheMovedOn(key, rv))) {
      // Nothing in the cache will bring this pod back (not cached yet, or its newer version was
      // already seen while the write was in flight): look again now.
      dirty_pods_.insert(key);
      for (const std::string& uid : uids) dirty_owners_.insert(uid);
      Post();
    }
  });
}

void GarbageCollector::RemoveFinalizer(const ControllerPtr& rc, const char* finalizer) {
  const std::string key = "rc:" + ObjectCache<ReplicationController>::KeyOf(*rc);
  if (!in_flight_.insert(key).second) return;
  ReplicationController next = *rc;
  auto& f = next.metadata.finalizers;
  f.erase(std::remove(f.begin(), f.end(), std::string(finalizer)), f.end());
  const std::string uid = rc->metadata.uid;
  const std::string name = ObjectCache<ReplicationController>::KeyOf(*rc);
  api_->controllers().Update(
      std::move(next), [this, alive = alive_, key, uid, name, finalizer](const Result<ControllerPtr>& r) {
        if (!*alive) return;
        in_flight_.erase(key);
        if (r.ok()) {
          ++counters_.finalizers_removed;
          Trace(std::string("finalize ") + name + " " + finalizer);
        } else if (r.status().code() == Code::kConflict) {
          dirty_owners_.insert(uid);
          Post();
        }
      });
}

bool GarbageCollector::CacheMovedOn(const std::string& key, const std::string& resource_version) const {
  const PodPtr cached = pods_->Get(key);
  return cached && cached->metadata.resource_version != resource_version;
}

void GarbageCollector::DeleteDependent(const PodPtr& pod) {
  const std::string key = ObjectCache<Pod>::KeyOf(*pod);
  if (!in_flight_.insert(key).second) return;
  // Both preconditions: a cached version may be stale (its ownerReferences removed since); a
  // conflict leaves the decision to the newer version the watch brings.
  DeleteOptions opts;
  opts.precondition_uid = pod->metadata.uid;
  opts.precondition_resource_version = pod->metadata.resource_version;
  opts.propagation_policy = kPropagationBackground;
  std::set<std::string> owners;
  for (const OwnerReference& ref : pod->metadata.owner_references) owners.insert(ref.uid);
  api_->pods().Delete(
      pod->metadata.namespace_, pod->metadata.name, opts,
      [this, alive = alive_, key, rv = pod->metadata.resource_version, owners](const Result<PodPtr>& r) {
        if (!*alive) return;
        in_flight_.erase(key);
        if (r.ok()) {
          ++counters_.dependents_deleted;
          Trace("delete " + key);
        }
        // As in RemoveReferences: look again when no watch event will.
        if (r.ok() ? !pods_->Get(key) : (r.status().code() == Code::kConflict && CacheMovedOn(key, rv))) {
          dirty_pods_.insert(key);
          for (const std::string& uid : owners) dirty_owners_.insert(uid);
          Post();
        }
      });
}

// ---- Node-owned Leases ----

namespace {

bool IsNodeRef(const OwnerReference& ref) { return ref.kind == "Node" && ref.api_version == "v1"; }

}  // namespace

void GarbageCollector::CollectLeases() {
  if (!nodes_ || !nodes_->synced()) return;  // on_synced asks again
  if (leases_listing_) {
    leases_again_ = true;
    return;
  }
  leases_listing_ = true;
  cluster_->leases().List(kNodeLeaseNamespace, ListOptions{},
                          [this, alive = alive_](const Result<ObjectList<Lease>>& r) {
                            if (!*alive) return;
                            leases_listing_ = false;
                            if (r.ok()) {
                              for (const LeasePtr& lease : r->items) CollectLease(lease);
                            }  // else the resync lists again
                            if (leases_again_) {
                              leases_again_ = false;
                              CollectLeases();
                            }
                          });
}

void GarbageCollector::CollectLease(const LeasePtr& lease) {
  const auto& refs = lease->metadata.owner_references;
  if (refs.empty() || !std::all_of(refs.begin(), refs.end(), IsNodeRef)) return;
  const bool cached_present = std::any_of(refs.begin(), refs.end(), [this](const OwnerReference& ref) {
    const NodePtr node = nodes_->Get(ref.name);
    return node && node->metadata.uid == ref.uid;
  });
  if (cached_present) return;
  // The node cache may lag behind (a Node created after its list): every owner is asked for live.
  auto pending = std::make_shared<std::size_t>(refs.size());
  auto present = std::make_shared<bool>(false);
  for (const OwnerReference& ref : refs) {
    ++counters_.owner_lookups;
    cluster_->nodes().Get(
        "", ref.name,
        [this, alive = alive_, lease, uid = ref.uid, pending, present](const Result<NodePtr>& r) {
          if (!*alive) return;
          const bool gone = r.ok() ? (*r)->metadata.uid != uid : r.status().code() == Code::kNotFound;
          if (!gone) *present = true;  // present, or unknown: the next pass asks again
          if (--*pending == 0 && !*present) DeleteLease(lease);
        });
  }
}

void GarbageCollector::DeleteLease(const LeasePtr& lease) {
  const std::string key = "lease:" + lease->metadata.namespace_ + "/" + lease->metadata.name;
  if (!in_flight_.insert(key).second) return;
  DeleteOptions opts;
  opts.precondition_uid = lease->metadata.uid;
  opts.precondition_resource_version = lease->metadata.resource_version;  // renewed since: judge again
  cluster_->leases().Delete(lease->metadata.namespace_, lease->metadata.name, opts,
                            [this, alive = alive_, key](const Result<LeasePtr>& r) {
                              if (!*alive) return;
                              in_flight_.erase(key);
                              if (r.ok()) {
                                ++counters_.leases_deleted;
                                Trace("delete " + key);
                              }
                            });
}

}  // namespace rcsim
