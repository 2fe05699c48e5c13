#include "registry/node_validation.h"

#include <string>

#include "registry/validation.h"

namespace rcsim {

Status ValidateNode(const Node& node) {
  FieldErrors errs;
  const ObjectMeta& m = node.metadata;
  if (m.name.empty()) {
    errs.Required("metadata.name", "name or generateName is required");
  } else if (!IsDns1123Subdomain(m.name)) {
    errs.Invalid("metadata.name", Quote(m.name),
                 "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
                 "'-' or '.', and must start and end with an alphanumeric character");
  }
  if (!m.namespace_.empty()) errs.Forbidden("metadata.namespace", "not allowed on this type");
  ValidateLabels(m.labels, "metadata.labels", &errs);
  ValidateAnnotations(m.annotations, "metadata.annotations", &errs);
  for (std::size_t i = 0; i < node.spec.taints.size(); ++i) {
    const Taint& t = node.spec.taints[i];
    const std::string f = "spec.taints[" + std::to_string(i) + "]";
    if (t.key.empty() || !IsQualifiedName(t.key))
      errs.Invalid(f + ".key", Quote(t.key), "must be a qualified name");
    if (t.effect != "NoSchedule" && t.effect != "PreferNoSchedule" && t.effect != "NoExecute") {
      errs.NotSupported(f + ".effect", Quote(t.effect), {"NoExecute", "NoSchedule", "PreferNoSchedule"});
    }
  }
  for (std::size_t i = 0; i < node.status.conditions.size(); ++i) {
    const NodeCondition& c = node.status.conditions[i];
    const std::string f = "status.conditions[" + std::to_string(i) + "]";
    if (c.type.empty()) errs.Required(f + ".type");
    if (c.status != "True" && c.status != "False" && c.status != "Unknown") {
      errs.NotSupported(f + ".status", Quote(c.status), {"False", "True", "Unknown"});
    }
  }
  return errs.ToStatus("Node", m.name);
}

Status ValidateBinding(const Binding& binding) {
  FieldErrors errs;
  if (binding.metadata.name.empty()) errs.Required("metadata.name");
  if (binding.target_kind != "Node") errs.NotSupported("target.kind", Quote(binding.target_kind), {"Node"});
  if (binding.target_name.empty()) errs.Required("target.name");
  return errs.ToStatus("Binding", binding.metadata.name);
}

Status ValidateDeleteOptions(const DeleteOptions& opts) {
  FieldErrors errs;
  if (opts.grace_period_seconds && *opts.grace_period_seconds < 0) {
    errs.Invalid("gracePeriodSeconds", std::to_string(*opts.grace_period_seconds),
                 "must be greater than or equal to 0");
  }
  const std::string& p = opts.propagation_policy;
  if (!p.empty() && p != kPropagationOrphan && p != kPropagationBackground && p != kPropagationForeground) {
    errs.NotSupported("propagationPolicy", Quote(p), {"Background", "Foreground", "Orphan"});
  }
  return errs.ToStatus("DeleteOptions", "");
}

}  // namespace rcsim
