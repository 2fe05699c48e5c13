// A container's environment from its spec, as the kubelet builds it: `env` entries with a `value`, and
// `valueFrom.fieldRef` (the downward API) for metadata.name, metadata.namespace, metadata.uid,
// spec.nodeName, spec.serviceAccountName, status.podIP and status.hostIP, in spec order (a later entry
// of the same name wins). Not supported, and left out: $(VAR) expansion, valueFrom of a secret,
// config map or resource, envFrom.
// ExecReadinessProbe reads the container's `readinessProbe` when it has an `exec` one, with the
// kubelet's defaults (initialDelaySeconds 0, periodSeconds 10, timeoutSeconds 1, successThreshold 1,
// failureThreshold 3; each at least its API minimum: 0 for the delay, 1 for the others). Another probe
// kind (httpGet, tcpSocket, grpc) is not run: nullopt, so the container is ready once started.
//
// Thread-safety: stateless.
#ifndef RCSIM_CLUSTER_CONTAINER_ENV_H_
#define RCSIM_CLUSTER_CONTAINER_ENV_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cluster/runtime.h"
#include "engine/types.h"

namespace rcsim {

using EnvVars = std::vector<std::pair<std::string, std::string>>;

EnvVars ContainerEnv(const Pod& pod, const Container& container, const std::string& pod_ip,
                     const std::string& host_ip);

std::optional<ExecProbe> ExecReadinessProbe(const Container& container);

}  // namespace rcsim

#endif  // RCSIM_CLUSTER_CONTAINER_ENV_H_
