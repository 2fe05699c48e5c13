#include "backends/httpclient/rest_wire.h"

#include <utility>
#include <vector>

#include "engine/codec.h"
#include "engine/field_selector.h"
#include "engine/json_parse.h"
#include "engine/node_codec.h"

namespace rcsim {
namespace {

using nlohmann::json;

bool IsUnreserved(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
         c == '_' || c == '~';
}

void AppendParam(std::string* out, std::string_view key, std::string_view value) {
  if (!out->empty()) out->push_back('&');
  out->append(key);
  out->push_back('=');
  out->append(PercentEncode(value));
}

std::string StringField(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return "";
  return it->get<std::string>();
}

std::vector<StatusCause> CausesOf(const json& status) {
  std::vector<StatusCause> causes;
  auto details = status.find("details");
  if (details == status.end() || !details->is_object()) return causes;
  auto arr = details->find("causes");
  if (arr == details->end() || !arr->is_array()) return causes;
  for (const json& c : *arr) {
    if (!c.is_object()) continue;
    causes.push_back({StringField(c, "field"), StringField(c, "reason"), StringField(c, "message")});
  }
  return causes;
}

Code CodeFromHttp(int http_status, std::string_view reason) {
  switch (http_status) {
    case 400: return Code::kBadRequest;
    case 401: return Code::kUnauthorized;
    case 403: return Code::kForbidden;
    case 404: return Code::kNotFound;
    case 405: return Code::kMethodNotAllowed;
    case 409: return reason == "AlreadyExists" ? Code::kAlreadyExists : Code::kConflict;
    case 410: return Code::kGone;
    case 413: return Code::kRequestTooLarge;
    case 415: return Code::kBadRequest;
    case 422: return Code::kInvalid;
    case 429: return Code::kUnavailable;
    case 500: return Code::kInternal;
    case 504: return Code::kTimeout;
    default: break;
  }
  return http_status >= 500 ? Code::kUnavailable : Code::kBadRequest;
}

template <typename T>
Result<std::shared_ptr<const T>> ObjectFrom(const json& j) {
  Result<T> obj = RestResource<T>::FromJson(j);
  if (!obj.ok()) return Status(Code::kInternal, "undecodable object from server: " + obj.status().message());
  return std::shared_ptr<const T>(std::make_shared<T>(std::move(obj).value()));
}

}  // namespace

std::string RestResource<Lease>::Encode(const Lease& lease) { return EncodeLease(lease); }
Result<Lease> RestResource<Lease>::FromJson(const nlohmann::json& j) { return LeaseFromJson(j); }
std::string RestResource<Pod>::Encode(const Pod& pod) { return EncodePod(pod); }
Result<Pod> RestResource<Pod>::FromJson(const nlohmann::json& j) { return PodFromJson(j); }
std::string RestResource<ReplicationController>::Encode(const ReplicationController& rc) {
  return EncodeController(rc);
}
Result<ReplicationController> RestResource<ReplicationController>::FromJson(const nlohmann::json& j) {
  return ControllerFromJson(j);
}

std::string RestResource<Node>::Encode(const Node& node) { return EncodeNode(node); }
Result<Node> RestResource<Node>::FromJson(const nlohmann::json& j) { return NodeFromJson(j); }

std::string PercentEncode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (IsUnreserved(c)) {
      out.push_back(c);
    } else {
      const auto b = static_cast<unsigned char>(c);
      out.push_back('%');
      out.push_back(kHex[b >> 4]);
      out.push_back(kHex[b & 0xF]);
    }
  }
  return out;
}

std::string ResourcePath(std::string_view plural, std::string_view ns, std::string_view name,
                         std::string_view subresource) {
  std::string path = "/api/v1/";
  if (!ns.empty()) {
    path += "namespaces/";
    path += PercentEncode(ns);
    path += '/';
  }
  path += plural;
  if (!name.empty()) {
    path += '/';
    path += PercentEncode(name);
    if (!subresource.empty()) {
      path += '/';
      path += subresource;
    }
  }
  return path;
}

