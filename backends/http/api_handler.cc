#include "backends/http/api_handler.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <nlohmann/json.hpp>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "backends/http/access_review.h"
#include "backends/http/discovery.h"
#include "backends/http/field_validation.h"
#include "backends/http/k8s_protobuf.h"
#include "backends/http/lease_routes.h"
#include "backends/http/namespaces.h"
#include "backends/http/patch.h"
#include "backends/http/pod_log.h"
#include "backends/http/server_side_apply.h"
#include "backends/http/table.h"
#include "engine/codec.h"
#include "engine/field_selector.h"
#include "engine/json_depth.h"
#include "engine/labels.h"
#include "engine/node_codec.h"
#include "registry/event_registry.h"
#include "registry/validation.h"

namespace rcsim {
namespace {

using json = nlohmann::json;

constexpr int kPatchConflictRetries = 5;

// --- Responses. ---

HttpResponse JsonResponse(int code, const json& body) {
  HttpResponse r;
  r.status = code;
  r.body = DumpJson(body);
  return r;
}

HttpResponse ErrorResponse(const Status& status) {
  return JsonResponse(HttpCodeOf(status.code()), StatusToJson(status));
}

HttpResponse ErrorResponse(Code code, std::string message) {
  return ErrorResponse(Status(code, std::move(message)));
}

ApiOutcome Respond(HttpResponse r) {
  ApiOutcome o;
  o.response = std::move(r);
  return o;
}

// --- Request parsing. ---

struct Query {
  std::map<std::string, std::string> params;
  bool Has(const std::string& k) const { return params.count(k) != 0; }
  std::string Get(const std::string& k) const {
    auto it = params.find(k);
    return it == params.end() ? std::string() : it->second;
  }
};

Result<Query> ParseQuery(std::string_view q) {
  Query out;
  while (!q.empty()) {
    const size_t amp = q.find('&');
    std::string_view part = q.substr(0, amp);
    q = amp == std::string_view::npos ? std::string_view() : q.substr(amp + 1);
    if (part.empty()) continue;
    const size_t eq = part.find('=');
    std::string key, value;
    if (!PercentDecode(part.substr(0, eq), &key) ||
        (eq != std::string_view::npos && !PercentDecode(part.substr(eq + 1), &value))) {
      return Status(Code::kBadRequest, "malformed query string");
    }
    out.params[key] = value;  // the last of repeated parameters wins
  }
  return out;
}

// Go's strconv.ParseBool, as Kubernetes parses ?watch=.
bool ParseBool(std::string_view s, bool* out) {
  if (s == "1" || s == "t" || s == "T" || s == "true" || s == "True" || s == "TRUE") {
    *out = true;
  } else if (s == "0" || s == "f" || s == "F" || s == "false" || s == "False" || s == "FALSE") {
    *out = false;
  } else {
    return false;
  }
  return true;
}

bool ParseInt(std::string_view s, int64_t* out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

std::string_view MediaType(std::string_view content_type) {
  std::string_view t = content_type.substr(0, content_type.find(';'));
  while (!t.empty() && t.back() == ' ') t.remove_suffix(1);
  while (!t.empty() && t.front() == ' ') t.remove_prefix(1);
  return t;
}

// An empty Content-Type is taken as JSON (as clients that send a bare body expect).
bool IsJsonContentType(std::string_view content_type) {
  const std::string_view t = MediaType(content_type);
  return t.empty() || t == "application/json" || t == "*/*";
}

// The path as segments: "/api/v1/pods" -> {"api","v1","pods"}.
std::vector<std::string> Segments(std::string_view path) {
  std::vector<std::string> out;
  while (!path.empty()) {
    if (path.front() == '/') {
      path.remove_prefix(1);
      continue;
    }
    const size_t slash = path.find('/');
    out.emplace_back(path.substr(0, slash));
    path = slash == std::string_view::npos ? std::string_view() : path.substr(slash);
  }
  return out;
}

Result<ListOptions> ListOptionsOf(const Query& q) {
  ListOptions opts;
  if (q.Has("labelSelector")) {
    Result<LabelSelector> sel = LabelSelector::Parse(q.Get("labelSelector"));
    if (!sel.ok()) return sel.status();
    opts.label_selector = std::move(sel).value();
  }
  if (Status st = ParseFieldSelector(q.Get("fieldSelector"), &opts); !st.ok()) return st;
  if (q.Has("limit")) {
    int64_t limit = 0;
    if (!ParseInt(q.Get("limit"), &limit) || limit < 0) {
      return Status(Code::kBadRequest, "invalid limit: " + q.Get("limit"));
    }
    opts.limit = limit;
  }
  opts.continue_token = q.Get("continue");
  // resourceVersion itself is checked by CheckListResourceVersion (lists) or the watch.
  opts.resource_version = q.Get("resourceVersion");
  const std::string match = q.Get("resourceVersionMatch");
  if (match == "Exact") {
    opts.resource_version_match = ResourceVersionMatch::kExact;
  } else if (!match.empty() && match != "NotOlderThan") {
    return Status(Code::kBadRequest, "unsupported resourceVersionMatch: " + Quote(match) +
                                         " (supported: \"Exact\", \"NotOlderThan\")");
  }
  if (!match.empty() && opts.resource_version.empty()) {
    return Status(Code::kBadRequest, "resourceVersionMatch is forbidden unless resourceVersion is provided");
  }
  return opts;
}

// Checks the kind and apiVersion of a request body before decoding it.
Status CheckKind(const json& j, const char* kind, const char* api_version) {
  if (!j.is_object()) return Status(Code::kBadRequest, "the request body must be a JSON object");
  auto k = j.find("kind");
  if (k != j.end() && !(k->is_string() && k->get_ref<const std::string&>() == kind)) {
    return Status(
        Code::kInvalid, std::string("the object provided is not a ") + kind + ": kind " + k->dump(),
        {{"kind", "FieldValueInvalid", std::string("Invalid value: ") + k->dump() + ": must be " + kind}});
  }
  auto v = j.find("apiVersion");
  if (v != j.end() && !(v->is_string() && v->get_ref<const std::string&>() == api_version)) {
    return Status(Code::kInvalid,
                  std::string("the API version in the data (") + v->dump() +
                      ") does not match the expected API version (" + api_version + ")",
                  {{"apiVersion", "FieldValueInvalid",
                    std::string("Invalid value: ") + v->dump() + ": must be " + api_version}});
  }
  return Status::Ok();
}

Result<json> ParseBody(std::string_view body) {
  if (body.empty()) return Status(Code::kBadRequest, "the request body is empty");
  // The depth bound comes before parsing: CheckKind's dump() and the decoders recurse per level.
  return ParseBoundedJson(body, "the request body");
}

// Object name and namespace from the body must agree with the URL; empty ones are filled in.
Status ReconcileMeta(ObjectMeta* meta, const std::string& ns, const std::string* name) {
  if (meta->namespace_.empty()) {
    meta->namespace_ = ns;
  } else if (meta->namespace_ != ns) {
    return Status(Code::kBadRequest,
                  "the namespace of the provided object does not match the namespace sent on the "
                  "request");
  }
  if (name != nullptr) {
    if (meta->name.empty()) {
      meta->name = *name;
    } else if (meta->name != *name) {
      return Status(Code::kBadRequest, "the name of the object (" + meta->name +
                                           ") does not match the name on the URL (" + *name + ")");
    }
  }
  return Status::Ok();
}

// A patch may not change metadata.name, namespace, uid or creationTimestamp: 422 naming the field.
Status CheckImmutableMeta(const json& patched, const json& current) {
  static const char* const kImmutable[] = {"name", "namespace", "uid", "creationTimestamp"};
  const json empty = json::object();
  auto meta_of = [&](const json& j) -> const json& {
    auto m = j.find("metadata");
    return (m != j.end() && m->is_object()) ? *m : empty;
  };
  const json& a = meta_of(patched);
  const json& b = meta_of(current);
  std::vector<StatusCause> causes;
  for (const char* f : kImmutable) {
    const json va = a.contains(f) ? a[f] : json();
    const json vb = b.contains(f) ? b[f] : json();
    if (va != vb) {
      causes.push_back({std::string("metadata.") + f, "FieldValueInvalid",
                        "Invalid value: " + DumpJson(va) + ": field is immutable"});
    }
  }
  if (causes.empty()) return Status::Ok();
  const std::string name = b.contains("name") && b["name"].is_string() ? b["name"].get<std::string>() : "";
  std::string msg = "\"" + name + "\" is invalid: ";
  for (std::size_t i = 0; i < causes.size(); ++i)
    msg += (i ? ", " : "") + causes[i].field + ": " + causes[i].message;
  return Status(Code::kInvalid, msg, std::move(causes));
}

// A list's resourceVersion must be a revision ("" and "0" included); "abc" is a 400.
Status CheckListResourceVersion(const Query& q) {
  const std::string rv = q.Get("resourceVersion");
  if (rv.empty()) return Status::Ok();
  Result<int64_t> parsed = ParseResourceVersion(rv);
  return parsed.ok() ? Status::Ok() : parsed.status();
}

// --- Per-kind traits. ---

template <typename T>
struct Kind;

template <>
struct Kind<Pod> {
  static constexpr const char* kKind = "Pod";
  static constexpr const char* kSchemaType = "V1Pod";
  static void DefaultForCreate(Pod* pod) { pod->status = PodStatus(); }
  static Status Validate(const Pod& pod) { return ValidatePod(pod); }
  static constexpr const char* kList = "PodList";
  static constexpr const char* kResource = "pods";
  static json ToJson(const Pod& p) { return PodToJson(p); }
  static Result<Pod> FromJson(const json& j) { return PodFromJson(j); }
  static json Table(const std::vector<PodPtr>& items, const TableOptions& o) { return PodTable(items, o); }
};

template <>
struct Kind<ReplicationController> {
  static constexpr const char* kKind = "ReplicationController";
  static constexpr const char* kSchemaType = "V1ReplicationController";
  // As the registry does on create: an empty selector defaults to the template's labels.
  static void DefaultForCreate(ReplicationController* rc) {
    rc->status = ReplicationControllerStatus();
    rc->metadata.generation = 1;
    if (rc->spec.selector.empty() && rc->spec.template_) {
      rc->spec.selector = rc->spec.template_->metadata.labels;
    }
    if (rc->metadata.labels.empty() && rc->spec.template_) {
      rc->metadata.labels = rc->spec.template_->metadata.labels;
    }
  }
  static Status Validate(const ReplicationController& rc) { return ValidateController(rc); }
  static constexpr const char* kList = "ReplicationControllerList";
  static constexpr const char* kResource = "replicationcontrollers";
  static json ToJson(const ReplicationController& rc) { return ControllerToJson(rc); }
  static Result<ReplicationController> FromJson(const json& j) { return ControllerFromJson(j); }
  static json Table(const std::vector<ControllerPtr>& items, const TableOptions& o) {
    return ControllerTable(items, o);
  }
};

template <>
struct Kind<Node> {
  static constexpr const char* kKind = "Node";
  static constexpr const char* kSchemaType = "V1Node";  // not in the schema: fields are not checked
  static void DefaultForCreate(Node*) {}
  static Status Validate(const Node&) { return Status::Ok(); }
  static constexpr const char* kList = "NodeList";
  static constexpr const char* kResource = "nodes";
  static json ToJson(const Node& n) { return NodeToJson(n); }
  static Result<Node> FromJson(const json& j) { return NodeFromJson(j); }
  static json Table(const std::vector<NodePtr>& items, const TableOptions& o) { return NodeTable(items, o); }
};

template <typename T>
Result<T> DecodeBody(std::string_view body) {
  Result<json> j = ParseBody(body);
  if (!j.ok()) return j.status();
  if (Status s = CheckKind(*j, Kind<T>::kKind, "v1"); !s.ok()) return s;
  return Kind<T>::FromJson(*j);
}

template <typename T>
const char* EventTypeName(typename ApiWatchEvent<T>::Type t) {
  using E = typename ApiWatchEvent<T>::Type;
  switch (t) {
    case E::kAdded: return "ADDED";
    case E::kModified: return "MODIFIED";
    case E::kDeleted: return "DELETED";
    case E::kBookmark: return "BOOKMARK";
    case E::kError: return "ERROR";
  }
  return "ERROR";
}

// A watch stream's line for `j`: compact JSON and a newline.
WatchLine LineOf(const json& j) {
  std::string bytes = DumpJson(j);
  bytes.push_back('\n');
  return std::make_shared<const std::string>(std::move(bytes));
}

// The line of a `type` event of `object`, serialized once for every watcher it goes to: the watch cache
// hands one change to each of its watchers in turn, on its thread, with the same (cached) object, so
// this thread's last line is reused while the object and type are the same. The memo holds the object,
// so its address cannot be reused by another while it is remembered. A line over kMaxSharedLineBytes
// is not remembered: the memo of each thread that ever served a watch must stay small.
constexpr std::size_t kMaxSharedLineBytes = 64 << 10;
template <typename T>
WatchLine SharedEventLine(const char* type, const std::shared_ptr<const T>& object) {
  struct Memo {
    std::shared_ptr<const T> object;
    const char* type = nullptr;
    WatchLine line;
  };
  thread_local Memo memo;
  if (memo.object == object && memo.type == type) return memo.line;
  WatchLine line = LineOf({{"type", type}, {"object", Kind<T>::ToJson(*object)}});
  if (line->size() <= kMaxSharedLineBytes) {
    memo = Memo{object, type, line};
  } else {
    memo = Memo();
  }
  return line;
}

IncludeObject IncludeObjectOf(const Query& q) {
  const std::string v = q.Get("includeObject");
  if (v == "None") return IncludeObject::kNone;
  if (v == "Object") return IncludeObject::kObject;
  return IncludeObject::kMetadata;
}

// One resource's routes.
// The DeleteOptions of a DELETE: the query's gracePeriodSeconds, propagationPolicy and dryRun, then
// the body's (JSON, or protobuf read into JSON by Handle; callers answer 415 for another type first).
Result<DeleteOptions> DeleteOptionsOf(const HttpRequest& req, const Query& q) {
  DeleteOptions opts;
  if (q.Has("gracePeriodSeconds")) {
    int64_t g = 0;
    if (!ParseInt(q.Get("gracePeriodSeconds"), &g)) {
      return Status(Code::kBadRequest, "invalid gracePeriodSeconds: " + q.Get("gracePeriodSeconds"));
    }
    opts.grace_period_seconds = g;
  }
  opts.propagation_policy = q.Get("propagationPolicy");
  opts.dry_run = q.Has("dryRun");  // CheckDryRun allowed only "All"
  if (req.body.empty()) return opts;
  return DeleteOptionsFromBody(req.body, std::move(opts));
}

// ?timeoutSeconds of a watch; zero when absent (the server picks). kBadRequest when malformed.
Result<Duration> WatchTimeoutOf(const Query& q) {
  if (!q.Has("timeoutSeconds")) return Duration::zero();
  int64_t secs = 0;
  // Seconds beyond what a nanosecond Duration holds would wrap negative.
  constexpr int64_t kMaxTimeoutSeconds =
      std::chrono::duration_cast<std::chrono::seconds>(Duration::max()).count();
  if (!ParseInt(q.Get("timeoutSeconds"), &secs) || secs < 0 || secs > kMaxTimeoutSeconds) {
    return Status(Code::kBadRequest, "invalid timeoutSeconds: " + q.Get("timeoutSeconds"));
  }
  return Duration(std::chrono::seconds(secs));
}

// Whether a request is a watch: the /watch/ path, or ?watch=true|1. kBadRequest for another value.
Result<bool> WatchRequested(const Query& q, bool watch_path) {
  bool watch = false;
  if (q.Has("watch") && !ParseBool(q.Get("watch"), &watch)) {
    return Status(Code::kBadRequest, "invalid watch parameter: " + q.Get("watch"));
  }
  return watch_path || watch;
}

template <typename T>
class ResourceRoutes {
 public:
  using Ptr = std::shared_ptr<const T>;

  ResourceRoutes(ResourceRegistry<T>* reg, WatchCache<T>* cache, const Clock* clock, const HttpRequest& req,
                 const Query& q)
      : reg_(reg), cache_(cache), clock_(clock), req_(req), q_(q), table_(AcceptsTable(req.accept)) {}

  HttpResponse Object(const Result<Ptr>& r, int ok_code = 200) const {
    if (!r.ok()) return ErrorResponse(r.status());
    if (table_ && req_.method == "GET") {
      TableOptions o = TableOpts();
      o.resource_version = (*r)->metadata.resource_version;
      return TableResponse(Kind<T>::Table({*r}, o));
    }
    return JsonResponse(ok_code, Kind<T>::ToJson(**r));
  }

  HttpResponse List(const std::string& ns) const {
    Result<ListOptions> opts = ListOptionsOf(q_);
    if (!opts.ok()) return ErrorResponse(opts.status());
    if (Status s = CheckListResourceVersion(q_); !s.ok()) return ErrorResponse(s);
    // resourceVersion=0 means "any version": served from the watch cache (limit ignored, as kube does).
    // resourceVersionMatch=Exact reads etcd at that revision (the registry refuses "0").
    Result<ObjectList<T>> list =
        (cache_ != nullptr && WatchCache<T>::Serves(*opts)) ? cache_->List(ns, *opts) : reg_->List(ns, *opts);
    if (!list.ok()) return ErrorResponse(list.status());
    if (table_) {
      TableOptions o = TableOpts();
      o.resource_version = list->resource_version;
      o.continue_token = list->continue_token;
      return TableResponse(Kind<T>::Table(list->items, o));
    }
    json metadata = {{"resourceVersion", list->resource_version}};
    if (!list->continue_token.empty()) metadata["continue"] = list->continue_token;
    json items = json::array();
    for (const Ptr& item : list->items) items.push_back(Kind<T>::ToJson(*item));
    return JsonResponse(200, {{"kind", Kind<T>::kList},
                              {"apiVersion", "v1"},
                              {"metadata", std::move(metadata)},
                              {"items", std::move(items)}});
  }

  ApiOutcome Watch(const std::string& ns, const std::string* name,
                   const std::shared_ptr<WatchSink>& sink) const {
    Result<ListOptions> opts = ListOptionsOf(q_);
    if (!opts.ok()) return Respond(ErrorResponse(opts.status()));
    if (name != nullptr) {
      if (!opts->field_name.empty() && opts->field_name != *name) {
        return Respond(ErrorResponse(Code::kBadRequest, "fieldSelector metadata.name=" + opts->field_name +
                                                            " does not match the name on the URL"));
      }
      opts->field_name = *name;
    }
    ApiOutcome out;
    Result<Duration> timeout = WatchTimeoutOf(q_);
    if (!timeout.ok()) return Respond(ErrorResponse(timeout.status()));
    out.watch_timeout = *timeout;
    bool bookmarks = false;
    if (q_.Has("allowWatchBookmarks") && !ParseBool(q_.Get("allowWatchBookmarks"), &bookmarks)) {
      return Respond(ErrorResponse(Code::kBadRequest, "invalid allowWatchBookmarks"));
    }
    const bool table = table_;
    TableOptions topts = TableOpts();
    const Clock* clock = clock_;                // the handler's, which outlives every watch
    auto first = std::make_shared<bool>(true);  // only touched by the (serial) watch callbacks
    auto on_event = [sink, table, topts, clock, first, bookmarks](const ApiWatchEvent<T>& ev) mutable {
      using E = typename ApiWatchEvent<T>::Type;
      json obj;
      if (ev.type == E::kError) {
        obj = StatusToJson(ev.error);
      } else if (ev.type == E::kBookmark) {
        if (!bookmarks || ev.object == nullptr) return;
        obj = {{"kind", Kind<T>::kKind},
               {"apiVersion", "v1"},
               {"metadata", {{"resourceVersion", ev.object->metadata.resource_version}}}};
      } else if (ev.object == nullptr) {
        return;
      } else if (!table) {
        return sink->OnLine(SharedEventLine<T>(EventTypeName<T>(ev.type), ev.object));
      } else {
        topts.include_columns = *first;
        topts.resource_version = ev.object->metadata.resource_version;
        topts.now = clock->Now();  // AGE as of this event, not as of the watch's start
        *first = false;
        obj = Kind<T>::Table({ev.object}, topts);
      }
      sink->OnLine(LineOf({{"type", EventTypeName<T>(ev.type)}, {"object", std::move(obj)}}));
      if (ev.type == E::kError) sink->OnEnd();
    };
    Result<std::unique_ptr<RegistryWatch>> w =
        cache_ != nullptr ? cache_->Watch(ns, *opts, q_.Get("resourceVersion"), std::move(on_event))
                          : reg_->Watch(ns, *opts, q_.Get("resourceVersion"), std::move(on_event));
    if (!w.ok()) return Respond(ErrorResponse(w.status()));
    out.watch = std::move(w).value();
    out.response.status = 200;
    out.response.content_type = table ? kTableContentType : "application/json";
    return out;
  }

  // The body as JSON, checked for its kind and (per ?fieldValidation) its fields; with managedFields
  // recorded for `manager` when `old` tracks them.
  Result<json> CheckedBody(std::string_view body) const {
    Result<json> j = ParseBody(body);
    if (!j.ok()) return j.status();
    if (Status s = CheckKind(*j, Kind<T>::kKind, "v1"); !s.ok()) return s;
    if (Status s = CheckFieldsOf(*j); !s.ok()) return s;
    return j;
  }
  // ?fieldValidation: Strict refuses unknown fields; Warn and Ignore drop them (Warn with warnings).
  Status CheckFieldsOf(json& j) const {
    Result<FieldValidation> mode = ParseFieldValidation(q_.Get("fieldValidation"));
    if (!mode.ok()) return mode.status();
    if (Status s = CheckFields(j, Kind<T>::kSchemaType, *mode, &warnings_); !s.ok()) return s;
    PruneUnknownFields(j, Kind<T>::kSchemaType);
    return Status::Ok();
  }
  std::string FieldManager() const {
    if (q_.Has("fieldManager")) return q_.Get("fieldManager");
    // As kube-apiserver: the user agent up to its first '/'.
    std::string ua = req_.user_agent.substr(0, req_.user_agent.find('/'));
    return ua.empty() ? "unknown" : ua;
  }

  HttpResponse Create(const std::string& ns) const {
    if (!IsJsonContentType(req_.content_type)) return UnsupportedMediaType();
    Result<json> body = CheckedBody(req_.body);
    if (!body.ok()) return ErrorResponse(body.status());
    Result<T> obj = Kind<T>::FromJson(*body);
    if (!obj.ok()) return ErrorResponse(obj.status());
    if (Status s = ReconcileMeta(&obj->metadata, ns, nullptr); !s.ok()) return ErrorResponse(s);
    if (q_.Has("dryRun")) return DryRunCreate(std::move(obj).value());
    return Object(reg_->Create(ns, std::move(obj).value()), 201);
  }

  // ?dryRun=All on create: validated and checked for a name clash, never stored.
  HttpResponse DryRunCreate(T obj) const {
    Kind<T>::DefaultForCreate(&obj);
    obj.metadata.resource_version.clear();
    obj.metadata.creation_timestamp = clock_->Now();
    if (Status s = Kind<T>::Validate(obj); !s.ok()) return ErrorResponse(s);
    if (!obj.metadata.name.empty()) {
      Result<Ptr> existing = reg_->Get(obj.metadata.namespace_, obj.metadata.name);
      if (existing.ok()) {
        return ErrorResponse(Code::kAlreadyExists,
                             std::string(Kind<T>::kKind) + " \"" + obj.metadata.name + "\" already exists");
      }
      if (existing.status().code() != Code::kNotFound) return ErrorResponse(existing.status());
    }
    return JsonResponse(201, Kind<T>::ToJson(obj));
  }

  HttpResponse Update(const std::string& ns, const std::string& name, bool status) const {
    if (!IsJsonContentType(req_.content_type)) return UnsupportedMediaType();
    Result<json> body = CheckedBody(req_.body);
    if (!body.ok()) return ErrorResponse(body.status());
    Result<T> obj = Kind<T>::FromJson(*body);
    if (!obj.ok()) return ErrorResponse(obj.status());
    if (Status s = ReconcileMeta(&obj->metadata, ns, &name); !s.ok()) return ErrorResponse(s);
    if (!status) {
      // Field ownership: only objects that carry managedFields (server-side applied) track it.
      Result<Ptr> cur = reg_->Get(ns, name);
      if (cur.ok() && !(*cur)->metadata.unknown_fields.empty() &&
          (*cur)->metadata.unknown_fields.get()->contains("managedFields")) {
        json next = Kind<T>::ToJson(*obj);
        RecordUpdate(Kind<T>::ToJson(**cur), next, FieldManager(), Kind<T>::kSchemaType, clock_->Now());
        Result<T> tracked = Kind<T>::FromJson(next);
        if (!tracked.ok()) return ErrorResponse(tracked.status());
        obj = std::move(tracked);
      }
    }
    const bool dry = q_.Has("dryRun");
    return Object(status ? reg_->UpdateStatus(std::move(obj).value(), dry)
                         : reg_->Update(std::move(obj).value(), dry));
  }

  HttpResponse Patch(const std::string& ns, const std::string& name, bool status) const {
    PatchType type;
    if (!PatchTypeOf(req_.content_type, &type)) return UnsupportedMediaType();
    if (type == PatchType::kApply) return Apply(ns, name, status);
    for (int attempt = 0;; ++attempt) {
      warnings_.clear();
      Result<Ptr> cur = reg_->Get(ns, name);
      if (!cur.ok()) return ErrorResponse(cur.status());
      const json current = Kind<T>::ToJson(**cur);
      Result<json> patched = ApplyPatch(current, type, req_.body, Kind<T>::kSchemaType);
      if (!patched.ok()) return ErrorResponse(patched.status());
      if (Status s = CheckKind(*patched, Kind<T>::kKind, "v1"); !s.ok()) return ErrorResponse(s);
      if (Status s = CheckFieldsOf(*patched); !s.ok()) return ErrorResponse(s);
      if (Status s = CheckImmutableMeta(*patched, current); !s.ok()) return ErrorResponse(s);
      if (!status) RecordUpdate(current, *patched, FieldManager(), Kind<T>::kSchemaType, clock_->Now());
      Result<T> obj = Kind<T>::FromJson(*patched);
      if (!obj.ok()) return ErrorResponse(obj.status());
      const bool pinned = obj->metadata.resource_version != (*cur)->metadata.resource_version;
      const bool dry = q_.Has("dryRun");
      Result<Ptr> r = status ? reg_->UpdateStatus(std::move(obj).value(), dry)
                             : reg_->Update(std::move(obj).value(), dry);
      // A patch that does not name a resourceVersion is retried over a concurrent write.
      if (r.ok() || r.status().code() != Code::kConflict || pinned || attempt + 1 >= kPatchConflictRetries) {
        return Object(r);
      }
    }
  }

  // Server-side apply: creates the object if it does not exist.
  HttpResponse Apply(const std::string& ns, const std::string& name, bool status) const {
    if (status)
      return ErrorResponse(Code::kBadRequest, "server-side apply of the status subresource is not supported");
    Result<json> body = ParseBody(req_.body);
    if (!body.ok()) {
      return ErrorResponse(Code::kBadRequest, "the apply body must be JSON (as kubectl sends it)");
    }
    if (Status s = CheckKind(*body, Kind<T>::kKind, "v1"); !s.ok()) return ErrorResponse(s);
    if (!body->contains("kind") || !body->contains("apiVersion")) {
      return ErrorResponse(Code::kBadRequest, "an applied configuration must set apiVersion and kind");
    }
    if (Status s = CheckFieldsOf(*body); !s.ok()) return ErrorResponse(s);
    ApplyOptions opts;
    opts.manager = q_.Get("fieldManager");
    opts.schema_type = Kind<T>::kSchemaType;
    opts.now = clock_->Now();
    if (q_.Has("force") && !ParseBool(q_.Get("force"), &opts.force)) {
      return ErrorResponse(Code::kBadRequest, "invalid force parameter: " + q_.Get("force"));
    }
    const json* meta = body->contains("metadata") ? &(*body)["metadata"] : nullptr;
    if (meta != nullptr && meta->is_object()) {
      if (meta->contains("name") && (*meta)["name"] != name) {
        return ErrorResponse(Code::kBadRequest, "the name of the object does not match the name on the URL");
      }
      if (meta->contains("namespace") && (*meta)["namespace"] != ns) {
        return ErrorResponse(Code::kBadRequest,
                             "the namespace of the provided object does not match the namespace sent on the "
                             "request");
      }
    }
    for (int attempt = 0;; ++attempt) {
      Result<Ptr> cur = reg_->Get(ns, name);
      if (!cur.ok() && cur.status().code() != Code::kNotFound) return ErrorResponse(cur.status());
      const json current = cur.ok() ? Kind<T>::ToJson(**cur) : json();
      Result<json> applied = ServerSideApply(current, *body, opts);
      if (!applied.ok()) return ErrorResponse(applied.status());
      (*applied)["metadata"]["name"] = name;
      (*applied)["metadata"]["namespace"] = ns;
      Result<T> obj = Kind<T>::FromJson(*applied);
      if (!obj.ok()) return ErrorResponse(obj.status());
      Result<Ptr> r = Status(Code::kInternal, "unreachable");
      if (!cur.ok()) {
        obj->metadata.resource_version.clear();
        if (q_.Has("dryRun")) return DryRunCreate(std::move(obj).value());
        r = reg_->Create(ns, std::move(obj).value());
        if (r.ok()) return Object(r, 201);
        if (r.status().code() != Code::kAlreadyExists || attempt + 1 >= kPatchConflictRetries)
          return Object(r);
        continue;
      }
      obj->metadata.resource_version = (*cur)->metadata.resource_version;
      r = reg_->Update(std::move(obj).value(), q_.Has("dryRun"));
      if (r.ok() || r.status().code() != Code::kConflict || attempt + 1 >= kPatchConflictRetries)
        return Object(r);
    }
  }

  std::vector<std::string> TakeWarnings() const { return std::move(warnings_); }

  // DELETE on the collection: every object matching the label and field selectors goes; the answer
  // is the list of what was deleted (as kube-apiserver answers).
  HttpResponse DeleteCollection(const std::string& ns) const {
    Result<ListOptions> opts = ListOptionsOf(q_);
    if (!opts.ok()) return ErrorResponse(opts.status());
    if (Status s = CheckListResourceVersion(q_); !s.ok()) return ErrorResponse(s);
    if (!req_.body.empty() && !IsJsonContentType(req_.content_type)) return UnsupportedMediaType();
    Result<DeleteOptions> options = DeleteOptionsOf(req_, q_);
    if (!options.ok()) return ErrorResponse(options.status());
    opts->limit = 0;
    opts->continue_token.clear();
    Result<ObjectList<T>> list = reg_->List(ns, *opts);
    if (!list.ok()) return ErrorResponse(list.status());
    json items = json::array();
    for (const Ptr& obj : list->items) {
      DeleteOptions del = *options;
      del.precondition_uid = obj->metadata.uid;  // never a successor that took the name meanwhile
      Result<Ptr> r = reg_->Delete(obj->metadata.namespace_, obj->metadata.name, del);
      if (r.ok()) {
        items.push_back(Kind<T>::ToJson(**r));
      } else if (r.status().code() != Code::kNotFound && r.status().code() != Code::kConflict) {
        return ErrorResponse(r.status());
      }
    }
    return JsonResponse(200, {{"kind", Kind<T>::kList},
                              {"apiVersion", "v1"},
                              {"metadata", {{"resourceVersion", list->resource_version}}},
                              {"items", std::move(items)}});
  }

  HttpResponse Delete(const std::string& ns, const std::string& name) const {
    if (!req_.body.empty() && !IsJsonContentType(req_.content_type)) return UnsupportedMediaType();
    Result<DeleteOptions> opts = DeleteOptionsOf(req_, q_);
    if (!opts.ok()) return ErrorResponse(opts.status());
    auto r = reg_->DeleteReporting(ns, name, *opts);
    if (!r.ok()) return ErrorResponse(r.status());
    if (!r->decode_error.ok()) {
      // Deleted, but there is no object to return: say what happened, as a success Status.
      const char* resource = Kind<T>::kResource;
      return JsonResponse(
          200, {{"kind", "Status"},
                {"apiVersion", "v1"},
                {"metadata", json::object()},
                {"status", "Success"},
                {"message", std::string("deleted ") + resource + " \"" + name +
                                "\", whose stored value did not decode: " + r->decode_error.message()},
                {"details", {{"name", name}, {"kind", resource}}}});
    }
    return Object(r->object);
  }

 private:
  TableOptions TableOpts() const {
    TableOptions o;
    o.now = clock_->Now();
    o.include_object = IncludeObjectOf(q_);
    return o;
  }
  static HttpResponse TableResponse(const json& table) {
    HttpResponse r = JsonResponse(200, table);
    r.content_type = kTableContentType;
    return r;
  }
  HttpResponse UnsupportedMediaType() const { return UnsupportedMediaTypeResponse(req_.content_type); }

  ResourceRegistry<T>* const reg_;
  WatchCache<T>* const cache_;  // null: watches go to the registry
  const Clock* const clock_;
  const HttpRequest& req_;
  const Query& q_;
  const bool table_;
  mutable std::vector<std::string> warnings_;  // for Warning headers (fieldValidation=Warn)
};

HttpResponse MethodNotAllowed(const std::string& method) {
  return ErrorResponse(Code::kMethodNotAllowed,
                       "the server does not allow this method on the "
                       "requested resource: " +
                           method);
}

HttpResponse NotFound(const std::string& path) {
  return ErrorResponse(Code::kNotFound, "the server could not find the requested resource: " + path);
}

// dryRun=All on a write is honoured by the handlers that pass its method in `honoured` (pods',
// controllers' and nodes' create, update, patch, apply and delete, their status updates, a controller's
// scale, namespace create, update, patch and delete, evictions); elsewhere it is refused rather than ignored
// (a write that the client meant as a rehearsal must not happen).
Status CheckDryRun(const HttpRequest& req, const Query& q, std::initializer_list<std::string_view> honoured) {
  if (!q.Has("dryRun")) return Status::Ok();
  if (q.Get("dryRun") != "All") {
    return Status(Code::kBadRequest,
                  "invalid dryRun value \"" + q.Get("dryRun") + "\": the only supported value is \"All\"");
  }
  if (req.method == "GET" || req.method == "HEAD") return Status::Ok();
  for (std::string_view m : honoured) {
    if (req.method == m) return Status::Ok();
  }
  return Status(Code::kBadRequest, "dryRun is not supported for " + req.method + " on this resource");
}

// cluster_scope: the request named no namespace (an all-namespaces list of a namespaced resource, or
// any request for a cluster-scoped one, where `namespaced` is false).
template <typename T>
ApiOutcome ServeResource(ResourceRegistry<T>* reg, WatchCache<T>* cache, const Clock* clock,
                         const HttpRequest& req, const Query& q, bool cluster_scope, bool watch_path,
                         const std::string& ns, const std::string* name,
                         const std::shared_ptr<WatchSink>& sink, bool namespaced = true) {
  ResourceRoutes<T> routes(reg, cache, clock, req, q);
  Result<bool> watching = WatchRequested(q, watch_path);
  if (!watching.ok()) return Respond(ErrorResponse(watching.status()));
  const bool watch = *watching;
  const std::string& m = req.method;
  if (Status s = CheckDryRun(req, q, {"POST", "PUT", "PATCH", "DELETE"}); !s.ok()) {
    return Respond(ErrorResponse(s));
  }
  if (watch) {
    if (m != "GET") return Respond(MethodNotAllowed(m));
    return routes.Watch(ns, name, sink);
  }
  auto warned = [&](HttpResponse r) {
    r.warnings = routes.TakeWarnings();
    return Respond(std::move(r));
  };
  if (name == nullptr) {
    if (m == "GET") return Respond(routes.List(ns));
    if (m == "POST" && (!cluster_scope || !namespaced)) return warned(routes.Create(ns));
    if (m == "DELETE") return Respond(routes.DeleteCollection(ns));
    return Respond(MethodNotAllowed(m));
  }
  if (m == "GET") return Respond(routes.Object(reg->Get(ns, *name)));
  if (m == "PUT") return warned(routes.Update(ns, *name, /*status=*/false));
  if (m == "PATCH") return warned(routes.Patch(ns, *name, /*status=*/false));
  if (m == "DELETE") return Respond(routes.Delete(ns, *name));
  return Respond(MethodNotAllowed(m));
}

template <typename T>
HttpResponse ServeStatus(ResourceRegistry<T>* reg, const Clock* clock, const HttpRequest& req, const Query& q,
                         const std::string& ns, const std::string& name) {
  ResourceRoutes<T> routes(reg, nullptr, clock, req, q);
  if (Status s = CheckDryRun(req, q, {"PUT", "PATCH"}); !s.ok()) return ErrorResponse(s);
  if (req.method == "GET") return routes.Object(reg->Get(ns, name));
  if (req.method == "PUT") return routes.Update(ns, name, /*status=*/true);
  if (req.method == "PATCH") return routes.Patch(ns, name, /*status=*/true);
  return MethodNotAllowed(req.method);
}

HttpResponse ScaleResponse(const Result<Scale>& r) {
  if (!r.ok()) return ErrorResponse(r.status());
  return JsonResponse(200, ScaleToJson(*r));
}

Result<Scale> DecodeScale(const json& j) {
  if (Status s = CheckKind(j, "Scale", "autoscaling/v1"); !s.ok()) return s;
  return ScaleFromJson(j);
}

HttpResponse ServeScale(Registry* registry, const HttpRequest& req, const std::string& ns,
                        const std::string& name, const Query& q) {
  if (Status s = CheckDryRun(req, q, {"PUT", "PATCH"}); !s.ok()) return ErrorResponse(s);
  const bool dry_run = q.Has("dryRun");
  if (req.method == "GET") return ScaleResponse(registry->GetScale(ns, name));
  if (req.method == "PUT") {
    if (!IsJsonContentType(req.content_type)) return UnsupportedMediaTypeResponse(req.content_type);
    Result<json> j = ParseBody(req.body);
    if (!j.ok()) return ErrorResponse(j.status());
    Result<Scale> scale = DecodeScale(*j);
    if (!scale.ok()) return ErrorResponse(scale.status());
    if (Status s = ReconcileMeta(&scale->metadata, ns, &name); !s.ok()) return ErrorResponse(s);
    return ScaleResponse(registry->UpdateScale(ns, name, *scale, dry_run));
  }
  if (req.method == "PATCH") {
    PatchType type;
    if (!PatchTypeOf(req.content_type, &type)) return UnsupportedMediaTypeResponse(req.content_type);
    for (int attempt = 0;; ++attempt) {
      Result<Scale> cur = registry->GetScale(ns, name);
      if (!cur.ok()) return ErrorResponse(cur.status());
      Result<json> patched = ApplyPatch(ScaleToJson(*cur), type, req.body);
      if (!patched.ok()) return ErrorResponse(patched.status());
      Result<Scale> scale = DecodeScale(*patched);
      if (!scale.ok()) return ErrorResponse(scale.status());
      if (Status s = ReconcileMeta(&scale->metadata, ns, &name); !s.ok()) return ErrorResponse(s);
      const bool pinned = scale->metadata.resource_version != cur->metadata.resource_version;
      Result<Scale> r = registry->UpdateScale(ns, name, *scale, dry_run);
      if (r.ok() || r.status().code() != Code::kConflict || pinned || attempt + 1 >= kPatchConflictRetries) {
        return ScaleResponse(r);
      }
    }
  }
  return MethodNotAllowed(req.method);
}

// /apis/authorization.k8s.io and /apis/authentication.k8s.io: their discovery, and the access and rules
// reviews of `kubectl auth can-i` (authentication's selfsubjectreviews is answered by the HTTP server,
// which knows the user).
HttpResponse ServeSelfReviews(const HttpRequest& req, const std::vector<std::string>& seg,
                              const std::string& path) {
  const bool authorization = seg[1] == "authorization.k8s.io";
  const bool get = req.method == "GET" || req.method == "HEAD";
  if (seg.size() == 2) {
    if (!get) return MethodNotAllowed(req.method);
    json group = authorization ? AuthorizationGroupJson() : AuthenticationGroupJson();
    group["kind"] = "APIGroup";
    group["apiVersion"] = "v1";
    return JsonResponse(200, group);
  }
  if (seg[2] != "v1" || seg.size() > 4) return NotFound(path);
  if (seg.size() == 3) {
    if (!get) return MethodNotAllowed(req.method);
    return JsonResponse(200,
                        authorization ? AuthorizationV1ResourcesJson() : AuthenticationV1ResourcesJson());
  }
  if (!authorization || (seg[3] != kAccessReviews && seg[3] != kRulesReviews)) return NotFound(path);
  if (req.method != "POST") return MethodNotAllowed(req.method);
  if (!IsJsonContentType(req.content_type)) return UnsupportedMediaTypeResponse(req.content_type);
  Result<json> body = ParseBody(req.body);
  if (!body.ok()) return ErrorResponse(body.status());
  Result<json> answer = AnswerSelfReview(seg[3], std::move(body).value());
  return answer.ok() ? JsonResponse(201, *answer) : ErrorResponse(answer.status());
}

// A Table column of strings.
json TableColumn(const char* name, const char* description, const char* format = "") {
  return {
      {"name", name}, {"type", "string"}, {"format", format}, {"description", description}, {"priority", 0}};
}

// A Table row of `cells` for `obj`, carrying the object as ?includeObject asks.
json TableRow(json cells, const json& obj, IncludeObject include) {
  json row = {{"cells", std::move(cells)}};
  if (include == IncludeObject::kObject) {
    row["object"] = obj;
  } else if (include == IncludeObject::kMetadata) {
    row["object"] = {
        {"kind", "PartialObjectMetadata"}, {"apiVersion", "meta.k8s.io/v1"}, {"metadata", obj["metadata"]}};
  }
  return row;
}

// The AGE cell of a JSON object (its metadata.creationTimestamp) as of `now`.
std::string AgeOf(const json& obj, TimePoint now) {
  auto meta = obj.find("metadata");
  if (meta == obj.end() || !meta->is_object()) return "<unknown>";
  auto created = meta->find("creationTimestamp");
  if (created == meta->end() || !created->is_string()) return "<unknown>";
  auto ts = ParseRfc3339(created->get<std::string>());
  return ts ? HumanAge(now - *ts) : "<unknown>";
}

json NamespaceTable(const json& items, const TableOptions& o) {
  json t = {{"kind", "Table"},
            {"apiVersion", "meta.k8s.io/v1"},
            {"metadata", {{"resourceVersion", o.resource_version}}},
            {"columnDefinitions", json::array({TableColumn("Name", "Name", "name"),
                                               TableColumn("Status", "The status of the namespace"),
                                               TableColumn("Age", "CreationTimestamp")})},
            {"rows", json::array()}};
  if (!o.include_columns) t["columnDefinitions"] = json::array();  // watch events after the first
  for (const json& ns : items) {
    t["rows"].push_back(TableRow(
        json::array({ns["metadata"]["name"], ns["status"].value("phase", "Active"), AgeOf(ns, o.now)}), ns,
        o.include_object));
  }
  return t;
}

// LeaseTable over JSON leases (a watch's events).
json LeaseJsonTable(const json& items, const TableOptions& o) {
  std::vector<LeasePtr> leases;
  for (const json& l : items) {
    if (Result<Lease> lease = LeaseFromJson(l); lease.ok()) {
      leases.push_back(std::make_shared<const Lease>(std::move(lease).value()));
    }
  }
  return LeaseTable(leases, o);
}

// /api/v1/namespaces[/{name}]: list, create, get, update, patch (merge, strategic merge, JSON patch),
// delete.
HttpResponse ServeNamespaces(Registry* registry, const Clock* clock, const HttpRequest& req, const Query& q,
                             const std::string* name) {
  Namespaces namespaces(registry);
  const bool table = AcceptsTable(req.accept) && req.method == "GET";
  TableOptions topts;
  topts.now = clock->Now();
  topts.include_object = IncludeObjectOf(q);
  auto answer = [&](const Result<json>& r, int code) {
    if (!r.ok()) return ErrorResponse(r.status());
    if (!table) return JsonResponse(code, *r);
    topts.resource_version = (*r)["metadata"].value("resourceVersion", "");
    HttpResponse resp = JsonResponse(
        200, NamespaceTable((*r)["kind"] == "NamespaceList" ? (*r)["items"] : json::array({*r}), topts));
    resp.content_type = kTableContentType;
    return resp;
  };
  if (Status s = CheckDryRun(req, q, {"POST", "PUT", "PATCH", "DELETE"}); !s.ok()) return ErrorResponse(s);
  if (name == nullptr) {
    if (req.method == "GET") {
      Result<ListOptions> opts = ListOptionsOf(q);  // labelSelector and fieldSelector metadata.name
      if (!opts.ok()) return ErrorResponse(opts.status());
      if (Status s = CheckListResourceVersion(q); !s.ok()) return ErrorResponse(s);
      Result<json> list = namespaces.List(opts->label_selector);
      if (list.ok() && !opts->field_name.empty()) {
        json kept = json::array();
        for (json& ns : (*list)["items"]) {
          if (ns["metadata"]["name"] == opts->field_name) kept.push_back(std::move(ns));
        }
        (*list)["items"] = std::move(kept);
      }
      return answer(list, 200);
    }
    if (req.method == "POST") {
      if (!IsJsonContentType(req.content_type)) return UnsupportedMediaTypeResponse(req.content_type);
      Result<json> body = ParseBody(req.body);
      if (!body.ok()) return ErrorResponse(body.status());
      if (Status s = CheckKind(*body, "Namespace", "v1"); !s.ok()) return ErrorResponse(s);
      Result<FieldValidation> mode = ParseFieldValidation(q.Get("fieldValidation"));
      if (!mode.ok()) return ErrorResponse(mode.status());
      std::vector<std::string> warnings;
      if (Status s = CheckFields(*body, "V1Namespace", *mode, &warnings); !s.ok()) return ErrorResponse(s);
      PruneUnknownFields(*body, "V1Namespace");
      HttpResponse r = answer(namespaces.Create(*body, q.Has("dryRun")), 201);
      r.warnings = std::move(warnings);
      return r;
    }
    return MethodNotAllowed(req.method);
  }
  if (req.method == "GET") return answer(namespaces.Get(*name), 200);
  if (req.method == "DELETE") {
    if (!req.body.empty() && !IsJsonContentType(req.content_type)) {
      return UnsupportedMediaTypeResponse(req.content_type);
    }
    Result<DeleteOptions> opts = DeleteOptionsOf(req, q);
    if (!opts.ok()) return ErrorResponse(opts.status());
    return answer(namespaces.Delete(*name, *opts), 200);
  }
  if (req.method == "PUT" || req.method == "PATCH") {
    Result<FieldValidation> mode = ParseFieldValidation(q.Get("fieldValidation"));
    if (!mode.ok()) return ErrorResponse(mode.status());
    // A patch without a resourceVersion is retried over a concurrent write, as for other objects.
    for (int attempt = 0;; ++attempt) {
      Result<json> body = Status(Code::kInternal, "unreachable");
      if (req.method == "PUT") {
        if (!IsJsonContentType(req.content_type)) return UnsupportedMediaTypeResponse(req.content_type);
        body = ParseBody(req.body);
      } else {
        PatchType type;
        if (!PatchTypeOf(req.content_type, &type) || type == PatchType::kApply) {
          return UnsupportedMediaTypeResponse(req.content_type);
        }
        Result<json> current = namespaces.Get(*name);
        if (!current.ok()) return ErrorResponse(current.status());
        body = ApplyPatch(*current, type, req.body, "V1Namespace");
      }
      if (!body.ok()) return ErrorResponse(body.status());
      if (Status s = CheckKind(*body, "Namespace", "v1"); !s.ok()) return ErrorResponse(s);
      std::vector<std::string> warnings;
      if (Status s = CheckFields(*body, "V1Namespace", *mode, &warnings); !s.ok()) return ErrorResponse(s);
      PruneUnknownFields(*body, "V1Namespace");
      Result<json> updated = namespaces.Update(*name, *body, q.Has("dryRun"));
      if (req.method == "PATCH" && !updated.ok() && updated.status().code() == Code::kConflict &&
          attempt + 1 < kPatchConflictRetries) {
        continue;
      }
      HttpResponse r = answer(updated, 200);
      r.warnings = std::move(warnings);
      return r;
    }
  }
  return MethodNotAllowed(req.method);
}

using StartJsonWatchFn = std::function<Result<std::unique_ptr<RegistryWatch>>(
    std::function<void(const json& event)> on_event, std::function<void()> on_end)>;

// A watch of JSON-stored objects (namespaces, events): its events as JSON lines, or as Tables when
// asked (`table` renders a list of objects), until the client goes or the timeout ends it.
ApiOutcome ServeJsonWatch(const Clock* clock, const HttpRequest& req, const Query& q,
                          const std::shared_ptr<WatchSink>& sink,
                          json (*table)(const json&, const TableOptions&), const StartJsonWatchFn& start) {
  ApiOutcome out;
  Result<Duration> timeout = WatchTimeoutOf(q);
  if (!timeout.ok()) return Respond(ErrorResponse(timeout.status()));
  out.watch_timeout = *timeout;
  const bool as_table = AcceptsTable(req.accept);
  TableOptions topts;
  topts.include_object = IncludeObjectOf(q);
  auto first = std::make_shared<bool>(true);  // only touched by the (serial) watch callbacks
  auto on_event = [sink, as_table, table, topts, clock, first](const json& ev) mutable {
    json line = ev;
    if (as_table && ev["type"] != "ERROR") {
      topts.include_columns = *first;
      topts.resource_version = ev["object"]["metadata"].value("resourceVersion", "");
      topts.now = clock->Now();
      *first = false;
      line["object"] = table(json::array({ev["object"]}), topts);
    }
    sink->OnLine(LineOf(line));
  };
  Result<std::unique_ptr<RegistryWatch>> w = start(std::move(on_event), [sink] { sink->OnEnd(); });
  if (!w.ok()) return Respond(ErrorResponse(w.status()));
  out.watch = std::move(w).value();
  out.response.status = 200;
  out.response.content_type = as_table ? kTableContentType : "application/json";
  return out;
}

// GET /api/v1/namespaces?watch=1 (kubectl get ns -w).
ApiOutcome WatchNamespaces(Registry* registry, const Clock* clock, const HttpRequest& req, const Query& q,
                           const std::string* name, const std::shared_ptr<WatchSink>& sink) {
  if (req.method != "GET") return Respond(MethodNotAllowed(req.method));
  Result<ListOptions> opts = ListOptionsOf(q);
  if (!opts.ok()) return Respond(ErrorResponse(opts.status()));
  std::string only = opts->field_name;
  if (name != nullptr) {
    if (!only.empty() && only != *name) {
      return Respond(ErrorResponse(
          Code::kBadRequest, "fieldSelector metadata.name=" + only + " does not match the name on the URL"));
    }
    only = *name;
  }
  return ServeJsonWatch(clock, req, q, sink, NamespaceTable, [&](auto on_event, auto on_end) {
    return Namespaces(registry).Watch(q.Get("resourceVersion"), opts->label_selector, only,
                                      std::move(on_event), std::move(on_end));
  });
}

// 201 with a Success Status: the answer to a subresource create (binding, eviction).
HttpResponse CreatedStatus() {
  return JsonResponse(201, {{"kind", "Status"},
                            {"apiVersion", "v1"},
                            {"metadata", json::object()},
                            {"status", "Success"},
                            {"code", 201}});
}

// POST pods/{name}/eviction: a policy/v1 (or v1beta1) Eviction deletes the pod with its deleteOptions,
// as kube-apiserver does when no PodDisruptionBudget covers the pod (none are served here), and
// answers 201 with a Success Status. dryRun (query or deleteOptions) checks and deletes nothing.
HttpResponse ServeEviction(Registry* registry, const HttpRequest& req, const Query& q, const std::string& ns,
                           const std::string& name) {
  if (req.method != "POST") return MethodNotAllowed(req.method);
  if (Status s = CheckDryRun(req, q, {"POST"}); !s.ok()) return ErrorResponse(s);
  if (!IsJsonContentType(req.content_type)) return UnsupportedMediaTypeResponse(req.content_type);
  Result<json> body = ParseBody(req.body);
  if (!body.ok()) return ErrorResponse(body.status());
  if (!body->is_object()) return ErrorResponse(Code::kBadRequest, "the request body must be a JSON object");
  const std::string version = body->value("apiVersion", "policy/v1");
  if (Status s = CheckKind(*body, "Eviction", version == "policy/v1beta1" ? "policy/v1beta1" : "policy/v1");
      !s.ok()) {
    return ErrorResponse(s);
  }
  const json meta = body->value("metadata", json::object());
  if (!meta.is_object()) return ErrorResponse(Code::kBadRequest, "metadata must be an object");
  if (meta.value("name", name) != name) {
    return ErrorResponse(Code::kBadRequest, "name in URL does not match name in Eviction object");
  }
  if (meta.value("namespace", ns) != ns) {
    return ErrorResponse(Code::kBadRequest, "namespace in URL does not match namespace in Eviction object");
  }
  DeleteOptions opts;
  opts.dry_run = q.Has("dryRun");  // CheckDryRun allowed only "All"
  if (auto d = body->find("deleteOptions"); d != body->end() && !d->is_null()) {
    Result<DeleteOptions> parsed = DeleteOptionsFromJson(*d, std::move(opts));
    if (!parsed.ok()) return ErrorResponse(parsed.status());
    opts = std::move(parsed).value();
  }
  Result<PodPtr> deleted = registry->pods().Delete(ns, name, opts);
  if (!deleted.ok()) return ErrorResponse(deleted.status());
  return CreatedStatus();
}

// POST pods/{name}/binding (name from the URL) or bindings (name from the body).
HttpResponse ServeBinding(Registry* registry, const HttpRequest& req, const Query& q, const std::string& ns,
                          const std::string* name) {
  if (req.method != "POST") return MethodNotAllowed(req.method);
  if (q.Has("dryRun")) return ErrorResponse(Code::kBadRequest, "dryRun is not supported for bindings");
  if (!IsJsonContentType(req.content_type)) return UnsupportedMediaTypeResponse(req.content_type);
  Result<json> j = ParseBody(req.body);
  if (!j.ok()) return ErrorResponse(j.status());
  if (Status s = CheckKind(*j, "Binding", "v1"); !s.ok()) return ErrorResponse(s);
  Result<Binding> b = BindingFromJson(*j);
  if (!b.ok()) return ErrorResponse(b.status());
  if (Status s = ReconcileMeta(&b->metadata, ns, name); !s.ok()) return ErrorResponse(s);
  Result<PodPtr> r = registry->BindPod(ns, *b);
  if (!r.ok()) return ErrorResponse(r.status());
  return CreatedStatus();
}

// What `kubectl get events` prints: Last Seen, Type, Reason, Object, Message.
json EventTable(const json& events, const TableOptions& o) {
  auto text = [](const json& j, const char* a, const char* b = nullptr) -> std::string {
    const json* x = j.contains(a) ? &j[a] : nullptr;
    if (x != nullptr && b != nullptr) x = x->is_object() && x->contains(b) ? &(*x)[b] : nullptr;
    return x != nullptr && x->is_string() ? x->get<std::string>() : "";
  };
  json t = {{"kind", "Table"},
            {"apiVersion", "meta.k8s.io/v1"},
            {"metadata", {{"resourceVersion", o.resource_version}}},
            {"columnDefinitions", json::array({TableColumn("Last Seen", "The time the event was last seen"),
                                               TableColumn("Type", "Normal or Warning"),
                                               TableColumn("Reason", "Why the event was recorded"),
                                               TableColumn("Object", "The object the event is about"),
                                               TableColumn("Message", "A description of the event")})},
            {"rows", json::array()}};
  for (const json& ev : events) {
    std::string seen = text(ev, "lastTimestamp");
    if (seen.empty()) seen = text(ev, "eventTime");
    if (seen.empty()) seen = text(ev, "metadata", "creationTimestamp");
    std::string age = "<unknown>";
    if (auto ts = ParseRfc3339(seen)) age = HumanAge(o.now - *ts);
    std::string kind = text(ev, "involvedObject", "kind");
    for (char& c : kind) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    t["rows"].push_back(
        TableRow(json::array({age, text(ev, "type"), text(ev, "reason"),
                              kind + "/" + text(ev, "involvedObject", "name"), text(ev, "message")}),
                 ev, o.include_object));
  }
  return t;
}

// The ?fieldSelector (involvedObject.*, reason, type, ...) and ?labelSelector of an event list, watch
// or collection delete.
struct EventSelectors {
  std::map<std::string, std::string> fields;
  LabelSelector labels;
};
Result<EventSelectors> EventSelectorsOf(const Query& q) {
  Result<std::map<std::string, std::string>> fields = ParseEventFieldSelector(q.Get("fieldSelector"));
  if (!fields.ok()) return fields.status();
  Result<LabelSelector> labels = LabelSelector::Parse(q.Get("labelSelector"));
  if (!labels.ok()) return Status(Code::kBadRequest, labels.status().message());
  return EventSelectors{std::move(fields).value(), std::move(labels).value()};
}

// GET .../events?watch=1, /api/v1/watch/[namespaces/{ns}/]events[/{name}] (kubectl get events -w):
// the selectors of a list.
ApiOutcome WatchEvents(EventRegistry* events, const Clock* clock, const HttpRequest& req, const Query& q,
                       const std::string& ns, const std::string* name,
                       const std::shared_ptr<WatchSink>& sink) {
  if (req.method != "GET") return Respond(MethodNotAllowed(req.method));
  Result<EventSelectors> sel = EventSelectorsOf(q);
  if (!sel.ok()) return Respond(ErrorResponse(sel.status()));
  if (name != nullptr) {
    auto [it, inserted] = sel->fields.emplace("metadata.name", *name);
    if (!inserted && it->second != *name) {
      return Respond(ErrorResponse(Code::kBadRequest, "fieldSelector metadata.name=" + it->second +
                                                          " does not match the name on the URL"));
    }
  }
  return ServeJsonWatch(clock, req, q, sink, EventTable, [&](auto on_event, auto on_end) {
    return events->Watch(ns, q.Get("resourceVersion"), sel->fields, sel->labels, std::move(on_event),
                         std::move(on_end));
  });
}

// A watch of leases (kubectl get leases -w, client-go lease informers): `seg` is the lease path without
// its /watch/ segment: /apis/coordination.k8s.io/v1/leases, .../namespaces/{ns}/leases[/{name}].
ApiOutcome WatchLeases(LeaseRegistry* leases, const Clock* clock, const HttpRequest& req, const Query& q,
                       const std::vector<std::string>& seg, ListOptions opts,
                       const std::shared_ptr<WatchSink>& sink) {
  std::string ns;
  if (seg.size() == 4 && seg[3] == "leases") {
    // every namespace
  } else if ((seg.size() == 6 || seg.size() == 7) && seg[3] == "namespaces" && seg[5] == "leases") {
    ns = seg[4];
    if (seg.size() == 7) {
      if (!opts.field_name.empty() && opts.field_name != seg[6]) {
        return Respond(ErrorResponse(Code::kBadRequest, "fieldSelector metadata.name=" + opts.field_name +
                                                            " does not match the name on the URL"));
      }
      opts.field_name = seg[6];
    }
  } else {
    return Respond(NotFound(req.target));
  }
  return ServeJsonWatch(clock, req, q, sink, LeaseJsonTable, [&](auto on_event, auto on_end) {
    return leases->Watch(ns, opts, q.Get("resourceVersion"), std::move(on_event), std::move(on_end));
  });
}

// The metadata.resourceVersion of a JSON object, "" when it has none.
std::string ResourceVersionOf(const json& obj) {
  auto meta = obj.find("metadata");
  return meta != obj.end() && meta->is_object() ? meta->value("resourceVersion", "") : "";
}

// DELETE of an event collection (python delete_collection_namespaced_event): every event of `list`
// goes; the answer is the list of what was deleted.
HttpResponse DeleteEvents(EventRegistry* events, json list) {
  json deleted = json::array();
  for (const json& ev : list["items"]) {
    Result<json> d = events->Delete(ev["metadata"].value("namespace", ""), ev["metadata"].value("name", ""));
    if (d.ok()) {
      deleted.push_back(std::move(d).value());
    } else if (d.status().code() != Code::kNotFound) {
      return ErrorResponse(d.status());
    }
  }
  list["items"] = std::move(deleted);
  return JsonResponse(200, list);
}

// /api/v1/events (list, every namespace) and /api/v1/namespaces/{ns}/events[/{name}]: list, create,
// delete of a collection, get, replace, patch, delete (watches: WatchEvents).
HttpResponse ServeEvents(EventRegistry* events, Registry* registry, const Clock* clock,
                         const HttpRequest& req, const Query& q, bool cluster_scope, const std::string& ns,
                         const std::string* name) {
  if (Status s = CheckDryRun(req, q, {}); !s.ok()) return ErrorResponse(s);
  if (name == nullptr) {
    if (req.method == "GET" || req.method == "DELETE") {
      if (Status s = CheckListResourceVersion(q); !s.ok()) return ErrorResponse(s);
      Result<EventSelectors> sel = EventSelectorsOf(q);
      if (!sel.ok()) return ErrorResponse(sel.status());
      Result<json> list = events->List(cluster_scope ? "" : ns, sel->fields, sel->labels);
      if (!list.ok()) return ErrorResponse(list.status());
      if (req.method == "DELETE") return DeleteEvents(events, std::move(list).value());
      if (!AcceptsTable(req.accept)) return JsonResponse(200, *list);
      TableOptions o;
      o.now = clock->Now();
      o.include_object = IncludeObjectOf(q);
      o.resource_version = (*list)["metadata"].value("resourceVersion", "");
      HttpResponse r = JsonResponse(200, EventTable((*list)["items"], o));
      r.content_type = kTableContentType;
      return r;
    }
    if (req.method == "POST" && !cluster_scope) {
      if (!IsJsonContentType(req.content_type)) return UnsupportedMediaTypeResponse(req.content_type);
      Result<json> body = ParseBody(req.body);
      if (!body.ok()) return ErrorResponse(body.status());
      if (Status s = CheckKind(*body, "Event", "v1"); !s.ok()) return ErrorResponse(s);
      if (Status s = Namespaces(registry).CheckExists(ns); !s.ok()) return ErrorResponse(s);
      Result<json> created = events->Create(ns, std::move(*body));
      if (!created.ok()) return ErrorResponse(created.status());
      return JsonResponse(201, *created);
    }
    return MethodNotAllowed(req.method);
  }
  Result<json> r = Status(Code::kMethodNotAllowed, "");
  if (req.method == "GET") {
    r = events->Get(ns, *name);
  } else if (req.method == "PUT") {
    if (!IsJsonContentType(req.content_type)) return UnsupportedMediaTypeResponse(req.content_type);
    Result<json> body = ParseBody(req.body);
    if (!body.ok()) return ErrorResponse(body.status());
    if (Status s = CheckKind(*body, "Event", "v1"); !s.ok()) return ErrorResponse(s);
    r = events->Update(ns, *name, std::move(*body));
  } else if (req.method == "PATCH") {
    // Merge, strategic merge (an Event has no merge lists) and JSON patches, as updates of the current
    // event; a concurrent change is retried unless the patch named a resourceVersion.
    PatchType type;
    if (!PatchTypeOf(req.content_type, &type) || type == PatchType::kApply) {
      return UnsupportedMediaTypeResponse(req.content_type);
    }
    for (int attempt = 0;; ++attempt) {
      Result<json> cur = events->Get(ns, *name);
      if (!cur.ok()) return ErrorResponse(cur.status());
      Result<json> patched = ApplyPatch(*cur, type, req.body, "CoreV1Event");
      if (!patched.ok()) return ErrorResponse(patched.status());
      if (Status s = CheckKind(*patched, "Event", "v1"); !s.ok()) return ErrorResponse(s);
      const bool pinned = ResourceVersionOf(*patched) != ResourceVersionOf(*cur);
      r = events->Update(ns, *name, std::move(patched).value());
      if (r.ok() || r.status().code() != Code::kConflict || pinned || attempt + 1 >= kPatchConflictRetries)
        break;
    }
  } else if (req.method == "DELETE") {
    if (!req.body.empty() && IsJsonContentType(req.content_type)) {
      Result<DeleteOptions> opts = DeleteOptionsFromBody(req.body, {});
      if (!opts.ok()) return ErrorResponse(opts.status());
      if (opts->dry_run)
        return ErrorResponse(Code::kBadRequest, "dryRun is not supported for DELETE on events");
    }
    r = events->Delete(ns, *name);
  } else {
    return MethodNotAllowed(req.method);
  }
  if (!r.ok()) return ErrorResponse(r.status());
  return JsonResponse(200, *r);
}

HttpResponse Text(std::string body) {
  HttpResponse r;
  r.content_type = "text/plain; charset=utf-8";
  r.body = std::move(body);
  return r;
}

}  // namespace

HttpResponse UnsupportedMediaTypeResponse(const std::string& content_type) {
  return JsonResponse(415, {{"kind", "Status"},
                            {"apiVersion", "v1"},
                            {"metadata", json::object()},
                            {"status", "Failure"},
                            {"message",
                             "the body of the request was in an unknown format - accepted media types "
                             "include: application/json, application/merge-patch+json, "
                             "application/strategic-merge-patch+json, application/json-patch+json; got \"" +
                                 content_type + "\""},
                            {"reason", "UnsupportedMediaType"},
                            {"code", 415}});
}

std::string WarningHeaderValue(std::string_view message) {
  std::string out = "299 - \"";
  for (char c : message) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  out += '"';
  return out;
}

std::string DumpJson(const json& j) {
  return j.dump(-1, ' ', /*ensure_ascii=*/false, json::error_handler_t::replace);
}

bool PercentDecode(std::string_view in, std::string* out) {
  out->clear();
  out->reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    const char c = in[i];
    if (c == '+') {
      out->push_back(' ');
    } else if (c == '%') {
      if (i + 2 >= in.size()) return false;
      auto hex = [](char h) -> int {
        if (h >= '0' && h <= '9') return h - '0';
        if (h >= 'a' && h <= 'f') return h - 'a' + 10;
        if (h >= 'A' && h <= 'F') return h - 'A' + 10;
        return -1;
      };
      const int hi = hex(in[i + 1]);
      const int lo = hex(in[i + 2]);
      if (hi < 0 || lo < 0) return false;
      out->push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else {
      out->push_back(c);
    }
  }
  return true;
}

ApiHandler::ApiHandler(Registry* registry, const Clock* clock)
    : registry_(registry), clock_(clock), events_(&registry->context()) {}

ApiOutcome ApiHandler::Handle(const HttpRequest& request, const std::shared_ptr<WatchSink>& sink) {
  // A protobuf body (kubectl's typed clients) is read into JSON here, so every handler takes JSON.
  HttpRequest converted;
  bool was_protobuf = false;
  if (IsProtobufContentType(request.content_type) && !request.body.empty()) {
    Result<ProtobufBody> decoded = DecodeK8sProtobuf(request.body);
    if (!decoded.ok()) return Respond(ErrorResponse(decoded.status()));
    if (decoded->unsupported_kind) {
      // A kind this server serves nowhere (kubectl create deployment, auth can-i, autoscale) goes to a
      // path that does not exist here: 404, as kube-apiserver answers for a group it does not serve.
      static constexpr std::string_view kServedKinds[] = {
          "Pod", "ReplicationController", "Node", "Event", "Lease", "Binding", "Scale", "SelfSubjectReview"};
      if (std::find(std::begin(kServedKinds), std::end(kServedKinds), decoded->kind) ==
          std::end(kServedKinds)) {
        return Respond(NotFound(request.target.substr(0, request.target.find('?'))));
      }
      return Respond(JsonResponse(415, {{"kind", "Status"},
                                        {"apiVersion", "v1"},
                                        {"metadata", json::object()},
                                        {"status", "Failure"},
                                        {"message",
                                         "protobuf bodies are read for Namespace, DeleteOptions, Eviction "
                                         "and the self reviews only, not " +
                                             decoded->kind + "; send it as application/json"},
                                        {"reason", "UnsupportedMediaType"},
                                        {"code", 415}}));
    }
    converted = request;
    converted.body = decoded->object.dump();
    converted.content_type = "application/json";
    was_protobuf = true;
  }
  const HttpRequest& req = was_protobuf ? converted : request;
  const size_t qmark = req.target.find('?');
  const std::string path = req.target.substr(0, qmark);
  Result<Query> q = ParseQuery(qmark == std::string::npos ? std::string_view()
                                                          : std::string_view(req.target).substr(qmark + 1));
  if (!q.ok()) return Respond(ErrorResponse(q.status()));
  std::vector<std::string> seg = Segments(path);
  for (std::string& s : seg) {
    std::string decoded;
    if (!PercentDecode(s, &decoded)) return Respond(ErrorResponse(Code::kBadRequest, "malformed path"));
    // "." and ".." (plain or escaped) and segments hiding a '/' or a NUL never name an object.
    if (decoded == "." || decoded == ".." || decoded.find('/') != std::string::npos ||
        decoded.find('\0') != std::string::npos) {
      return Respond(ErrorResponse(Code::kBadRequest, "invalid path segment " + Quote(decoded)));
    }
    s = std::move(decoded);
  }
  const bool get = req.method == "GET" || req.method == "HEAD";
  auto fixed = [&](const json& doc) {
    return Respond(get ? JsonResponse(200, doc) : MethodNotAllowed(req.method));
  };
  if (seg.size() == 1 && seg[0] == "version") return fixed(VersionJson());
  if (seg.size() == 1 && (seg[0] == "healthz" || seg[0] == "readyz" || seg[0] == "livez")) {
    return Respond(get ? Text("ok") : MethodNotAllowed(req.method));
  }
  if (seg.size() == 1 && seg[0] == "api") return fixed(ApiVersionsJson());
  if (seg.size() == 1 && seg[0] == "apis") {
    json groups = ApiGroupListJson();
    if (leases_ != nullptr) groups["groups"].push_back(CoordinationGroupJson());
    return fixed(groups);
  }
  if (leases_ != nullptr && IsLeasePath(seg)) {
    std::vector<std::string> lease_seg = seg;  // without the /watch/ segment of a watch path
    const bool lease_watch_path = lease_seg.size() > 4 && lease_seg[3] == "watch";
    if (lease_watch_path) lease_seg.erase(lease_seg.begin() + 3);
    Result<bool> watch = WatchRequested(*q, lease_watch_path);
    if (!watch.ok()) return Respond(ErrorResponse(watch.status()));
    Result<ListOptions> opts = ListOptionsOf(*q);
    if (!opts.ok()) return Respond(ErrorResponse(opts.status()));
    if (*watch) {
      if (req.method != "GET") return Respond(MethodNotAllowed(req.method));
      return WatchLeases(leases_, clock_, req, *q, lease_seg, std::move(opts).value(), sink);
    }
    if (q->Has("dryRun") && req.method != "DELETE") {
      return Respond(ErrorResponse(Code::kBadRequest, "dryRun is supported for leases only when deleting"));
    }
    TableOptions topts;
    topts.now = clock_->Now();
    topts.include_object = IncludeObjectOf(*q);
    const bool table = AcceptsTable(req.accept) && req.method == "GET";
    return Respond(ServeLeases(leases_, req, lease_seg, q->Has("dryRun"), *opts, table ? &topts : nullptr));
  }
  if (seg.size() == 2 && seg[0] == "api" && seg[1] == "v1") return fixed(CoreV1ResourcesJson());
  if (seg.size() == 2 && seg[0] == "openapi" && seg[1] == "v3") {
    return fixed(OpenApiV3RootJson(leases_ != nullptr));
  }
  if (seg.size() == 5 && seg[0] == "openapi" && seg[1] == "v3" && seg[2] == "apis" &&
      seg[3] == "coordination.k8s.io" && seg[4] == "v1" && leases_ != nullptr) {
    return fixed(OpenApiV3CoordinationV1Json());
  }
  if (seg.size() == 4 && seg[0] == "openapi" && seg[1] == "v3" && seg[2] == "api" && seg[3] == "v1") {
    return fixed(OpenApiV3CoreV1Json());
  }
  if (seg.size() >= 2 && seg[0] == "apis" &&
      (seg[1] == "authorization.k8s.io" || seg[1] == "authentication.k8s.io")) {
    return Respond(ServeSelfReviews(req, seg, path));
  }
  if (seg.size() < 3 || seg[0] != "api" || seg[1] != "v1") return Respond(NotFound(path));
  if (seg[2] == "namespaces" && seg.size() <= 4) {
    const std::string* ns_name = seg.size() == 4 ? &seg[3] : nullptr;
    Result<bool> watch = WatchRequested(*q, false);
    if (!watch.ok()) return Respond(ErrorResponse(watch.status()));
    if (*watch) return WatchNamespaces(registry_, clock_, req, *q, ns_name, sink);
    return Respond(ServeNamespaces(registry_, clock_, req, *q, ns_name));
  }

  size_t i = 2;
  const bool watch_path = seg[i] == "watch";
  if (watch_path) ++i;
  std::string ns;
  bool cluster_scope = true;
  if (i < seg.size() && seg[i] == "namespaces") {
    if (i + 2 >= seg.size()) return Respond(NotFound(path));
    ns = seg[i + 1];
    cluster_scope = false;
    i += 2;
  }
  if (i >= seg.size()) return Respond(NotFound(path));
  if (seg[i] == "nodes") {
    // Cluster-scoped: /api/v1/[watch/]nodes[/{name}[/status]].
    if (!cluster_scope) return Respond(NotFound(path));
    ++i;
    const std::string* node = i < seg.size() ? &seg[i++] : nullptr;
    const std::string* node_sub = i < seg.size() ? &seg[i++] : nullptr;
    if (i != seg.size()) return Respond(NotFound(path));
    if (node_sub == nullptr) {
      return ServeResource(&registry_->nodes(), static_cast<WatchCache<Node>*>(nullptr), clock_, req, *q,
                           true, watch_path, "", node, sink, /*namespaced=*/false);
    }
    if (watch_path || *node_sub != "status") return Respond(NotFound(path));
    return Respond(ServeStatus(&registry_->nodes(), clock_, req, *q, "", *node));
  }
  if (seg[i] == "bindings" && !cluster_scope && !watch_path && i + 1 == seg.size()) {
    return Respond(ServeBinding(registry_, req, *q, ns, nullptr));
  }
  const std::string& resource = seg[i++];
  if (resource == "events") {
    const std::string* event = i < seg.size() ? &seg[i++] : nullptr;
    if (i != seg.size() || (event != nullptr && cluster_scope)) return Respond(NotFound(path));
    Result<bool> watch = WatchRequested(*q, watch_path);
    if (!watch.ok()) return Respond(ErrorResponse(watch.status()));
    if (*watch) return WatchEvents(&events_, clock_, req, *q, cluster_scope ? "" : ns, event, sink);
    return Respond(ServeEvents(&events_, registry_, clock_, req, *q, cluster_scope, ns, event));
  }
  const bool pods = resource == "pods";
  if (!pods && resource != "replicationcontrollers") return Respond(NotFound(path));
  const std::string* name = i < seg.size() ? &seg[i++] : nullptr;
  const std::string* sub = i < seg.size() ? &seg[i++] : nullptr;
  if (i != seg.size() || (name != nullptr && cluster_scope)) return Respond(NotFound(path));

  // NamespaceLifecycle admission: no object is created in a namespace that does not exist.
  PatchType patch_type;
  const bool creates =
      req.method == "POST" || (req.method == "PATCH" && PatchTypeOf(req.content_type, &patch_type) &&
                               patch_type == PatchType::kApply);
  if (creates && !cluster_scope && sub == nullptr) {
    if (Status s = Namespaces(registry_).CheckExists(ns); !s.ok()) return Respond(ErrorResponse(s));
  }
  if (sub == nullptr) {
    if (pods) {
      return ServeResource(&registry_->pods(), &registry_->pod_cache(), clock_, req, *q, cluster_scope,
                           watch_path, ns, name, sink);
    }
    return ServeResource(&registry_->controllers(), &registry_->controller_cache(), clock_, req, *q,
                         cluster_scope, watch_path, ns, name, sink);
  }
  if (watch_path) return Respond(NotFound(path));
  if (*sub == "status") {
    if (pods) return Respond(ServeStatus(&registry_->pods(), clock_, req, *q, ns, *name));
    return Respond(ServeStatus(&registry_->controllers(), clock_, req, *q, ns, *name));
  }
  if (*sub == "scale" && !pods) return Respond(ServeScale(registry_, req, ns, *name, *q));
  if (*sub == "binding" && pods) return Respond(ServeBinding(registry_, req, *q, ns, name));
  if (*sub == "eviction" && pods) return Respond(ServeEviction(registry_, req, *q, ns, *name));
  if (*sub == "log" && pods) return ServePodLog(registry_, req, ns, *name, sink);
  return Respond(NotFound(path));
}

Result<DeleteOptions> DeleteOptionsFromBody(std::string_view body, DeleteOptions opts) {
  Result<json> j = ParseBody(body);
  if (!j.ok()) return j.status();
  return DeleteOptionsFromJson(*j, std::move(opts));
}

Result<DeleteOptions> DeleteOptionsFromJson(const json& options, DeleteOptions opts) {
  const json* j = &options;
  if (!j->is_object()) return Status(Code::kBadRequest, "DeleteOptions must be an object");
  auto pre = j->find("preconditions");
  if (pre != j->end() && !pre->is_null()) {
    if (!pre->is_object()) {
      return Status(Code::kBadRequest, "preconditions must be an object");
    }
    auto uid = pre->find("uid");
    auto rv = pre->find("resourceVersion");
    if ((uid != pre->end() && !uid->is_string() && !uid->is_null()) ||
        (rv != pre->end() && !rv->is_string() && !rv->is_null())) {
      return Status(Code::kBadRequest, "preconditions must be strings");
    }
    if (uid != pre->end() && uid->is_string()) opts.precondition_uid = *uid;
    if (rv != pre->end() && rv->is_string()) opts.precondition_resource_version = *rv;
  }
  auto grace = j->find("gracePeriodSeconds");
  if (grace != j->end() && !grace->is_null()) {
    if (!grace->is_number_integer())
      return Status(Code::kBadRequest, "gracePeriodSeconds must be an integer");
    opts.grace_period_seconds = grace->get<int64_t>();
  }
  auto policy = j->find("propagationPolicy");
  if (policy != j->end() && !policy->is_null()) {
    if (!policy->is_string()) return Status(Code::kBadRequest, "propagationPolicy must be a string");
    opts.propagation_policy = *policy;
  }
  // The deprecated orphanDependents: true is Orphan, false is Background (when no policy is given).
  auto orphan = j->find("orphanDependents");
  if (orphan != j->end() && !orphan->is_null()) {
    if (!orphan->is_boolean()) return Status(Code::kBadRequest, "orphanDependents must be a boolean");
    if (!opts.propagation_policy.empty()) {
      return Status(Code::kInvalid, "orphanDependents and propagationPolicy cannot both be set",
                    {{"propagationPolicy", "FieldValueInvalid",
                      "orphanDependents and deletionPropagation cannot be both set"}});
    }
    opts.propagation_policy = orphan->get<bool>() ? kPropagationOrphan : kPropagationBackground;
  }
  auto dry = j->find("dryRun");
  if (dry != j->end() && !dry->is_null()) {
    if (!dry->is_array()) return Status(Code::kBadRequest, "dryRun must be a list of strings");
    for (const json& v : *dry) {
      if (!v.is_string() || v.get_ref<const std::string&>() != "All") {
        return Status(Code::kBadRequest,
                      "invalid dryRun value " + v.dump() + ": the only supported value is \"All\"");
      }
      opts.dry_run = true;
    }
  }
  return opts;
}

}  // namespace rcsim
