#include "backends/http/patch.h"

#include <string>
#include <utility>
#include <vector>

#include "backends/http/strategic_merge.h"
#include "engine/json_depth.h"

namespace rcsim {
namespace {

using json = nlohmann::json;

// How much of a malformed operation an error message quotes.
constexpr size_t kMaxQuotedOp = 256;

std::string_view MediaType(std::string_view content_type) {
  std::string_view t = content_type.substr(0, content_type.find(';'));
  while (!t.empty() && t.back() == ' ') t.remove_suffix(1);
  while (!t.empty() && t.front() == ' ') t.remove_prefix(1);
  return t;
}

}  // namespace

bool PatchTypeOf(std::string_view content_type, PatchType* type) {
  const std::string_view t = MediaType(content_type);
  if (t == "application/merge-patch+json") {
    *type = PatchType::kMerge;
  } else if (t == "application/strategic-merge-patch+json") {
    *type = PatchType::kStrategicMerge;
  } else if (t == "application/json-patch+json") {
    *type = PatchType::kJsonPatch;
  } else if (t == "application/apply-patch+yaml" || t == "application/apply-patch+json") {
    *type = PatchType::kApply;
  } else {
    return false;
  }
  return true;
}

Result<json> ApplyPatch(const json& target, PatchType type, std::string_view patch_body,
                        std::string_view schema_type) {
  // Bounded before any recursive work: directive stripping, merge_patch, patch() and the dump of a
  // malformed operation all recurse once per level.
  Result<json> parsed = ParseBoundedJson(patch_body, "the patch body");
  if (!parsed.ok()) return parsed.status();
  json patch = std::move(parsed).value();
  switch (type) {
    case PatchType::kStrategicMerge: return StrategicMergePatch(target, patch, schema_type);
    case PatchType::kApply:
      return Status(Code::kBadRequest, "server-side apply is handled with field ownership, not as a patch");
    case PatchType::kMerge: {
      if (!patch.is_object()) return Status(Code::kBadRequest, "a merge patch must be a JSON object");
      json out = target;
      out.merge_patch(patch);
      return out;
    }
    case PatchType::kJsonPatch: {
      if (!patch.is_array()) {
        return Status(Code::kBadRequest, "a JSON patch must be an array of operations");
      }
      for (const json& op : patch) {
        if (!op.is_object() || !op.contains("op") || !op["op"].is_string() || !op.contains("path") ||
            !op["path"].is_string()) {
          std::string text = op.dump(-1, ' ', false, json::error_handler_t::replace);
          if (text.size() > kMaxQuotedOp) text = text.substr(0, kMaxQuotedOp) + "...";
          return Status(Code::kBadRequest, "malformed JSON patch operation: " + text);
        }
      }
      // nlohmann reports an inapplicable operation (bad pointer, missing path, failed test) by
      // exception: this is the parse boundary.
      try {
        return target.patch(patch);
      } catch (const json::exception& e) {
        return Status(Code::kInvalid, std::string("the JSON patch could not be applied: ") + e.what());
      }
    }
  }
  return Status(Code::kBadRequest, "unsupported patch type");
}

}  // namespace rcsim
