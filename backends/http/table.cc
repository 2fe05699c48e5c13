#include "backends/http/table.h"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "engine/codec.h"
#include "engine/node_codec.h"

namespace rcsim {
namespace {

using json = nlohmann::json;

// Priority 1 columns are the ones `kubectl get -o wide` adds.
json Column(const char* name, const char* type, const char* format, const char* description,
            int priority = 0) {
  return {{"name", name},
          {"type", type},
          {"format", format},
          {"description", description},
          {"priority", priority}};
}

std::string OrNone(const std::string& s) { return s.empty() ? "<none>" : s; }

std::string Age(const ObjectMeta& meta, TimePoint now) {
  if (!meta.creation_timestamp) return "<unknown>";
  return HumanAge(now - *meta.creation_timestamp);
}

// Appends a row of `cells` for the object of `meta` to `table`, with the object as ?includeObject asks:
// none, its metadata (PartialObjectMetadata), or the whole object (`to_json` is called only then).
template <typename ToJson>
void AddRow(json* table, json cells, const ObjectMeta& meta, const TableOptions& opts, ToJson to_json) {
  json row = {{"cells", std::move(cells)}};
  switch (opts.include_object) {
    case IncludeObject::kNone: break;
    case IncludeObject::kObject: row["object"] = to_json(); break;
    case IncludeObject::kMetadata:
      row["object"] = {{"kind", "PartialObjectMetadata"},
                       {"apiVersion", "meta.k8s.io/v1"},
                       {"metadata", ObjectMetaToJson(meta)}};
      break;
  }
  (*table)["rows"].push_back(std::move(row));
}

json TableShell(json columns, const TableOptions& opts) {
  json metadata = json::object();
  if (!opts.resource_version.empty()) metadata["resourceVersion"] = opts.resource_version;
  if (!opts.continue_token.empty()) metadata["continue"] = opts.continue_token;
  json t = {{"kind", "Table"}, {"apiVersion", "meta.k8s.io/v1"}, {"metadata", std::move(metadata)}};
  t["columnDefinitions"] = opts.include_columns ? std::move(columns) : json::array();
  t["rows"] = json::array();
  return t;
}

}  // namespace

bool AcceptsTable(std::string_view accept) {
  return accept.find("as=Table") != std::string_view::npos &&
         accept.find("g=meta.k8s.io") != std::string_view::npos;
}

std::string HumanAge(Duration d) {
  using std::chrono::duration_cast;
  const int64_t secs = duration_cast<std::chrono::seconds>(d).count();
  if (secs < -1) return "<invalid>";
  if (secs < 0) return "0s";
  if (secs < int64_t{60} * 2) return std::to_string(secs) + "s";
  const int64_t mins = secs / 60;
  if (mins < 10) {
    const int64_t s = secs % 60;
    return s == 0 ? std::to_string(mins) + "m" : std::to_string(mins) + "m" + std::to_string(s) + "s";
  }
  if (mins < int64_t{60} * 3) return std::to_string(mins) + "m";
  const int64_t hours = mins / 60;
  if (hours < 8) {
    const int64_t m = mins % 60;
    return m == 0 ? std::to_string(hours) + "h" : std::to_string(hours) + "h" + std::to_string(m) + "m";
  }
  if (hours < 48) return std::to_string(hours) + "h";
  if (hours < int64_t{24} * 8) {
    const int64_t h = hours % 24;
    return h == 0 ? std::to_string(hours / 24) + "d"
                  : std::to_string(hours / 24) + "d" + std::to_string(h) + "h";
  }
  if (hours < int64_t{24} * 365 * 2) return std::to_string(hours / 24) + "d";
  if (hours < int64_t{24} * 365 * 8) {
    const int64_t days = hours / 24 - 365 * (hours / 24 / 365);
    return days == 0 ? std::to_string(hours / 24 / 365) + "y"
                     : std::to_string(hours / 24 / 365) + "y" + std::to_string(days) + "d";
  }
  return std::to_string(hours / 24 / 365) + "y";
}

json PodTable(const std::vector<PodPtr>& pods, const TableOptions& opts) {
  json columns = json::array(
      {Column("Name", "string", "name", "Name must be unique within a namespace."),
       Column("Ready", "string", "", "The aggregate readiness state of this pod for accepting traffic."),
       Column("Status", "string", "", "The aggregate status of the containers in this pod."),
       Column("Restarts", "string", "",
              "The number of times the containers in this pod have been restarted."),
       Column("Age", "string", "",
              "CreationTimestamp is a timestamp representing the server time when this object was created."),
       Column("IP", "string", "", "IP address allocated to the pod. Routable at least within the cluster.",
              1),
       Column("Node", "string", "", "NodeName is the node the pod is scheduled onto.", 1),
       Column("Nominated Node", "string", "", "nominatedNodeName is set when this pod preempts other pods.",
              1),
       Column("Readiness Gates", "string", "",
              "If specified, all readiness gates will be evaluated for pod readiness.", 1)});
  json table = TableShell(std::move(columns), opts);
  for (const PodPtr& pod : pods) {
    // As kubectl's printPod: the last container (in status order) with a waiting reason or a
    // termination names the status; "Completed" while another container runs reads Running.
    int ready = 0;
    int64_t restarts = 0;
    std::optional<TimePoint> last_restart;
    std::string status = pod->status.reason.empty() ? pod->status.phase : pod->status.reason;
    bool has_running = false;
    const auto& statuses = pod->status.container_statuses;
    for (auto it = statuses.rbegin(); it != statuses.rend(); ++it) {
      const ContainerStatus& cs = *it;
      restarts += cs.restart_count;
      const auto& prev = cs.last_state.terminated;
      if (prev && prev->finished_at && (!last_restart || *prev->finished_at > *last_restart)) {
        last_restart = prev->finished_at;
      }
      const auto& t = cs.state.terminated;
      if (cs.state.waiting && !cs.state.waiting->reason.empty()) {
        status = cs.state.waiting->reason;
      } else if (t && !t->reason.empty()) {
        status = t->reason;
      } else if (t) {
        status = t->signal != 0 ? "Signal:" + std::to_string(t->signal)
                                : "ExitCode:" + std::to_string(t->exit_code);
      } else if (cs.ready && cs.state.running) {
        has_running = true;
        ++ready;
      }
    }
    if (status == "Completed" && has_running) {
      bool pod_ready = false;
      for (const PodCondition& c : pod->status.conditions)
        pod_ready = pod_ready || (c.type == "Ready" && c.status == "True");
      status = pod_ready ? "Running" : "NotReady";
    }
    if (pod->metadata.deletion_timestamp) {
      status = pod->status.reason == "NodeLost" ? "Unknown" : "Terminating";
    }
    std::string restarts_cell = std::to_string(restarts);
    if (restarts != 0 && last_restart) restarts_cell += " (" + HumanAge(opts.now - *last_restart) + " ago)";
    AddRow(&table,
           {pod->metadata.name, std::to_string(ready) + "/" + std::to_string(pod->spec.containers.size()),
            status, restarts_cell, Age(pod->metadata, opts.now), OrNone(pod->status.pod_ip),
            OrNone(pod->spec.node_name), "<none>", "<none>"},
           pod->metadata, opts, [&] { return PodToJson(*pod); });
  }
  return table;
}

json ControllerTable(const std::vector<ControllerPtr>& rcs, const TableOptions& opts) {
  json columns = json::array(
      {Column("Name", "string", "name", "Name must be unique within a namespace."),
       Column("Desired", "integer", "", "Replicas is the number of desired replicas."),
       Column("Current", "integer", "", "Replicas is the most recently observed number of replicas."),
       Column("Ready", "integer", "", "The number of ready replicas for this replication controller."),
       Column("Age", "string", "",
              "CreationTimestamp is a timestamp representing the server time when this object was created."),
       Column("Containers", "string", "", "Names of each container in the template.", 1),
       Column("Images", "string", "", "Images referenced by each container in the template.", 1),
       Column("Selector", "string", "", "Label selector for pods.", 1)});
  json table = TableShell(std::move(columns), opts);
  for (const ControllerPtr& rc : rcs) {
    std::string names, images, selector;
    if (rc->spec.template_) {
      for (const Container& c : rc->spec.template_->spec.containers) {
        names += (names.empty() ? "" : ",") + c.name;
        images += (images.empty() ? "" : ",") + c.image;
      }
    }
    for (const auto& [k, v] : rc->spec.selector) selector += (selector.empty() ? "" : ",") + k + "=" + v;
    AddRow(&table,
           {rc->metadata.name, rc->spec.replicas, rc->status.replicas, rc->status.ready_replicas,
            Age(rc->metadata, opts.now), OrNone(names), OrNone(images), OrNone(selector)},
           rc->metadata, opts, [&] { return ControllerToJson(*rc); });
  }
  return table;
}

json NodeTable(const std::vector<NodePtr>& nodes, const TableOptions& opts) {
  json columns = json::array(
      {Column("Name", "string", "name", "Name must be unique within a namespace."),
       Column("Status", "string", "", "The status of the node"),
       Column("Roles", "string", "", "The roles of the node"),
       Column("Age", "string", "",
              "CreationTimestamp is a timestamp representing the server time when this object was created."),
       Column("Version", "string", "", "Kubelet Version reported by the node.")});
  json table = TableShell(std::move(columns), opts);
  for (const NodePtr& node : nodes) {
    const NodeCondition* ready = FindNodeCondition(node->status, "Ready");
    std::string status = ready == nullptr ? "Unknown" : (ready->status == "True" ? "Ready" : "NotReady");
    if (node->spec.unschedulable) status += ",SchedulingDisabled";
    AddRow(&table, {node->metadata.name, status, "<none>", Age(node->metadata, opts.now), "rcsim"},
           node->metadata, opts, [&] { return NodeToJson(*node); });
  }
  return table;
}

json LeaseTable(const std::vector<LeasePtr>& leases, const TableOptions& opts) {
  json t = TableShell(json::array({Column("Name", "string", "name", "Name"),
                                   Column("Holder", "string", "", "The holder of the lease"),
                                   Column("Age", "string", "", "CreationTimestamp")}),
                      opts);
  for (const LeasePtr& l : leases) {
    AddRow(&t,
           json::array({l->metadata.name, l->spec.holder_identity.value_or(""), Age(l->metadata, opts.now)}),
           l->metadata, opts, [&] { return LeaseToJson(*l); });
  }
  return t;
}

}  // namespace rcsim
