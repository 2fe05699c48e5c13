#!/usr/bin/python3
"""Writes backends/http/core_v1_openapi.inc: the OpenAPI v3 component schemas of the objects the API
server serves (Pod, ReplicationController, Namespace, Node, Event, Binding, Scale, Eviction, Lease and
every type they contain), with each field's type and description, as kube-apiserver publishes them
under /openapi/v3. `kubectl explain` renders them. Derived from the OpenAPI types and docstrings of the
Kubernetes python client (python3-kubernetes), plus the fields of later releases that
scripts/gen_core_v1_fields.py lists (EXTRA).

The output is one JSON document in a C++ raw string literal:
  {"names": {"V1PodSpec": "io.k8s.api.core.v1.PodSpec", ...}, "schemas": {"io.k8s.api.core.v1.PodSpec": {...}}}
The API server adds the strategic merge patch metadata of the lists (backends/http/core_v1_schema.cc)
and takes from "schemas" what each group-version's document references.

Run: /usr/bin/python3 scripts/gen_core_v1_openapi.py > backends/http/core_v1_openapi.inc
"""
import inspect
import json
import os
import re
import sys

from kubernetes.client import models

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_core_v1_fields import EXTRA  # noqa: E402

# The kinds, their group and version, and their descriptions (kube-apiserver's).
ROOTS = {
    "V1Pod": ("", "v1", "Pod is a collection of containers that can run on a host. This resource is created "
              "by clients and scheduled onto hosts."),
    "V1ReplicationController": ("", "v1", "ReplicationController represents the configuration of a "
                                "replication controller."),
    "V1Namespace": ("", "v1", "Namespace provides a scope for Names. Use of multiple namespaces is "
                    "optional."),
    "V1Node": ("", "v1", "Node is a worker node in Kubernetes. Each node will have a unique identifier in "
               "the cache (i.e. in etcd)."),
    "CoreV1Event": ("", "v1", "Event is a report of an event somewhere in the cluster.  Events have a "
                    "limited retention time and triggers and messages may evolve with time.  Event "
                    "consumers should not rely on the timing of an event with a given Reason reflecting a "
                    "consistent underlying trigger, or the continued existence of events with that Reason.  "
                    "Events should be treated as informative, best-effort, supplemental data."),
    "V1Binding": ("", "v1", "Binding ties one object to another; for example, a pod is bound to a node by a "
                  "scheduler."),
    "V1Scale": ("autoscaling", "v1", "Scale represents a scaling request for a resource."),
    "V1Eviction": ("policy", "v1", "Eviction evicts a pod from its node subject to certain policies and "
                   "safety constraints. This is a subresource of Pod.  A request to cause such an eviction "
                   "is created by POSTing to .../pods/<pod name>/evictions."),
    "V1Lease": ("coordination.k8s.io", "v1", "Lease defines a lease concept."),
    "V1DeleteOptions": ("", "v1", "DeleteOptions may be provided when deleting an API object."),
}

META = {"V1ObjectMeta", "V1ListMeta", "V1OwnerReference", "V1ManagedFieldsEntry", "V1LabelSelector",
        "V1LabelSelectorRequirement", "V1DeleteOptions", "V1Preconditions", "V1Status", "V1StatusDetails",
        "V1StatusCause"}
PACKAGE = {"V1Scale": "autoscaling.v1", "V1ScaleSpec": "autoscaling.v1", "V1ScaleStatus": "autoscaling.v1",
           "V1Eviction": "policy.v1", "V1Lease": "coordination.v1", "V1LeaseSpec": "coordination.v1"}
# The types of EXTRA's fields that the packaged client does not know.
EXTRA_TYPES = {"V1PodOS": "PodOS defines the OS parameters of a pod.",
               "V1PodSchedulingGate": "PodSchedulingGate is associated to a Pod to guard its scheduling."}
