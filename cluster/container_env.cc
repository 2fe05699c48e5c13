#include "cluster/container_env.h"

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

}  // namespace rcsim