std::string ListQuery(const ListOptions& opts) {
  std::string q;
  if (!opts.label_selector.Empty()) AppendParam(&q, "labelSelector", opts.label_selector.ToString());
  if (!opts.field_name.empty() || !opts.fields.empty()) {
    AppendParam(&q, "fieldSelector", FormatFieldSelector(opts));
  }
  if (opts.limit > 0) AppendParam(&q, "limit", std::to_string(opts.limit));
  if (!opts.continue_token.empty()) AppendParam(&q, "continue", opts.continue_token);
  if (!opts.resource_version.empty()) AppendParam(&q, "resourceVersion", opts.resource_version);
  if (opts.resource_version_match == ResourceVersionMatch::kExact)
    AppendParam(&q, "resourceVersionMatch", "Exact");
  return q;
}

std::string WatchQuery(const ListOptions& opts, std::string_view resource_version) {
  ListOptions selectors;
  selectors.label_selector = opts.label_selector;
  selectors.field_name = opts.field_name;
  selectors.fields = opts.fields;
  std::string q = ListQuery(selectors);
  AppendParam(&q, "watch", "true");
  if (!resource_version.empty()) AppendParam(&q, "resourceVersion", resource_version);
  return q;
}

std::string DeleteOptionsBody(const DeleteOptions& opts) {
  const bool preconditions = !opts.precondition_uid.empty() || !opts.precondition_resource_version.empty();
  if (!preconditions && !opts.grace_period_seconds && opts.propagation_policy.empty()) return "";
  json body = {{"kind", "DeleteOptions"}, {"apiVersion", "v1"}};
  if (preconditions) {
    json pre = json::object();
    if (!opts.precondition_uid.empty()) pre["uid"] = opts.precondition_uid;
    if (!opts.precondition_resource_version.empty()) {
      pre["resourceVersion"] = opts.precondition_resource_version;
    }
    body["preconditions"] = std::move(pre);
  }
  if (opts.grace_period_seconds) body["gracePeriodSeconds"] = *opts.grace_period_seconds;
  if (!opts.propagation_policy.empty()) body["propagationPolicy"] = opts.propagation_policy;
  return body.dump();
}

Status StatusFromHttp(int http_status, std::string_view body) {
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!j.is_discarded() && j.is_object() && StringField(j, "kind") == "Status") {
    std::string message = StringField(j, "message");
    if (message.empty()) message = "HTTP " + std::to_string(http_status);
    return Status(CodeFromHttp(http_status, StringField(j, "reason")), std::move(message), CausesOf(j));
  }
  constexpr size_t kMaxQuoted = 200;
  std::string message = "HTTP " + std::to_string(http_status);
  if (!body.empty()) {
    message += ": ";
    message.append(body.substr(0, kMaxQuoted));
  }
  return Status(CodeFromHttp(http_status, ""), std::move(message));
}

Status StatusFromStatusJson(const nlohmann::json& j) {
  int code = 500;
  if (j.is_object()) {
    auto it = j.find("code");
    if (it != j.end() && it->is_number_integer()) code = it->get<int>();
  }
  if (code < 400) code = 500;  // an ERROR event always ends the watch with a failure
  std::string message = j.is_object() ? StringField(j, "message") : "";
  if (message.empty()) message = "watch error (HTTP " + std::to_string(code) + ")";
  return Status(CodeFromHttp(code, j.is_object() ? StringField(j, "reason") : ""), std::move(message),
                j.is_object() ? CausesOf(j) : std::vector<StatusCause>{});
}

template <typename T>
Result<std::shared_ptr<const T>> DecodeObjectResponse(std::string_view body) {
  json j = ParseJson(body);
  if (j.is_discarded()) return Status(Code::kInternal, "malformed JSON from server");
  return ObjectFrom<T>(j);
}

