#include "backends/http/core_v1_schema.h"

#include <map>
#include <sstream>
#include <utility>

namespace rcsim {
namespace {

constexpr const char* kSchemaText =
#include "backends/http/core_v1_fields.inc"
    ;

// patchStrategy "merge" (and its patchMergeKey) of the core/v1 lists, from Kubernetes' types.go.
struct MergeList {
  const char* type;
  const char* field;
  const char* key;  // "" for a list of primitives merged as a set
  bool retain_keys = false;
};
constexpr MergeList kMergeLists[] = {
    {"V1ObjectMeta", "finalizers", ""},
    {"V1ObjectMeta", "ownerReferences", "uid"},
    {"V1PodSpec", "containers", "name"},
    {"V1PodSpec", "initContainers", "name"},
    {"V1PodSpec", "ephemeralContainers", "name"},
    {"V1PodSpec", "volumes", "name", /*retain_keys=*/true},
    {"V1PodSpec", "imagePullSecrets", "name"},
    {"V1PodSpec", "hostAliases", "ip"},
    {"V1PodSpec", "topologySpreadConstraints", "topologyKey"},
    {"V1PodSpec", "schedulingGates", "name"},
    {"V1PodSpec", "resourceClaims", "name"},
    {"V1Container", "ports", "containerPort"},
    {"V1Container", "env", "name"},
    {"V1Container", "volumeMounts", "mountPath"},
    {"V1Container", "volumeDevices", "devicePath"},
    {"V1EphemeralContainer", "env", "name"},
    {"V1EphemeralContainer", "volumeMounts", "mountPath"},
    {"V1EphemeralContainer", "volumeDevices", "devicePath"},
    {"V1PodStatus", "conditions", "type"},
    {"V1PodStatus", "podIPs", "ip"},
    {"V1PodStatus", "hostIPs", "ip"},
    {"V1ReplicationControllerStatus", "conditions", "type"},
    {"V1NamespaceStatus", "conditions", "type"},
};

using TypeFields = std::map<std::string, SchemaField, std::less<>>;
using Schema = std::map<std::string, TypeFields, std::less<>>;

const Schema& CoreV1Schema() {
  static const Schema schema = [] {
    Schema s;
    std::istringstream in(kSchemaText);
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream words(line);
      std::string type, name, kind, elem;
      if (!(words >> type >> name >> kind)) continue;
      words >> elem;
      SchemaField f;
      if (kind == "object") f.kind = SchemaField::Kind::kObject;
      if (kind == "list") f.kind = SchemaField::Kind::kList;
      if (kind == "map") f.kind = SchemaField::Kind::kMap;
      if (kind == "any") f.kind = SchemaField::Kind::kAny;
      f.elem = elem;
      s[type][name] = std::move(f);
    }
    for (const MergeList& m : kMergeLists) {
      auto t = s.find(m.type);
      if (t == s.end()) continue;
      auto f = t->second.find(m.field);
      if (f == t->second.end()) continue;
      f->second.merge = true;
      f->second.merge_key = m.key;
      f->second.retain_keys = m.retain_keys;
    }
    return s;
  }();
  return schema;
}

}  // namespace

const SchemaField* FindSchemaField(std::string_view type, std::string_view name) {
  const Schema& s = CoreV1Schema();
  auto t = s.find(type);
  if (t == s.end()) return nullptr;
  auto f = t->second.find(name);
  return f == t->second.end() ? nullptr : &f->second;
}

bool IsSchemaType(std::string_view type) { return CoreV1Schema().count(type) != 0; }

}  // namespace rcsim
