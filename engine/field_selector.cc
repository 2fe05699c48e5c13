#include "engine/field_selector.h"

namespace rcsim {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

}  // namespace

Status ParseFieldSelector(std::string_view text, ListOptions* opts) {
  while (!text.empty()) {
    const size_t comma = text.find(',');
    std::string_view term = Trim(text.substr(0, comma));
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    if (term.empty()) continue;
    FieldRequirement r;
    std::string_view key, value;
    if (size_t ne = term.find("!="); ne != std::string_view::npos) {
      r.equal = false;
      key = term.substr(0, ne);
      value = term.substr(ne + 2);
    } else if (size_t eq = term.find('='); eq != std::string_view::npos) {
      key = term.substr(0, eq);
      value = term.substr(eq + 1);
      if (!value.empty() && value.front() == '=') value.remove_prefix(1);  // "=="
    } else {
      return Status(Code::kBadRequest, "invalid field selector: " + std::string(term));
    }
    key = Trim(key);
    value = Trim(value);
    if (key.empty() || value.find_first_of("=!") != std::string_view::npos) {
      return Status(Code::kBadRequest, "invalid field selector: " + std::string(term));
    }
    r.field = std::string(key);
    r.value = std::string(value);
    if (r.equal && r.field == "metadata.name" && !r.value.empty() && opts->field_name.empty()) {
      opts->field_name = r.value;
    } else {
      opts->fields.push_back(std::move(r));
    }
  }
  return Status::Ok();
}

std::string FormatFieldSelector(const ListOptions& opts) {
  std::string out;
  if (!opts.field_name.empty()) out = "metadata.name=" + opts.field_name;
  for (const FieldRequirement& r : opts.fields) {
    if (!out.empty()) out += ',';
    out += r.field;
    out += r.equal ? "=" : "!=";
    out += r.value;
  }
  return out;
}

}  // namespace rcsim
