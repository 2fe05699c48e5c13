#include "registry/event_registry.h"

#include <utility>

#include "engine/time.h"
#include "registry/json_watch.h"
#include "registry/validation.h"

namespace rcsim {
namespace {

using json = nlohmann::json;

constexpr const char* kPrefix = "/registry/events/";

std::string StringAt(const json& j, const char* a, const char* b = nullptr) {
  auto x = j.find(a);
  if (x == j.end()) return "";
  if (b != nullptr) {
    if (!x->is_object()) return "";
    auto y = x->find(b);
    return (y != x->end() && y->is_string()) ? y->get<std::string>() : "";
  }
  return x->is_string() ? x->get<std::string>() : "";
}

std::string FieldOf(const json& ev, const std::string& field) {
  static constexpr std::string_view kInvolved = "involvedObject.";
  if (field.starts_with(kInvolved)) {
    return StringAt(ev, "involvedObject", field.substr(kInvolved.size()).c_str());
  }
  if (field == "metadata.name") return StringAt(ev, "metadata", "name");
  if (field == "metadata.namespace") return StringAt(ev, "metadata", "namespace");
  if (field == "source") return StringAt(ev, "source", "component");
  return StringAt(ev, field.c_str());
}

Labels LabelsOf(const json& ev) {
  Labels out;
  auto m = ev.find("metadata");
  if (m == ev.end() || !m->is_object()) return out;
  auto l = m->find("labels");
  if (l == m->end() || !l->is_object()) return out;
  for (const auto& [k, v] : l->items()) {
    if (v.is_string()) out[k] = v.get<std::string>();
  }
  return out;
}

Status Conflict(const std::string& name) {
  return Status(Code::kConflict, "Operation cannot be fulfilled on events " + Quote(name) +
                                     ": the object has been modified; please apply your changes to the "
                                     "latest version and try again");
}

// What Create (creating: a name that is a DNS-1123 subdomain) and Update ask of an event's fields.
Status ValidateEvent(const std::string& name, std::string_view involved_name, bool creating) {
  FieldErrors errs;
  if (creating && name.empty()) {
    errs.Required("metadata.name");
  } else if (creating && !IsDns1123Subdomain(name)) {
    errs.Invalid("metadata.name", name, "must be a DNS-1123 subdomain");
  }
  if (involved_name.empty()) errs.Required("involvedObject.name");
  return errs.ToStatus("Event", name);
}

Status NotFound(const std::string& name) {
  return Status(Code::kNotFound, "events " + Quote(name) + " not found");
}

// The checks every written event passes: an object body whose namespace, if given, is the URL's.
Status CheckBody(const std::string& ns, json& ev) {
  if (!ev.is_object()) return Status(Code::kBadRequest, "the request body must be a JSON object");
  if (!ev.contains("metadata") || !ev["metadata"].is_object()) ev["metadata"] = json::object();
  const std::string given_ns = StringAt(ev, "metadata", "namespace");
  if (!given_ns.empty() && given_ns != ns) {
    return Status(Code::kBadRequest,
                  "the namespace of the provided object does not match the namespace sent on the request");
  }
  return Status::Ok();
}

}  // namespace

std::string EventPrefix(std::string_view ns) {
  return ns.empty() ? std::string(kPrefix) : std::string(kPrefix) + std::string(ns) + "/";
}

Result<std::map<std::string, std::string>> ParseEventFieldSelector(std::string_view selector) {
  static const char* const kFields[] = {"involvedObject.kind",
                                        "involvedObject.namespace",
                                        "involvedObject.name",
                                        "involvedObject.uid",
                                        "involvedObject.apiVersion",
                                        "involvedObject.resourceVersion",
                                        "involvedObject.fieldPath",
                                        "reason",
                                        "reportingComponent",
                                        "type",
                                        "source",
                                        "metadata.name",
                                        "metadata.namespace"};
  std::map<std::string, std::string> out;
  std::string_view rest = selector;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    std::string_view term = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    if (term.empty()) continue;
    const size_t eq = term.find('=');
    if (eq == std::string_view::npos || eq == 0 || term[eq - 1] == '!') {
      return Status(Code::kBadRequest, "invalid field selector: " + std::string(term) +
                                           " (events support only = and == on their fields)");
    }
    std::string key(term.substr(0, eq));
    std::string_view value = term.substr(eq + 1);
    if (!value.empty() && value.front() == '=') value.remove_prefix(1);
    bool known = false;
    for (const char* f : kFields) known = known || key == f;
    if (!known) return Status(Code::kBadRequest, "field label not supported: " + key);
    auto [it, inserted] = out.emplace(key, std::string(value));
    if (!inserted && it->second != value) {
      return Status(Code::kBadRequest, "field selector names " + key + " twice with different values");
    }
  }
  return out;
}

