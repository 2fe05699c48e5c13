// Full core/v1 manifests for the lossless round-trip tests (codec, registry, API contract suite): a pod
// spec using the fields a real workload sends (ports, env, resources, volumes, volumeMounts,
// nodeSelector, tolerations, affinity, probes, securityContext, lifecycle, init containers...), most of
// which the engine does not model. Plain JSON text; no dependency.
#ifndef RCSIM_TESTS_CONTRACT_CORE_V1_MANIFESTS_H_
#define RCSIM_TESTS_CONTRACT_CORE_V1_MANIFESTS_H_

#include <string>

namespace rcsim::manifests {

// A PodSpec (JSON object text) with every commonly used field set.
inline constexpr const char* kFullPodSpec = R"json({
  "initContainers": [{
    "name": "init-db", "image": "busybox:1.36", "command": ["sh", "-c", "until nslookup db; do sleep 1; done"],
    "resources": {"requests": {"cpu": "10m"}}
  }],
  "containers": [{
    "name": "web",
    "image": "nginx:1.25",
    "command": ["nginx"],
    "args": ["-g", "daemon off;"],
    "workingDir": "/srv",
    "ports": [{"name": "http", "containerPort": 80, "protocol": "TCP"},
              {"name": "metrics", "containerPort": 9113, "hostPort": 9113, "protocol": "TCP"}],
    "env": [{"name": "MODE", "value": "production"},
            {"name": "POD_IP", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "status.podIP"}}},
            {"name": "DB_PASSWORD", "valueFrom": {"secretKeyRef": {"name": "db", "key": "password", "optional": false}}}],
    "envFrom": [{"configMapRef": {"name": "web-config"}, "prefix": "CFG_"}],
    "resources": {"limits": {"cpu": "500m", "memory": "256Mi"}, "requests": {"cpu": "100m", "memory": "128Mi"}},
    "volumeMounts": [{"name": "data", "mountPath": "/data"},
                     {"name": "config", "mountPath": "/etc/nginx/conf.d", "readOnly": true}],
    "livenessProbe": {"httpGet": {"path": "/healthz", "port": 80, "scheme": "HTTP"},
                      "initialDelaySeconds": 5, "periodSeconds": 10, "timeoutSeconds": 1,
                      "successThreshold": 1, "failureThreshold": 3},
    "readinessProbe": {"tcpSocket": {"port": "http"}, "periodSeconds": 5},
    "startupProbe": {"exec": {"command": ["cat", "/tmp/started"]}, "failureThreshold": 30},
    "lifecycle": {"preStop": {"exec": {"command": ["nginx", "-s", "quit"]}},
                  "postStart": {"httpGet": {"path": "/warm", "port": 80}}},
    "terminationMessagePath": "/dev/termination-log",
    "terminationMessagePolicy": "FallbackToLogsOnError",
    "imagePullPolicy": "IfNotPresent",
    "securityContext": {"runAsUser": 101, "runAsNonRoot": true, "readOnlyRootFilesystem": true,
                        "allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]}},
    "stdin": false, "tty": false
  }, {
    "name": "sidecar", "image": "busybox:1.36", "args": ["sleep", "infinity"]
  }],
  "volumes": [{"name": "data", "emptyDir": {"medium": "Memory", "sizeLimit": "64Mi"}},
              {"name": "config", "configMap": {"name": "web-config", "defaultMode": 420,
                                               "items": [{"key": "site.conf", "path": "site.conf"}]}},
              {"name": "secret", "secret": {"secretName": "tls", "optional": true}},
              {"name": "claim", "persistentVolumeClaim": {"claimName": "web-data"}}],
  "nodeSelector": {"disktype": "ssd", "kubernetes.io/os": "linux"},
  "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "web", "effect": "NoSchedule"},
                  {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
                   "tolerationSeconds": 300}],
  "affinity": {
    "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
      {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}]}]}},
    "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100,
      "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}}]}
  },
  "securityContext": {"runAsUser": 1000, "runAsGroup": 3000, "fsGroup": 2000, "supplementalGroups": [4000],
                      "seccompProfile": {"type": "RuntimeDefault"}},
  "serviceAccountName": "web",
  "automountServiceAccountToken": false,
  "imagePullSecrets": [{"name": "registry-cred"}],
  "hostAliases": [{"ip": "10.0.0.9", "hostnames": ["db.local"]}],
  "dnsPolicy": "ClusterFirst",
  "dnsConfig": {"nameservers": ["1.1.1.1"], "searches": ["svc.local"], "options": [{"name": "ndots", "value": "2"}]},
  "priorityClassName": "high",
  "priority": 1000,
  "schedulerName": "default-scheduler",
  "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway",
                                 "labelSelector": {"matchLabels": {"app": "web"}}}],
  "readinessGates": [{"conditionType": "example.com/ready"}],
  "hostname": "web",
  "subdomain": "web-headless",
  "activeDeadlineSeconds": 3600,
  "enableServiceLinks": false,
  "shareProcessNamespace": true,
  "restartPolicy": "Always",
  "terminationGracePeriodSeconds": 45
})json";

// A ReplicationController whose template is kFullPodSpec; `name` and `app` are substituted by
// FullController below.
inline std::string FullControllerJson(const std::string& name) {
  return std::string(R"json({"apiVersion": "v1", "kind": "ReplicationController",
    "metadata": {"name": ")json") +
         name + R"json(", "labels": {"app": "full", "team": "edge"},
                 "annotations": {"example.com/owner": "edge-team", "example.com/note": "lossless"}},
    "spec": {"replicas": 0, "minReadySeconds": 3, "selector": {"app": "full"},
             "template": {"metadata": {"labels": {"app": "full", "version": "v1"},
                                       "annotations": {"prometheus.io/scrape": "true"}},
                          "spec": )json" +
         kFullPodSpec + "}}}";
}

// A Pod with kFullPodSpec.
inline std::string FullPodJson(const std::string& name) {
  return std::string(R"json({"apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": ")json") +
         name + R"json(", "labels": {"app": "full"}, "annotations": {"example.com/note": "lossless"}},
    "spec": )json" +
         kFullPodSpec + "}";
}

}  // namespace rcsim::manifests

#endif  // RCSIM_TESTS_CONTRACT_CORE_V1_MANIFESTS_H_
