// SimWorld: the assembled, deterministic simulated world around the replication manager: the virtual
// clock and executor (SimLoop), the in-memory etcd (MemStore), the API registry, the rest of the
// cluster (SimCluster: scheduler, node agents over simulated runtimes, garbage collector, node
// lifecycle controller, pod GC — the components production runs), fault wrappers for the manager's
// store and API views, and one trace recorder for everything.
//
// Wiring:
//   manager --FaultyApiClient--> InProcessApiClient --> Registry --> MemStore   (manager_api(): faults;
//            controllers and pods are listed and watched through it, as apps/controller-manager does)
//   manager --FaultyStore--> MemStore   (manager_store(): the controller watch of the 2014 baseline, or of
//            the modern manager with manager_controllers_from_store; store faults)
//   SimCluster --InProcessApiClient (no faults)--> Registry
//   admin_api(): unfaulted in-process client for scenario actions
//   manager --EventRecorder--> RegistryEventSink --> EventRegistry --> MemStore   (events(); no faults:
//   events are best effort and not API calls the scenarios budget; the recorder's spam filter bounds
//   them to 25 per controller at once, then one per 5 virtual minutes, so they cost the run little)
// The manager's API view gets the options' api_latency on every verb and watch_latency on watch events
// as its baseline (faults set later replace them). The world compacts the store every
// compaction_interval to the revision it had one interval earlier, as kube-apiserver does, and also
// whenever more than 2 x compaction_revisions revisions of history are kept, to the newest minus
// compaction_revisions (as etcd's --auto-compaction-mode=revision), so a big run's memory stays bounded.
//
// Ground truth: the world keeps its own mirror of every pod and controller, fed by a MemStore watch over
// "/registry/" (delivered through the loop in revision order, independent of the manager). OnChange
// observers run after each revision is applied to the mirror, so a checker sees every intermediate
// state; View() reads the mirror, which equals the registry whenever the loop has no event due
// (e.g. after RunFor / RunUntil returned).
//
// Determinism: one seed; every component gets its own Rng stream derived with DeriveSeed, so adding
// draws in one component does not shift another's. Same options => same trace => same digest().
//
// Thread-safety: none; one thread drives the loop.
#ifndef RCSIM_FAKES_SIM_WORLD_H_
#define RCSIM_FAKES_SIM_WORLD_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "engine/api_client.h"
#include "engine/log.h"
#include "engine/replication_manager.h"
#include "engine/rng.h"
#include "engine/status.h"
#include "engine/store.h"
#include "engine/time.h"
#include "engine/types.h"
#include "fakes/faulty_api_client.h"
#include "fakes/sim_cluster.h"
#include "fakes/sim_loop.h"
#include "fakes/sim_manager.h"
#include "fakes/trace_recorder.h"

namespace rcsim {

class MemStore;
class FaultyStore;
class Registry;
class InProcessApiClient;
class EventRegistry;
class RegistryEventSink;
class EventRecorder;

struct SimWorldOptions {
  uint64_t seed = 1;
  int nodes = 10;
  Duration pod_start_min = std::chrono::milliseconds(500);
  Duration pod_start_max = std::chrono::seconds(2);
  Duration api_latency_min = std::chrono::milliseconds(1);
  Duration api_latency_max = std::chrono::milliseconds(5);
  Duration watch_latency_min = std::chrono::milliseconds(0);
  Duration watch_latency_max = std::chrono::milliseconds(50);
  Duration pod_gc_threshold = std::chrono::seconds(60);  // unused: the pod GC counts (below)
  // The cluster components (kube-controller-manager's and the kubelet's defaults).
  Duration node_monitor_grace_period = std::chrono::seconds(40);
  Duration pod_eviction_timeout = std::chrono::minutes(5);
  Duration node_monitor_period = std::chrono::seconds(5);
  Duration heartbeat_interval = std::chrono::seconds(10);
  int64_t max_pods = 110;  // status.capacity.pods of every node
  int64_t terminated_pod_gc_threshold = 12500;
  // The world compacts the store periodically like kube-apiserver; zero disables compaction.
  Duration compaction_interval = std::chrono::minutes(5);
  // Revisions of history kept at least when compacting by revision count (see above); zero: only the
  // periodic compaction. A watch resumed further back than that gets 410 Gone (and re-lists); a stale
  // read that far back is served fresh (FaultyApiClient).
  int64_t compaction_revisions = 50000;
  ManagerOptions manager;
  // The modern manager watches controllers in the store (manager_store(), the 2014 design and
  // controller-manager --etcd_servers) instead of through its API view (the default, as real mode's
  // controller-manager does).
  bool manager_controllers_from_store = false;
  // Builds the manager under test instead of the modern ReplicationManager (null: the modern one).
  SimManagerFactory manager_factory;
  bool keep_trace_lines = false;
};

// One committed change, as seen by the world's mirror (for OnChange observers).
struct WorldChange {
  int64_t revision = 0;
  enum class Kind { kPod, kController } kind = Kind::kPod;
  bool deleted = false;
  std::string ns;
  std::string name;
  PodPtr pod;  // for pods: the pod after the change; null when deleted
  // For pods: the controller that owns the pod (controller ownerRef name) before and after the
  // change; empty for orphans.
  std::string owner_before;
  std::string owner_after;
  // For pods: IsActive before and after the change (false when absent). A change with
  // !was_active && is_active adds an active pod: the only kind that can push a controller above its
  // desired count (scale-downs lower the desired count first).
  bool was_active = false;
  bool is_active = false;
};

class SimWorld {
 public:
  explicit SimWorld(SimWorldOptions options);
  ~SimWorld();
  SimWorld(const SimWorld&) = delete;
  SimWorld& operator=(const SimWorld&) = delete;

