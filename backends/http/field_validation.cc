#include "backends/http/field_validation.h"

#include <utility>

#include "backends/http/core_v1_schema.h"

namespace rcsim {
namespace {

using nlohmann::json;

void Walk(const json& v, std::string_view type, const std::string& path, std::vector<std::string>* out);

// A value whose declared element type is `elem` ("scalar", "any" or a type name).
void WalkElem(const json& v, const std::string& elem, const std::string& path,
              std::vector<std::string>* out) {
  if (elem.empty() || elem == "scalar" || elem == "any") return;
  Walk(v, elem, path, out);
}

void Walk(const json& v, std::string_view type, const std::string& path, std::vector<std::string>* out) {
  if (!v.is_object() || !IsSchemaType(type)) return;  // type errors are the decoder's to report
  for (const auto& [k, child] : v.items()) {
    const std::string p = path.empty() ? k : path + "." + k;
    const SchemaField* f = FindSchemaField(type, k);
    if (f == nullptr) {
      out->push_back(p);
      continue;
    }
    switch (f->kind) {
      case SchemaField::Kind::kObject: WalkElem(child, f->elem, p, out); break;
      case SchemaField::Kind::kList:
        if (child.is_array()) {
          for (std::size_t i = 0; i < child.size(); ++i) {
            WalkElem(child[i], f->elem, p + "[" + std::to_string(i) + "]", out);
          }
        }
        break;
      case SchemaField::Kind::kMap:
        if (child.is_object()) {
          for (const auto& [mk, mv] : child.items()) WalkElem(mv, f->elem, p + "." + mk, out);
        }
        break;
      case SchemaField::Kind::kScalar:
      case SchemaField::Kind::kAny: break;
    }
  }
}

void Prune(json& v, std::string_view type) {
  if (!v.is_object() || !IsSchemaType(type)) return;
  for (auto it = v.begin(); it != v.end();) {
    const SchemaField* f = FindSchemaField(type, it.key());
    if (f == nullptr) {
      it = v.erase(it);
      continue;
    }
    const bool typed = !f->elem.empty() && f->elem != "scalar" && f->elem != "any";
    if (typed && f->kind == SchemaField::Kind::kObject) {
      Prune(*it, f->elem);
    } else if (typed && f->kind == SchemaField::Kind::kList && it->is_array()) {
      for (json& e : *it) Prune(e, f->elem);
    } else if (typed && f->kind == SchemaField::Kind::kMap && it->is_object()) {
      for (auto& [mk, mv] : it->items()) Prune(mv, f->elem);
    }
    ++it;
  }
}

}  // namespace

void PruneUnknownFields(json& object, std::string_view type) { Prune(object, type); }

Result<FieldValidation> ParseFieldValidation(std::string_view value) {
  if (value.empty() || value == "Ignore") return FieldValidation::kIgnore;
  if (value == "Warn") return FieldValidation::kWarn;
  if (value == "Strict") return FieldValidation::kStrict;
  return Status(Code::kBadRequest, "fieldValidation parameter unsupported: " + std::string(value) +
                                       " (must be Ignore, Warn or Strict)");
}

std::vector<std::string> UnknownFieldPaths(const json& object, std::string_view type) {
  std::vector<std::string> out;
  Walk(object, type, "", &out);
  return out;
}

Status CheckFields(const json& object, std::string_view type, FieldValidation mode,
                   std::vector<std::string>* warnings) {
  if (mode == FieldValidation::kIgnore) return Status::Ok();
  const std::vector<std::string> unknown = UnknownFieldPaths(object, type);
  if (unknown.empty()) return Status::Ok();
  if (mode == FieldValidation::kWarn) {
    for (const std::string& p : unknown) warnings->push_back("unknown field \"" + p + "\"");
    return Status::Ok();
  }
  std::string msg = "strict decoding error: ";
  for (std::size_t i = 0; i < unknown.size(); ++i) {
    if (i > 0) msg += ", ";
    msg += "unknown field \"" + unknown[i] + "\"";
  }
  return Status(Code::kBadRequest, std::move(msg));
}

}  // namespace rcsim
