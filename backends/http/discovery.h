// The fixed documents of the API server: version, discovery (legacy /api and /apis) and the minimal
// OpenAPI documents kubectl reads before it sends a request.
//
// kubectl create/apply validate with fieldValidation=Strict when the server's OpenAPI v3 document for
// the group version (/openapi/v3/api/v1) lists a `fieldValidation` query parameter on the PATCH
// operation of the kind (found through x-kubernetes-group-version-kind); then it does no client-side
// schema validation and needs no /openapi/v2. The documents here carry exactly that much, plus the
// object schemas' top-level shape.
//
// Thread-safety: pure functions.
#ifndef RCSIM_BACKENDS_HTTP_DISCOVERY_H_
#define RCSIM_BACKENDS_HTTP_DISCOVERY_H_

#include <nlohmann/json.hpp>

namespace rcsim {

// GET /version: major "1", minor "32", gitVersion "v1.32.0-rcsim".
nlohmann::json VersionJson();
// GET /api: APIVersions {versions: ["v1"]}.
nlohmann::json ApiVersionsJson();
// GET /apis: an empty APIGroupList (the server adds coordination.k8s.io when it serves leases). No
// `policy` group: it would list PodDisruptionBudgets, which are not served, and an empty resource list
// makes `kubectl api-resources` fail. pods/eviction (a policy/v1 Eviction) is found through the core
// list, where it names its group and version, as kubectl drain looks for it.
nlohmann::json ApiGroupListJson();
// GET /api/v1: APIResourceList of pods (+ /status, /log, /binding, /eviction), replicationcontrollers
// (+ /status, /scale), events, namespaces, bindings, nodes (+ /status).
nlohmann::json CoreV1ResourcesJson();
// GET /openapi/v3: {paths: {"api/v1": {serverRelativeURL: ...}}}.
nlohmann::json OpenApiV3RootJson();
// GET /openapi/v3/api/v1: the OpenAPI 3 document of core/v1 (the operations we serve).
nlohmann::json OpenApiV3CoreV1Json();

}  // namespace rcsim

#endif  // RCSIM_BACKENDS_HTTP_DISCOVERY_H_
