// NodeAgent: the kubelet's pod logic for one node, over the Runtime port (cluster/runtime.h).
//
// - Registers its Node (create, or a status write if it exists) with status.capacity.pods =
//   max_pods and Ready=True, and heartbeats as the kubelet does: every heartbeat_interval
//   (--node-status-update-frequency, 10 s) it renews its Lease kube-node-lease/<node> (holder the
//   node, renewTime now, an ownerReference to its Node (v1 Node, name, uid) once registered; an
//   update from the lease it last wrote, re-read once on a conflict) and reads
//   its Node, posting the status (Ready's lastHeartbeatTime = now) only when it differs from what
//   the agent would write (Ready not True, e.g. marked Unknown; another capacity) or
//   status_report_interval (nodeStatusReportFrequency, 5 min) has passed since the last post.
// - Watches the pods bound to it (fieldSelector spec.nodeName=<node>) and starts their containers.
//   Status goes through pods/status: phase (Pending until every container started, Running, then
//   Succeeded/Failed once every container has terminated for good), conditions PodScheduled,
//   Initialized, ContainersReady and Ready (Ready once every container runs and passes the runtime's
//   readiness check, Runtime::Ready, as the prober reports; the agent runs no probes of its own),
//   containerStatuses (state and lastState as the kubelet reports them: waiting ContainerCreating
//   before the first start, running, terminated with the exit code and reason Completed or Error,
//   waiting CrashLoopBackOff during a restart backoff; ready, restartCount, image, containerID),
//   podIP, hostIP, startTime.
// - An exited container is restarted per restartPolicy (Always; OnFailure when the exit code is not
//   0; Never) after the kubelet's crash-loop backoff: 0 for the first restart, then 10 s doubling to
//   5 min, reset once a container has run for 10 min.
// - Graceful deletion: on deletionTimestamp the containers are stopped with the pod's
//   deletionGracePeriodSeconds (SIGTERM, then kill), then the pod is deleted with grace 0 (uid
//   precondition). A pod that disappears from the API has its containers stopped at once.
// - Stop() ends heartbeats and watches and leaves the containers running (a kubelet restart); a
//   stopped agent writes nothing. Start() again restarts (per restartPolicy, with backoff) the
//   containers that exited meanwhile and writes the status it owes.
//
// Thread-safety: none; everything runs on the Executor's thread, including the runtime's and the
// client's callbacks.
#ifndef RCSIM_CLUSTER_NODE_AGENT_H_
#define RCSIM_CLUSTER_NODE_AGENT_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "cluster/object_cache.h"
#include "cluster/runtime.h"
#include "engine/api_client.h"
#include "engine/cluster_api.h"
#include "engine/executor.h"
#include "engine/lease.h"
#include "engine/node_types.h"
#include "engine/time.h"
#include "engine/trace.h"

namespace rcsim {

struct NodeAgentOptions {
  std::string node_name = "node-0";
  int64_t max_pods = 110;
  std::string host_ip = "10.0.0.1";
  std::string pod_ip_prefix = "10.244.0.";  // pods get prefix + 2, 3, ... (wrapping at 254)
  int32_t kubelet_port = 0;  // registered as status.daemonEndpoints.kubeletEndpoint.Port (0: none)
  Duration heartbeat_interval = std::chrono::seconds(10);     // lease renewals and node status checks
  Duration status_report_interval = std::chrono::minutes(5);  // an unchanged node status is posted this often
  int32_t lease_duration_seconds = 40;                        // spec.leaseDurationSeconds
  Duration backoff_initial = std::chrono::seconds(10);
  Duration backoff_max = std::chrono::minutes(5);
  Duration backoff_reset = std::chrono::minutes(10);
  Duration retry_delay = std::chrono::milliseconds(500);
};

struct NodeAgentCounters {
  uint64_t starts = 0;
  uint64_t restarts = 0;
  uint64_t exits = 0;
  uint64_t stops = 0;
  uint64_t final_deletes = 0;
  uint64_t status_writes = 0;  // pods/status
  uint64_t status_posts = 0;   // nodes/status
  uint64_t lease_renewals = 0;
};

class NodeAgent {
 public:
  // None of the pointers is owned; all must outlive the agent. Start() registers and begins watching.
  NodeAgent(NodeAgentOptions options, ApiClient* api, ClusterApi* cluster, Runtime* runtime, Clock* clock,
            Executor* executor, TraceSink* trace);
  ~NodeAgent();
  NodeAgent(const NodeAgent&) = delete;
  NodeAgent& operator=(const NodeAgent&) = delete;

