// The --controllers flag of kube-controller-manager: which controllers this controller-manager runs.
//
// The flag is a comma-separated list: "*" turns on every controller that is on by default, "foo" turns
// foo on, "-foo" turns it off. For each controller the first item naming it decides; otherwise it is on
// if "*" is in the list. kube-controller-manager's default is "*". Every controller here is on by
// default.
//
// Thread-safety: pure functions over values.
#ifndef RCSIM_APPS_CONTROLLER_MANAGER_CONTROLLER_SELECTION_H_
#define RCSIM_APPS_CONTROLLER_MANAGER_CONTROLLER_SELECTION_H_

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "engine/status.h"

namespace rcsim {

// The controllers rcsim's controller-manager knows, by their --controllers names.
inline constexpr const char* kReplicationControllerName = "replicationcontroller";
inline constexpr const char* kGarbageCollectorName = "garbagecollector";
inline constexpr const char* kNodeLifecycleName = "nodelifecycle";
inline constexpr const char* kPodGcName = "podgc";
inline constexpr const char* kSchedulerName = "scheduler";

// Every known name, in the order they are started.
const std::vector<std::string>& KnownControllers();

// The enabled controllers of a --controllers value. kInvalid naming the item for an empty item or
// an unknown name (with or without "-"), listing the known names.
Result<std::set<std::string>> SelectControllers(std::string_view flag);

}  // namespace rcsim

#endif  // RCSIM_APPS_CONTROLLER_MANAGER_CONTROLLER_SELECTION_H_
