#include "backends/http/namespaces.h"

#include <algorithm>
#include <map>
#include <utility>

#include "engine/codec.h"
#include "engine/labels.h"
#include "registry/json_watch.h"
#include "registry/validation.h"

namespace rcsim {
namespace {

using json = nlohmann::json;

constexpr const char* kPrefix = "/registry/namespaces/";
constexpr const char* kImplicit[] = {"default", "kube-node-lease", "kube-public", "kube-system"};

Status NotFound(const std::string& name) {
  return Status(Code::kNotFound, "namespaces " + Quote(name) + " not found");
}

Status Conflict(const std::string& name) {
  return Status(Code::kConflict,
                "Operation cannot be fulfilled on namespaces " + Quote(name) +
                    ": the object has been modified; please apply your changes to the latest "
                    "version and try again");
}

// The implicit namespaces are dated from this process's first look at them (the server's start).
std::string ImplicitCreation(TimePoint now) {
  static const std::string created = FormatRfc3339(now);
  return created;
}

json Implicit(const std::string& name, TimePoint now) {
  return {{"kind", "Namespace"},
          {"apiVersion", "v1"},
          {"metadata",
           {{"name", name},
            {"creationTimestamp", ImplicitCreation(now)},
            {"labels", {{"kubernetes.io/metadata.name", name}}}}},
          {"spec", {{"finalizers", json::array({"kubernetes"})}}},
          {"status", {{"phase", "Active"}}}};
}

Labels LabelsOf(const json& ns) {
  Labels out;
  auto m = ns.find("metadata");
  if (m == ns.end() || !m->contains("labels") || !(*m)["labels"].is_object()) return out;
  for (const auto& [k, v] : (*m)["labels"].items()) {
    if (v.is_string()) out[k] = v.get<std::string>();
  }
  return out;
}

}  // namespace

bool IsImplicitNamespace(const std::string& name) {
  return std::find(std::begin(kImplicit), std::end(kImplicit), name) != std::end(kImplicit);
}

Result<json> Namespaces::Get(const std::string& name) {
  auto got = registry_->context().store()->Get(kPrefix + name);
  if (!got.ok()) return got.status();
  if (!got->has_value()) {
    if (IsImplicitNamespace(name)) return Implicit(name, registry_->context().Now());
    return NotFound(name);
  }
  json j = json::parse((*got)->value.bytes(), nullptr, false);
  if (j.is_discarded()) return Status(Code::kInternal, "cannot decode namespace " + Quote(name));
  return WithVersion(std::move(j), (*got)->mod_revision);
}

Result<json> Namespaces::List(const LabelSelector& selector) {
  RangeRequest req;
  req.key = kPrefix;
  req.range_end = PrefixEnd(kPrefix);
  auto r = registry_->context().store()->Range(req);
  if (!r.ok()) return r.status();
  std::map<std::string, json> by_name;
  for (const char* name : kImplicit) by_name[name] = Implicit(name, registry_->context().Now());
  for (const KeyValue& kv : r->kvs) {
    json j = json::parse(kv.value.bytes(), nullptr, false);
    if (j.is_discarded()) continue;
    by_name[kv.key.substr(std::string(kPrefix).size())] = WithVersion(std::move(j), kv.mod_revision);
  }
  json items = json::array();
  for (auto& [name, ns] : by_name) {
    if (selector.Matches(LabelsOf(ns))) items.push_back(std::move(ns));
  }
  return json{{"kind", "NamespaceList"},
              {"apiVersion", "v1"},
              {"metadata", {{"resourceVersion", std::to_string(r->revision)}}},
              {"items", std::move(items)}};
}

Result<json> Namespaces::Create(const json& body, bool dry_run) {
  if (!body.is_object()) return Status(Code::kBadRequest, "the request body must be a JSON object");
  json ns = body;
  if (!ns.contains("metadata") || !ns["metadata"].is_object()) ns["metadata"] = json::object();
  json& meta = ns["metadata"];
  const std::string name =
      meta.contains("name") && meta["name"].is_string() ? meta["name"].get<std::string>() : "";
  FieldErrors errs;
  if (name.empty()) {
    errs.Required("metadata.name");
  } else if (!IsDns1123Label(name)) {
    errs.Invalid("metadata.name", name,
                 "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
                 "must start and end with an alphanumeric character");
  }
  if (Status s = errs.ToStatus("Namespace", name); !s.ok()) return s;
  if (IsImplicitNamespace(name))
    return Status(Code::kAlreadyExists, "namespaces " + Quote(name) + " already exists");
  RegistryContext& ctx = registry_->context();
  meta.erase("resourceVersion");
  meta.erase("namespace");
  meta["uid"] = ctx.NewUid();
  meta["creationTimestamp"] = FormatRfc3339(ctx.Now());
  if (!meta.contains("labels") || !meta["labels"].is_object()) meta["labels"] = json::object();
  meta["labels"]["kubernetes.io/metadata.name"] = name;
  ns["kind"] = "Namespace";
  ns["apiVersion"] = "v1";
  ns["spec"] = {{"finalizers", json::array({"kubernetes"})}};
  ns["status"] = {{"phase", "Active"}};
  const std::string key = kPrefix + name;
  if (dry_run) {
    auto got = ctx.store()->Get(key);
    if (!got.ok()) return got.status();
    if (got->has_value())
      return Status(Code::kAlreadyExists, "namespaces " + Quote(name) + " already exists");
    return ns;
  }
  TxnRequest txn;
  txn.compare.push_back(Compare::CreateRevision(key, Compare::Result::kEqual, 0));
  PutRequest put;
  put.key = key;
  put.value = Value(ns.dump());
  txn.success.push_back(TxnOp::Put(std::move(put)));
  auto r = ctx.store()->Txn(txn);
  if (!r.ok()) return r.status();
  if (!r->succeeded) return Status(Code::kAlreadyExists, "namespaces " + Quote(name) + " already exists");
  return WithVersion(std::move(ns), r->revision);
}

Result<json> Namespaces::Delete(const std::string& name, const DeleteOptions& opts) {
  if (IsImplicitNamespace(name)) {
    return Status(Code::kBadRequest,
                  "namespaces " + Quote(name) + " is forbidden: this namespace may not be deleted");
  }
  Result<json> ns = Get(name);
  if (!ns.ok()) return ns.status();
  const json& meta = (*ns)["metadata"];
  if (!opts.precondition_uid.empty() && opts.precondition_uid != meta.value("uid", "")) {
    return Status(Code::kConflict, "Precondition failed: UID in precondition: " + opts.precondition_uid +
                                       ", UID in object meta: " + meta.value("uid", ""));
  }
  if (!opts.precondition_resource_version.empty() &&
      opts.precondition_resource_version != meta.value("resourceVersion", "")) {
    return Status(
        Code::kConflict,
        "Precondition failed: ResourceVersion in precondition: " + opts.precondition_resource_version +
            ", ResourceVersion in object meta: " + meta.value("resourceVersion", ""));
  }
  if (opts.dry_run) {
    (*ns)["status"]["phase"] = "Terminating";
    return ns;
  }
  Store* store = registry_->context().store();
  // The objects first, so nothing is left behind if the namespace delete then fails.
  for (const std::string& prefix :
       {PodPrefix(name), ControllerPrefix(name), "/registry/events/" + name + "/"}) {
    DeleteRequest del;
    del.key = prefix;
    del.range_end = PrefixEnd(prefix);
    auto r = store->DeleteRange(del);
    if (!r.ok()) return r.status();
  }
  DeleteRequest del;
  del.key = kPrefix + name;
  auto r = store->DeleteRange(del);
  if (!r.ok()) return r.status();
  if (r->deleted == 0) return NotFound(name);
  (*ns)["status"]["phase"] = "Terminating";
  return ns;
}

Result<json> Namespaces::Update(const std::string& name, const json& body, bool dry_run) {
  if (!body.is_object()) return Status(Code::kBadRequest, "the request body must be a JSON object");
  Result<json> current = Get(name);
  if (!current.ok()) return current.status();
  const json& cur_meta = (*current)["metadata"];
  json meta = body.contains("metadata") && body["metadata"].is_object() ? body["metadata"] : json::object();
  FieldErrors errs;
  for (const char* field : {"name", "uid", "creationTimestamp"}) {
    if (meta.contains(field) && cur_meta.contains(field) && meta[field] != cur_meta[field]) {
      errs.Invalid(std::string("metadata.") + field, meta[field].dump(), "field is immutable");
    }
  }
  if (meta.contains("labels") && !meta["labels"].is_object() && !meta["labels"].is_null()) {
    errs.Invalid("metadata.labels", meta["labels"].dump(), "must be a map of strings");
  }
  if (Status s = errs.ToStatus("Namespace", name); !s.ok()) return s;
  const std::string stored_rv = cur_meta.value("resourceVersion", "");
  const std::string want_rv = meta.value("resourceVersion", "");
  if (!want_rv.empty() && want_rv != stored_rv) {
    return Conflict(name);
  }
  json next = *current;
  for (const char* field : {"name", "uid", "creationTimestamp", "resourceVersion"}) {
    if (cur_meta.contains(field)) {
      meta[field] = cur_meta[field];
    } else {
      meta.erase(field);
    }
  }
  meta.erase("namespace");
  if (!meta.contains("labels") || !meta["labels"].is_object()) meta["labels"] = json::object();
  meta["labels"]["kubernetes.io/metadata.name"] = name;
  next["metadata"] = std::move(meta);
  if (next == *current || dry_run) return next;
  next["metadata"].erase("resourceVersion");
  const std::string key = kPrefix + name;
  TxnRequest txn;
  if (stored_rv.empty()) {  // an implicit namespace, not stored yet
    txn.compare.push_back(Compare::CreateRevision(key, Compare::Result::kEqual, 0));
  } else {
    txn.compare.push_back(Compare::ModRevision(key, Compare::Result::kEqual, std::stoll(stored_rv)));
  }
  PutRequest put;
  put.key = key;
  put.value = Value(next.dump());
  txn.success.push_back(TxnOp::Put(std::move(put)));
  auto r = registry_->context().store()->Txn(txn);
  if (!r.ok()) return r.status();
  if (!r->succeeded) {
    return Conflict(name);
  }
  return WithVersion(std::move(next), r->revision);
}

Result<std::unique_ptr<RegistryWatch>> Namespaces::Watch(const std::string& resource_version,
                                                         const LabelSelector& selector,
                                                         const std::string& name,
                                                         std::function<void(const json& event)> on_event,
                                                         std::function<void()> on_end) {
  int64_t from = 0;
  const bool initial = resource_version.empty() || resource_version == "0";
  if (!initial) {
    Result<int64_t> rv = ParseResourceVersion(resource_version);
    if (!rv.ok()) return rv.status();
    from = *rv;
  }
  auto wanted = [selector, name](const json& ns) {
    return (name.empty() || ns["metadata"].value("name", "") == name) && selector.Matches(LabelsOf(ns));
  };
  if (initial) {
    Result<json> list = List(selector);
    if (!list.ok()) return list.status();
    for (const json& ns : (*list)["items"]) {
      if (wanted(ns)) on_event({{"type", "ADDED"}, {"object", ns}});
    }
    from = std::stoll((*list)["metadata"]["resourceVersion"].get<std::string>());
  }
  auto filter = [wanted](const std::string& key, std::string* type, json* ns) {
    if (!wanted(*ns)) return false;
    if (*type == "DELETED") (*ns)["status"]["phase"] = "Terminating";  // as Delete answers: its last state
    // An implicit namespace was listed before its first update stored it.
    if (*type == "ADDED" && IsImplicitNamespace(key.substr(std::string(kPrefix).size()))) *type = "MODIFIED";
    return true;
  };
  return StartJsonWatch(registry_->context().store(), kPrefix, from, std::move(filter), std::move(on_event),
                        std::move(on_end));
}

Status Namespaces::CheckExists(const std::string& name) {
  if (IsImplicitNamespace(name)) return Status::Ok();
  auto got = registry_->context().store()->Get(kPrefix + name);
  if (!got.ok()) return got.status();
  if (!got->has_value()) return NotFound(name);
  return Status::Ok();
}

}  // namespace rcsim