EXTRA_DESCRIPTIONS = {
    ("V1PodSpec", "os"): "Specifies the OS of the containers in the pod.",
    ("V1PodOS", "name"): "Name is the name of the operating system. The currently supported values are "
                         "linux and windows.",
    ("V1PodSpec", "hostUsers"): "Use the host's user namespace. Optional: Default to true.",
    ("V1PodSpec", "schedulingGates"): "SchedulingGates is an opaque list of values that if specified will "
                                      "block scheduling the pod.",
    ("V1PodSchedulingGate", "name"): "Name of the scheduling gate. Each scheduling gate must have a unique "
                                     "name field.",
    ("V1PodSpec", "resourceClaims"): "ResourceClaims defines which ResourceClaims must be allocated and "
                                     "reserved before the Pod is allowed to start.",
    ("V1Container", "restartPolicy"): "RestartPolicy defines the restart behavior of individual containers "
                                      "in a pod. The only allowed value is \"Always\", for init containers.",
}
# The fields whose type is another object: the python client carries no description for them.
META_DOC = ("Standard object's metadata. More info: "
            "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata")
SPEC_DOC = ("Spec defines the desired behavior of the {}. More info: "
            "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md"
            "#spec-and-status")
STATUS_DOC = ("Status is the most recently observed status of the {}. Populated by the system. Read-only. "
              "More info: https://git.k8s.io/community/contributors/devel/sig-architecture/"
              "api-conventions.md#spec-and-status")
PROBE_DOC = ("Periodic probe of container {}. The container is {} when the probe fails. Cannot be updated. "
             "More info: https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle#container-probes")
