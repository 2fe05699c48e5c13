// The two front ends of scenario files: JSON and YAML text to one JSON value that the scenario parser
// reads, so one set of checks (and one schema) serves both formats.
//
// Both refuse duplicate keys (nlohmann and yaml-cpp would keep the last or both silently) and nesting
// deeper than kMaxDocumentDepth, before any recursive work. YAML scalars are typed as YAML 1.2's core
// schema does (plain `3` is an integer, `true` a boolean, `null`/`~`/empty a null, quoted scalars are
// strings); anchors and aliases are expanded (bounded in total size); one document per file.
//
// Error messages: JSON "<file>: <pointer>: <reason>", YAML "<file>:<line>:<col>: <pointer>: <reason>"
// (1-based line and column of the offending key or item; for a key that is missing, of its parent).
#ifndef RCSIM_HARNESS_SCENARIO_DOCUMENT_H_
#define RCSIM_HARNESS_SCENARIO_DOCUMENT_H_

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>

#include "engine/status.h"

namespace rcsim {

enum class DocumentFormat { kJson, kYaml };

// The format of a file by its name: .yaml and .yml are YAML, anything else JSON.
DocumentFormat FormatOfPath(std::string_view path);

struct ScenarioDocument {
  std::string file;
  DocumentFormat format = DocumentFormat::kJson;
  nlohmann::json value;
  // YAML only: JSON pointer -> (line, column), 1-based, of each key (for members) or item.
  std::map<std::string, std::pair<int, int>> locations;

  // The error text for `reason` at `pointer`: "file: /p: reason" or "file:L:C: /p: reason", with the
  // location of `pointer` or of its nearest located ancestor.
  std::string Error(const std::string& pointer, const std::string& reason) const;
};

Result<ScenarioDocument> ParseJsonDocument(std::string_view text, std::string_view file);
Result<ScenarioDocument> ParseYamlDocument(std::string_view text, std::string_view file);
Result<ScenarioDocument> ParseDocument(std::string_view text, std::string_view file, DocumentFormat format);
// Reads a file (format from its name); unreadable: "<file>: cannot read the file".
Result<ScenarioDocument> LoadDocument(const std::string& path);

// `value` as block-style YAML that ParseYamlDocument maps back to exactly `value` (strings are plain
// where YAML would not read them as another type, else double-quoted). For converting JSON scenarios.
// The ordered form keeps the keys in the order given (a file's own order).
std::string EmitYaml(const nlohmann::json& value);
std::string EmitYaml(const nlohmann::ordered_json& value);

}  // namespace rcsim

#endif  // RCSIM_HARNESS_SCENARIO_DOCUMENT_H_