  const SimWorldOptions& options() const { return options_; }
  SimLoop& loop() { return loop_; }
  // The scenario's Rng (stream 0 of the seed); components use their own streams.
  Rng& rng() { return rng_; }
  MemStore& store();
  Registry& registry();
  SimCluster& cluster();
  FaultyApiClient& manager_api();  // the manager's API view (faults go here)
  FaultyStore& manager_store();    // the manager's store view (controller watch; faults go here)
  ApiClient& admin_api();          // unfaulted in-process client, for scenario actions
  EventRegistry& events();         // the core/v1 events the manager recorded (kubectl get events)
  TraceRecorder& trace() { return trace_; }

  // Starts a fresh manager (no-op if one is running). Each start gets a new Rng stream.
  void StartManager();
  // Crash: stops and destroys the manager and all its state (no-op if none is running).
  void StopManager();
  ReplicationManager* manager() { return manager_.get(); }  // null while stopped or not the modern one
  // The running manager's counters, whichever it is; null while stopped.
  const ManagerMetrics* manager_metrics() const;
  int manager_starts() const { return manager_starts_; }

  // Ground truth from the world's mirror. Pods counted: those in the controller's namespace whose
  // labels match its selector AND that are owned by it (controller ownerRef name) or orphans (no
  // controller ownerRef) — what the manager would count or adopt. active = IsActive; running = active
  // and phase Running; ready = active and Ready=True. exists=false (all zero) if there is no such
  // controller.
  struct ControllerView {
    int32_t desired = 0;
    int active = 0;
    int running = 0;
    int ready = 0;
    bool exists = false;
    ReplicationControllerStatus status;
  };
  ControllerView View(const std::string& ns, const std::string& name) const;
  // "ns/name" of every existing controller, sorted.
  std::vector<std::string> ControllerKeys() const;
  // Pods in the mirror (all namespaces, including terminated ones not yet deleted).
  int64_t pod_count() const { return static_cast<int64_t>(pods_.size()); }
  // Mirror-wide counts, kept incrementally: pods that are IsActive, and of those, in phase Running.
  int64_t active_pods() const { return active_pods_; }
  int64_t running_pods() const { return running_pods_; }
  // The pod as mirrored, or null. Mirrored objects carry no metadata.resourceVersion.
  PodPtr GetPod(const std::string& ns, const std::string& name) const;
  // Keys ("ns/name") of the pods counted by View(ns, name), sorted.
  std::vector<std::string> PodsOf(const std::string& ns, const std::string& name) const;

  // Called on the loop after every committed pod/controller change (one call per changed key, in
  // revision order); last_change() describes it while the observer runs.
  void OnChange(std::function<void()> observer);
  const WorldChange& last_change() const { return last_change_; }
  // Last store revision applied to the mirror.
  int64_t observed_revision() const { return observed_revision_; }

  // Synchronous helpers for tests and the harness: they run the loop until the operation completes
  // (or 60 virtual seconds passed: kTimeout).
  Result<ControllerPtr> CreateController(const ReplicationController& rc);
  Result<ControllerPtr> ScaleController(const std::string& ns, const std::string& name, int32_t replicas);
  Status DeleteController(const std::string& ns, const std::string& name);
  Status KillPod(const std::string& ns, const std::string& name);
  void RunFor(Duration d);
  // Runs the loop until pred() holds (checked after every event) or `timeout` of virtual time passed.
  bool RunUntil(const std::function<bool()>& pred, Duration timeout);

  uint64_t digest() const { return trace_.digest(); }