REF_DESCRIPTIONS = {
    ("V1Pod", "spec"): SPEC_DOC.format("pod"),
    ("V1Pod", "status"): STATUS_DOC.format("pod"),
    ("V1ReplicationController", "spec"): SPEC_DOC.format("replication controller"),
    ("V1ReplicationController", "status"): STATUS_DOC.format("replication controller"),
    ("V1Namespace", "spec"): SPEC_DOC.format("Namespace"),
    ("V1Namespace", "status"): STATUS_DOC.format("Namespace"),
    ("V1Node", "spec"): SPEC_DOC.format("node"),
    ("V1Node", "status"): STATUS_DOC.format("node"),
    ("V1Scale", "spec"): "Spec defines the behavior of the scale.",
    ("V1Scale", "status"): "Status is the current status of the scale. Read-only.",
    ("V1Lease", "spec"): SPEC_DOC.format("Lease"),
    ("V1PodTemplateSpec", "spec"): SPEC_DOC.format("pod"),
    ("V1PersistentVolumeClaimTemplate", "spec"): "The specification of the PersistentVolumeClaim.",
    ("V1ReplicationControllerSpec", "template"): (
        "Template is the object that describes the pod that will be created if insufficient replicas are "
        "detected. This takes precedence over a TemplateRef. The only allowed template.spec.restartPolicy "
        "value is \"Always\"."),
    ("V1Binding", "target"): "The target object that you want to bind to the standard object.",
    ("V1Eviction", "deleteOptions"): "DeleteOptions may be provided.",
    ("V1DeleteOptions", "preconditions"): (
        "Must be fulfilled before a deletion is carried out. If not possible, a 409 Conflict status will "
        "be returned."),
    ("CoreV1Event", "involvedObject"): "The object that this event is about.",
    ("CoreV1Event", "related"): "Optional secondary object for more complex actions.",
    ("CoreV1Event", "series"): "Data about the Event series this event represents or nil if it's a "
                               "singleton Event.",
    ("CoreV1Event", "source"): "The component reporting this event. Should be a short machine "
                               "understandable string.",
    ("V1PodSpec", "affinity"): "If specified, the pod's scheduling constraints.",
    ("V1PodSpec", "dnsConfig"): "Specifies the DNS parameters of a pod. Parameters specified here will be "
                                "merged to the generated DNS configuration based on DNSPolicy.",
    ("V1PodSpec", "securityContext"): "SecurityContext holds pod-level security attributes and common "
                                      "container settings. Optional: Defaults to empty.",
    ("V1Container", "lifecycle"): "Actions that the management system should take in response to container "
                                  "lifecycle events. Cannot be updated.",
    ("V1Container", "livenessProbe"): PROBE_DOC.format("liveness", "restarted"),
    ("V1Container", "readinessProbe"): PROBE_DOC.format("service readiness", "removed from service "
                                                        "endpoints"),
    ("V1Container", "startupProbe"): (
        "StartupProbe indicates that the Pod has successfully initialized. If specified, no other probes "
        "are executed until this completes successfully. Cannot be updated."),
    ("V1Container", "resources"): (
        "Compute Resources required by this container. Cannot be updated. More info: "
        "https://kubernetes.io/docs/concepts/configuration/manage-resources-containers/"),
    ("V1Container", "securityContext"): (
        "SecurityContext defines the security options the container should be run with. If set, the fields "
        "of SecurityContext override the equivalent fields of PodSecurityContext."),
    ("V1ContainerStatus", "state"): "State holds details about the container's current condition.",
    ("V1ContainerStatus", "lastState"): "LastTerminationState holds the last termination state of the "
                                        "container, to help debug container crashes and restarts.",
    ("V1ContainerState", "running"): "Details about a running container",
    ("V1ContainerState", "terminated"): "Details about a terminated container",
    ("V1ContainerState", "waiting"): "Details about a waiting container",
    ("V1EnvVar", "valueFrom"): "Source for the environment variable's value. Cannot be used if value is "
                               "not empty.",
    ("V1EnvVarSource", "configMapKeyRef"): "Selects a key of a ConfigMap.",
    ("V1EnvVarSource", "fieldRef"): (
        "Selects a field of the pod: supports metadata.name, metadata.namespace, `metadata.labels['<KEY>']`, "
        "`metadata.annotations['<KEY>']`, spec.nodeName, spec.serviceAccountName, status.hostIP, "
        "status.podIP, status.podIPs."),
    ("V1EnvVarSource", "resourceFieldRef"): "Selects a resource of the container: only resources limits and "
                                            "requests are currently supported.",
    ("V1EnvVarSource", "secretKeyRef"): "Selects a key of a secret in the pod's namespace",
    ("V1EnvFromSource", "configMapRef"): "The ConfigMap to select from",
    ("V1EnvFromSource", "secretRef"): "The Secret to select from",
    ("V1Probe", "exec"): "Exec specifies the action to take.",
    ("V1Probe", "httpGet"): "HTTPGet specifies the http request to perform.",
    ("V1Probe", "tcpSocket"): "TCPSocket specifies an action involving a TCP port.",
    ("V1Handler", "exec"): "Exec specifies the action to take.",
    ("V1Handler", "httpGet"): "HTTPGet specifies the http request to perform.",
    ("V1Handler", "tcpSocket"): "TCPSocket specifies an action involving a TCP port.",
    ("V1Lifecycle", "postStart"): (
        "PostStart is called immediately after a container is created. If the handler fails, the container "
        "is terminated and restarted according to its restart policy."),
    ("V1Lifecycle", "preStop"): (
        "PreStop is called immediately before a container is terminated due to an API request or management "
        "event. The Pod's termination grace period countdown begins before the PreStop hook is executed."),
    ("V1Affinity", "nodeAffinity"): "Describes node affinity scheduling rules for the pod.",
    ("V1Affinity", "podAffinity"): "Describes pod affinity scheduling rules (e.g. co-locate this pod in "
                                   "the same node, zone, etc. as some other pod(s)).",
    ("V1Affinity", "podAntiAffinity"): "Describes pod anti-affinity scheduling rules (e.g. avoid putting "
                                       "this pod in the same node, zone, etc. as some other pod(s)).",
    ("V1SecurityContext", "capabilities"): "The capabilities to add/drop when running containers.",
    ("V1SecurityContext", "seLinuxOptions"): "The SELinux context to be applied to the container.",
    ("V1SecurityContext", "seccompProfile"): "The seccomp options to use by this container.",
    ("V1SecurityContext", "windowsOptions"): "The Windows specific settings applied to all containers.",
    ("V1PodSecurityContext", "seLinuxOptions"): "The SELinux context to be applied to all containers.",
    ("V1PodSecurityContext", "seccompProfile"): "The seccomp options to use by the containers in this pod.",
    ("V1PodSecurityContext", "windowsOptions"): "The Windows specific settings applied to all containers.",
    ("V1NodeStatus", "nodeInfo"): "Set of ids/uuids to uniquely identify the node.",
    ("V1NodeStatus", "daemonEndpoints"): "Endpoints of daemons running on the Node.",
    ("V1NodeStatus", "config"): "Status of the config assigned to the node via the dynamic Kubelet config "
                                "feature.",
    ("V1PodAffinityTerm", "labelSelector"): "A label query over a set of resources, in this case pods.",
    ("V1TopologySpreadConstraint", "labelSelector"): (
        "LabelSelector is used to find matching pods. Pods that match this label selector are counted to "
        "determine the number of pods in their corresponding topology domain."),
    ("V1Volume", "emptyDir"): "emptyDir represents a temporary directory that shares a pod's lifetime.",
    ("V1Volume", "hostPath"): "hostPath represents a pre-existing file or directory on the host machine "
                              "that is directly exposed to the container.",
    ("V1Volume", "configMap"): "configMap represents a configMap that should populate this volume",
    ("V1Volume", "secret"): "secret represents a secret that should populate this volume.",
    ("V1Volume", "persistentVolumeClaim"): "persistentVolumeClaimVolumeSource represents a reference to a "
                                           "PersistentVolumeClaim in the same namespace.",
    ("V1Volume", "projected"): "projected items for all in one resources secrets, configmaps, and downward "
                               "API",
    ("V1Volume", "downwardAPI"): "downwardAPI represents downward API about the pod that should populate "
                                 "this volume",
}
# The descriptions of the types most fields refer to (kubectl explain prints a field's description, then
# its type's); the client has none.
TYPE_DESCRIPTIONS = {
    "V1ObjectMeta": "ObjectMeta is metadata that all persisted resources must have, which includes all "
                    "objects users must create.",
    "V1OwnerReference": "OwnerReference contains enough information to let you identify an owning object. "
                        "An owning object must be in the same namespace as the dependent, or be "
                        "cluster-scoped, so there is no namespace field.",
    "V1ManagedFieldsEntry": "ManagedFieldsEntry is a workflow-id, a FieldSet and the group version of the "
                            "resource that the fieldset applies to.",
    "V1LabelSelector": "A label selector is a label query over a set of resources. The result of "
                       "matchLabels and matchExpressions are ANDed. An empty label selector matches all "
                       "objects. A null label selector matches no objects.",
    "V1PodSpec": "PodSpec is a description of a pod.",
    "V1PodStatus": "PodStatus represents information about the status of a pod. Status may trail the "
                   "actual state of a system, especially if the node that hosts the pod cannot contact "
                   "the control plane.",
    "V1PodCondition": "PodCondition contains details for the current condition of this pod.",
    "V1PodTemplateSpec": "PodTemplateSpec describes the data a pod should have when created from a "
                         "template",
    "V1ReplicationControllerSpec": "ReplicationControllerSpec is the specification of a replication "
                                   "controller.",
    "V1ReplicationControllerStatus": "ReplicationControllerStatus represents the current status of a "
                                     "replication controller.",
    "V1ReplicationControllerCondition": "ReplicationControllerCondition describes the state of a "
                                        "replication controller at a certain point.",
    "V1Container": "A single application container that you want to run within a pod.",
    "V1ContainerPort": "ContainerPort represents a network port in a single container.",
    "V1ContainerStatus": "ContainerStatus contains details for the current status of this container.",
    "V1ContainerState": "ContainerState holds a possible state of container. Only one of its members may "
                        "be specified. If none of them is specified, the default one is "
                        "ContainerStateWaiting.",
    "V1EnvVar": "EnvVar represents an environment variable present in a Container.",
    "V1EnvVarSource": "EnvVarSource represents a source for the value of an EnvVar.",
    "V1EnvFromSource": "EnvFromSource represents the source of a set of ConfigMaps",
    "V1Probe": "Probe describes a health check to be performed against a container to determine whether "
               "it is alive or ready to receive traffic.",
    "V1ExecAction": "ExecAction describes a \"run in container\" action.",
    "V1HTTPGetAction": "HTTPGetAction describes an action based on HTTP Get requests.",
    "V1TCPSocketAction": "TCPSocketAction describes an action based on opening a socket",
    "V1Lifecycle": "Lifecycle describes actions that the management system should take in response to "
                   "container lifecycle events.",
    "V1ResourceRequirements": "ResourceRequirements describes the compute resource requirements.",
    "V1Volume": "Volume represents a named volume in a pod that may be accessed by any container in the "
                "pod.",
    "V1VolumeMount": "VolumeMount describes a mounting of a Volume within a container.",
    "V1SecurityContext": "SecurityContext holds security configuration that will be applied to a "
                         "container.",
    "V1PodSecurityContext": "PodSecurityContext holds pod-level security attributes and common container "
                            "settings.",
    "V1Toleration": "The pod this Toleration is attached to tolerates any taint that matches the triple "
                    "<key,value,effect> using the matching operator <operator>.",
    "V1Affinity": "Affinity is a group of affinity scheduling rules.",
    "V1NamespaceSpec": "NamespaceSpec describes the attributes on a Namespace.",
    "V1NamespaceStatus": "NamespaceStatus is information about the current status of a Namespace.",
    "V1NodeSpec": "NodeSpec describes the attributes that a node is created with.",
    "V1NodeStatus": "NodeStatus is information about the current status of a node.",
    "V1NodeCondition": "NodeCondition contains condition information for a node.",
    "V1NodeAddress": "NodeAddress contains information for the node's address.",
    "V1NodeSystemInfo": "NodeSystemInfo is a set of ids/uuids to uniquely identify the node.",
    "V1Taint": "The node this Taint is attached to has the \"effect\" on any pod that does not tolerate "
               "the Taint.",
    "V1ObjectReference": "ObjectReference contains enough information to let you inspect or modify the "
                         "referred object.",
    "V1EventSource": "EventSource contains information for an event.",
    "V1ScaleSpec": "ScaleSpec describes the attributes of a scale subresource.",
    "V1ScaleStatus": "ScaleStatus represents the current status of a scale subresource.",
    "V1LeaseSpec": "LeaseSpec is a specification of a Lease.",
    "V1Preconditions": "Preconditions must be fulfilled before an operation (update, delete, etc.) is "
                       "carried out.",
}
# Maps of resource quantities (values are Quantity, not plain strings).
QUANTITY_MAPS = {("V1ResourceRequirements", "limits"), ("V1ResourceRequirements", "requests"),
                 ("V1NodeStatus", "capacity"), ("V1NodeStatus", "allocatable"),
                 ("V1ContainerStatus", "allocatedResources")}
