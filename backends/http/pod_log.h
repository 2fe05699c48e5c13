// GET /api/v1/namespaces/{ns}/pods/{name}/log: the pod's container output, fetched from the node agent
// that runs it, as kube-apiserver proxies pods/log to the kubelet. The node agent is found from the
// pod's spec.nodeName and that Node's status: the InternalIP (else Hostname) of status.addresses and
// status.daemonEndpoints.kubeletEndpoint.Port; the request goes to
// http://<address>:<port>/containerLogs/{ns}/{name}/{container} with tailLines, follow and previous.
//
// Query: container (optional when the pod has one container), tailLines, follow, previous.
// Answers: 200 text/plain; with follow=true a chunked stream (a watch of the HTTP server: it ends when
// the node agent's stream ends, the client goes or the watch timeout passes).
// Errors, as kube-apiserver words them where it has them: 400 for a container that must be named or is
// not in the pod, for a pod with no node ("does not have a host assigned"), a node with no kubelet
// endpoint or address, a bad query; 404 for a missing pod or node (and what the node agent answers 404);
// 503 when the node agent cannot be reached.
//
// Thread-safety: as ApiHandler::Handle (blocking; run off the I/O threads).
#ifndef RCSIM_BACKENDS_HTTP_POD_LOG_H_
#define RCSIM_BACKENDS_HTTP_POD_LOG_H_

#include <memory>
#include <string>

#include "backends/http/api_handler.h"
#include "registry/registry.h"

namespace rcsim {

ApiOutcome ServePodLog(Registry* registry, const HttpRequest& req, const std::string& ns,
                       const std::string& name, const std::shared_ptr<WatchSink>& sink);

}  // namespace rcsim

#endif  // RCSIM_BACKENDS_HTTP_POD_LOG_H_