Result<json> EventRegistry::Create(const std::string& ns, json ev) {
  if (Status s = CheckBody(ns, ev); !s.ok()) return s;
  json& meta = ev["metadata"];
  std::string name = StringAt(ev, "metadata", "name");
  if (name.empty() && !StringAt(ev, "metadata", "generateName").empty()) {
    name = StringAt(ev, "metadata", "generateName") + ctx_->RandomSuffix(5);
  }
  if (Status s = ValidateEvent(name, StringAt(ev, "involvedObject", "name"), /*creating=*/true); !s.ok()) {
    return s;
  }
  meta["name"] = name;
  meta["namespace"] = ns;
  meta.erase("resourceVersion");
  meta["uid"] = ctx_->NewUid();
  meta["creationTimestamp"] = FormatRfc3339(ctx_->Now());
  ev["kind"] = "Event";
  ev["apiVersion"] = "v1";
  const std::string key = EventPrefix(ns) + name;
  TxnRequest txn;
  txn.compare.push_back(Compare::CreateRevision(key, Compare::Result::kEqual, 0));
  PutRequest put;
  put.key = key;
  put.value = Value(ev.dump());
  txn.success.push_back(TxnOp::Put(std::move(put)));
  auto r = ctx_->store()->Txn(txn);
  if (!r.ok()) return r.status();
  if (!r->succeeded) return Status(Code::kAlreadyExists, "events " + Quote(name) + " already exists");
  return WithVersion(std::move(ev), r->revision);
}

