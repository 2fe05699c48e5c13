// Includes and matrices: what turns one scenario file into the scenarios it describes.
//
// `include` (a path or a list of paths, relative to the including file) names files holding shared
// `cluster` and `manager` blocks (JSON or YAML, an object with only those keys). Their fields are
// defaults: a field the scenario gives itself wins, field by field; of two includes the later wins.
// An error in an included value is reported in the included file. Includes do not nest.
//
// `matrix` (an object of parameter -> non-empty list of scalar values) expands the file into one run
// per combination (the cartesian product, parameters in key order, values in list order, at most
// kMaxMatrixRuns). Every string "${p}" in the document is replaced by the value of p (keeping its
// type: "${replicas}" becomes the integer 10), and "${p}" inside a longer string by its text. Each run
// is named "<name>-<p1>-<v1>-<p2>-<v2>..." (lower-cased, other characters as '-') and its file is
// "<path>#<run name>", which `rcsim replay` accepts. Unknown and unused parameters are refused.
#ifndef RCSIM_HARNESS_SCENARIO_EXPAND_H_
#define RCSIM_HARNESS_SCENARIO_EXPAND_H_

#include <string>
#include <vector>

#include "engine/status.h"
#include "harness/scenario.h"

namespace rcsim {

inline constexpr std::size_t kMaxMatrixRuns = 10'000;

// Every scenario of the file at `path` (one unless it has a matrix). `path` may end in "#<run name>"
// to select one run of a matrix.
Result<std::vector<Scenario>> LoadScenarioFileRuns(const std::string& path);

}  // namespace rcsim

#endif  // RCSIM_HARNESS_SCENARIO_EXPAND_H_
