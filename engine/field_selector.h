// Field selectors as Kubernetes writes them: comma-separated terms `field=value`, `field==value` or
// `field!=value` (e.g. "spec.nodeName=node-1,status.phase!=Failed").
//
// ParseFieldSelector fills ListOptions: a single `metadata.name=` term goes to field_name (the
// registry serves it with a one-key read), every other term to `fields`. Which fields a resource
// supports is the registry's business, not the parser's. Thread-safe (pure functions).
#ifndef RCSIM_ENGINE_FIELD_SELECTOR_H_
#define RCSIM_ENGINE_FIELD_SELECTOR_H_

#include <string>
#include <string_view>

#include "engine/api_client.h"
#include "engine/status.h"

namespace rcsim {

// kBadRequest ("invalid field selector: ...") for a term without an operator or without a field.
Status ParseFieldSelector(std::string_view text, ListOptions* opts);

// The fieldSelector of `opts` (field_name first, then `fields` in order); "" when there is none.
std::string FormatFieldSelector(const ListOptions& opts);

// True if every term of opts.fields holds for `value_of(field)`.
template <typename ValueOf>
bool FieldsMatch(const ListOptions& opts, ValueOf value_of) {
  for (const FieldRequirement& r : opts.fields) {
    if ((value_of(r.field) == r.value) != r.equal) return false;
  }
  return true;
}

}  // namespace rcsim

#endif  // RCSIM_ENGINE_FIELD_SELECTOR_H_
