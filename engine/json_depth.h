// Bounded JSON: nesting depth is checked on the raw bytes before a document is parsed.
//
// nlohmann::json parses iteratively, but dump(), copies, merge_patch() and every recursive walk over
// the parsed value recurse once per level, so a request body of ~70k '[' overflowed the API server's
// stack. Everything that parses untrusted bytes (request bodies, patches, values read from etcd) goes
// through ParseBoundedJson, which refuses a document nested deeper than the limit without building it.
//
// Thread-safety: pure functions.
#ifndef RCSIM_ENGINE_JSON_DEPTH_H_
#define RCSIM_ENGINE_JSON_DEPTH_H_

#include <nlohmann/json.hpp>
#include <string_view>

#include "engine/status.h"

namespace rcsim {

// Deeper than any Kubernetes object (a Pod nests about a dozen levels); shallow enough that the
// recursive walks above fit in a thread's stack many times over, sanitizers included.
inline constexpr int kMaxJsonDepth = 1000;

// The deepest nesting of arrays and objects in `text` (0 for a scalar), counting brackets outside
// string literals in one pass; stops counting once `limit` is exceeded and returns limit + 1. Exact
// for valid JSON; for malformed input an approximation the parser then rejects anyway.
int JsonNestingDepth(std::string_view text, int limit = kMaxJsonDepth);

// json::parse without exceptions, refusing first a document nested deeper than `max_depth`.
// kBadRequest for both ("<what> is not valid JSON", "<what> nests deeper than N levels").
Result<nlohmann::json> ParseBoundedJson(std::string_view text, std::string_view what,
                                        int max_depth = kMaxJsonDepth);

}  // namespace rcsim

#endif  // RCSIM_ENGINE_JSON_DEPTH_H_
