#include "backends/http/discovery.h"

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "backends/http/access_review.h"
#include "backends/http/core_v1_schema.h"

namespace rcsim {
namespace {

using json = nlohmann::json;

// The hash in serverRelativeURL lets clients cache the document; it changes when the document does.
constexpr const char* kCoreV1OpenApiHash = "rcsim-core-v1-5";
constexpr const char* kCoordinationV1OpenApiHash = "rcsim-coordination-v1-1";

constexpr const char* kOpenApiText =
#include "backends/http/core_v1_openapi.inc"
    ;

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

constexpr std::string_view kSchemaRefPrefix = "#/components/schemas/";

json SchemaRef(const std::string& name) { return {{"$ref", std::string(kSchemaRefPrefix) + name}}; }

// An operation as kube-apiserver describes it: its kind, query parameters, the request body of a write
// (the patch types of a PATCH: kubectl computes a strategic merge patch from the schema only when the
// operation accepts one) and the object it answers with.
json Operation(const std::string& id, const json& gvk, const char* action, bool write,
               const std::string& schema = "") {
  json params = json::array({QueryParam("pretty")});
  if (write) {
    params.push_back(QueryParam("dryRun"));
    params.push_back(QueryParam("fieldManager"));
    params.push_back(QueryParam("fieldValidation"));
  }
  json op = {{"operationId", id},
             {"x-kubernetes-action", action},
             {"x-kubernetes-group-version-kind", gvk},
             {"parameters", std::move(params)},
             {"responses", {{"200", {{"description", "OK"}}}}}};
  if (schema.empty()) return op;
  const json body = {{"schema", SchemaRef(schema)}};
  op["responses"]["200"]["content"] = {{"application/json", body}, {"application/yaml", body}};
  const std::string verb = action;
  if (verb == "patch") {
    const json patch = {{"schema", SchemaRef("io.k8s.apimachinery.pkg.apis.meta.v1.Patch")}};
    op["requestBody"] = {{"content",
                          {{"application/apply-patch+yaml", patch},
                           {"application/json-patch+json", patch},
                           {"application/merge-patch+json", patch},
                           {"application/strategic-merge-patch+json", patch}}},
                         {"required", true}};
  } else if (verb == "post" || verb == "put") {
    op["requestBody"] = {{"content", {{"*/*", body}}}, {"required", true}};
  }
  return op;
}

// The generated schemas (scripts/gen_core_v1_openapi.py) with the strategic merge patch metadata of
// their lists, from the table the API server's own patch code uses.
const json& AllSchemas() {
  static const json schemas = [] {
    json doc = json::parse(kOpenApiText);
    json all = std::move(doc["schemas"]);
    for (const auto& [py, name] : doc["names"].items()) {
      json& props = all[name.get<std::string>()]["properties"];
      for (auto& [field, prop] : props.items()) {
        const SchemaField* f = FindSchemaField(py, field);
        if (f == nullptr || f->kind != SchemaField::Kind::kList || !f->merge) continue;
        prop["x-kubernetes-patch-strategy"] = f->retain_keys ? "merge,retainKeys" : "merge";
        if (f->merge_key.empty()) {
          prop["x-kubernetes-list-type"] = "set";
        } else {
          prop["x-kubernetes-patch-merge-key"] = f->merge_key;
          prop["x-kubernetes-list-type"] = "map";
          prop["x-kubernetes-list-map-keys"] = json::array({f->merge_key});
        }
      }
    }
    all["io.k8s.apimachinery.pkg.apis.meta.v1.Patch"] = {
        {"type", "object"},
        {"description",
         "Patch is provided to give a concrete name and type to the Kubernetes PATCH request body."}};
    return all;
  }();
  return schemas;
}

// The schemas `roots` reference, directly or through others: a document carries what it names.
json SchemasFrom(const std::vector<std::string>& roots) {
  const json& all = AllSchemas();
  json out = json::object();
  std::vector<std::string> todo = roots;
  std::set<std::string> seen;
  while (!todo.empty()) {
    const std::string name = std::move(todo.back());
    todo.pop_back();
    if (!seen.insert(name).second || !all.contains(name)) continue;
    const json& schema = all[name];
    out[name] = schema;
    std::vector<const json*> walk = {&schema};
    while (!walk.empty()) {
      const json* j = walk.back();
      walk.pop_back();
      if (j->is_object()) {
        auto r = j->find("$ref");
        if (r != j->end() && r->is_string())
          todo.push_back(r->get<std::string>().substr(kSchemaRefPrefix.size()));
        for (const json& v : *j) walk.push_back(&v);
      } else if (j->is_array()) {
        for (const json& v : *j) walk.push_back(&v);
      }
    }
  }
  return out;
}

void AddItemPaths(json& paths, const std::string& resource, const char* kind, const char* group,
                  const char* version) {
  const json gvk = Gvk(group, version, kind);
  const std::string schema = std::string("io.k8s.api.core.v1.") + kind;
  const std::string k = kind;
  const std::string ns_path = "/api/v1/namespaces/{namespace}/" + resource;
  const std::string item = ns_path + "/{name}";
  paths[ns_path] = {{"get", Operation("list" + k, gvk, "list", false)},
                    {"post", Operation("create" + k, gvk, "post", true, schema)}};
  paths[item] = {{"get", Operation("read" + k, gvk, "get", false, schema)},
                 {"put", Operation("replace" + k, gvk, "put", true, schema)},
                 {"patch", Operation("patch" + k, gvk, "patch", true, schema)},
                 {"delete", Operation("delete" + k, gvk, "delete", false)}};
  paths[item + "/status"] = {{"get", Operation("read" + k + "Status", gvk, "get", false, schema)},
                             {"put", Operation("replace" + k + "Status", gvk, "put", true, schema)},
                             {"patch", Operation("patch" + k + "Status", gvk, "patch", true, schema)}};
}

json Document(json paths, json schemas) {
  return {{"openapi", "3.0.0"},
          {"info", {{"title", "Kubernetes"}, {"version", "v1.32.0-rcsim"}}},
          {"paths", std::move(paths)},
          {"components", {{"schemas", std::move(schemas)}}}};
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
  return {{"kind", "APIGroupList"},
          {"apiVersion", "v1"},
          {"groups", json::array({AuthenticationGroupJson(), AuthorizationGroupJson()})}};
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
  resources.push_back(Resource(
      "events", "Event", {"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"},
      json::array({"ev"})));
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

json OpenApiV3RootJson(bool leases) {
  json paths = {
      {"api/v1", {{"serverRelativeURL", std::string("/openapi/v3/api/v1?hash=") + kCoreV1OpenApiHash}}}};
  if (leases) {
    paths["apis/coordination.k8s.io/v1"] = {
        {"serverRelativeURL",
         std::string("/openapi/v3/apis/coordination.k8s.io/v1?hash=") + kCoordinationV1OpenApiHash}};
  }
  return {{"paths", std::move(paths)}};
}

const json& OpenApiV3CoreV1Json() {
  static const json doc = [] {
    json paths = json::object();
    AddItemPaths(paths, "pods", "Pod", "", "v1");
    AddItemPaths(paths, "replicationcontrollers", "ReplicationController", "", "v1");
    const json scale_gvk = Gvk("autoscaling", "v1", "Scale");
    const std::string scale = "io.k8s.api.autoscaling.v1.Scale";
    paths["/api/v1/namespaces/{namespace}/replicationcontrollers/{name}/scale"] = {
        {"get", Operation("readReplicationControllerScale", scale_gvk, "get", false, scale)},
        {"put", Operation("replaceReplicationControllerScale", scale_gvk, "put", true, scale)},
        {"patch", Operation("patchReplicationControllerScale", scale_gvk, "patch", true, scale)}};
    const json binding_gvk = Gvk("", "v1", "Binding");
    paths["/api/v1/namespaces/{namespace}/pods/{name}/binding"] = {
        {"post", Operation("createPodBinding", binding_gvk, "post", true, "io.k8s.api.core.v1.Binding")}};
    const json eviction_gvk = Gvk("policy", "v1", "Eviction");
    paths["/api/v1/namespaces/{namespace}/pods/{name}/eviction"] = {
        {"post",
         Operation("createPodEviction", eviction_gvk, "post", true, "io.k8s.api.policy.v1.Eviction")}};
    const json event_gvk = Gvk("", "v1", "Event");
    const std::string event = "io.k8s.api.core.v1.Event";
    paths["/api/v1/namespaces/{namespace}/events"] = {
        {"get", Operation("listEvent", event_gvk, "list", false)},
        {"post", Operation("createEvent", event_gvk, "post", true, event)},
        {"delete", Operation("deleteCollectionEvent", event_gvk, "deletecollection", false)}};
    paths["/api/v1/namespaces/{namespace}/events/{name}"] = {
        {"get", Operation("readEvent", event_gvk, "get", false, event)},
        {"put", Operation("replaceEvent", event_gvk, "put", true, event)},
        {"patch", Operation("patchEvent", event_gvk, "patch", true, event)},
        {"delete", Operation("deleteEvent", event_gvk, "delete", false)}};
    const json ns_gvk = Gvk("", "v1", "Namespace");
    const std::string ns = "io.k8s.api.core.v1.Namespace";
    paths["/api/v1/namespaces"] = {{"get", Operation("listNamespace", ns_gvk, "list", false)},
                                   {"post", Operation("createNamespace", ns_gvk, "post", true, ns)}};
    // kubectl looks for fieldValidation on the PATCH operation to know the server validates fields.
    paths["/api/v1/namespaces/{name}"] = {{"get", Operation("readNamespace", ns_gvk, "get", false, ns)},
                                          {"put", Operation("replaceNamespace", ns_gvk, "put", true, ns)},
                                          {"patch", Operation("patchNamespace", ns_gvk, "patch", true, ns)},
                                          {"delete", Operation("deleteNamespace", ns_gvk, "delete", false)}};
    const json node_gvk = Gvk("", "v1", "Node");
    const std::string node = "io.k8s.api.core.v1.Node";
    paths["/api/v1/nodes"] = {{"get", Operation("listNode", node_gvk, "list", false)},
                              {"post", Operation("createNode", node_gvk, "post", true, node)}};
    paths["/api/v1/nodes/{name}"] = {{"get", Operation("readNode", node_gvk, "get", false, node)},
                                     {"put", Operation("replaceNode", node_gvk, "put", true, node)},
                                     {"patch", Operation("patchNode", node_gvk, "patch", true, node)},
                                     {"delete", Operation("deleteNode", node_gvk, "delete", false)}};
    paths["/api/v1/nodes/{name}/status"] = {
        {"get", Operation("readNodeStatus", node_gvk, "get", false, node)},
        {"put", Operation("replaceNodeStatus", node_gvk, "put", true, node)},
        {"patch", Operation("patchNodeStatus", node_gvk, "patch", true, node)}};
    paths["/api/v1/pods"] = {
        {"get", Operation("listPodForAllNamespaces", Gvk("", "v1", "Pod"), "list", false)}};
    paths["/api/v1/replicationcontrollers"] = {
        {"get", Operation("listReplicationControllerForAllNamespaces", Gvk("", "v1", "ReplicationController"),
                          "list", false)}};
    return Document(
        std::move(paths),
        SchemasFrom({"io.k8s.api.core.v1.Pod", "io.k8s.api.core.v1.ReplicationController", ns, node, event,
                     "io.k8s.api.core.v1.Binding", scale, "io.k8s.api.policy.v1.Eviction",
                     "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions",
                     "io.k8s.apimachinery.pkg.apis.meta.v1.Patch"}));
  }();
  return doc;
}

const json& OpenApiV3CoordinationV1Json() {
  static const json doc = [] {
    const json gvk = Gvk("coordination.k8s.io", "v1", "Lease");
    const std::string lease = "io.k8s.api.coordination.v1.Lease";
    const std::string base = "/apis/coordination.k8s.io/v1";
    json paths = {{base + "/leases", {{"get", Operation("listLeaseForAllNamespaces", gvk, "list", false)}}},
                  {base + "/namespaces/{namespace}/leases",
                   {{"get", Operation("listNamespacedLease", gvk, "list", false)},
                    {"post", Operation("createNamespacedLease", gvk, "post", true, lease)}}},
                  {base + "/namespaces/{namespace}/leases/{name}",
                   {{"get", Operation("readNamespacedLease", gvk, "get", false, lease)},
                    {"put", Operation("replaceNamespacedLease", gvk, "put", true, lease)},
                    // kubectl looks for fieldValidation on the PATCH operation (else it falls back
                    // to OpenAPI v2, which is not served, and refuses to create).
                    {"patch", Operation("patchNamespacedLease", gvk, "patch", true, lease)},
                    {"delete", Operation("deleteNamespacedLease", gvk, "delete", false)}}}};
    return Document(std::move(paths), SchemasFrom({lease, "io.k8s.apimachinery.pkg.apis.meta.v1.Patch"}));
  }();
  return doc;
}

}  // namespace rcsim
