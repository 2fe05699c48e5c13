// RealStack: the processes of one real-mode run (rcsim run --real), on free loopback ports with one
// temporary directory (etcd's data, every log, the node agents' root dirs):
//   etcd (Debian's etcd-server)  <-  apiserver (apps/apiserver)  <-  FaultProxy  <-  controller-manager
//                                      ^-  cluster controllers (a second controller-manager), node agents
// The manager (--controllers=replicationcontroller) reaches the API server only through the
// in-process FaultProxy, so the harness can inject the API faults of a scenario into the manager
// alone, as the simulation does. A second controller-manager process runs the cluster controllers
// (garbage collector, pod GC and, with node agents, the node lifecycle controller and the scheduler)
// straight against the API server, as do the node agents and the harness itself (its actions, its
// watch, the hollow nodes). Both run with --leader-elect=false (a restarted manager must not wait
// out its predecessor's lease) and --kube-api-qps=-1 (no client rate limit, as the simulated manager
// has none).
//
// With etcd_members > 1 the etcd is a cluster of that many members (etcd, etcd-1, ...; data dirs and
// logs named alike), every one given to the apiserver, which fails over between them.
//
// With node_agents > 0, agents node-0 .. node-<n-1> (apps/node-agent) run the pods as processes;
// they heartbeat every 500ms and the node lifecycle controller runs with short periods
// (kNodeLifecycleFlags: a node silent for 3s is unreachable, its pods are evicted 1s later). rcsim
// becomes a child subreaper (PR_SET_CHILD_SUBREAPER) so the shims of a killed agent's containers are
// re-parented to it and reaped at Stop.
//
// Stop() (and the destructor) stops every process it started (SIGTERM, then SIGKILL; the node agents
// and every container process they started with SIGKILL), the proxy, and removes the temporary
// directory; a child that outlives rcsim is killed by the kernel (PR_SET_PDEATHSIG; containers, which
// must survive an agent restart, are not: if rcsim itself is SIGKILLed they live until their command
// ends). Start and the process controls must be called from one thread that outlives the children
// (rcsim's main thread).
#ifndef RCSIM_HARNESS_REAL_REAL_STACK_H_
#define RCSIM_HARNESS_REAL_REAL_STACK_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backends/faultproxy/fault_proxy.h"
#include "engine/status.h"
#include "engine/time.h"
#include "harness/real/agent_containers.h"
#include "harness/real/child_process.h"

namespace rcsim {

struct RealStackOptions {
  std::string etcd_binary = "/usr/bin/etcd";
  std::string apiserver_binary;
  std::string controller_manager_binary;
  std::string node_agent_binary;
  std::vector<std::string> manager_flags;  // appended to the manager's command line
  int node_agents = 0;                     // > 0: that many node agents, the scheduler on
  int64_t max_pods = 110;                  // every agent's --max-pods (status.capacity.pods)
  int etcd_members = 1;                    // etcd cluster size (1, 3 or 5); the apiserver gets every member
  uint64_t seed = 1;                       // the proxy's fault draws
  Duration start_timeout = std::chrono::seconds(30);
  Duration proxy_timeout = std::chrono::seconds(1);  // how long a timed-out call is held
};

// The node lifecycle flags of the cluster controllers when node agents run, and the agents' heartbeat.
inline constexpr const char* kNodeLifecycleFlags[] = {
    "--node-monitor-period=500ms", "--node-monitor-grace-period=3s", "--pod-eviction-timeout=1s"};
inline constexpr const char* kNodeHeartbeat = "500ms";

class RealStack {
 public:
  // Starts etcd, the apiserver, the proxy, the cluster controllers, the node agents and the manager,
  // each waited for (etcd healthy, the API server answering /readyz, the controller-managers' and
  // agents' logs saying they started, every node Ready). On failure everything started is stopped and
  // the error carries the failing process's log tail.
  static Result<std::unique_ptr<RealStack>> Start(RealStackOptions options);
  ~RealStack();
  RealStack(const RealStack&) = delete;
  RealStack& operator=(const RealStack&) = delete;

  // Stops everything, removes the temporary directory. Idempotent.
  void Stop();

  std::string api_url() const;                 // the API server, direct
  std::string etcd_url() const;                // member 0's client URL
  std::vector<std::string> etcd_urls() const;  // every member's, by member
  int etcd_members() const { return static_cast<int>(etcd_.size()); }
  FaultProxy& proxy() { return *proxy_; }