template <typename T>
Result<ObjectList<T>> DecodeListResponse(std::string_view body) {
  json j = ParseJson(body);
  if (j.is_discarded() || !j.is_object()) return Status(Code::kInternal, "malformed list from server");
  ObjectList<T> list;
  auto meta = j.find("metadata");
  if (meta != j.end() && meta->is_object()) {
    list.resource_version = StringField(*meta, "resourceVersion");
    list.continue_token = StringField(*meta, "continue");
  }
  auto items = j.find("items");
  if (items != j.end() && !items->is_null()) {
    if (!items->is_array()) return Status(Code::kInternal, "list from server: items is not an array");
    list.items.reserve(items->size());
    for (const json& item : *items) {
      Result<std::shared_ptr<const T>> obj = ObjectFrom<T>(item);
      if (!obj.ok()) return obj.status();
      list.items.push_back(std::move(obj).value());
    }
  }
  return list;
}

template <typename T>
Result<ApiWatchEvent<T>> DecodeWatchLine(std::string_view line) {
  json j = ParseJson(line);
  if (j.is_discarded() || !j.is_object()) {
    return Status(Code::kInternal, "malformed watch event from server");
  }
  const std::string type = StringField(j, "type");
  auto obj = j.find("object");
  if (obj == j.end()) return Status(Code::kInternal, "watch event without object");
  ApiWatchEvent<T> ev;
  if (type == "ERROR") {
    ev.type = ApiWatchEvent<T>::Type::kError;
    ev.error = StatusFromStatusJson(*obj);
    return ev;
  }
  if (type == "BOOKMARK") {
    ev.type = ApiWatchEvent<T>::Type::kBookmark;
    auto bookmark = std::make_shared<T>();
    if (obj->is_object()) {
      auto meta = obj->find("metadata");
      if (meta != obj->end() && meta->is_object()) {
        bookmark->metadata.resource_version = StringField(*meta, "resourceVersion");
      }
    }
    ev.object = std::move(bookmark);
    return ev;
  }
  if (type == "ADDED") {
    ev.type = ApiWatchEvent<T>::Type::kAdded;
  } else if (type == "MODIFIED") {
    ev.type = ApiWatchEvent<T>::Type::kModified;
  } else if (type == "DELETED") {
    ev.type = ApiWatchEvent<T>::Type::kDeleted;
  } else {
    return Status(Code::kInternal, "unknown watch event type \"" + type + "\"");
  }
  Result<std::shared_ptr<const T>> decoded = ObjectFrom<T>(*obj);
  if (!decoded.ok()) return decoded.status();
  ev.object = std::move(decoded).value();
  return ev;
}

template Result<std::shared_ptr<const Pod>> DecodeObjectResponse<Pod>(std::string_view);
template Result<std::shared_ptr<const ReplicationController>> DecodeObjectResponse<ReplicationController>(
    std::string_view);
template Result<ObjectList<Pod>> DecodeListResponse<Pod>(std::string_view);
template Result<ObjectList<ReplicationController>> DecodeListResponse<ReplicationController>(
    std::string_view);
template Result<ApiWatchEvent<Pod>> DecodeWatchLine<Pod>(std::string_view);
template Result<ApiWatchEvent<ReplicationController>> DecodeWatchLine<ReplicationController>(
    std::string_view);
template Result<std::shared_ptr<const Node>> DecodeObjectResponse<Node>(std::string_view);
template Result<ObjectList<Node>> DecodeListResponse<Node>(std::string_view);
template Result<ApiWatchEvent<Node>> DecodeWatchLine<Node>(std::string_view);
template Result<std::shared_ptr<const Lease>> DecodeObjectResponse<Lease>(std::string_view);
template Result<ObjectList<Lease>> DecodeListResponse<Lease>(std::string_view);
template Result<ApiWatchEvent<Lease>> DecodeWatchLine<Lease>(std::string_view);

}  // namespace rcsim
