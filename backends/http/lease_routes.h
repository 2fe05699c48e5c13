// The coordination.k8s.io/v1 REST surface of the API server (Leases), beside api_handler.h's core/v1:
//   /apis/coordination.k8s.io/v1                                    APIResourceList
//   /apis/coordination.k8s.io/v1/leases                             GET (list, all namespaces)
//   /apis/coordination.k8s.io/v1/namespaces/{ns}/leases             GET (list), POST
//   /apis/coordination.k8s.io/v1/namespaces/{ns}/leases/{name}      GET, PUT, PATCH, DELETE
// Lists and watches (?watch=true or /apis/coordination.k8s.io/v1/watch/..., with labelSelector and
// fieldSelector metadata.name / metadata.namespace) give JSON, or a Table (NAME, HOLDER, AGE) when the
// Accept header asks. Errors are Kubernetes Status objects (400 malformed body, 404, 405, 409, 415, 422),
// never 500 for bad input. PATCH takes merge, strategic merge and JSON patches (kubectl apply and
// patch, client-go's lease helpers); server-side apply is a 415.
//
// Thread-safety: as the registry's; may be called concurrently.
#ifndef RCSIM_BACKENDS_HTTP_LEASE_ROUTES_H_
#define RCSIM_BACKENDS_HTTP_LEASE_ROUTES_H_

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "backends/http/api_handler.h"
#include "backends/http/table.h"
#include "registry/lease_registry.h"

namespace rcsim {

// True if `seg` (the decoded path segments) is under /apis/coordination.k8s.io/.
bool IsLeasePath(const std::vector<std::string>& seg);
// dry_run: the request's ?dryRun=All (honoured on DELETE; the caller refuses it elsewhere). Lists keep
// the leases `list` selects (labels, metadata.name) and are a Table when `table` is given. Watches are
// served by the handler (LeaseRegistry::Watch).
HttpResponse ServeLeases(LeaseRegistry* leases, const HttpRequest& req, const std::vector<std::string>& seg,
                         bool dry_run = false, const ListOptions& list = ListOptions(),
                         const TableOptions* table = nullptr);
// The coordination.k8s.io group entry for /apis.
nlohmann::json CoordinationGroupJson();

}  // namespace rcsim

#endif  // RCSIM_BACKENDS_HTTP_LEASE_ROUTES_H_
