#include "cluster/container_env.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace rcsim {
namespace {

// The value of a downward-API field path, or nullopt for one this agent does not serve.
std::optional<std::string> FieldValue(const Pod& pod, const std::string& path, const std::string& pod_ip,
                                      const std::string& host_ip) {
  if (path == "metadata.name") return pod.metadata.name;
  if (path == "metadata.namespace") return pod.metadata.namespace_;
  if (path == "metadata.uid") return pod.metadata.uid;
  if (path == "spec.nodeName") return pod.spec.node_name;
  if (path == "status.podIP") return pod_ip;
  if (path == "status.hostIP") return host_ip;
  if (path == "spec.serviceAccountName") {
    const nlohmann::json* rest = pod.spec.unknown_fields.get();
    if (rest != nullptr && rest->contains("serviceAccountName") &&
        (*rest)["serviceAccountName"].is_string()) {
      return (*rest)["serviceAccountName"].get<std::string>();
    }
    return std::string("default");
  }
  return std::nullopt;
}

}  // namespace

EnvVars ContainerEnv(const Pod& pod, const Container& container, const std::string& pod_ip,
                     const std::string& host_ip) {
  EnvVars out;
  const nlohmann::json* rest = container.unknown_fields.get();
  if (rest == nullptr || !rest->contains("env") || !(*rest)["env"].is_array()) return out;
  for (const nlohmann::json& e : (*rest)["env"]) {
    if (!e.is_object() || !e.contains("name") || !e["name"].is_string()) continue;
    const std::string name = e["name"].get<std::string>();
    std::optional<std::string> value;
    if (e.contains("value") && e["value"].is_string()) {
      value = e["value"].get<std::string>();
    } else if (e.contains("valueFrom") && e["valueFrom"].is_object()) {
      const nlohmann::json& from = e["valueFrom"];
      if (from.contains("fieldRef") && from["fieldRef"].is_object() &&
          from["fieldRef"].contains("fieldPath") && from["fieldRef"]["fieldPath"].is_string()) {
        value = FieldValue(pod, from["fieldRef"]["fieldPath"].get<std::string>(), pod_ip, host_ip);
      }
    } else {
      value = std::string();  // a name alone: the empty string, as the kubelet sets it
    }
    if (!value) continue;
    for (auto it = out.begin(); it != out.end(); ++it) {
      if (it->first == name) {
        out.erase(it);
        break;
      }
    }
    out.emplace_back(name, std::move(*value));
  }
  return out;
}

std::optional<ExecProbe> ExecReadinessProbe(const Container& container) {
  const nlohmann::json* rest = container.unknown_fields.get();
  if (rest == nullptr) return std::nullopt;
  const auto probe = rest->find("readinessProbe");
  if (probe == rest->end() || !probe->is_object()) return std::nullopt;
  const auto exec = probe->find("exec");
  if (exec == probe->end() || !exec->is_object()) return std::nullopt;
  ExecProbe p;
  if (const auto cmd = exec->find("command"); cmd != exec->end() && cmd->is_array()) {
    for (const nlohmann::json& arg : *cmd) {
      if (arg.is_string()) p.command.push_back(arg.get<std::string>());
    }
  }
  auto field = [&](const char* key, int64_t fallback, int64_t at_least) {
    const auto it = probe->find(key);
    const int64_t v = it != probe->end() && it->is_number_integer() ? it->get<int64_t>() : fallback;
    return std::max(v, at_least);
  };
  p.initial_delay = std::chrono::seconds(field("initialDelaySeconds", 0, 0));
  p.period = std::chrono::seconds(field("periodSeconds", 10, 1));
  p.timeout = std::chrono::seconds(field("timeoutSeconds", 1, 1));
  p.success_threshold = static_cast<int>(field("successThreshold", 1, 1));
  p.failure_threshold = static_cast<int>(field("failureThreshold", 3, 1));
  return p;
}

}  // namespace rcsim
