// The container processes a node agent (apps/node-agent over backends/process) runs, read from the
// state files it keeps under its root dir: <root>/containers/<id>.json with the pod, the container's
// pid and /proc start time and its shim's (see backends/process/process_runtime.h, "Layout"). Real
// mode uses them to kill a pod's processes (kill_pods), to stop or kill a node's (fail_node), and to
// leave no process behind at the end of a run.
//
// A container counts only while a process with the recorded pid *and* start time lives (not a
// zombie), so a recycled pid is never signalled.
//
// Thread-safety: stateless functions; safe from any thread.
#ifndef RCSIM_HARNESS_REAL_AGENT_CONTAINERS_H_
#define RCSIM_HARNESS_REAL_AGENT_CONTAINERS_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace rcsim {

struct AgentContainer {
  std::string pod_namespace;
  std::string pod_name;
  std::string pod_uid;
  std::string container_name;
  pid_t pid = 0;       // the container's process, leader of its own process group
  pid_t shim_pid = 0;  // its shim (a child of the agent that started it)
};

// The live container processes recorded under `root_dir` (an agent's --root-dir).
std::vector<AgentContainer> LiveAgentContainers(const std::string& root_dir);
// Every shim pid recorded under `root_dir`, live or not (to reap those re-parented to rcsim).
std::vector<pid_t> RecordedShimPids(const std::string& root_dir);
// Sends `sig` to the process group of each container; how many groups were signalled.
int SignalContainers(const std::vector<AgentContainer>& containers, int sig);

}  // namespace rcsim

#endif  // RCSIM_HARNESS_REAL_AGENT_CONTAINERS_H_
