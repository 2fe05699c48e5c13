#include "apps/controller-manager/controller_selection.h"

#include <algorithm>

namespace rcsim {

const std::vector<std::string>& KnownControllers() {
  static const std::vector<std::string> names = {kReplicationControllerName, kGarbageCollectorName,
                                                 kNodeLifecycleName, kPodGcName, kSchedulerName};
  return names;
}

Result<std::set<std::string>> SelectControllers(std::string_view flag) {
  const std::vector<std::string>& known = KnownControllers();
  std::vector<std::string> items;
  size_t start = 0;
  while (true) {
    const size_t comma = flag.find(',', start);
    items.emplace_back(flag.substr(start, comma == std::string_view::npos ? comma : comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  std::string names;
  for (const std::string& n : known) names += (names.empty() ? "" : ", ") + n;
  for (const std::string& item : items) {
    if (item == "*") continue;
    const std::string name = item.starts_with("-") ? item.substr(1) : item;
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      return Status(Code::kInvalid, "--controllers: \"" + item + "\" is not a known controller (known: " +
                                        names + "; \"*\" is all, \"-name\" turns one off)");
    }
  }
  const bool all = std::find(items.begin(), items.end(), "*") != items.end();
  std::set<std::string> enabled;
  for (const std::string& name : known) {
    bool on = all;
    for (const std::string& item : items) {
      if (item == name) {
        on = true;
        break;
      }
      if (item == "-" + name) {
        on = false;
        break;
      }
    }
    if (on) enabled.insert(name);
  }
  return enabled;
}

}  // namespace rcsim