INT_OR_STRING = {("V1HTTPGetAction", "port"), ("V1TCPSocketAction", "port")}

SCALARS = {"str": {"type": "string"}, "int": {"type": "integer"}, "bool": {"type": "boolean"},
           "float": {"type": "number", "format": "double"},
           "datetime": {"type": "string", "format": "date-time"},
           "date": {"type": "string", "format": "date"}}
INT64 = {"resourceVersion", "generation", "observedGeneration", "gracePeriodSeconds",
         "terminationGracePeriodSeconds", "deletionGracePeriodSeconds", "activeDeadlineSeconds", "runAsUser",
         "runAsGroup", "fsGroup", "count", "supplementalGroups"}


def schema_name(py):
    if py in META:
        return "io.k8s.apimachinery.pkg.apis.meta.v1." + re.sub(r"^V1", "", py)
    if py in PACKAGE:
        return "io.k8s.api." + PACKAGE[py] + "." + re.sub(r"^V1", "", py)
    return "io.k8s.api.core.v1." + re.sub(r"^(CoreV1|V1)", "", py)


def ref(name):
    return {"$ref": "#/components/schemas/" + name}


def clean(doc):
    text = re.sub(r"\s*# noqa: E501", "", doc or "").strip()
    return text


def field_description(cls, py):
    doc = inspect.getdoc(getattr(cls, py).fget) or ""
    parts = [clean(p) for p in doc.split("\n\n")]
    # "Gets the x of this T." / description / ":return: ..." : the middle part is the description.
    body = [p for p in parts[1:] if p and not p.startswith(":")]
    return " ".join(body)