  void Start();
  // Stops heartbeats, watches and restarts; containers keep running.
  void Stop();
  bool running() const { return running_; }
  // status.capacity.pods (and allocatable) become `pods` (a kubelet reconfigured with --max-pods): a
  // running agent writes the node status at once, a stopped one when it starts again. Pods already
  // running stay; admission is the scheduler's (no OutOfpods rejection here).
  void SetMaxPods(int64_t pods);
  int64_t max_pods() const { return max_pods_; }

  const std::string& node_name() const { return options_.node_name; }
  // Pods this agent runs (has containers for), by uid.
  std::size_t pod_count() const { return pods_.size(); }
  const NodeAgentCounters& counters() const { return counters_; }

 private:
  // The strings a status repeats are SharedStrings kept here, so every status version shares them.
  struct ContainerRecord {
    SharedString name;
    SharedString image;
    std::string id;             // of the current run; empty when not running
    SharedString container_id;  // ContainerIdOf(id), while id is not empty
    bool starting = false;
    bool done = false;  // terminated and not restarting
    int32_t restarts = 0;
    bool ready = true;  // the runtime's readiness of the current run
    TimePoint started_at{};
    int backoff_step = 0;  // consecutive restarts since the last reset
    TimerId backoff_timer = 0;
    Duration backoff_delay{};  // of the restart backoff_timer waits for
    // The container's last two terminations, newest first: the status's state and lastState.
    Boxed<ContainerStateTerminated> last_termination;
    Boxed<ContainerStateTerminated> previous_termination;
  };
  struct PodState {
    std::string key;
    PodPtr pod;  // latest seen
    std::vector<ContainerRecord> containers;
    bool stopping = false;
    bool deleting = false;  // final delete in flight or done
    TimePoint start_time{};
    SharedString pod_ip;
    bool status_in_flight = false;
    bool status_dirty = false;
  };

  void Register();
  // One heartbeat: renew the lease, then sync the node status, then schedule the next.
  void Heartbeat();
  void ScheduleHeartbeat();
  // Renews (or creates) the lease, then runs `then` whatever the outcome (not if the agent stopped or
  // restarted meanwhile). `retry`: re-read the lease and renew once more after a failed update.
  void RenewLease(const std::function<void()>& then, bool retry = true);
  Lease RenewedLease(const LeasePtr& current) const;
  void SyncNodeStatus();
  void NoteStatusPosted();  // a Node status write succeeded
  static bool StatusChanged(const Node& current, const Node& desired);
  Node DesiredNode(const NodePtr& current) const;

  void OnPod(const PodPtr& pod);
  void OnPodGone(const PodPtr& pod);
  void Admit(const PodPtr& pod);
  void StartContainer(const std::string& uid, std::size_t index);
  void OnExit(const std::string& id, int exit_code);
  void OnReadiness(const std::string& id, bool ready);
  void StopPod(const std::string& uid, Duration grace);
  void FinishDeletion(const std::string& uid);
  void WriteStatus(const std::string& uid);
  PodStatus DesiredStatus(const PodState& st) const;
  Duration BackoffFor(ContainerRecord& c);
  void Trace(const std::string& event);
  // Records that container `c` of pod `st` ended (exit code, or a start that failed with `message`).
  void RecordTermination(ContainerRecord& c, int exit_code, const std::string& message);
  ContainerStatus ContainerStatusOf(const PodState& st, std::size_t index) const;

  const NodeAgentOptions options_;
  ApiClient* const api_;
  ClusterApi* const cluster_;
  Runtime* const runtime_;
  Clock* const clock_;
  Executor* const executor_;
  TraceSink* const trace_;

  const SharedString host_ip_;  // options_.host_ip, shared by every status
  int64_t max_pods_;            // options_.max_pods until SetMaxPods
  LeasePtr lease_;              // as last written; null: read it before renewing
  std::string node_uid_;        // of the Node as last registered or read; the Lease's owner
  TimePoint last_status_post_{};
  bool running_ = false;
  uint64_t epoch_ = 0;  // bumped by Start/Stop; timers of an older epoch do nothing
  int next_ip_ = 0;
  // Hash maps: nothing iterates them in an order that reaches the API or the trace (Stop only cancels
  // timers).
  std::unordered_map<std::string, PodState> pods_;                                     // by uid
  std::unordered_map<std::string, std::pair<std::string, std::size_t>> by_container_;  // id -> (uid, index)
  NodeAgentCounters counters_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  std::unique_ptr<ObjectCache<Pod>> cache_;
};

}  // namespace rcsim

#endif  // RCSIM_CLUSTER_NODE_AGENT_H_
