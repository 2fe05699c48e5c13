#include "backends/http/request_info.h"

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace rcsim {
namespace {

// The resources this server serves; anything else is "other" (a 404), so the label set stays bounded.
constexpr std::array<std::string_view, 10> kResources = {"pods",
                                                         "replicationcontrollers",
                                                         "namespaces",
                                                         "nodes",
                                                         "events",
                                                         "bindings",
                                                         "leases",
                                                         "selfsubjectreviews",
                                                         "selfsubjectaccessreviews",
                                                         "selfsubjectrulesreviews"};
constexpr std::array<std::string_view, 6> kSubresources = {"status", "scale",    "binding",
                                                           "log",    "finalize", "eviction"};
// Non-resource paths reported by name (kube-apiserver reports its own fixed paths the same way).
constexpr std::array<std::string_view, 10> kPaths = {"/healthz",    "/livez",     "/readyz", "/metrics",
                                                     "/version",    "/api",       "/apis",   "/api/v1",
                                                     "/openapi/v3", "/openapi/v2"};

template <std::size_t N>
bool OneOf(const std::array<std::string_view, N>& set, std::string_view s) {
  for (std::string_view x : set) {
    if (x == s) return true;
  }
  return false;
}

std::vector<std::string_view> Split(std::string_view path) {
  std::vector<std::string_view> out;
  while (!path.empty()) {
    const std::size_t slash = path.find('/');
    if (slash != 0) out.push_back(path.substr(0, slash));
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return out;
}

// ?watch=true or ?watch=1 (kube-apiserver accepts both).
bool WatchQuery(std::string_view query) {
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view kv = query.substr(0, amp);
    if (kv == "watch=true" || kv == "watch=1") return true;
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return false;
}

std::string_view MediaType(std::string_view content_type) {
  std::string_view t = content_type.substr(0, content_type.find(';'));
  while (!t.empty() && t.back() == ' ') t.remove_suffix(1);
  return t;
}

}  // namespace

RequestInfo ClassifyRequest(std::string_view method, std::string_view target, std::string_view content_type) {
  const std::size_t qmark = target.find('?');
  const std::string_view path = target.substr(0, qmark);
  const std::string_view query =
      qmark == std::string_view::npos ? std::string_view() : target.substr(qmark + 1);
  RequestInfo info;
  std::vector<std::string_view> parts = Split(path);
  std::size_t i = 0;
  if (parts.size() >= 3 && parts[0] == "api") {
    info.version = std::string(parts[1]);
    i = 2;
  } else if (parts.size() >= 4 && parts[0] == "apis") {
    info.group = std::string(parts[1]);
    info.version = std::string(parts[2]);
    i = 3;
  } else {
    info.verb = std::string(method);
    info.subresource = OneOf(kPaths, path) ? std::string(path) : "other";
    return info;
  }
  bool watch = false;
  if (parts[i] == "watch") {
    watch = true;
    ++i;
  }
  bool named = false;
  bool namespaced = false;
  if (i < parts.size() && parts[i] == "namespaces" && i + 1 < parts.size()) {
    // /namespaces/{ns}/{resource}...; /namespaces/{name}[/status|/finalize] is the namespace itself.
    if (i + 2 < parts.size() && parts[i + 2] != "status" && parts[i + 2] != "finalize") {
      namespaced = true;
      i += 2;
    }
  }
  if (i < parts.size()) {
    info.resource = OneOf(kResources, parts[i]) ? std::string(parts[i]) : "other";
    ++i;
  }
  if (i < parts.size()) {
    named = true;
    ++i;
  }
  if (i < parts.size()) info.subresource = OneOf(kSubresources, parts[i]) ? std::string(parts[i]) : "other";
  info.scope = named ? "resource" : namespaced ? "namespace" : "cluster";

  if (method == "GET" || method == "HEAD") {
    if (watch || (!named && WatchQuery(query))) {
      info.verb = "WATCH";
    } else {
      info.verb = named ? "GET" : "LIST";
    }
  } else if (method == "POST") {
    info.verb = "POST";
  } else if (method == "PUT") {
    info.verb = "PUT";
  } else if (method == "PATCH") {
    info.verb = MediaType(content_type) == "application/apply-patch+yaml" ? "APPLY" : "PATCH";
  } else if (method == "DELETE") {
    info.verb = named ? "DELETE" : "DELETECOLLECTION";
  } else {
    info.verb = "other";
  }
  info.long_running = info.verb == "WATCH" || info.subresource == "log";
  return info;
}

}  // namespace rcsim