def required(cls, py):
    try:
        src = inspect.getsource(getattr(cls, py).fset)
    except (OSError, TypeError):
        return False
    return "must not be `None`" in src


def value_schema(t, owner, field, todo):
    """The schema of a python-client type string; queues referenced model names in todo."""
    if t in SCALARS:
        s = dict(SCALARS[t])
        if s["type"] == "integer":
            s["format"] = "int64" if field in INT64 else "int32"
        return s
    if t == "object":
        if (owner, field) in INT_OR_STRING:
            return {"allOf": [ref("io.k8s.apimachinery.pkg.util.intstr.IntOrString")]}
        if field == "fieldsV1":
            return {"allOf": [ref("io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1")]}
        return {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    m = re.fullmatch(r"list\[(.*)\]", t)
    if m:
        return {"type": "array", "items": value_schema(m.group(1), owner, field, todo)}
    m = re.fullmatch(r"dict\(str, (.*)\)", t)
    if m:
        if (owner, field) in QUANTITY_MAPS:
            return {"type": "object",
                    "additionalProperties": ref("io.k8s.apimachinery.pkg.api.resource.Quantity")}
        return {"type": "object", "additionalProperties": value_schema(m.group(1), owner, field, todo)}
    todo.append(t)
    return {"allOf": [ref(schema_name(t))]}


def extra_schema(kind, elem, todo):
    if kind == "scalar":
        return {"type": "string"}
    if kind == "any":
        return {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    if kind == "map":
        return {"type": "object", "additionalProperties": {"type": "string"}}
    if kind == "list":
        if elem == "scalar":
            return {"type": "array", "items": {"type": "string"}}
        if elem == "any":
            return {"type": "array", "items": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}
        todo.append(elem)
        return {"type": "array", "items": {"allOf": [ref(schema_name(elem))]}}
    todo.append(elem)
    return {"allOf": [ref(schema_name(elem))]}


def main():
    schemas, names = {}, {}
    todo = list(ROOTS)
    while todo:
        py = todo.pop()
        if py in names:
            continue
        names[py] = schema_name(py)
        cls = getattr(models, py, None)
        props, req = {}, []
        if cls is not None:
            for attr, t in sorted(cls.openapi_types.items()):
                field = cls.attribute_map[attr]
                s = value_schema(t, py, field, todo)
                d = field_description(cls, attr)
                if not d and field == "metadata":
                    d = META_DOC
                d = d or REF_DESCRIPTIONS.get((py, field), "")
                if d:
                    s["description"] = d
                props[field] = s
                if required(cls, attr):
                    req.append(field)
        for owner, field, kind, elem in EXTRA:
            if owner != py or field in props:
                continue
            s = extra_schema(kind, elem, todo)
            if (owner, field) in EXTRA_DESCRIPTIONS:
                s["description"] = EXTRA_DESCRIPTIONS[(owner, field)]
            props[field] = s
        schema = {"type": "object", "properties": props}
        if req:
            schema["required"] = sorted(req)
        schemas[names[py]] = schema
    for py, name in names.items():
        if py in ROOTS:
            group, version, desc = ROOTS[py]
            kind = re.sub(r"^(CoreV1|V1)", "", py)
            schemas[name]["x-kubernetes-group-version-kind"] = [
                {"group": group, "kind": kind, "version": version}]
        else:
            desc = EXTRA_TYPES.get(py) or TYPE_DESCRIPTIONS.get(py, "")
        if desc:
            schemas[name]["description"] = desc
    schemas["io.k8s.apimachinery.pkg.util.intstr.IntOrString"] = {
        "type": "string", "format": "int-or-string",
        "description": "IntOrString is a type that can hold an int32 or a string."}
    schemas["io.k8s.apimachinery.pkg.api.resource.Quantity"] = {
        "type": "string",
        "description": "Quantity is a fixed-point representation of a number (e.g. 100m, 1Gi)."}
    schemas["io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1"] = {
        "type": "object",
        "description": "FieldsV1 stores a set of fields in a data structure like a Trie, in JSON format."}
    # One JSON token per line (indent 0): valid JSON, and lines a diff can show.
    text = json.dumps({"names": dict(sorted(names.items())), "schemas": dict(sorted(schemas.items()))},
                      indent=0, separators=(",", ":"), ensure_ascii=True)
    print("// Generated by scripts/gen_core_v1_openapi.py from the OpenAPI types of python3-kubernetes; "
          "do not edit.")
    print("R\"openapi(")
    print(text)
    print(")openapi\"")

if __name__ == "__main__":
    main()
