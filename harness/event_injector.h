// EventInjector: performs a scenario's events on a SimWorld. World changes go through the API server
// logic (the Registry, as an unfaulted client would) or the simulated nodes; faults are set on the
// manager's views (FaultyApiClient, FaultyStore) and switched off by timers when their window ends.
// Targets (pods, nodes) are drawn with the world's scenario Rng, so a seed reproduces them. Every
// action is recorded in the trace under the actor "scenario".
//
// Thread-safety: none; runs on the simulation's thread, from loop callbacks.
#ifndef RCSIM_HARNESS_EVENT_INJECTOR_H_
#define RCSIM_HARNESS_EVENT_INJECTOR_H_

#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/metrics.h"
#include "engine/status.h"
#include "fakes/sim_world.h"
#include "harness/scenario.h"

namespace rcsim {

// The ReplicationController a scenario's controller config describes.
ReplicationController ControllerFromConfig(const ControllerConfig& config);

// Adds every counter of `b` to `a`.
void AddMetrics(ManagerMetrics* a, const ManagerMetrics& b);

class EventInjector {
 public:
  // `world` and `retired_metrics` must outlive the injector. The metrics of each manager the injector
  // stops (restart_manager) are added to `retired_metrics`.
  EventInjector(SimWorld* world, const ClusterConfig& cluster, ManagerMetrics* retired_metrics);

  // Creates a controller through the registry (at the current virtual time).
  Status CreateController(const ControllerConfig& config);
  // Performs one event now. A failure of the action itself (e.g. the API refused an update) is
  // returned and recorded in the trace; the run goes on.
  Status Fire(const ScenarioEvent& event);

 private:
  // The active pods a kill/delete/label/crash_loop event hits, drawn with the world's RNG.
  Result<std::vector<PodPtr>> ChooseTargets(const PodTarget& target);
  Status FireKill(const PodTarget& target, bool delete_pods);
  Status FireLabel(const LabelPodsAction& a);
  Status FireUpdate(const UpdateControllerAction& a);
  Status FireDeleteController(const DeleteControllerAction& a);
  Status FireFailNode(const FailNodeAction& a);
  Status FireStopNodeAgent(const StopNodeAgentAction& a);
  Status FireCrashLoop(const CrashLoopAction& a);
  Status FireSetReady(const SetReadyAction& a);
  Status FireFlapReadiness(const FlapReadinessAction& a);
  Status FireNodeCapacity(const NodeCapacityAction& a);
  // `count` nodes drawn among the ready ones, or the named node.
  std::vector<std::string> ChooseNodes(const std::optional<std::string>& node, int32_t count);
  void FireApiFaults(const ApiFaultsAction& a);
  void FireWatchFaults(const WatchFaultsAction& a);
  void FireStaleReads(const StaleReadsAction& a);
  void FireRestart(const RestartManagerAction& a);
  void FirePartition(const PartitionManagerAction& a);
  // restart_etcd / kill_etcd_leader: the store is unavailable for `down` (every call of the manager
  // answers 503, its watches end and new ones are refused), then back with the same data.
  void FireEtcdDown(Duration down, const std::string& what);
  void Trace(const std::string& event);

  SimWorld* world_;
  ClusterConfig cluster_;
  ManagerMetrics* retired_metrics_;
  // Generations of the settings restored by timers: a restore applies only if no later event set
  // the same setting again.
  std::array<int, kApiVerbCount> latency_gen_{};
  int watch_delay_gen_ = 0;
  int reject_gen_ = 0;
  int stale_gen_ = 0;
  int partition_gen_ = 0;
};

}  // namespace rcsim

#endif  // RCSIM_HARNESS_EVENT_INJECTOR_H_
