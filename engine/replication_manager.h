// ReplicationManager: keeps, for every ReplicationController, spec.replicas active pods matching its
// selector, and writes back its status.
//
// Sources: controllers from the Store, or from the ApiClient when no Store is given (ControllerInformer),
// pods from the ApiClient (PodInformer);
// writes go through the ApiClient only. Each controller key is synced by at most one worker at a time
// (WorkQueue); a sync is asynchronous and counts against `workers` until all its API calls completed.
// A sync: refuses an invalid controller (InvalidForSync: logged, traced, metrics.invalid_controllers);
// claims pods (releases owned pods that stopped matching; adopts matching orphans only after an
// uncached GET shows the controller still exists with its uid and is not being deleted; a conflict
// re-reads that one pod and decides again, a permanent error skips that pod), then, only when its
// expectations (keyed by controller uid) are satisfied and the controller is still the cached one and
// not being deleted, creates (slow-start batches 1, 2, 4, ..., stopping once the controller is gone;
// counting its pods with a live List first when a timed-out create's grace passed unobserved or the
// informer shows pods of a deleted controller that its selector matches, see VerifyThenCreate) or
// deletes (PodDeletionOrder) at most burst_replicas pods (each with its uid as the precondition; a delete
// that times out is sent again until the unknown-outcome grace, see DeletePod), then writes status if it
// changed. A sync whose controller was deleted or replaced while it ran records nothing and writes
// nothing more. Any other failed write fails the sync, which is requeued with per-key exponential
// backoff combined with an overall token bucket; a success resets the key's backoff.
//
// Thread-safety: single-threaded by contract. Every entry point runs on `executor`; port callbacks
// may arrive on other threads and hop to the executor before touching state. After Stop() (or
// destruction) no outstanding callback touches the manager.
#ifndef RCSIM_ENGINE_REPLICATION_MANAGER_H_
#define RCSIM_ENGINE_REPLICATION_MANAGER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/api_client.h"
#include "engine/controller_informer.h"
#include "engine/executor.h"
#include "engine/expectations.h"
#include "engine/log.h"
#include "engine/metrics.h"
#include "engine/pod_informer.h"
#include "engine/rng.h"
#include "engine/store.h"
#include "engine/time.h"
#include "engine/trace.h"
#include "engine/types.h"
#include "engine/work_queue.h"

namespace rcsim {

class EventRecorder;  // engine/event_recorder.h

struct ManagerOptions {
  int workers = 5;                                    // syncs in flight at once
  Duration resync_period = std::chrono::seconds(30);  // every controller is enqueued this often
  int burst_replicas = 500;                           // most creates or deletes of one sync
  Duration expectations_timeout = std::chrono::minutes(5);
  // After a create times out (outcome unknown), the controller's expectations expire at the latest this
  // long afterwards (see Expectations::ExpireWithin).
  Duration unknown_outcome_grace = std::chrono::seconds(10);
  Duration min_backoff = std::chrono::milliseconds(5);  // per-key failure backoff, doubling
  Duration max_backoff = std::chrono::seconds(1000);
  double qps = 10;  // overall requeue token bucket
  int burst = 100;
  std::string controllers_prefix = "/registry/controllers/";
  Duration informer_min_backoff = std::chrono::milliseconds(100);  // re-list after failures
  Duration informer_max_backoff = std::chrono::seconds(30);
};

class ReplicationManager {
 public:
  // All pointers must outlive the manager. `store` may be null: controllers then come from `api`.
  ReplicationManager(ManagerOptions options, Store* store, ApiClient* api, Clock* clock, Executor* executor,
                     Rng* rng, TraceSink* trace, Logger* logger);
  // Stop()s.
  ~ReplicationManager();
  ReplicationManager(const ReplicationManager&) = delete;
  ReplicationManager& operator=(const ReplicationManager&) = delete;

  // Where the manager records SuccessfulCreate / FailedCreate / SuccessfulDelete / FailedDelete
  // events about its controllers (none when null, the default). Not owned; set before Start().
  void set_event_recorder(EventRecorder* recorder) { events_ = recorder; }

