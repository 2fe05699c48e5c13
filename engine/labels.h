// Label selectors: the equality map of a ReplicationController, and the string form of list requests
// ("app=web,tier!=db,env in (a,b),!legacy").
#ifndef RCSIM_ENGINE_LABELS_H_
#define RCSIM_ENGINE_LABELS_H_

#include <string>
#include <string_view>
#include <vector>

#include "engine/status.h"
#include "engine/types.h"

namespace rcsim {

class LabelSelector {
 public:
  enum class Op { kEquals, kNotEquals, kIn, kNotIn, kExists, kDoesNotExist };
  struct Requirement {
    std::string key;
    Op op;
    std::vector<std::string> values;  // sorted; one value for kEquals/kNotEquals
    bool operator==(const Requirement&) const = default;
  };

  // Matches everything.
  LabelSelector() = default;
  // Equality requirements, one per entry. An empty map matches everything.
  static LabelSelector FromMap(const Labels& map);
  // Parses the Kubernetes string form; kBadRequest naming the offending part on error.
  static Result<LabelSelector> Parse(std::string_view text);

  bool Matches(const Labels& labels) const;
  bool Empty() const { return requirements_.empty(); }
  const std::vector<Requirement>& requirements() const { return requirements_; }
  // Canonical string form, requirements sorted by key: "app=web,tier!=db".
  std::string ToString() const;
  bool operator==(const LabelSelector&) const = default;

 private:
  std::vector<Requirement> requirements_;  // sorted by key, then op
};

// True if every (k, v) of `selector` is in `labels` (an RC selector; empty selects nothing here,
// since an RC with an empty selector is invalid).
bool SelectorMapMatches(const Labels& selector, const Labels& labels);
// "app=web,tier=db" for a map selector.
std::string FormatSelectorMap(const Labels& selector);

}  // namespace rcsim

#endif  // RCSIM_ENGINE_LABELS_H_