 private:
  void OnStoreEvent(const WatchResponse& resp);
  void StartMirrorWatch(int64_t from_revision);
  void ScheduleCompaction();
  // Compacts by revision count when the store keeps more history than compaction_revisions allows.
  void CompactByRevisions();
  void ApplyPod(const std::string& key, const PodPtr& pod, int64_t revision);
  void ApplyController(const std::string& key, const ControllerPtr& rc, int64_t revision);
  template <typename T>
  Result<T> Await(const std::function<void(std::function<void(Result<T>)>)>& start);

  SimWorldOptions options_;
  SimLoop loop_;
  Mt19937Rng rng_;
  Mt19937Rng registry_rng_;
  Mt19937Rng store_fault_rng_;
  Mt19937Rng api_fault_rng_;
  Mt19937Rng nodes_rng_;  // the simulated runtimes' start latencies
  std::unique_ptr<Mt19937Rng> manager_rng_;
  TraceRecorder trace_;
  NullLogger logger_;
  std::unique_ptr<MemStore> store_;
  std::unique_ptr<Registry> registry_;
  std::unique_ptr<FaultyStore> manager_store_;
  std::unique_ptr<InProcessApiClient> manager_inner_api_;
  std::unique_ptr<FaultyApiClient> manager_api_;
  std::unique_ptr<InProcessApiClient> cluster_api_;
  std::unique_ptr<InProcessApiClient> admin_api_;
  std::unique_ptr<SimCluster> cluster_;
  std::unique_ptr<EventRegistry> events_;
  std::unique_ptr<RegistryEventSink> event_sink_;
  std::unique_ptr<EventRecorder> event_recorder_;  // one per manager start, as one per process
  std::unique_ptr<ReplicationManager> manager_;
  std::unique_ptr<SimManager> other_manager_;  // from options_.manager_factory
  int manager_starts_ = 0;

  // Mirror of the store (ground truth for checkers). Hash maps: nothing iterates them in an order
  // that reaches behaviour (ControllerKeys and PodsOf sort what they return; the rest are sums).
  std::unique_ptr<Watch> mirror_watch_;
  // Searched by a string_view too (the groups' keys), without building a string.
  struct KeyHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view key) const { return std::hash<std::string_view>{}(key); }
  };
  std::unordered_map<std::string, PodPtr, KeyHash, std::equal_to<>> pods_;  // by store key
  std::unordered_map<std::string, ControllerPtr> controllers_;              // by store key
  // (ns, owner controller name or "" for orphans) -> its pods, and (owned groups only) the counts of
  // those that View counts for the controller of that name: uid matches, selector matches.
  struct OwnerGroup {
    // Store keys: views of pods_'s own keys (a hash map's keys stay where they are until erased, and a
    // pod leaves its group first).
    std::unordered_set<std::string_view> keys;
    int active = 0;
    int running = 0;
    int ready = 0;
  };
  // (ns, owner), looked up as a pair of string_views without copying either string.
  using OwnerKey = std::pair<std::string, std::string>;
  using OwnerKeyView = std::pair<std::string_view, std::string_view>;
  struct OwnerKeyHash {
    using is_transparent = void;
    std::size_t operator()(const OwnerKeyView& k) const {
      const std::size_t a = std::hash<std::string_view>{}(k.first);
      return a ^ (std::hash<std::string_view>{}(k.second) + 0x9e3779b97f4a7c15ULL + (a << 6) + (a >> 2));
    }
    std::size_t operator()(const OwnerKey& k) const { return (*this)(OwnerKeyView(k.first, k.second)); }
  };
  struct OwnerKeyEqual {
    using is_transparent = void;
    bool operator()(const OwnerKeyView& a, const OwnerKeyView& b) const { return a == b; }
  };
  // The controller named `owner` in `ns` (whose group counts are kept), or null: none, or orphans.
  const ReplicationController* GroupController(const std::string& ns, const std::string& owner) const;
  // Adds `sign` x the pod to its group's counts if the group's controller counts it (rc: GroupController).
  void Contribute(OwnerGroup& group, const ReplicationController* rc, const Pod& pod, int sign);
  void RecountGroup(const std::string& ns, const std::string& owner);
  std::unordered_map<OwnerKey, OwnerGroup, OwnerKeyHash, OwnerKeyEqual> pods_by_owner_;
  int64_t observed_revision_ = 0;
  int64_t active_pods_ = 0;
  int64_t running_pods_ = 0;
  WorldChange last_change_;
  std::vector<std::function<void()>> observers_;
  int64_t last_compaction_mark_ = 0;
  bool compaction_pending_ = false;
};

}  // namespace rcsim

#endif  // RCSIM_FAKES_SIM_WORLD_H_