  // Starts the informers and the periodic resync. Call once, on the executor.
  void Start();
  // Idempotent; on the executor. Afterwards no callback touches the manager.
  void Stop();

  const ManagerMetrics& metrics() const { return metrics_; }
  // Both informers completed a list.
  bool HasSynced() const;

  // Introspection for tests and the simulation's checkers.
  const Expectations& expectations() const { return expectations_; }
  int syncs_in_flight() const { return in_flight_; }
  // Keys waiting in the work queue (ready ones; delayed retries not counted), as workqueue_depth.
  std::size_t queue_depth() const { return queue_.Len(); }
  // The syncs in progress: seconds since they began, summed and the longest.
  WorkQueue::Unfinished unfinished_work() const { return queue_.UnfinishedWork(); }
  const ControllerInformer& controllers() const { return controllers_; }
  const PodInformer& pods() const { return pods_; }

 private:
  struct Sync;
  using SyncPtr = std::shared_ptr<Sync>;

  // Wraps `fn` so that it runs on the executor, and only while the manager is alive.
  template <typename R>
  Callback<R> OnExecutor(std::function<void(R)> fn);

  void Enqueue(const std::string& key);
  void SchedulePump();
  void Pump();
  void ScheduleResync();

  void OnPodAdd(const PodPtr& pod);
  // After each pod list: a re-list makes the creates still expected of unknown outcome.
  void OnPodsListed();
  void OnPodUpdate(const PodPtr& old_pod, const PodPtr& new_pod);
  void OnPodDelete(const PodPtr& pod);
  // The cached controller `ref` points to in `ns`, if its uid matches.
  ControllerPtr ResolveControllerRef(const std::string& ns, const OwnerReference& ref) const;
  void EnqueueMatchingControllers(const Pod& pod);

  void BeginSync(const std::string& key);
  // The sync's controller is no longer the cached one (deleted, or a successor with a new uid).
  bool Superseded(const Sync& s) const;
  // The sync may create, delete or adopt: its controller is current and not being deleted.
  bool MayWrite(const Sync& s) const;
  void ClaimPods(const SyncPtr& s);
  bool ClaimByCounting(const SyncPtr& s);
  void Adopt(const SyncPtr& s, const PodPtr& pod);
  void Release(const SyncPtr& s, const PodPtr& pod);
  void OnClaimCallDone(const SyncPtr& s);
  void ManageReplicas(const SyncPtr& s);
  // Starts `n` creates (slow start), expecting them plus `unseen` pods the informer has yet to show.
  void StartCreates(const SyncPtr& s, int n, int unseen);
  // A create of this controller timed out (outcome unknown) and its grace passed unobserved, or the
  // informer still shows pods of a deleted controller that its selector matches: count the
  // controller's pods with a live List before creating, so an applied create whose event is still on
  // its way (an etcd outage longer than the grace) is not replaced, and orphans the informer does not
  // show yet (their owner's delete seen before their update) are adopted rather than duplicated.
  void VerifyThenCreate(const SyncPtr& s);
  // The controller's active pods as the informer shows them now, with those this sync adopted.
  int64_t InformerActive(const Sync& s);
  // The informer shows active pods matching rc's selector whose controller is gone (dead_owners_);
  // prunes the owners whose pods it no longer shows.
  bool DeadOwnersPodsMatch(const ReplicationController& rc);
  // A controller deleted while pods it created were not yet seen by the pod informer
  // (unseen_creates_of_dead_) made pods rc's selector matches; prunes expired entries.
  bool DeadOwnersCreatedUnseen(const ReplicationController& rc);
  void IssueCreateBatch(const SyncPtr& s);
  void OnCreateDone(const SyncPtr& s, const Result<PodPtr>& r);
  // Deletes `pod` (its uid the precondition) for the sync. A delete that times out (outcome unknown)
  // is sent again after `backoff` (doubling up to kMaxDeleteRetry) while the controller may write and
  // until `retry_until` (the unknown-outcome grace): the same uid cannot be deleted twice, so asking
  // again settles the outcome without waiting out the grace. Then OnDeleteDone.
  void DeletePod(const SyncPtr& s, const PodPtr& pod, const std::string& pod_key, TimePoint retry_until,
                 Duration backoff);
  static constexpr Duration kFirstDeleteRetry = std::chrono::milliseconds(100);
  static constexpr Duration kMaxDeleteRetry = std::chrono::seconds(1);
  void OnDeleteDone(const SyncPtr& s, const std::string& pod_key, const Result<PodPtr>& r);
  void UpdateStatus(const SyncPtr& s);
  void FinishSync(const SyncPtr& s);
  void Fail(const SyncPtr& s, Status status);
  // Records the first failed create or delete of a sync (for the ReplicaFailure condition).
  void ManageFailed(const SyncPtr& s, const char* reason, const Status& status);
  void Trace(const std::string& event);

