#include "engine/json_depth.h"

#include <string>

#include "engine/json_parse.h"

namespace rcsim {

int JsonNestingDepth(std::string_view text, int limit) {
  int depth = 0;
  int deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character cannot end the string
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    switch (c) {
      case '"': in_string = true; break;
      case '[':
      case '{':
        if (++depth > deepest) {
          deepest = depth;
          if (deepest > limit) return limit + 1;
        }
        break;
      case ']':
      case '}':
        if (depth > 0) --depth;
        break;
      default: break;
    }
  }
  return deepest;
}

Result<nlohmann::json> ParseBoundedJson(std::string_view text, std::string_view what, int max_depth) {
  if (JsonNestingDepth(text, max_depth) > max_depth) {
    return Status(Code::kBadRequest,
                  std::string(what) + " nests deeper than " + std::to_string(max_depth) + " levels");
  }
  nlohmann::json j = ParseJson(text);
  if (j.is_discarded()) return Status(Code::kBadRequest, std::string(what) + " is not valid JSON");
  return j;
}

}  // namespace rcsim
