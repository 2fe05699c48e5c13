#include "backends/http/discovery.h"

#include <string>

namespace rcsim {
namespace {

using json = nlohmann::json;

// The hash in serverRelativeURL lets clients cache the document; it changes when the document does.
constexpr const char* kCoreV1OpenApiHash = "rcsim-core-v1-4";

json Resource(const char* name, const char* kind, json verbs, json short_names = nullptr,
              const char* group = nullptr, const char* version = nullptr) {
  json r = {{"name", name},
            {"singularName", ""},
            {"namespaced", true},
            {"kind", kind},
            {"verbs", std::move(verbs)}};
  if (!short_names.is_null()) r["shortNames"] = std::move(short_names);
  if (group != nullptr) r["group"] = group;
  if (version != nullptr) r["version"] = version;
  return r;
}

json Gvk(const char* group, const char* version, const char* kind) {
  return {{"group", group}, {"version", version}, {"kind", kind}};
}

json QueryParam(const char* name) {
  return {{"name", name}, {"in", "query"}, {"schema", {{"type", "string"}}}, {"uniqueItems", true}};
}

json Operation(const std::string& id, const json& gvk, const char* action, bool write) {
  json params = json::array({QueryParam("pretty")});
  if (write) {
    params.push_back(QueryParam("dryRun"));
    params.push_back(QueryParam("fieldManager"));
    params.push_back(QueryParam("fieldValidation"));
  }
  return {{"operationId", id},
          {"x-kubernetes-action", action},
          {"x-kubernetes-group-version-kind", gvk},
          {"parameters", std::move(params)},
          {"responses", {{"200", {{"description", "OK"}}}}}};
}

// The object schemas: typed enough to name the kinds, open (x-preserve-unknown-fields) below.
json ObjectSchema(const char* kind, const char* group, const char* version) {
  return {{"type", "object"},
          {"x-kubernetes-group-version-kind", json::array({Gvk(group, version, kind)})},
          {"properties",
           {{"apiVersion", {{"type", "string"}}},
            {"kind", {{"type", "string"}}},
            {"metadata", {{"type", "object"}, {"x-kubernetes-preserve-unknown-fields", true}}},
            {"spec", {{"type", "object"}, {"x-kubernetes-preserve-unknown-fields", true}}},
            {"status", {{"type", "object"}, {"x-kubernetes-preserve-unknown-fields", true}}}}}};
}

void AddItemPaths(json& paths, const std::string& resource, const char* kind, const char* group,
                  const char* version) {
  const json gvk = Gvk(group, version, kind);
  const std::string ns_path = "/api/v1/namespaces/{namespace}/" + resource;
  const std::string item = ns_path + "/{name}";
  paths[ns_path] = {{"get", Operation("list" + std::string(kind), gvk, "list", false)},
                    {"post", Operation("create" + std::string(kind), gvk, "post", true)}};
  paths[item] = {{"get", Operation("read" + std::string(kind), gvk, "get", false)},
                 {"put", Operation("replace" + std::string(kind), gvk, "put", true)},
                 {"patch", Operation("patch" + std::string(kind), gvk, "patch", true)},
                 {"delete", Operation("delete" + std::string(kind), gvk, "delete", false)}};
  paths[item + "/status"] = {
      {"get", Operation("read" + std::string(kind) + "Status", gvk, "get", false)},
      {"put", Operation("replace" + std::string(kind) + "Status", gvk, "put", true)},
      {"patch", Operation("patch" + std::string(kind) + "Status", gvk, "patch", true)}};
}

}  // namespace

json VersionJson() {
  return {{"major", "1"},
          {"minor", "32"},
          {"gitVersion", "v1.32.0-rcsim"},
          {"gitCommit", "0000000000000000000000000000000000000000"},
          {"gitTreeState", "clean"},
          {"buildDate", "2026-01-01T00:00:00Z"},
          {"goVersion", "go1.23.0"},
          {"compiler", "gc"},
          {"platform", "linux/amd64"}};
}

json ApiVersionsJson() {
  return {{"kind", "APIVersions"},
          {"versions", json::array({"v1"})},
          {"serverAddressByClientCIDRs",
           json::array({{{"clientCIDR", "0.0.0.0/0"}, {"serverAddress", "127.0.0.1"}}})}};
}

json ApiGroupListJson() {
  return {{"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", json::array()}};
}

json CoreV1ResourcesJson() {
  const json crud = {"create", "delete", "get", "list", "patch", "update", "watch"};
  const json sub = {"get", "patch", "update"};
  json resources = json::array();
  resources.push_back(Resource("pods", "Pod", crud, json::array({"po"})));
  resources.push_back(Resource("pods/status", "Pod", sub));
  resources.push_back(Resource("pods/log", "Pod", json::array({"get"})));
  resources.push_back(Resource("replicationcontrollers", "ReplicationController", crud, json::array({"rc"})));
  resources.push_back(Resource("replicationcontrollers/scale", "Scale", sub, nullptr, "autoscaling", "v1"));
  resources.push_back(Resource("replicationcontrollers/status", "ReplicationController", sub));
  resources.push_back(
      Resource("events", "Event", {"create", "delete", "get", "list", "update"}, json::array({"ev"})));
  json namespaces =
      Resource("namespaces", "Namespace", {"create", "delete", "get", "list", "patch", "update", "watch"},
               json::array({"ns"}));
  namespaces["namespaced"] = false;
  resources.push_back(std::move(namespaces));
  resources.push_back(Resource("pods/binding", "Binding", json::array({"create"})));
  resources.push_back(
      Resource("pods/eviction", "Eviction", json::array({"create"}), nullptr, "policy", "v1"));
  resources.push_back(Resource("bindings", "Binding", json::array({"create"})));
  json nodes = Resource("nodes", "Node", crud, json::array({"no"}));
  nodes["namespaced"] = false;
  resources.push_back(std::move(nodes));
  json node_status = Resource("nodes/status", "Node", sub);
  node_status["namespaced"] = false;
  resources.push_back(std::move(node_status));
  // `kubectl get all`: the resources of category "all" (kube-apiserver's pods and controllers).
  for (json& r : resources) {
    if (r["name"] == "pods" || r["name"] == "replicationcontrollers") r["categories"] = json::array({"all"});
  }
  return {{"kind", "APIResourceList"}, {"groupVersion", "v1"}, {"resources", std::move(resources)}};
}

json OpenApiV3RootJson() {
  return {
      {"paths",
       {{"api/v1", {{"serverRelativeURL", std::string("/openapi/v3/api/v1?hash=") + kCoreV1OpenApiHash}}}}}};
}

json OpenApiV3CoreV1Json() {
  json paths = json::object();
  AddItemPaths(paths, "pods", "Pod", "", "v1");
  AddItemPaths(paths, "replicationcontrollers", "ReplicationController", "", "v1");
  const json scale_gvk = Gvk("autoscaling", "v1", "Scale");
  paths["/api/v1/namespaces/{namespace}/replicationcontrollers/{name}/scale"] = {
      {"get", Operation("readReplicationControllerScale", scale_gvk, "get", false)},
      {"put", Operation("replaceReplicationControllerScale", scale_gvk, "put", true)},
      {"patch", Operation("patchReplicationControllerScale", scale_gvk, "patch", true)}};
  const json ns_gvk = Gvk("", "v1", "Namespace");
  paths["/api/v1/namespaces"] = {{"get", Operation("listNamespace", ns_gvk, "list", false)},
                                 {"post", Operation("createNamespace", ns_gvk, "post", true)}};
  // kubectl looks for fieldValidation on the PATCH operation to know the server validates fields.
  paths["/api/v1/namespaces/{name}"] = {{"get", Operation("readNamespace", ns_gvk, "get", false)},
                                        {"patch", Operation("patchNamespace", ns_gvk, "patch", true)},
                                        {"delete", Operation("deleteNamespace", ns_gvk, "delete", false)}};
  const json node_gvk = Gvk("", "v1", "Node");
  paths["/api/v1/nodes"] = {{"get", Operation("listNode", node_gvk, "list", false)},
                            {"post", Operation("createNode", node_gvk, "post", true)}};
  paths["/api/v1/nodes/{name}"] = {{"get", Operation("readNode", node_gvk, "get", false)},
                                   {"put", Operation("replaceNode", node_gvk, "put", true)},
                                   {"patch", Operation("patchNode", node_gvk, "patch", true)},
                                   {"delete", Operation("deleteNode", node_gvk, "delete", false)}};
  paths["/api/v1/nodes/{name}/status"] = {{"get", Operation("readNodeStatus", node_gvk, "get", false)},
                                          {"put", Operation("replaceNodeStatus", node_gvk, "put", true)},
                                          {"patch", Operation("patchNodeStatus", node_gvk, "patch", true)}};
  paths["/api/v1/pods"] = {
      {"get", Operation("listPodForAllNamespaces", Gvk("", "v1", "Pod"), "list", false)}};
  paths["/api/v1/replicationcontrollers"] = {
      {"get", Operation("listReplicationControllerForAllNamespaces", Gvk("", "v1", "ReplicationController"),
                        "list", false)}};
  return {{"openapi", "3.0.0"},
          {"info", {{"title", "Kubernetes"}, {"version", "v1.32.0-rcsim"}}},
          {"paths", std::move(paths)},
          {"components",
           {{"schemas",
             {{"io.k8s.api.core.v1.Pod", ObjectSchema("Pod", "", "v1")},
              {"io.k8s.api.core.v1.ReplicationController", ObjectSchema("ReplicationController", "", "v1")},
              {"io.k8s.api.core.v1.Namespace", ObjectSchema("Namespace", "", "v1")},
              {"io.k8s.api.core.v1.Node", ObjectSchema("Node", "", "v1")},
              {"io.k8s.api.autoscaling.v1.Scale", ObjectSchema("Scale", "autoscaling", "v1")}}}}}};
}

}  // namespace rcsim