  ManagerOptions options_;
  Store* store_;
  ApiClient* api_;
  Clock* clock_;
  Executor* executor_;
  Rng* rng_;
  TraceSink* trace_;
  Logger* logger_;
  EventRecorder* events_ = nullptr;

  std::shared_ptr<int> alive_ = std::make_shared<int>(0);  // callbacks hold weak refs
  // Expectations keys of controllers with a timed-out create (or creates pending across a re-list) not
  // yet checked by a live List.
  std::set<std::string> unverified_creates_;
  uint64_t pod_lists_ = 0;  // pod informer lists so far; every one after the first is a re-list
  // Controllers that the pod informer still names as the owner of pods although they are not cached
  // (deleted; or not yet seen): namespace -> uid -> name. Their pods may have been orphaned since.
  std::unordered_map<std::string, std::map<std::string, std::string>> dead_owners_;
  // Controllers deleted while creations of theirs were still expected, namespace -> uid -> the labels
  // of the pods they created and until when (the expectations timeout). Those pods exist (orphaned,
  // or to be collected) although the informer may never have shown them, so no dead_owners_ entry
  // names them: a successor whose selector matches counts live before it creates.
  struct UnseenCreates {
    Labels labels;
    TimePoint until;
  };
  std::unordered_map<std::string, std::map<std::string, UnseenCreates>> unseen_creates_of_dead_;
  bool started_ = false;
  bool stopped_ = false;
  bool pump_posted_ = false;
  int in_flight_ = 0;
  TimerId resync_timer_ = 0;

  ManagerMetrics metrics_;
  Expectations expectations_;
  WorkQueue queue_;
  ControllerInformer controllers_;
  PodInformer pods_;
};

// The selector a controller uses: spec.selector, or the template's labels when it is empty. An empty
// result selects nothing.
const Labels& EffectiveSelector(const ReplicationController& rc);
// The key of a controller's expectations: its uid (its "namespace/name" if it has none).
std::string ExpectationsKey(const ReplicationController& rc);
// Why a stored controller must not be acted on ("" if it may): negative replicas, a selector that
// does not match the template's labels.
std::string InvalidForSync(const ReplicationController& rc);
// The ownerReference a controller puts on its pods.
OwnerReference ControllerOwnerRef(const ReplicationController& rc);
// A pod to create for `rc` from its template (generateName "<rc name>-", owner reference); the
// template must be set.
Pod PodFromTemplate(const ReplicationController& rc);
// The status of `rc` given its claimed pods at `now`.
// The controller's conditions after a sync, as upstream's ReplicaSet controller keeps them: a failed
// create or delete (`manage_error`) adds ReplicaFailure (reason FailedCreate/FailedDelete, the API's
// message) unless it is already there; a sync without such a failure removes it; the others are kept.
std::vector<ReplicationControllerCondition> WithReplicaFailure(
    const std::vector<ReplicationControllerCondition>& conditions, const Status& manage_error,
    std::string_view reason, TimePoint now);
ReplicationControllerStatus ComputeStatus(const ReplicationController& rc, const std::vector<PodPtr>& claimed,
                                          TimePoint now);

}  // namespace rcsim

#endif  // RCSIM_ENGINE_REPLICATION_MANAGER_H_
