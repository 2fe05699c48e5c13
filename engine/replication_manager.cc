#include "engine/replication_manager.h"

#include <algorithm>
#include <string>
#include <utility>

#include "engine/event_recorder.h"
#include "engine/labels.h"
#include "engine/pod_ranking.h"

namespace rcsim {

const Labels& EffectiveSelector(const ReplicationController& rc) {
  if (!rc.spec.selector.empty() || !rc.spec.template_) return rc.spec.selector;
  return rc.spec.template_->metadata.labels;
}

OwnerReference ControllerOwnerRef(const ReplicationController& rc) {
  OwnerReference ref;
  ref.api_version = "v1";
  ref.kind = "ReplicationController";
  ref.name = rc.metadata.name;
  ref.uid = rc.metadata.uid;
  ref.controller = true;
  ref.block_owner_deletion = true;
  return ref;
}

Pod PodFromTemplate(const ReplicationController& rc) {
  const PodTemplateSpec& t = *rc.spec.template_;
  Pod pod;
  pod.metadata.generate_name = rc.metadata.name + "-";
  pod.metadata.namespace_ = rc.metadata.namespace_;
  pod.metadata.labels = t.metadata.labels;
  pod.metadata.annotations = t.metadata.annotations;
  pod.metadata.finalizers = t.metadata.finalizers;
  pod.metadata.owner_references.push_back(ControllerOwnerRef(rc));
  pod.spec = t.spec;
  return pod;
}

std::vector<ReplicationControllerCondition> WithReplicaFailure(
    const std::vector<ReplicationControllerCondition>& conditions, const Status& manage_error,
    std::string_view reason, TimePoint now) {
  std::vector<ReplicationControllerCondition> out;
  out.reserve(conditions.size() + 1);
  bool present = false;
  for (const auto& c : conditions) {
    if (c.type == kReplicaFailure) {
      present = true;
      if (manage_error.ok()) continue;  // a sync whose writes succeeded clears it
    }
    out.push_back(c);
  }
  if (!manage_error.ok() && !present) {
    ReplicationControllerCondition c;
    c.type = kReplicaFailure;
    c.status = "True";
    c.last_transition_time = now;
    c.reason = std::string(reason);
    c.message = manage_error.message();
    out.push_back(std::move(c));
  }
  return out;
}

ReplicationControllerStatus ComputeStatus(const ReplicationController& rc, const std::vector<PodPtr>& claimed,
                                          TimePoint now) {
  ReplicationControllerStatus st;
  const Labels* template_labels = rc.spec.template_ ? &rc.spec.template_->metadata.labels : nullptr;
  for (const PodPtr& p : claimed) {
    if (!IsActive(*p)) continue;
    ++st.replicas;
    if (template_labels != nullptr && SelectorMapMatches(*template_labels, p->metadata.labels)) {
      ++st.fully_labeled_replicas;
    }
    if (IsReady(*p)) {
      ++st.ready_replicas;
      if (IsAvailable(*p, rc.spec.min_ready_seconds, now)) ++st.available_replicas;
    }
  }
  st.observed_generation = rc.metadata.generation;
  return st;
}

// The same status from the informer's counts (a sync that claimed by counting; min_ready_seconds is 0,
// so every ready pod is available).
ReplicationControllerStatus ComputeStatus(const ReplicationController& rc, const PodInformer::Tally& tally) {
  ReplicationControllerStatus st;
  st.replicas = static_cast<int32_t>(tally.active);
  st.fully_labeled_replicas = static_cast<int32_t>(tally.fully_labeled);
  st.ready_replicas = static_cast<int32_t>(tally.ready);
  st.available_replicas = static_cast<int32_t>(tally.ready);
  st.observed_generation = rc.metadata.generation;
  return st;
}

// One sync of one controller key; lives until its last API callback ran.
struct ReplicationManager::Sync {
  std::string key;
  std::string exp_key;  // expectations key: the controller's uid
  ControllerPtr rc;
  bool gone = false;            // an uncached read found the controller deleted or replaced (new uid)
  bool deleting = false;        // an uncached read found it being deleted
  bool manage = false;          // expectations satisfied when the sync began
  std::vector<PodPtr> claimed;  // owned pods that match, including those adopted by this sync
  std::vector<std::string> orphans_considered;  // uids of the matching orphans the claim tried to adopt
  // Claimed by counting (nothing to adopt, release or delete): `tally` stands for `claimed`.
  bool counted = false;
  PodInformer::Tally tally;
  int pending = 0;                  // API calls of the current phase not yet completed
  Status error;                     // the first failure
  Status manage_error;              // the first failed create or delete, for the ReplicaFailure condition
  const char* failure_reason = "";  // FailedCreate or FailedDelete
  int remaining_creates = 0;        // creates not yet issued
  int batch_size = 1;
  bool batch_failed = false;
  TimePoint started{};  // when the sync began, for its duration metric
  Pod pod_to_create;
};

ReplicationManager::ReplicationManager(ManagerOptions options, Store* store, ApiClient* api, Clock* clock,
                                       Executor* executor, Rng* rng, TraceSink* trace, Logger* logger)
    : options_(std::move(options)),
      store_(store),
      api_(api),
      clock_(clock),
      executor_(executor),
      rng_(rng),
      trace_(trace),
      logger_(logger),
      expectations_(clock, options_.expectations_timeout),
      queue_(clock, executor,
             NewControllerRateLimiter(clock, options_.min_backoff, options_.max_backoff, options_.qps,
                                      options_.burst)),
      controllers_(
          ControllerInformer::Options{options_.controllers_prefix, options_.informer_min_backoff,
                                      options_.informer_max_backoff, clock},
          store, store == nullptr ? api : nullptr, executor, logger, &metrics_,
          ControllerInformer::Handlers{
              [this](const ControllerPtr& rc) { Enqueue(KeyOf(rc->metadata)); },
              [this](const ControllerPtr&, const ControllerPtr& rc) { Enqueue(KeyOf(rc->metadata)); },
              [this](const ControllerPtr& rc) {
                if (expectations_.PendingAdds(ExpectationsKey(*rc)) > 0 && rc->spec.template_) {
                  unseen_creates_of_dead_[rc->metadata.namespace_][rc->metadata.uid] = {
                      rc->spec.template_->metadata.labels, clock_->Now() + options_.expectations_timeout};
                }
                expectations_.Delete(ExpectationsKey(*rc));
                unverified_creates_.erase(ExpectationsKey(*rc));
                if (pods_.OwnedBy(rc->metadata.uid) != nullptr) {
                  // Its pods may have been orphaned before the delete, the informer not showing it yet.
                  dead_owners_[rc->metadata.namespace_].emplace(rc->metadata.uid, rc->metadata.name);
                }
                Enqueue(KeyOf(rc->metadata));
              },
              [this] { SchedulePump(); }}),
      pods_(PodInformer::Options{options_.informer_min_backoff, options_.informer_max_backoff, clock}, api,
            executor, logger, &metrics_,
            PodInformer::Handlers{[this](const PodPtr& p) { OnPodAdd(p); },
                                  [this](const PodPtr& o, const PodPtr& n) { OnPodUpdate(o, n); },
                                  [this](const PodPtr& p) { OnPodDelete(p); }, [this] { OnPodsListed(); }}) {
  (void)store_;
  (void)rng_;
  if (options_.workers < 1) options_.workers = 1;
  if (options_.burst_replicas < 1) options_.burst_replicas = 1;
  queue_.SetReadyCallback([this] { SchedulePump(); });
  queue_.SetMetrics(&metrics_.queue);
}

ReplicationManager::~ReplicationManager() { Stop(); }

void ReplicationManager::Start() {
  if (started_ || stopped_) return;
  started_ = true;
  controllers_.Start();
  pods_.Start();
  ScheduleResync();
}

void ReplicationManager::Stop() {
  if (stopped_) return;
  stopped_ = true;
  alive_.reset();
  controllers_.Stop();
  pods_.Stop();
  queue_.ShutDown();
  if (resync_timer_ != 0) executor_->Cancel(resync_timer_);
  resync_timer_ = 0;
}

bool ReplicationManager::HasSynced() const { return controllers_.HasSynced() && pods_.HasSynced(); }

template <typename R>
Callback<R> ReplicationManager::OnExecutor(std::function<void(R)> fn) {
  return [executor = executor_, alive = std::weak_ptr<int>(alive_), fn = std::move(fn)](R r) {
    executor->Post([alive, fn, r = std::move(r)]() {
      if (alive.expired()) return;
      fn(r);
    });
  };
}

void ReplicationManager::Trace(const std::string& event) { trace_->Record("manager", event); }

void ReplicationManager::Enqueue(const std::string& key) { queue_.Add(key); }

void ReplicationManager::SchedulePump() {
  if (pump_posted_ || stopped_) return;
  pump_posted_ = true;
  std::weak_ptr<int> alive = alive_;
  executor_->Post([this, alive] {
    if (alive.expired()) return;
    Pump();
  });
}

void ReplicationManager::Pump() {
  pump_posted_ = false;
  if (stopped_ || !HasSynced()) return;
  while (in_flight_ < options_.workers) {
    std::optional<std::string> key = queue_.Get();
    if (!key) break;
    ++in_flight_;
    BeginSync(*key);
  }
}

void ReplicationManager::ScheduleResync() {
  if (stopped_ || options_.resync_period <= Duration::zero()) return;
  std::weak_ptr<int> alive = alive_;
  resync_timer_ = executor_->Schedule(options_.resync_period, [this, alive] {
    if (alive.expired()) return;
    for (const std::string& key : controllers_.Keys()) Enqueue(key);
    ScheduleResync();
  });
}

// --- Pod events. ---

ControllerPtr ReplicationManager::ResolveControllerRef(const std::string& ns,
                                                       const OwnerReference& ref) const {
  if (ref.kind != "ReplicationController") return nullptr;
  ControllerPtr rc = controllers_.Get(ns + "/" + ref.name);
  if (rc == nullptr || rc->metadata.uid != ref.uid) return nullptr;
  return rc;
}

void ReplicationManager::EnqueueMatchingControllers(const Pod& pod) {
  if (pod.metadata.labels.empty()) return;
  for (const ControllerPtr& rc : controllers_.InNamespace(pod.metadata.namespace_)) {
    const Labels& sel = EffectiveSelector(*rc);
    if (!sel.empty() && SelectorMapMatches(sel, pod.metadata.labels)) Enqueue(KeyOf(rc->metadata));
  }
}

void ReplicationManager::OnPodAdd(const PodPtr& pod) {
  if (pod->metadata.deletion_timestamp) {
    // Seen for the first time already being deleted (e.g. after a re-list): a deletion.
    OnPodDelete(pod);
    return;
  }
  if (const OwnerReference* ref = pod->metadata.ControllerRef()) {
    ControllerPtr rc = ResolveControllerRef(pod->metadata.namespace_, *ref);
    if (rc == nullptr) {
      if (ref->kind == "ReplicationController") {
        dead_owners_[pod->metadata.namespace_].emplace(ref->uid, ref->name);
      }
      return;
    }
    expectations_.CreationObserved(ExpectationsKey(*rc));
    Enqueue(KeyOf(rc->metadata));
    return;
  }
  EnqueueMatchingControllers(*pod);
}

void ReplicationManager::OnPodsListed() {
  if (pod_lists_++ > 0) {
    // A re-list follows a gap in the pod watch (a drop, a stall cut short, 410): a pod created and
    // deleted during it never shows, and its controller would wait the whole expectations timeout.
    // Pending creates wait at most the unknown-outcome grace, and the next create counts live first,
    // as after a timed-out create, so a create applied but not yet shown is not made twice.
    for (const std::string& key :
         expectations_.CreationsUnobservableAfterGap(options_.unknown_outcome_grace)) {
      unverified_creates_.insert(key);
    }
  }
  SchedulePump();
}

void ReplicationManager::OnPodUpdate(const PodPtr& old_pod, const PodPtr& new_pod) {
  const Pod& o = *old_pod;
  const Pod& n = *new_pod;
  if (o.metadata.resource_version == n.metadata.resource_version && !o.metadata.resource_version.empty()) {
    return;
  }
  bool labels_changed = o.metadata.labels != n.metadata.labels;
  const OwnerReference* old_ref = o.metadata.ControllerRef();
  const OwnerReference* new_ref = n.metadata.ControllerRef();
  bool ref_changed =
      (old_ref == nullptr) != (new_ref == nullptr) || (old_ref != nullptr && old_ref->uid != new_ref->uid);
  bool became_ready = !IsReady(o) && IsReady(n);
  bool relevant = labels_changed || ref_changed || o.status.phase != n.status.phase ||
                  IsReady(o) != IsReady(n) || o.metadata.deletion_timestamp != n.metadata.deletion_timestamp;
  // Nothing below acts on an update that is not relevant (binding, container statuses): it would only
  // resolve the controller to do nothing.
  if (!relevant) return;

  if (n.metadata.deletion_timestamp && !o.metadata.deletion_timestamp) {
    // Graceful deletion started: the pod no longer counts, observe the deletion now.
    OnPodDelete(new_pod);
    if (labels_changed || ref_changed) OnPodDelete(old_pod);
    return;
  }
  if (ref_changed && old_ref != nullptr) {
    if (ControllerPtr rc = ResolveControllerRef(o.metadata.namespace_, *old_ref)) {
      Enqueue(KeyOf(rc->metadata));
    }
  }
  if (new_ref != nullptr) {
    ControllerPtr rc = ResolveControllerRef(n.metadata.namespace_, *new_ref);
    if (rc == nullptr) return;
    std::string key = KeyOf(rc->metadata);
    if (relevant) Enqueue(key);
    if (became_ready && rc->spec.min_ready_seconds > 0) {
      // Becomes available min_ready_seconds later; no pod event marks that moment.
      queue_.AddAfter(key, std::chrono::seconds(rc->spec.min_ready_seconds) + std::chrono::seconds(1));
    }
    return;
  }
  if (labels_changed || ref_changed) EnqueueMatchingControllers(n);
}

void ReplicationManager::OnPodDelete(const PodPtr& pod) {
  const OwnerReference* ref = pod->metadata.ControllerRef();
  if (ref == nullptr) return;
  ControllerPtr rc = ResolveControllerRef(pod->metadata.namespace_, *ref);
  if (rc == nullptr) return;
  expectations_.DeletionObserved(ExpectationsKey(*rc), KeyOf(pod->metadata));
  Enqueue(KeyOf(rc->metadata));
}

// --- Sync. ---

std::string ExpectationsKey(const ReplicationController& rc) {
  return rc.metadata.uid.empty() ? KeyOf(rc.metadata) : rc.metadata.uid.str();
}

std::string InvalidForSync(const ReplicationController& rc) {
  if (rc.spec.replicas < 0) return "spec.replicas is negative (" + std::to_string(rc.spec.replicas) + ")";
  const Labels& selector = EffectiveSelector(rc);
  if (rc.spec.template_ && !selector.empty() &&
      !SelectorMapMatches(selector, rc.spec.template_->metadata.labels)) {
    return "spec.selector does not match the template's labels";
  }
  return "";
}

bool ReplicationManager::Superseded(const Sync& s) const {
  if (s.gone) return true;
  ControllerPtr cached = controllers_.Get(s.key);
  return cached == nullptr || cached->metadata.uid != s.rc->metadata.uid;
}

bool ReplicationManager::MayWrite(const Sync& s) const {
  if (s.gone || s.deleting || s.rc->metadata.deletion_timestamp) return false;
  ControllerPtr cached = controllers_.Get(s.key);
  return cached != nullptr && cached->metadata.uid == s.rc->metadata.uid &&
         !cached->metadata.deletion_timestamp;
}

void ReplicationManager::BeginSync(const std::string& key) {
  auto s = std::make_shared<Sync>();
  s->started = clock_->Now();
  s->key = key;
  s->rc = controllers_.Get(key);
  if (s->rc == nullptr) {
    if (trace_->enabled()) Trace("sync " + key + " gone");
    FinishSync(s);
    return;
  }
  s->exp_key = ExpectationsKey(*s->rc);
  std::string invalid = InvalidForSync(*s->rc);
  if (!invalid.empty()) {
    // An invalid stored object (e.g. written straight into etcd) is never acted on: a selector that
    // does not select the template's pods would create pods forever, negative replicas are not 0.
    ++metrics_.invalid_controllers;
    logger_->Log(LogLevel::kWarning, "controller " + key + " refused: " + invalid);
    if (trace_->enabled()) Trace("sync " + key + " refused: " + invalid);
    FinishSync(s);
    return;
  }
  s->manage = expectations_.Satisfied(s->exp_key);
  ClaimPods(s);
}

void ReplicationManager::ClaimPods(const SyncPtr& s) {
  const ReplicationController& rc = *s->rc;
  const Labels& selector = EffectiveSelector(rc);
  bool rc_deleting = rc.metadata.deletion_timestamp.has_value();
  if (ClaimByCounting(s)) {
    ManageReplicas(s);
    return;
  }
  std::vector<PodPtr> to_release;
  std::vector<PodPtr> to_adopt;
  if (const PodInformer::PodMap* owned = pods_.OwnedBy(rc.metadata.uid)) {
    for (const auto& [pod_key, pod] : *owned) {
      if (pod->metadata.namespace_ != rc.metadata.namespace_) continue;
      if (selector.empty() || SelectorMapMatches(selector, pod->metadata.labels)) {
        s->claimed.push_back(pod);
      } else if (!rc_deleting && !pod->metadata.deletion_timestamp) {
        to_release.push_back(pod);
      }
    }
  }
  if (!rc_deleting && !selector.empty()) {
    if (const PodInformer::PodMap* orphans = pods_.OrphansIn(rc.metadata.namespace_)) {
      for (const auto& [pod_key, pod] : *orphans) {
        if (pod->metadata.deletion_timestamp) continue;
        if (SelectorMapMatches(selector, pod->metadata.labels)) {
          to_adopt.push_back(pod);
          s->orphans_considered.push_back(pod->metadata.uid);
        }
      }
    }
  }
  s->pending = static_cast<int>(to_release.size()) + (to_adopt.empty() ? 0 : 1);
  if (s->pending == 0) {
    ManageReplicas(s);
    return;
  }
  for (const PodPtr& pod : to_release) Release(s, pod);
  if (to_adopt.empty()) return;
  // Adopt only for a controller that still exists with this uid and is not being deleted, read
  // uncached: the cache may still hold a controller that was deleted (upstream's canAdopt).
  api_->controllers().Get(
      rc.metadata.namespace_, rc.metadata.name,
      OnExecutor<Result<ControllerPtr>>([this, s, to_adopt = std::move(to_adopt)](Result<ControllerPtr> r) {
        if (!r.ok() && r.status().code() != Code::kNotFound) {
          Fail(s, r.status());
          OnClaimCallDone(s);
          return;
        }
        if (!r.ok() || (*r)->metadata.uid != s->rc->metadata.uid || (*r)->metadata.deletion_timestamp) {
          s->gone = !r.ok() || (*r)->metadata.uid != s->rc->metadata.uid;
          s->deleting = !s->gone;
          if (trace_->enabled()) Trace("not adopting for " + s->key + ": controller deleted or replaced");
          OnClaimCallDone(s);
          return;
        }
        s->pending += static_cast<int>(to_adopt.size());
        for (const PodPtr& pod : to_adopt) Adopt(s, pod);
        OnClaimCallDone(s);
      }));
}

namespace {

// What a controller claims, as the informer's counts take it.
PodInformer::ClaimSpec ClaimSpecOf(const ReplicationController& rc) {
  PodInformer::ClaimSpec spec{rc.metadata.namespace_, EffectiveSelector(rc), std::nullopt};
  if (rc.spec.template_) spec.template_labels = rc.spec.template_->metadata.labels;
  return spec;
}

}  // namespace

// The common sync, in O(1) of the controller's pods: when the informer's counts show nothing to release,
// no orphan matches and no pod is to be deleted now, the claim is those counts. The outcome is the one the
// pod-by-pod claim below would reach (same counts, same status); with anything to release, adopt or
// delete, or with min_ready_seconds (availability depends on the time), the sync claims pod by pod.
bool ReplicationManager::ClaimByCounting(const SyncPtr& s) {
  const ReplicationController& rc = *s->rc;
  if (rc.spec.min_ready_seconds > 0) return false;
  const PodInformer::ClaimSpec spec = ClaimSpecOf(rc);
  const PodInformer::Tally tally = pods_.TallyOf(rc.metadata.uid, spec);
  // Too many pods: a sync that may delete ranks them pod by pod; one waiting for expectations only counts.
  if (tally.unclaimed > 0 || (tally.active > rc.spec.replicas && s->manage)) return false;
  if (!rc.metadata.deletion_timestamp && !spec.selector.empty()) {
    if (const PodInformer::PodMap* orphans = pods_.OrphansIn(rc.metadata.namespace_)) {
      for (const auto& [pod_key, pod] : *orphans) {
        if (!pod->metadata.deletion_timestamp && SelectorMapMatches(spec.selector, pod->metadata.labels)) {
          return false;
        }
      }
    }
  }
  s->counted = true;
  s->tally = tally;
  return true;
}

namespace {

// A claim write that failed this way will fail the same way again: skip the pod instead of failing
// (and so blocking) the whole sync.
bool PermanentClaimError(Code code) {
  return code == Code::kInvalid || code == Code::kBadRequest || code == Code::kRequestTooLarge ||
         code == Code::kMethodNotAllowed || code == Code::kUnauthorized || code == Code::kForbidden;
}

}  // namespace

// Adoption and release patch metadata.ownerReferences alone, with the pod's uid as the precondition
// (upstream's controller-ref manager): no resourceVersion, so a stale cached pod cannot conflict, and
// adopting a pod already ours, or releasing one no longer ours, changes nothing and succeeds. A pod
// replaced under its name or claimed by another controller meanwhile is refused (422): that pod is
// skipped, the others go on.
void ReplicationManager::Adopt(const SyncPtr& s, const PodPtr& pod) {
  OwnerReferencePatch patch;
  patch.uid = pod->metadata.uid;
  patch.add = ControllerOwnerRef(*s->rc);
  if (trace_->enabled()) Trace("adopt " + s->key + " " + KeyOf(pod->metadata));
  api_->pods().PatchOwnerReferences(
      pod->metadata.namespace_, pod->metadata.name, patch,
      OnExecutor<Result<PodPtr>>([this, s, pod](Result<PodPtr> r) {
        if (r.ok()) {
          ++metrics_.adoptions;
          s->claimed.push_back(*r);
        } else if (r.status().code() == Code::kNotFound) {
          // Gone: nothing to adopt.
        } else if (PermanentClaimError(r.status().code())) {
          ++metrics_.claim_errors;
          logger_->Log(LogLevel::kWarning, "adopting " + KeyOf(pod->metadata) + " for " + s->key +
                                               " failed, skipping it: " + r.status().ToString());
          if (trace_->enabled()) {
            Trace("adopt failed " + KeyOf(pod->metadata) + " for " + s->key + ": " + r.status().ToString());
          }
        } else {
          Fail(s, r.status());
        }
        OnClaimCallDone(s);
      }));
}

void ReplicationManager::Release(const SyncPtr& s, const PodPtr& pod) {
  OwnerReferencePatch patch;
  patch.uid = pod->metadata.uid;
  patch.remove_uid = s->rc->metadata.uid;
  if (trace_->enabled()) Trace("release " + s->key + " " + KeyOf(pod->metadata));
  api_->pods().PatchOwnerReferences(pod->metadata.namespace_, pod->metadata.name, patch,
                                    OnExecutor<Result<PodPtr>>([this, s, pod](const Result<PodPtr>& r) {
                                      if (r.ok()) {
                                        ++metrics_.releases;
                                      } else if (r.status().code() == Code::kNotFound) {
                                      } else if (PermanentClaimError(r.status().code())) {
                                        ++metrics_.claim_errors;
                                        logger_->Log(LogLevel::kWarning,
                                                     "releasing " + KeyOf(pod->metadata) + " for " + s->key +
                                                         " failed: " + r.status().ToString());
                                      } else {
                                        Fail(s, r.status());
                                      }
                                      OnClaimCallDone(s);
                                    }));
}

void ReplicationManager::OnClaimCallDone(const SyncPtr& s) {
  if (--s->pending > 0) return;
  if (!s->error.ok()) {
    // The pod set is uncertain; retry the whole sync later.
    FinishSync(s);
    return;
  }
  ManageReplicas(s);
}

namespace {

// The informer now shows active orphans matching rc's selector that the sync's claim did not consider:
// they came in while it claimed (a deleted predecessor's pods, shown as its own when the sync began,
// seen orphaned meanwhile). Creating for them would duplicate them; they are the next sync's to adopt.
// (An orphan the claim considered was adopted, is gone, or failed to adopt for good and is skipped.)
bool OrphansCameDuringClaim(const PodInformer& pods, const ReplicationController& rc,
                            const std::vector<std::string>& considered) {
  const Labels& selector = EffectiveSelector(rc);
  if (selector.empty() || rc.metadata.deletion_timestamp) return false;
  const PodInformer::PodMap* orphans = pods.OrphansIn(rc.metadata.namespace_);
  if (orphans == nullptr) return false;
  for (const auto& [key, pod] : *orphans) {
    if (pod->metadata.deletion_timestamp || !IsActive(*pod) ||
        !SelectorMapMatches(selector, pod->metadata.labels))
      continue;
    if (std::find(considered.begin(), considered.end(), pod->metadata.uid) == considered.end()) return true;
  }
  return false;
}

}  // namespace

void ReplicationManager::ManageReplicas(const SyncPtr& s) {
  if (Superseded(*s)) {
    // Deleted (or replaced by a successor of the same name) while this sync ran: it must neither
    // record expectations nor write anything for the dead controller.
    if (trace_->enabled()) Trace("sync " + s->key + " superseded");
    FinishSync(s);
    return;
  }
  const ReplicationController& rc = *s->rc;
  std::vector<PodPtr> active;
  if (!s->counted) {
    active.reserve(s->claimed.size());
    for (const PodPtr& p : s->claimed) {
      if (IsActive(*p)) active.push_back(p);
    }
  }
  const int64_t active_count = s->counted ? s->tally.active : static_cast<int64_t>(active.size());
  int64_t desired = rc.spec.replicas;
  int64_t diff = active_count - desired;
  bool deleting = !MayWrite(*s);
  if (!s->manage || deleting || diff == 0) {
    if (trace_->enabled() && diff != 0) {
      Trace("sync " + s->key + " active=" + std::to_string(active_count) +
            " desired=" + std::to_string(desired) + (deleting ? " deleting" : " waiting for expectations"));
    }
    if (!s->manage && !deleting && diff != 0) {
      // Nothing may wake this controller when the expectations expire (the writes were lost): look
      // again then rather than at the next resync.
      queue_.AddAfter(s->key, expectations_.TimeUntilExpiry(s->exp_key) + std::chrono::milliseconds(1));
    }
    UpdateStatus(s);
    return;
  }
  if (diff < 0) {
    if (!rc.spec.template_) {
      logger_->Log(LogLevel::kWarning, "controller " + s->key + " has no pod template");
      UpdateStatus(s);
      return;
    }
    if (unverified_creates_.contains(s->exp_key) || DeadOwnersPodsMatch(rc) || DeadOwnersCreatedUnseen(rc) ||
        OrphansCameDuringClaim(pods_, rc, s->orphans_considered)) {
      VerifyThenCreate(s);
      return;
    }
    int n = static_cast<int>(std::min<int64_t>(-diff, options_.burst_replicas));
    if (trace_->enabled()) {
      Trace("sync " + s->key + " active=" + std::to_string(active_count) +
            " desired=" + std::to_string(desired) + " create=" + std::to_string(n));
    }
    StartCreates(s, n, 0);
    return;
  }
  int n = static_cast<int>(std::min<int64_t>(diff, options_.burst_replicas));
  if (trace_->enabled()) {
    Trace("sync " + s->key + " active=" + std::to_string(active_count) +
          " desired=" + std::to_string(desired) + " delete=" + std::to_string(n));
  }
  SortForDeletion(active, static_cast<std::size_t>(n));  // ranks all, sorts only the n victims
  active.resize(n);
  std::vector<std::string> victims;
  victims.reserve(n);
  for (const PodPtr& p : active) victims.push_back(KeyOf(p->metadata));
  expectations_.ExpectDeletions(s->exp_key, victims);
  s->pending = n;
  const TimePoint retry_until = clock_->Now() + options_.unknown_outcome_grace;
  for (int i = 0; i < n; ++i) {
    DeletePod(s, active[i], victims[i], retry_until, kFirstDeleteRetry);
  }
}

void ReplicationManager::DeletePod(const SyncPtr& s, const PodPtr& pod, const std::string& pod_key,
                                   TimePoint retry_until, Duration backoff) {
  DeleteOptions opts;
  opts.precondition_uid = pod->metadata.uid;  // a second delete can only hit this very pod
  api_->pods().Delete(
      pod->metadata.namespace_, pod->metadata.name, opts,
      OnExecutor<Result<PodPtr>>([this, s, pod, pod_key, retry_until, backoff](const Result<PodPtr>& r) {
        if (r.ok() || r.status().code() != Code::kTimeout || !MayWrite(*s) ||
            clock_->Now() + backoff >= retry_until) {
          OnDeleteDone(s, pod_key, r);
          return;
        }
        // Outcome unknown (the API server's etcd write timed out, as when the etcd leader dies): ask
        // again rather than wait for the grace. Applied or not, the pod ends up deleted once.
        ++metrics_.delete_errors;
        logger_->Log(LogLevel::kWarning, "delete of " + pod_key + " for " + s->key + " timed out (" +
                                             r.status().message() + "); deleting it again");
        if (trace_->enabled()) Trace("delete timed out " + pod_key + " for " + s->key + ": retrying");
        std::weak_ptr<int> alive = alive_;
        executor_->Schedule(backoff, [this, alive, s, pod, pod_key, retry_until, backoff, r] {
          if (alive.expired()) return;
          if (!MayWrite(*s)) {
            OnDeleteDone(s, pod_key, r);  // the controller went meanwhile: the outcome stays unknown
            return;
          }
          DeletePod(s, pod, pod_key, retry_until, std::min(backoff * 2, kMaxDeleteRetry));
        });
      }));
}

void ReplicationManager::StartCreates(const SyncPtr& s, int n, int unseen) {
  expectations_.ExpectCreations(s->exp_key, n + unseen);
  if (n == 0) {
    UpdateStatus(s);
    return;
  }
  s->pod_to_create = PodFromTemplate(*s->rc);
  s->remaining_creates = n;
  s->batch_size = 1;
  IssueCreateBatch(s);
}

bool ReplicationManager::DeadOwnersPodsMatch(const ReplicationController& rc) {
  const Labels& selector = EffectiveSelector(rc);
  auto ns = dead_owners_.find(rc.metadata.namespace_);
  if (ns == dead_owners_.end() || selector.empty()) return false;
  bool found = false;
  for (auto it = ns->second.begin(); it != ns->second.end();) {
    const auto& [uid, name] = *it;
    const PodInformer::PodMap* owned = pods_.OwnedBy(uid);
    const ControllerPtr cached = controllers_.Get(rc.metadata.namespace_ + "/" + name);
    if (owned == nullptr || (cached != nullptr && cached->metadata.uid == uid)) {
      it = ns->second.erase(it);  // no pod left, or its controller is cached after all
      continue;
    }
    for (const auto& [key, pod] : *owned) {
      if (found) break;
      found = pod->metadata.namespace_ == rc.metadata.namespace_ && IsActive(*pod) &&
              SelectorMapMatches(selector, pod->metadata.labels);
    }
    ++it;
  }
  if (ns->second.empty()) dead_owners_.erase(ns);
  return found;
}

bool ReplicationManager::DeadOwnersCreatedUnseen(const ReplicationController& rc) {
  auto ns = unseen_creates_of_dead_.find(rc.metadata.namespace_);
  const Labels& selector = EffectiveSelector(rc);
  if (ns == unseen_creates_of_dead_.end() || selector.empty()) return false;
  const TimePoint now = clock_->Now();
  bool found = false;
  for (auto it = ns->second.begin(); it != ns->second.end();) {
    if (it->second.until <= now) {
      it = ns->second.erase(it);
      continue;
    }
    found = found || SelectorMapMatches(selector, it->second.labels);
    ++it;
  }
  if (ns->second.empty()) unseen_creates_of_dead_.erase(ns);
  return found;
}

int64_t ReplicationManager::InformerActive(const Sync& s) {
  const ReplicationController& rc = *s.rc;
  int64_t n = pods_.TallyOf(rc.metadata.uid, ClaimSpecOf(rc)).active;
  // Pods this sync adopted that the informer does not show as the controller's yet.
  for (const PodPtr& pod : s.claimed) {
    if (!IsActive(*pod)) continue;
    const PodPtr cached = pods_.Get(KeyOf(pod->metadata));
    const OwnerReference* ref = cached != nullptr ? cached->metadata.ControllerRef() : nullptr;
    if (ref == nullptr || ref->uid != rc.metadata.uid) ++n;
  }
  return n;
}

void ReplicationManager::VerifyThenCreate(const SyncPtr& s) {
  const ReplicationController& rc = *s->rc;
  ListOptions opts;
  opts.label_selector = LabelSelector::FromMap(EffectiveSelector(rc));
  api_->pods().List(
      rc.metadata.namespace_, opts, OnExecutor<Result<ObjectList<Pod>>>([this, s](Result<ObjectList<Pod>> r) {
        if (!r.ok()) {
          // Still cannot tell whether the timed-out create was applied: create nothing, retry later.
          Fail(s, r.status());
          UpdateStatus(s);
          return;
        }
        if (!MayWrite(*s)) {
          UpdateStatus(s);
          return;
        }
        const ReplicationController& rc = *s->rc;
        const Labels& selector = EffectiveSelector(rc);
        // The live list shows what deleted controllers created unseen: orphans among them are counted
        // below (and the informer's showing them awaited), the others are their owners' to collect.
        if (auto dead = unseen_creates_of_dead_.find(rc.metadata.namespace_);
            dead != unseen_creates_of_dead_.end()) {
          std::erase_if(dead->second,
                        [&](const auto& e) { return SelectorMapMatches(selector, e.second.labels); });
          if (dead->second.empty()) unseen_creates_of_dead_.erase(dead);
        }
        int64_t live = 0;          // the controller's own
        int64_t live_orphans = 0;  // to adopt once the informer shows them
        for (const PodPtr& pod : r->items) {
          if (pod->metadata.namespace_ != rc.metadata.namespace_ || !IsActive(*pod)) continue;
          if (!selector.empty() && !SelectorMapMatches(selector, pod->metadata.labels)) continue;
          const OwnerReference* owner = pod->metadata.ControllerRef();
          if (owner == nullptr) {
            ++live_orphans;
          } else if (owner->uid == rc.metadata.uid) {
            ++live;
          }
        }
        // The informer's count now, not when the sync began: pods it showed while the List was in
        // flight were observed already and must not be expected again (they never would be).
        const int64_t informer_active = InformerActive(*s);
        if (live_orphans == 0) {
          unverified_creates_.erase(s->exp_key);
        } else {
          // Orphans the informer does not show yet (it lags): no pod is created for them, and every
          // sync counts live until the informer shows them and they are adopted.
          unverified_creates_.insert(s->exp_key);
        }
        const int64_t seen = std::max(live, informer_active);
        const int unseen =
            static_cast<int>(std::min<int64_t>(seen - informer_active, options_.burst_replicas));
        const int n = static_cast<int>(
            std::clamp<int64_t>(rc.spec.replicas - seen - live_orphans, 0, options_.burst_replicas));
        if (unseen > 0) {
          logger_->Log(LogLevel::kInfo, "controller " + s->key + ": " + std::to_string(unseen) +
                                            " pods not yet seen by the informer (a timed-out create was "
                                            "applied); expecting them");
        }
        if (trace_->enabled()) {
          Trace("sync " + s->key + " verified active=" + std::to_string(live) +
                " orphans=" + std::to_string(live_orphans) + " informer=" + std::to_string(informer_active) +
                " create=" + std::to_string(n));
        }
        StartCreates(s, n, unseen);
      }));
}

void ReplicationManager::IssueCreateBatch(const SyncPtr& s) {
  int n = std::min(s->batch_size, s->remaining_creates);
  s->remaining_creates -= n;
  s->pending = n;
  for (int i = 0; i < n; ++i) {
    api_->pods().Create(
        s->rc->metadata.namespace_, s->pod_to_create,
        OnExecutor<Result<PodPtr>>([this, s](const Result<PodPtr>& r) { OnCreateDone(s, r); }));
  }
}

void ReplicationManager::OnCreateDone(const SyncPtr& s, const Result<PodPtr>& r) {
  if (r.ok()) {
    ++metrics_.creates;
    if (trace_->enabled()) Trace("created " + KeyOf((*r)->metadata) + " for " + s->key);
    if (events_ != nullptr) {
      events_->Record(ReferenceTo(*s->rc), event_type::kNormal, "SuccessfulCreate",
                      "Created pod: " + (*r)->metadata.name);
    }
  } else {
    ++metrics_.create_errors;
    if (events_ != nullptr) {
      events_->Record(ReferenceTo(*s->rc), event_type::kWarning, "FailedCreate",
                      "Error creating: " + r.status().message());
    }
    s->batch_failed = true;
    logger_->Log(LogLevel::kWarning, "create for " + s->key + " failed: " + r.status().ToString());
    if (trace_->enabled()) Trace("create failed for " + s->key + ": " + r.status().ToString());
    // A timed-out create may have been applied: keep expecting it rather than risk creating a
    // replacement too (overshoot), but only for unknown_outcome_grace: by then an applied create has
    // been observed, and one that was not applied must not stall the controller for the full timeout.
    // The creates known to have succeeded stay expected until observed.
    if (r.status().code() == Code::kTimeout) {
      expectations_.CreationOutcomeUnknown(s->exp_key, options_.unknown_outcome_grace);
      unverified_creates_.insert(s->exp_key);
    } else {
      expectations_.LowerCreations(s->exp_key, 1);
    }
    Fail(s, r.status());
    ManageFailed(s, "FailedCreate", r.status());
  }
  if (--s->pending > 0) return;
  if (s->remaining_creates > 0 && !MayWrite(*s)) {
    // The controller was deleted (or is being deleted) while the slow start ran: stop.
    if (trace_->enabled()) Trace("sync " + s->key + " stops creating: controller deleted");
    s->batch_failed = true;
  }
  if (s->batch_failed) {
    // Slow start: stop at the first failing batch; the creates never issued will not be observed.
    expectations_.LowerCreations(s->exp_key, s->remaining_creates);
    s->remaining_creates = 0;
  }
  if (s->remaining_creates > 0) {
    s->batch_size *= 2;
    IssueCreateBatch(s);
    return;
  }
  UpdateStatus(s);
}

void ReplicationManager::OnDeleteDone(const SyncPtr& s, const std::string& pod_key, const Result<PodPtr>& r) {
  if (r.ok() || r.status().code() == Code::kNotFound) {
    ++metrics_.deletes;
    if (trace_->enabled()) Trace("deleted " + pod_key + " for " + s->key);
    if (r.ok() && events_ != nullptr) {  // kube records nothing for a pod already gone
      events_->Record(ReferenceTo(*s->rc), event_type::kNormal, "SuccessfulDelete",
                      "Deleted pod: " + pod_key.substr(pod_key.find('/') + 1));
    }
    if (!r.ok()) expectations_.DeletionObserved(s->exp_key, pod_key);
  } else {
    ++metrics_.delete_errors;
    if (events_ != nullptr) {
      events_->Record(ReferenceTo(*s->rc), event_type::kWarning, "FailedDelete",
                      "Error deleting: " + r.status().message());
    }
    logger_->Log(LogLevel::kWarning,
                 "delete of " + pod_key + " for " + s->key + " failed: " + r.status().ToString());
    if (trace_->enabled())
      Trace("delete failed " + pod_key + " for " + s->key + ": " + r.status().ToString());
    if (r.status().code() == Code::kTimeout) {
      // Maybe applied: expected until the delete is observed or the grace passed, like a create.
      expectations_.DeletionOutcomeUnknown(s->exp_key, pod_key, options_.unknown_outcome_grace);
    } else {
      expectations_.DeletionObserved(s->exp_key, pod_key);
    }
    Fail(s, r.status());
    ManageFailed(s, "FailedDelete", r.status());
  }
  if (--s->pending > 0) return;
  UpdateStatus(s);
}

namespace {

// Until the first of `claimed` that is ready but not yet available becomes available (at least 1ms;
// minReadySeconds when no such pod has a Ready transition time).
Duration NextAvailableIn(const ReplicationController& rc, const std::vector<PodPtr>& claimed, TimePoint now) {
  const Duration min_ready = std::chrono::seconds(rc.spec.min_ready_seconds);
  Duration next = min_ready;
  for (const PodPtr& pod : claimed) {
    if (!IsActive(*pod) || !IsReady(*pod) || IsAvailable(*pod, rc.spec.min_ready_seconds, now)) continue;
    for (const PodCondition& c : pod->status.conditions) {
      if (c.type != "Ready") continue;
      if (c.last_transition_time) next = std::min(next, *c.last_transition_time + min_ready - now);
      break;
    }
  }
  return std::max<Duration>(next, std::chrono::milliseconds(1));
}

}  // namespace

void ReplicationManager::UpdateStatus(const SyncPtr& s) {
  if (Superseded(*s)) {
    FinishSync(s);
    return;
  }
  const ReplicationController& rc = *s->rc;
  ReplicationControllerStatus st =
      s->counted ? ComputeStatus(rc, s->tally) : ComputeStatus(rc, s->claimed, clock_->Now());
  st.conditions = WithReplicaFailure(rc.status.conditions, s->manage_error, s->failure_reason, clock_->Now());
  if (st.ready_replicas > st.available_replicas && rc.spec.min_ready_seconds > 0) {
    // Look again when the next ready pod becomes available (no pod event marks that moment). Not a
    // whole minReadySeconds from now: the queue keeps one wake-up per key, the earliest, so a later
    // one asked for by another pod's readiness is dropped, and the status would lag by up to that much.
    queue_.AddAfter(s->key, NextAvailableIn(rc, s->claimed, clock_->Now()));
  }
  if (st == rc.status) {
    FinishSync(s);
    return;
  }
  ReplicationController copy = rc;
  copy.status = st;
  api_->controllers().UpdateStatus(
      std::move(copy), OnExecutor<Result<ControllerPtr>>([this, s](Result<ControllerPtr> r) {
        if (r.ok()) {
          ++metrics_.status_updates;
          if (auto rv = ResourceVersionNumber((*r)->metadata.resource_version)) {
            controllers_.Observe(*r, *rv);
          }
          FinishSync(s);
          return;
        }
        Fail(s, r.status());
        if (r.status().code() != Code::kConflict) {
          FinishSync(s);
          return;
        }
        // Stale cache: re-read so the retry (requeued with backoff) starts from the newest object.
        const ReplicationController& rc = *s->rc;
        api_->controllers().Get(rc.metadata.namespace_, rc.metadata.name,
                                OnExecutor<Result<ControllerPtr>>([this, s](Result<ControllerPtr> got) {
                                  if (got.ok()) {
                                    if (auto rv = ResourceVersionNumber((*got)->metadata.resource_version)) {
                                      controllers_.Observe(*got, *rv);
                                    }
                                  }
                                  FinishSync(s);
                                }));
      }));
}

void ReplicationManager::ManageFailed(const SyncPtr& s, const char* reason, const Status& status) {
  if (!s->manage_error.ok()) return;
  s->manage_error = status;
  s->failure_reason = reason;
}

void ReplicationManager::Fail(const SyncPtr& s, Status status) {
  if (s->error.ok()) s->error = std::move(status);
}

void ReplicationManager::FinishSync(const SyncPtr& s) {
  ++metrics_.syncs;
  (s->error.ok() ? metrics_.sync_success : metrics_.sync_error).Observe(clock_->Now() - s->started);
  --in_flight_;
  queue_.Done(s->key);
  if (s->error.ok()) {
    queue_.Forget(s->key);
  } else {
    ++metrics_.sync_errors;
    ++metrics_.requeues;
    if (trace_->enabled()) Trace("sync " + s->key + " failed: " + s->error.ToString());
    queue_.AddRateLimited(s->key);
  }
  SchedulePump();
}

}  // namespace rcsim
