// Validation of pods and replication controllers, as the Kubernetes API server validates core/v1.
//
// Every check returns Status::Ok() or Code::kInvalid with one StatusCause per problem and a message in
// Kubernetes' form:
//   ReplicationController "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or
//   equal to 0
// (several causes are joined as "[a, b]"). Cause reasons are Kubernetes' (FieldValueInvalid,
// FieldValueRequired, FieldValueForbidden, FieldValueDuplicate, FieldValueNotSupported,
// FieldValueTooLong) and cause messages are the part after the field ("Invalid value: -1: ...").
//
// Thread-safety: pure functions.
#ifndef RCSIM_REGISTRY_VALIDATION_H_
#define RCSIM_REGISTRY_VALIDATION_H_

#include <string>
#include <string_view>
#include <vector>

#include "engine/status.h"
#include "engine/types.h"

namespace rcsim {

// Collects field errors for one object.
class FieldErrors {
 public:
  void Invalid(std::string field, std::string_view shown_value, std::string_view detail);
  void Required(std::string field, std::string_view detail = {});
  void Forbidden(std::string field, std::string_view detail);
  void Duplicate(std::string field, std::string_view shown_value);
  void NotSupported(std::string field, std::string_view shown_value,
                    const std::vector<std::string>& supported);
  void TooLong(std::string field, std::size_t max_length);

  bool empty() const { return causes_.empty(); }
  const std::vector<StatusCause>& causes() const { return causes_; }
  // Ok if empty; otherwise kInvalid: `<kind> "<name>" is invalid: <causes>`.
  Status ToStatus(std::string_view kind, std::string_view name) const;

 private:
  std::vector<StatusCause> causes_;
};

// "\"value\"" with quotes and backslashes escaped, as Go's %q.
std::string Quote(std::string_view s);

// Names (empty is invalid). DNS-1123 subdomain: <= 253 chars of [a-z0-9.-], starting and ending
// alphanumeric. DNS-1123 label: <= 63 chars of [a-z0-9-], starting and ending alphanumeric.
bool IsDns1123Subdomain(std::string_view s);
bool IsDns1123Label(std::string_view s);
// Label / annotation keys: [prefix/]name, prefix a DNS-1123 subdomain, name <= 63 chars of
// [A-Za-z0-9._-] starting and ending alphanumeric.
bool IsQualifiedName(std::string_view s);
// Label values: empty, or <= 63 chars of [A-Za-z0-9._-] starting and ending alphanumeric.
bool IsValidLabelValue(std::string_view s);

// Checks that do not depend on the kind. `field` is the path prefix ("metadata",
// "spec.template.metadata").
void ValidateLabels(const Labels& labels, std::string_view field, FieldErrors* errs);
void ValidateAnnotations(const Labels& annotations, std::string_view field, FieldErrors* errs);
// Name (a DNS-1123 subdomain; "Required value" when neither name nor generateName is set),
// namespace (a DNS-1123 label), labels, annotations, owner references.
void ValidateObjectMeta(const ObjectMeta& meta, FieldErrors* errs);
void ValidatePodSpec(const PodSpec& spec, std::string_view field, FieldErrors* errs);

// Whole objects, on create and on update (the registry validates the object it is about to store).
Status ValidatePod(const Pod& pod);
Status ValidateController(const ReplicationController& rc);
// Pod spec immutability on update: only spec.nodeName may be set (once, from empty) and container
// images may change.
Status ValidatePodUpdate(const Pod& updated, const Pod& old);
Status ValidateControllerStatus(const ReplicationController& rc);
Status ValidatePodStatus(const Pod& pod);

}  // namespace rcsim

#endif  // RCSIM_REGISTRY_VALIDATION_H_