  // The manager: SIGKILL (a crash), and a fresh start (waited for, as in Start).
  void KillManager();
  Status StartManager();
  bool ManagerRunning() { return manager_.Running(); }
  // An etcd member: SIGKILL, and a restart on the same ports and data (waited for until healthy:
  // with several members, until it serves again, which needs a quorum).
  void KillEtcd(int member = 0);
  Status StartEtcd(int member = 0);
  bool EtcdRunning(int member = 0) { return etcd_.at(member)->Running(); }
  // The member that leads now (asked of every running member: /v3/maintenance/status), or -1.
  int EtcdLeader();
  // Compacts etcd at its current revision (physical), through the leader (or a running member),
  // retried until start_timeout while members refuse (no leader yet after an election); the revision.
  Result<int64_t> CompactEtcd();

  // Node agents, by index (node-<i>).
  int node_agents() const { return static_cast<int>(agents_.size()); }
  static std::string NodeName(int i) { return "node-" + std::to_string(i); }
  // The live container processes of one node (i >= 0) or of every node (i < 0).
  std::vector<AgentContainer> Containers(int i = -1) const;
  // SIGKILL of each live container process (its group) of the pod; how many.
  int KillPodContainers(const std::string& pod_uid);
  // A node fails: SIGKILL of its agent, then of its containers. It stays down.
  void KillNodeAgent(int i);
  // A node freezes: SIGSTOP of its agent and its containers; ResumeNodeAgent sends SIGCONT.
  void PauseNodeAgent(int i);
  // A resumed agent whose --max-pods changed while it was frozen is restarted with the new one.
  Status ResumeNodeAgent(int i);
  // A kubelet restart: SIGTERM of the agent (SIGKILL after 5 s), which leaves its containers running;
  // StartNodeAgent starts it again on the same root dir (it re-adopts them), waited for as in Start.
  // Neither acts on a failed (killed) or frozen node: it stays as it is. Starting a running agent is
  // a no-op.
  void StopNodeAgent(int i);
  Status StartNodeAgent(int i);
  // Running and not paused.
  bool NodeAgentUp(int i);
  // A kubelet reconfigured with --max-pods=pods (the node_capacity event): a running agent is
  // restarted with it at once (as StopNodeAgent + StartNodeAgent: its containers keep running and
  // are re-adopted); a stopped one gets it when started again, a frozen one when it is resumed (then
  // restarted), a failed one never runs again. The agent re-registers its Node with the new
  // status.capacity.pods.
  Status SetNodeAgentMaxPods(int i, int64_t pods);
  int64_t NodeAgentMaxPods(int i) const { return max_pods_.at(i); }

  // Every process's pid (running ones: etcd, apiserver, manager, cluster controllers, node agents;
  // not the containers, see Containers()), every port, the temporary directory: for logs and for the
  // test that checks nothing is left behind.
  std::vector<pid_t> pids();
  std::vector<int> ports() const;
  const std::string& temp_dir() const { return temp_dir_; }
  // One line: "etcd pid=... ports=...,..., apiserver pid=... port=..., proxy port=...,
  // controller-manager pid=..., cluster-controllers pid=..., node-0 pid=..., ..., dir=...".
  std::string Describe();

 private:
  explicit RealStack(RealStackOptions options) : options_(std::move(options)) {}
  Status StartEtcdCluster();
  Status SpawnEtcd(int member);
  // Until the member answers /health. starting_cluster: fail as soon as any member has exited.
  Status WaitEtcd(int member, bool starting_cluster = false);
  std::string EtcdName(int member) const;
  Status WaitApiServer();
  Status WaitLog(ChildProcess& p, const std::string& what, const std::string& needle, std::size_t log_offset);
  Status WaitNodesReady();
  std::string NodeRoot(int i) const;
  std::vector<std::string> NodeAgentArgs(int i) const;
  Status SpawnNodeAgent(int i);
  void StopContainers();

  RealStackOptions options_;
  std::string temp_dir_;
  std::vector<int> etcd_client_ports_, etcd_peer_ports_;  // by member
  int api_port_ = 0;
  std::vector<std::unique_ptr<ChildProcess>> etcd_;  // by member
  ChildProcess apiserver_, manager_, cluster_;
  std::vector<std::unique_ptr<ChildProcess>> agents_;
  std::vector<bool> paused_;               // by agent index
  std::vector<bool> failed_;               // by agent index: KillNodeAgent, for good
  std::vector<int64_t> max_pods_;          // by agent index: its --max-pods from its next start
  std::vector<int64_t> running_max_pods_;  // by agent index: the --max-pods it runs with
  std::unique_ptr<FaultProxy> proxy_;
  bool stopped_ = false;
};

}  // namespace rcsim

#endif  // RCSIM_HARNESS_REAL_REAL_STACK_H_