Result<json> EventRegistry::Get(const std::string& ns, const std::string& name) {
  const std::string key = EventPrefix(ns) + name;
  auto got = ctx_->store()->Get(key);
  if (!got.ok()) return got.status();
  if (!got->has_value()) return NotFound(name);
  json j = json::parse((*got)->value.bytes(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return Status(Code::kInternal, "the stored value of event " + Quote(name) + " does not decode");
  }
  return WithVersion(std::move(j), (*got)->mod_revision);
}

Result<json> EventRegistry::Update(const std::string& ns, const std::string& name, json ev) {
  if (Status s = CheckBody(ns, ev); !s.ok()) return s;
  const std::string given = StringAt(ev, "metadata", "name");
  if (!given.empty() && given != name) {
    return Status(Code::kBadRequest,
                  "the name of the object (" + given + ") does not match the name on the URL (" + name + ")");
  }
  const std::string expected_rv = StringAt(ev, "metadata", "resourceVersion");
  const std::string key = EventPrefix(ns) + name;
  auto got = ctx_->store()->Get(key);
  if (!got.ok()) return got.status();
  if (!got->has_value()) return NotFound(name);
  const int64_t revision = (*got)->mod_revision;
  if (!expected_rv.empty() && expected_rv != std::to_string(revision)) return Conflict(name);
  json stored = json::parse((*got)->value.bytes(), nullptr, false);
  json& meta = ev["metadata"];
  meta["name"] = name;
  meta["namespace"] = ns;
  meta.erase("resourceVersion");
  if (stored.is_object() && stored.contains("metadata") && stored["metadata"].is_object()) {
    for (const char* f : {"uid", "creationTimestamp"}) {
      if (stored["metadata"].contains(f)) meta[f] = stored["metadata"][f];
    }
  }
  if (Status s = ValidateEvent(name, StringAt(ev, "involvedObject", "name"), /*creating=*/false); !s.ok()) {
    return s;
  }
  ev["kind"] = "Event";
  ev["apiVersion"] = "v1";
  TxnRequest txn;
  txn.compare.push_back(Compare::ModRevision(key, Compare::Result::kEqual, revision));
  PutRequest put;
  put.key = key;
  put.value = Value(ev.dump());
  txn.success.push_back(TxnOp::Put(std::move(put)));
  auto r = ctx_->store()->Txn(txn);
  if (!r.ok()) return r.status();
  if (!r->succeeded) return Conflict(name);
  return WithVersion(std::move(ev), r->revision);
}

Status EventRegistry::Write(Event ev, bool update) {
  const std::string ns = ev.metadata.namespace_;
  const std::string name = ev.metadata.name;
  // EventToJson leaves an empty namespace out, where Create and Update write it: those go as JSON.
  if (ns.empty()) {
    return update ? Update(ns, name, EventToJson(ev)).status() : Create(ns, EventToJson(ev)).status();
  }
  ev.metadata.resource_version.clear();
  const std::string key = EventPrefix(ns) + name;
  TxnRequest txn;
  if (update) {
    auto got = ctx_->store()->Get(key);
    if (!got.ok()) return got.status();
    if (!got->has_value()) return NotFound(name);
    const std::shared_ptr<const Event>& stored = (*got)->value.event();
    // An event stored from JSON (an API client's) is updated as JSON, keeping what it carries.
    if (stored == nullptr) return Update(ns, name, EventToJson(ev)).status();
    if (Status s = ValidateEvent(name, ev.involved_object.name, /*creating=*/false); !s.ok()) return s;
    ev.metadata.uid = stored->metadata.uid;
    ev.metadata.creation_timestamp = stored->metadata.creation_timestamp;
    txn.compare.push_back(Compare::ModRevision(key, Compare::Result::kEqual, (*got)->mod_revision));
  } else {
    if (Status s = ValidateEvent(name, ev.involved_object.name, /*creating=*/true); !s.ok()) return s;
    ev.metadata.uid = ctx_->NewUid();
    ev.metadata.creation_timestamp = ctx_->Now();
    txn.compare.push_back(Compare::CreateRevision(key, Compare::Result::kEqual, 0));
  }
  PutRequest put;
  put.key = key;
  put.value = Value(std::make_shared<const Event>(std::move(ev)));
  txn.success.push_back(TxnOp::Put(std::move(put)));
  auto r = ctx_->store()->Txn(txn);
  if (!r.ok()) return r.status();
  if (!r->succeeded) {
    return update ? Conflict(name)
                  : Status(Code::kAlreadyExists, "events " + Quote(name) + " already exists");
  }
  return Status::Ok();
}

Result<json> EventRegistry::List(const std::string& ns, const std::map<std::string, std::string>& fields,
                                 const LabelSelector& labels) {
  RangeRequest req;
  req.key = EventPrefix(ns);
  req.range_end = PrefixEnd(req.key);
  auto r = ctx_->store()->Range(req);
  if (!r.ok()) return r.status();
  json items = json::array();
  for (const KeyValue& kv : r->kvs) {
    json ev = json::parse(kv.value.bytes(), nullptr, false);
    if (ev.is_discarded() || !ev.is_object()) {
      ctx_->ReportMalformed(kv.key, Status(Code::kInternal, "not a JSON object"));
      continue;
    }
    bool match = labels.Matches(LabelsOf(ev));
    for (const auto& [f, v] : fields) match = match && FieldOf(ev, f) == v;
    if (match) items.push_back(WithVersion(std::move(ev), kv.mod_revision));
  }
  return json{{"kind", "EventList"},
              {"apiVersion", "v1"},
              {"metadata", {{"resourceVersion", std::to_string(r->revision)}}},
              {"items", std::move(items)}};
}

Result<std::unique_ptr<RegistryWatch>> EventRegistry::Watch(const std::string& ns,
                                                            const std::string& resource_version,
                                                            const std::map<std::string, std::string>& fields,
                                                            const LabelSelector& labels,
                                                            std::function<void(const json& event)> on_event,
                                                            std::function<void()> on_end) {
  int64_t from = 0;
  if (resource_version.empty() || resource_version == "0") {
    Result<json> list = List(ns, fields, labels);
    if (!list.ok()) return list.status();
    for (json& ev : (*list)["items"]) on_event({{"type", "ADDED"}, {"object", std::move(ev)}});
    from = std::stoll((*list)["metadata"]["resourceVersion"].get<std::string>());
  } else {
    Result<int64_t> rv = ParseResourceVersion(resource_version);
    if (!rv.ok()) return rv.status();
    from = *rv;
  }
  auto filter = [fields, labels](const std::string&, std::string*, json* ev) {
    if (!labels.Matches(LabelsOf(*ev))) return false;
    for (const auto& [f, v] : fields) {
      if (FieldOf(*ev, f) != v) return false;
    }
    return true;
  };
  return StartJsonWatch(ctx_->store(), EventPrefix(ns), from, std::move(filter), std::move(on_event),
                        std::move(on_end));
}

Result<json> EventRegistry::Delete(const std::string& ns, const std::string& name) {
  DeleteRequest del;
  del.key = EventPrefix(ns) + name;
  del.prev_kv = true;
  auto r = ctx_->store()->DeleteRange(del);
  if (!r.ok()) return r.status();
  if (r->prev_kvs.empty()) return NotFound(name);
  json ev = json::parse(r->prev_kvs.front().value.bytes(), nullptr, false);
  if (ev.is_discarded() || !ev.is_object()) {
    return json{{"kind", "Status"},
                {"apiVersion", "v1"},
                {"metadata", json::object()},
                {"status", "Success"},
                {"details", {{"name", name}, {"kind", "events"}}}};
  }
  return WithVersion(std::move(ev), r->prev_kvs.front().mod_revision);
}

void RegistryEventSink::Write(const Event& ev, bool update) {
  Status s = events_->Write(ev, update);
  if (update && s.code() == Code::kNotFound) s = events_->Write(ev, /*update=*/false);
  if (!s.ok()) ++failed_;
}

}  // namespace rcsim
