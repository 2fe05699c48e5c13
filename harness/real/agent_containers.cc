#include "harness/real/agent_containers.h"

#include <signal.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

namespace rcsim {
namespace {

// /proc/<pid>/stat field 22 (start time in clock ticks), or nullopt for no such process or a zombie.
std::optional<uint64_t> StartTicks(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  const std::size_t paren = line.rfind(')');
  if (paren == std::string::npos) return std::nullopt;
  std::istringstream rest(line.substr(paren + 1));
  std::string field;
  for (int i = 3; i <= 22; ++i) {
    if (!(rest >> field)) return std::nullopt;
    if (i == 3 && field == "Z") return std::nullopt;
  }
  try {
    return std::stoull(field);
  } catch (const std::exception&) {  // a malformed /proc line: treat as gone
    return std::nullopt;
  }
}

// The parsed state files under root_dir/containers.
std::vector<nlohmann::json> StateFiles(const std::string& root_dir) {
  std::vector<nlohmann::json> out;
  std::error_code ec;
  const std::filesystem::path dir = std::filesystem::path(root_dir) / "containers";
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() != ".json") continue;
    std::ifstream in(it->path());
    nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (j.is_object()) out.push_back(std::move(j));
  }
  return out;
}

}  // namespace

std::vector<AgentContainer> LiveAgentContainers(const std::string& root_dir) {
  std::vector<AgentContainer> out;
  for (const nlohmann::json& j : StateFiles(root_dir)) {
    const pid_t pid = j.value("pid", 0);
    const uint64_t ticks = j.value("start_ticks", uint64_t{0});
    if (pid <= 0 || ticks == 0 || StartTicks(pid) != ticks) continue;
    AgentContainer c;
    c.pod_namespace = j.value("pod_namespace", "");
    c.pod_name = j.value("pod_name", "");
    c.pod_uid = j.value("pod_uid", "");
    c.container_name = j.value("container_name", "");
    c.pid = pid;
    c.shim_pid = j.value("shim_pid", 0);
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<pid_t> RecordedShimPids(const std::string& root_dir) {
  std::vector<pid_t> out;
  for (const nlohmann::json& j : StateFiles(root_dir)) {
    const pid_t pid = j.value("shim_pid", 0);
    if (pid > 0) out.push_back(pid);
  }
  return out;
}

int SignalContainers(const std::vector<AgentContainer>& containers, int sig) {
  int n = 0;
  for (const AgentContainer& c : containers) {
    if (c.pid > 0 && kill(-c.pid, sig) == 0) ++n;
  }
  return n;
}

}  // namespace rcsim
