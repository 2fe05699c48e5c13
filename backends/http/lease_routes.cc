#include "backends/http/lease_routes.h"

#include "backends/http/patch.h"
#include "engine/codec.h"

namespace rcsim {
namespace {

using json = nlohmann::json;

// How often a patch is re-applied to a lease that changed meanwhile (unless it named a resourceVersion).
constexpr int kPatchConflictRetries = 5;

HttpResponse Json(int code, const json& body) {
  HttpResponse r;
  r.status = code;
  r.body = DumpJson(body);
  return r;
}

HttpResponse Error(const Status& s) { return Json(HttpCodeOf(s.code()), StatusToJson(s)); }

HttpResponse MethodNotAllowed(const std::string& method) {
  return Error(Status(Code::kMethodNotAllowed,
                      "the server does not allow this method on the requested "
                      "resource: " +
                          method));
}

bool IsJson(const std::string& content_type) {
  std::string t = content_type.substr(0, content_type.find(';'));
  while (!t.empty() && t.back() == ' ') t.pop_back();
  return t.empty() || t == "application/json" || t == "*/*";
}

// The body as a Lease whose namespace and name agree with the URL (filled in when absent).
Result<Lease> LeaseOfBody(const HttpRequest& req, const std::string& ns, const std::string* name) {
  if (req.body.empty()) return Status(Code::kBadRequest, "the request body is empty");
  // Parsed by the SAX-based (non-recursive) parser, depth-bounded before the object is built.
  int depth = 0, max_depth = 0;
  json j = json::parse(
      req.body,
      [&](int d, json::parse_event_t, json&) {
        depth = d;
        max_depth = std::max(max_depth, depth);
        return max_depth <= 64;
      },
      /*allow_exceptions=*/false);
  if (max_depth > 64) return Status(Code::kBadRequest, "the request body nests deeper than 64 levels");
  if (j.is_discarded()) return Status(Code::kBadRequest, "the request body is not valid JSON");
  if (auto v = j.find("apiVersion");
      j.is_object() && v != j.end() && !(v->is_string() && *v == kLeaseApiVersion)) {
    return Status(Code::kInvalid, "the API version in the data (" + v->dump() +
                                      ") does not match the expected API version (coordination.k8s.io/v1)");
  }
  Result<Lease> lease = LeaseFromJson(j);
  if (!lease.ok()) return lease.status();
  ObjectMeta& m = lease->metadata;
  if (m.namespace_.empty()) m.namespace_ = ns;
  if (m.namespace_ != ns) {
    return Status(Code::kBadRequest,
                  "the namespace of the provided object does not match the namespace sent on the request");
  }
  if (name != nullptr) {
    if (m.name.empty()) m.name = *name;
    if (m.name != *name) {
      return Status(Code::kBadRequest, "the name of the object (" + m.name +
                                           ") does not match the name on the URL (" + *name + ")");
    }
  }
  return lease;
}

json ListJson(const ObjectList<Lease>& list) {
  json items = json::array();
  for (const LeasePtr& l : list.items) items.push_back(LeaseToJson(*l));
  return {{"kind", "LeaseList"},
          {"apiVersion", kLeaseApiVersion},
          {"metadata", {{"resourceVersion", list.resource_version}}},
          {"items", std::move(items)}};
}

json ResourceListJson() {
  return {{"kind", "APIResourceList"},
          {"apiVersion", "v1"},
          {"groupVersion", kLeaseApiVersion},
          {"resources",
           json::array(
               {{{"name", "leases"},
                 {"singularName", "lease"},
                 {"namespaced", true},
                 {"kind", "Lease"},
                 {"verbs", json::array({"create", "delete", "get", "list", "patch", "update", "watch"})}}})}};
}

}  // namespace

bool IsLeasePath(const std::vector<std::string>& seg) {
  return seg.size() >= 2 && seg[0] == "apis" && seg[1] == "coordination.k8s.io";
}

json CoordinationGroupJson() {
  const json version = {{"groupVersion", kLeaseApiVersion}, {"version", "v1"}};
  return {
      {"name", "coordination.k8s.io"}, {"versions", json::array({version})}, {"preferredVersion", version}};
}

HttpResponse ServeLeases(LeaseRegistry* leases, const HttpRequest& req, const std::vector<std::string>& seg,
                         bool dry_run, const ListOptions& list_options, const TableOptions* table) {
  auto listed = [&](const std::string& ns) {
    auto list = leases->List(ns, list_options);
    if (!list.ok()) return Error(list.status());
    if (table == nullptr) return Json(200, ListJson(*list));
    TableOptions o = *table;
    o.resource_version = list->resource_version;
    HttpResponse r = Json(200, LeaseTable(list->items, o));
    r.content_type = kTableContentType;
    return r;
  };
  auto not_found = [&] {
    return Error(Status(Code::kNotFound, "the server could not find the requested resource"));
  };
  const bool get = req.method == "GET" || req.method == "HEAD";
  if (seg.size() == 2) {
    if (!get) return MethodNotAllowed(req.method);
    return Json(200, {{"kind", "APIGroup"},
                      {"apiVersion", "v1"},
                      {"name", "coordination.k8s.io"},
                      {"versions", CoordinationGroupJson()["versions"]},
                      {"preferredVersion", CoordinationGroupJson()["preferredVersion"]}});
  }
  if (seg[2] != "v1") return not_found();
  if (seg.size() == 3) return get ? Json(200, ResourceListJson()) : MethodNotAllowed(req.method);
  if (seg.size() == 4 && seg[3] == "leases") {
    if (!get) return MethodNotAllowed(req.method);
    return listed("");
  }
  if (seg.size() < 6 || seg.size() > 7 || seg[3] != "namespaces" || seg[5] != "leases") return not_found();
  const std::string& ns = seg[4];
  const bool writes = req.method == "POST" || req.method == "PUT";
  if (writes && !IsJson(req.content_type)) {
    return Error(Status(Code::kBadRequest, "unsupported Content-Type \"" + req.content_type +
                                               "\" for leases: send application/json"));
  }
  if (seg.size() == 6) {
    if (get) return listed(ns);
    if (req.method != "POST") return MethodNotAllowed(req.method);
    auto lease = LeaseOfBody(req, ns, nullptr);
    if (!lease.ok()) return Error(lease.status());
    auto created = leases->Create(ns, std::move(lease).value());
    return created.ok() ? Json(201, LeaseToJson(**created)) : Error(created.status());
  }
  const std::string& name = seg[6];
  if (get) {
    auto lease = leases->Get(ns, name);
    return lease.ok() ? Json(200, LeaseToJson(**lease)) : Error(lease.status());
  }
  if (req.method == "PUT") {
    auto lease = LeaseOfBody(req, ns, &name);
    if (!lease.ok()) return Error(lease.status());
    auto updated = leases->Update(std::move(lease).value());
    return updated.ok() ? Json(200, LeaseToJson(**updated)) : Error(updated.status());
  }
  if (req.method == "PATCH") {
    // Merge, strategic merge (a Lease has no merge lists of its own) and JSON patches, as updates of
    // the current lease; a concurrent change is retried unless the patch named a resourceVersion.
    PatchType type;
    if (!PatchTypeOf(req.content_type, &type) || type == PatchType::kApply) {
      return UnsupportedMediaTypeResponse(req.content_type);
    }
    for (int attempt = 0;; ++attempt) {
      auto current = leases->Get(ns, name);
      if (!current.ok()) return Error(current.status());
      const json current_json = LeaseToJson(**current);
      Result<json> patched = ApplyPatch(current_json, type, req.body);
      if (!patched.ok()) return Error(patched.status());
      HttpRequest as_put = req;
      as_put.body = patched->dump();
      auto lease = LeaseOfBody(as_put, ns, &name);
      if (!lease.ok()) return Error(lease.status());
      const bool pinned = lease->metadata.resource_version != (*current)->metadata.resource_version;
      auto updated = leases->Update(std::move(lease).value());
      if (updated.ok()) return Json(200, LeaseToJson(**updated));
      if (updated.status().code() != Code::kConflict || pinned || attempt + 1 >= kPatchConflictRetries) {
        return Error(updated.status());
      }
    }
  }
  if (req.method == "DELETE") {
    DeleteOptions opts;
    opts.dry_run = dry_run;
    if (!req.body.empty()) {
      if (!IsJson(req.content_type)) {
        return Error(Status(Code::kBadRequest, "unsupported Content-Type \"" + req.content_type +
                                                   "\" for DeleteOptions: send application/json"));
      }
      Result<DeleteOptions> parsed = DeleteOptionsFromBody(req.body, opts);
      if (!parsed.ok()) return Error(parsed.status());
      opts = std::move(parsed).value();
    }
    auto deleted = leases->Delete(ns, name, opts);
    if (!deleted.ok()) return Error(deleted.status());
    return Json(200, {{"kind", "Status"},
                      {"apiVersion", "v1"},
                      {"metadata", json::object()},
                      {"status", "Success"},
                      {"details",
                       {{"name", name},
                        {"group", "coordination.k8s.io"},
                        {"kind", "leases"},
                        {"uid", (*deleted)->metadata.uid}}}});
  }
  return MethodNotAllowed(req.method);
}

}  // namespace rcsim
