// The field table of the scenario format: every object the format has, every key of each, its type,
// bounds, whether it is required, and a one-line description. The parser (scenario.cc) reads keys only
// through this table (unknown keys, types, bounds and required keys come from it), and `rcsim schema`
// prints the JSON Schema generated from it, so the two cannot drift.
//
// To add a field: add a row to its object in scenario_fields.cc, then read it in scenario.cc with the
// ObjectReader accessor of its type. Cross-field rules (a controller that must exist, `at` within
// `duration`, template labels matching the selector) live in the parser only; the schema is the
// structural part of the contract.
#ifndef RCSIM_HARNESS_SCENARIO_FIELDS_H_
#define RCSIM_HARNESS_SCENARIO_FIELDS_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

namespace rcsim {

enum class FieldType {
  kString,            // any string
  kEnum,              // one of FieldSpec::values
  kName,              // a DNS-1123 subdomain (controller and scenario names)
  kDnsLabel,          // a DNS-1123 label (namespaces, container names)
  kControllerRef,     // a controller's name, or namespace/name (scenario.h: references)
  kSeed,              // an integer 0 .. 2^64-1
  kInteger,           // an integer within [min, max]
  kFraction,          // a number within [0, 1]
  kBool,              // true or false
  kTrue,              // true only (an "all: true" switch)
  kDuration,          // a duration string ("1m30s")
  kPositiveDuration,  // a duration string > 0
  kRange,             // a duration, or {"min": d, "max": d}
  kLabels,            // an object of label key -> label value
  kStringMap,         // an object of string -> string (annotations)
  kStringArray,       // an array of strings
  kVerbArray,         // an array of distinct API verbs
  kVerb,              // one API verb
  kPaths,             // a path or a list of paths (include)
  kMatrix,            // an object of parameter -> list of scalars (matrix)
  kObject,            // an object described by ObjectSpec `object`
  kObjectArray,       // an array of objects described by ObjectSpec `object`
};

struct FieldSpec {
  std::string_view key;
  FieldType type;
  std::string_view description;
  bool required = false;
  int64_t min = 0;                            // kInteger
  int64_t max = 0;                            // kInteger
  std::string_view object = {};               // kObject, kObjectArray: the ObjectSpec name
  std::vector<std::string_view> values = {};  // kEnum
  bool non_empty = false;                     // objects, maps and arrays: at least one entry
};

struct ObjectSpec {
  enum class Shape {
    kPlain,      // an object with the listed keys
    kOneAction,  // an event: the keys marked `action` hold its action, exactly one is given
    kOneKey,     // an expectation: exactly one of the object-valued keys, plus any of the others
  };
  std::string_view name;
  std::string_view description;
  std::vector<FieldSpec> fields;
  Shape shape = Shape::kPlain;
  std::vector<std::string_view> action_keys = {};  // kOneAction: which keys are actions
  // Groups of keys of which at most one may be given ("count, fraction and all are exclusive").
  std::vector<std::vector<std::string_view>> exclusive = {};
  // Groups of keys of which at least one must be given (checked by the parser with its own reason).
  std::vector<std::vector<std::string_view>> any_of = {};
};

// The objects of the format; "scenario" is the document.
const std::vector<ObjectSpec>& ScenarioObjectSpecs();
// The spec named `name`; aborts if there is none (a programming error).
const ObjectSpec& ScenarioObjectSpec(std::string_view name);
// The spec's field `key`, or nullptr.
const FieldSpec* FindField(const ObjectSpec& spec, std::string_view key);

// The JSON Schema (draft 2020-12) of a scenario document, generated from the table.
nlohmann::json ScenarioJsonSchema();

// Limits shared by the table and the parser.
inline constexpr int64_t kMaxReplicas = 10'000'000;
inline constexpr int64_t kMaxNodes = 100'000;
// Every duration in a scenario is at most this (100000h, ~11 years), so that every sum the parser and
// the runner form (at + for + lag, origin + duration + quiet period) stays far inside int64 nanoseconds.
inline constexpr int64_t kMaxScenarioDurationHours = 100'000;
// Documents nesting deeper than this are refused before any recursive work (scenarios need ~8).
inline constexpr int kMaxDocumentDepth = 64;

}  // namespace rcsim

#endif  // RCSIM_HARNESS_SCENARIO_FIELDS_H_
