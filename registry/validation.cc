#include "registry/validation.h"

#include <set>

#include "engine/labels.h"

namespace rcsim {
namespace {

constexpr std::size_t kMaxSubdomainLength = 253;
constexpr std::size_t kMaxLabelLength = 63;
constexpr std::size_t kMaxAnnotationsBytes = std::size_t{256} * 1024;

constexpr const char* kSubdomainMsg =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
constexpr const char* kLabelMsg =
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
    "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
constexpr const char* kQualifiedNameMsg =
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
    "an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix "
    "and '/' (e.g. 'example.com/MyName')";
constexpr const char* kLabelValueMsg =
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "
    "'12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
constexpr const char* kNonNegativeMsg = "must be greater than or equal to 0";

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool IsAlnum(char c) { return IsLowerAlnum(c) || (c >= 'A' && c <= 'Z'); }

// [a-z0-9]([-a-z0-9]*[a-z0-9])?
bool IsLabelShaped(std::string_view s) {
  if (s.empty() || !IsLowerAlnum(s.front()) || !IsLowerAlnum(s.back())) return false;
  for (char c : s) {
    if (!IsLowerAlnum(c) && c != '-') return false;
  }
  return true;
}

// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9], non-empty.
bool IsNamePart(std::string_view s) {
  if (s.empty() || s.size() > kMaxLabelLength || !IsAlnum(s.front()) || !IsAlnum(s.back())) {
    return false;
  }
  for (char c : s) {
    if (!IsAlnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

std::string Field(std::string_view prefix, std::string_view child) {
  std::string f(prefix);
  if (!f.empty()) f += '.';
  f += child;
  return f;
}

std::string Indexed(std::string_view field, std::size_t i) {
  return std::string(field) + "[" + std::to_string(i) + "]";
}

// Go's %#v of a map[string]string, as Kubernetes prints label maps in messages.
std::string GoMap(const Labels& m) {
  std::string out = "map[string]string{";
  bool first = true;
  for (const auto& [k, v] : m) {
    if (!first) out += ", ";
    first = false;
    out += Quote(k) + ":" + Quote(v);
  }
  return out + "}";
}

void NonNegative(int64_t v, std::string_view field, FieldErrors* errs) {
  if (v < 0) errs->Invalid(std::string(field), std::to_string(v), kNonNegativeMsg);
}

}  // namespace

std::string Quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[(c >> 4) & 0xf];
      out += kHex[c & 0xf];
    } else {
      out += c;
    }
  }
  return out + "\"";
}

void FieldErrors::Invalid(std::string field, std::string_view shown_value, std::string_view detail) {
  std::string msg = "Invalid value: ";
  msg += shown_value;
  if (!detail.empty()) {
    msg += ": ";
    msg += detail;
  }
  causes_.push_back({std::move(field), "FieldValueInvalid", std::move(msg)});
}

void FieldErrors::Required(std::string field, std::string_view detail) {
  std::string msg = "Required value";
  if (!detail.empty()) {
    msg += ": ";
    msg += detail;
  }
  causes_.push_back({std::move(field), "FieldValueRequired", std::move(msg)});
}

void FieldErrors::Forbidden(std::string field, std::string_view detail) {
  causes_.push_back({std::move(field), "FieldValueForbidden", "Forbidden: " + std::string(detail)});
}

void FieldErrors::Duplicate(std::string field, std::string_view shown_value) {
  causes_.push_back(
      {std::move(field), "FieldValueDuplicate", "Duplicate value: " + std::string(shown_value)});
}

void FieldErrors::NotSupported(std::string field, std::string_view shown_value,
                               const std::vector<std::string>& supported) {
  std::string msg = "Unsupported value: " + std::string(shown_value) + ": supported values: ";
  for (std::size_t i = 0; i < supported.size(); ++i) {
    if (i > 0) msg += ", ";
    msg += Quote(supported[i]);
  }
  causes_.push_back({std::move(field), "FieldValueNotSupported", std::move(msg)});
}

void FieldErrors::TooLong(std::string field, std::size_t max_length) {
  causes_.push_back({std::move(field), "FieldValueTooLong",
                     "Too long: must have at most " + std::to_string(max_length) + " bytes"});
}

Status FieldErrors::ToStatus(std::string_view kind, std::string_view name) const {
  if (causes_.empty()) return Status::Ok();
  std::string msg(kind);
  msg += " " + Quote(name) + " is invalid: ";
  if (causes_.size() > 1) msg += "[";
  for (std::size_t i = 0; i < causes_.size(); ++i) {
    if (i > 0) msg += ", ";
    msg += causes_[i].field + ": " + causes_[i].message;
  }
  if (causes_.size() > 1) msg += "]";
  return Status(Code::kInvalid, std::move(msg), causes_);
}

bool IsDns1123Label(std::string_view s) { return s.size() <= kMaxLabelLength && IsLabelShaped(s); }

bool IsDns1123Subdomain(std::string_view s) {
  if (s.empty() || s.size() > kMaxSubdomainLength) return false;
  std::size_t start = 0;
  while (true) {
    std::size_t dot = s.find('.', start);
    std::string_view part = s.substr(start, dot == std::string_view::npos ? s.npos : dot - start);
    if (!IsLabelShaped(part)) return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

bool IsQualifiedName(std::string_view s) {
  std::size_t slash = s.find('/');
  if (slash == std::string_view::npos) return IsNamePart(s);
  if (s.find('/', slash + 1) != std::string_view::npos) return false;
  return IsDns1123Subdomain(s.substr(0, slash)) && IsNamePart(s.substr(slash + 1));
}

bool IsValidLabelValue(std::string_view s) { return s.empty() || IsNamePart(s); }

void ValidateLabels(const Labels& labels, std::string_view field, FieldErrors* errs) {
  for (const auto& [k, v] : labels) {
    if (!IsQualifiedName(k)) errs->Invalid(std::string(field), Quote(k), kQualifiedNameMsg);
    if (!IsValidLabelValue(v)) {
      if (v.size() > kMaxLabelLength) {
        errs->Invalid(std::string(field), Quote(v), "must be no more than 63 characters");
      } else {
        errs->Invalid(std::string(field), Quote(v), kLabelValueMsg);
      }
    }
  }
}

void ValidateAnnotations(const Labels& annotations, std::string_view field, FieldErrors* errs) {
  std::size_t total = 0;
  for (const auto& [k, v] : annotations) {
    std::string lower = k;
    for (char& c : lower) {
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    if (!IsQualifiedName(lower)) errs->Invalid(std::string(field), Quote(k), kQualifiedNameMsg);
    total += k.size() + v.size();
  }
  if (total > kMaxAnnotationsBytes) errs->TooLong(std::string(field), kMaxAnnotationsBytes);
}

void ValidateObjectMeta(const ObjectMeta& meta, FieldErrors* errs) {
  if (meta.name.empty()) {
    if (meta.generate_name.empty()) {
      errs->Required("metadata.name", "name or generateName is required");
    } else {
      // Validated as a prefix: a trailing '-' is allowed.
      std::string_view prefix = meta.generate_name;
      if (prefix.back() == '-') prefix.remove_suffix(1);
      if (!IsDns1123Subdomain(prefix)) {
        errs->Invalid("metadata.generateName", Quote(meta.generate_name), kSubdomainMsg);
      }
    }
  } else if (meta.name.size() > kMaxSubdomainLength) {
    errs->Invalid("metadata.name", Quote(meta.name), "must be no more than 253 characters");
  } else if (!IsDns1123Subdomain(meta.name)) {
    errs->Invalid("metadata.name", Quote(meta.name), kSubdomainMsg);
  }
  if (meta.namespace_.empty()) {
    errs->Required("metadata.namespace");
  } else if (!IsDns1123Label(meta.namespace_)) {
    errs->Invalid("metadata.namespace", Quote(meta.namespace_), kLabelMsg);
  }
  NonNegative(meta.generation, "metadata.generation", errs);
  ValidateLabels(meta.labels, "metadata.labels", errs);
  ValidateAnnotations(meta.annotations, "metadata.annotations", errs);
  int controllers = 0;
  for (std::size_t i = 0; i < meta.owner_references.size(); ++i) {
    const OwnerReference& ref = meta.owner_references[i];
    // The path is built only for an error: this runs on every write.
    auto f = [i](std::string_view member) {
      return Indexed("metadata.ownerReferences", i) + "." + std::string(member);
    };
    if (ref.api_version.empty())
      errs->Invalid(f("apiVersion"), Quote(ref.api_version), "version must not be empty");
    if (ref.kind.empty()) errs->Invalid(f("kind"), Quote(ref.kind), "kind must not be empty");
    if (ref.name.empty()) errs->Invalid(f("name"), Quote(ref.name), "name must not be empty");
    if (ref.uid.empty()) errs->Invalid(f("uid"), Quote(ref.uid), "uid must not be empty");
    if (ref.controller) ++controllers;
  }
  if (controllers > 1) {
    errs->Invalid("metadata.ownerReferences", std::to_string(controllers) + " controllers",
                  "Only one reference can have Controller set to true");
  }
}

void ValidatePodSpec(const PodSpec& spec, std::string_view field, FieldErrors* errs) {
  // Paths are built only for an error: this runs on every pod write.
  auto containers = [field] { return Field(field, "containers"); };
  auto f = [&](std::size_t i, std::string_view member) {
    return Indexed(containers(), i) + "." + std::string(member);
  };
  if (spec.containers.empty()) errs->Required(containers());
  std::set<std::string_view> names;
  for (std::size_t i = 0; i < spec.containers.size(); ++i) {
    const Container& c = spec.containers[i];
    if (c.name.empty()) {
      errs->Required(f(i, "name"));
    } else if (!IsDns1123Label(c.name)) {
      errs->Invalid(f(i, "name"), Quote(c.name), kLabelMsg);
    } else if (spec.containers.size() > 1 && !names.insert(c.name).second) {
      errs->Duplicate(f(i, "name"), Quote(c.name));
    }
    if (c.image.empty()) errs->Required(f(i, "image"));
  }
  if (spec.restart_policy.empty()) {
    errs->Required(Field(field, "restartPolicy"));
  } else if (spec.restart_policy != "Always" && spec.restart_policy != "OnFailure" &&
             spec.restart_policy != "Never") {
    errs->NotSupported(Field(field, "restartPolicy"), Quote(spec.restart_policy),
                       {"Always", "OnFailure", "Never"});
  }
  if (spec.termination_grace_period_seconds && *spec.termination_grace_period_seconds < 0) {
    NonNegative(*spec.termination_grace_period_seconds, Field(field, "terminationGracePeriodSeconds"), errs);
  }
  if (!spec.node_name.empty() && !IsDns1123Subdomain(spec.node_name)) {
    errs->Invalid(Field(field, "nodeName"), Quote(spec.node_name), kSubdomainMsg);
  }
}

Status ValidatePod(const Pod& pod) {
  FieldErrors errs;
  ValidateObjectMeta(pod.metadata, &errs);
  ValidatePodSpec(pod.spec, "spec", &errs);
  return errs.ToStatus("Pod", pod.metadata.name);
}

Status ValidateController(const ReplicationController& rc) {
  FieldErrors errs;
  ValidateObjectMeta(rc.metadata, &errs);
  const ReplicationControllerSpec& spec = rc.spec;
  if (spec.selector.empty()) {
    errs.Required("spec.selector");
  } else {
    ValidateLabels(spec.selector, "spec.selector", &errs);
  }
  NonNegative(spec.replicas, "spec.replicas", &errs);
  NonNegative(spec.min_ready_seconds, "spec.minReadySeconds", &errs);
  if (!spec.template_) {
    errs.Required("spec.template");
  } else {
    const PodTemplateSpec& t = *spec.template_;
    if (!spec.selector.empty() && !SelectorMapMatches(spec.selector, t.metadata.labels)) {
      errs.Invalid("spec.template.metadata.labels", GoMap(t.metadata.labels),
                   "`selector` does not match template `labels`");
    }
    ValidateLabels(t.metadata.labels, "spec.template.metadata.labels", &errs);
    ValidateAnnotations(t.metadata.annotations, "spec.template.metadata.annotations", &errs);
    ValidatePodSpec(t.spec, "spec.template.spec", &errs);
    if (!t.spec.restart_policy.empty() && t.spec.restart_policy != "Always") {
      errs.NotSupported("spec.template.spec.restartPolicy", Quote(t.spec.restart_policy), {"Always"});
    }
  }
  return errs.ToStatus("ReplicationController", rc.metadata.name);
}

Status ValidatePodUpdate(const Pod& updated, const Pod& old) {
  FieldErrors errs;
  // The spec may change only in spec.nodeName (once, from empty) and spec.containers[*].image: every
  // other member of PodSpec and Container is compared (no copy of the old spec: this runs on every
  // pod update, status writes included).
  const PodSpec& a = old.spec;
  const PodSpec& b = updated.spec;
  bool allowed = (a.node_name.empty() || a.node_name == b.node_name) &&
                 a.restart_policy == b.restart_policy &&
                 a.termination_grace_period_seconds == b.termination_grace_period_seconds &&
                 a.unknown_fields == b.unknown_fields && a.containers.size() == b.containers.size();
  for (std::size_t i = 0; allowed && i < a.containers.size(); ++i) {
    const Container& x = a.containers[i];
    const Container& y = b.containers[i];
    allowed = x.name == y.name && x.command == y.command && x.args == y.args &&
              x.unknown_fields == y.unknown_fields;
  }
  if (!allowed) {
    if (!old.spec.node_name.empty() && updated.spec.node_name != old.spec.node_name) {
      errs.Invalid("spec.nodeName", Quote(updated.spec.node_name),
                   "field is immutable once set (pod is already bound to " + Quote(old.spec.node_name) + ")");
    } else {
      errs.Forbidden("spec",
                     "pod updates may not change fields other than `spec.containers[*].image` "
                     "and `spec.nodeName` (once, from empty)");
    }
  }
  return errs.ToStatus("Pod", updated.metadata.name);
}

Status ValidatePodStatus(const Pod& pod) {
  FieldErrors errs;
  const std::string& p = pod.status.phase;
  if (!p.empty() && p != phase::kPending && p != phase::kRunning && p != phase::kSucceeded &&
      p != phase::kFailed && p != phase::kUnknown) {
    errs.NotSupported("status.phase", Quote(p),
                      {phase::kPending, phase::kRunning, phase::kSucceeded, phase::kFailed, phase::kUnknown});
  }
  for (std::size_t i = 0; i < pod.status.container_statuses.size(); ++i) {
    NonNegative(pod.status.container_statuses[i].restart_count,
                Indexed("status.containerStatuses", i) + ".restartCount", &errs);
  }
  return errs.ToStatus("Pod", pod.metadata.name);
}

Status ValidateControllerStatus(const ReplicationController& rc) {
  FieldErrors errs;
  const ReplicationControllerStatus& s = rc.status;
  NonNegative(s.replicas, "status.replicas", &errs);
  NonNegative(s.fully_labeled_replicas, "status.fullyLabeledReplicas", &errs);
  NonNegative(s.ready_replicas, "status.readyReplicas", &errs);
  NonNegative(s.available_replicas, "status.availableReplicas", &errs);
  NonNegative(s.observed_generation, "status.observedGeneration", &errs);
  constexpr const char* kAboveReplicas = "cannot be greater than status.replicas";
  if (s.fully_labeled_replicas > s.replicas) {
    errs.Invalid("status.fullyLabeledReplicas", std::to_string(s.fully_labeled_replicas), kAboveReplicas);
  }
  if (s.ready_replicas > s.replicas) {
    errs.Invalid("status.readyReplicas", std::to_string(s.ready_replicas), kAboveReplicas);
  }
  if (s.available_replicas > s.replicas) {
    errs.Invalid("status.availableReplicas", std::to_string(s.available_replicas), kAboveReplicas);
  }
  if (s.available_replicas > s.ready_replicas) {
    errs.Invalid("status.availableReplicas", std::to_string(s.available_replicas),
                 "cannot be greater than readyReplicas");
  }
  return errs.ToStatus("ReplicationController", rc.metadata.name);
}

}  // namespace rcsim
