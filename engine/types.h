// Domain types: the subset of Kubernetes core/v1 that rcsim serves and reconciles.
//
// Objects are passed between the registry, the stores and the watchers as shared immutable values
// (PodPtr, ControllerPtr); to change one, copy it. Labels are ordered maps so iteration (and therefore
// encoding and traces) is deterministic, shared copy-on-write between copies (engine/label_map.h).
//
// Lossless: every struct that models a JSON object of the wire shape carries `unknown_fields`, the
// members of that object it has no typed field for, verbatim (engine/codec.h fills and re-emits them).
// The engine never reads them; the simulated path leaves them empty, which costs no allocation.
#ifndef RCSIM_ENGINE_TYPES_H_
#define RCSIM_ENGINE_TYPES_H_

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/label_map.h"
#include "engine/shared_string.h"
#include "engine/time.h"

namespace rcsim {

// The members of one wire object that its typed struct does not model (e.g. a container's ports,
// env and probes), kept verbatim. Immutable and shared between copies; compared by value.
class UnknownFields {
 public:
  UnknownFields() = default;
  // `fields` must be a JSON object; an empty one stores nothing.
  explicit UnknownFields(nlohmann::json fields);

  bool empty() const { return fields_ == nullptr; }
  // The object of unknown members; nullptr when empty.
  const nlohmann::json* get() const { return fields_.get(); }
  bool operator==(const UnknownFields& other) const;

 private:
  std::shared_ptr<const nlohmann::json> fields_;
};

// The strings of a reference are shared with the owner's (a controller's pods all refer to one uid, kind
// and apiVersion; engine/shared_string.h). The name stays a std::string: short names fit in it.
struct OwnerReference {
  SharedString api_version = "v1";
  SharedString kind = "ReplicationController";
  std::string name;
  SharedString uid;
  bool controller = true;
  bool block_owner_deletion = true;
  UnknownFields unknown_fields;
  bool operator==(const OwnerReference&) const = default;
};

struct ObjectMeta {
  std::string name;
  std::string generate_name;
  std::string namespace_;
  SharedString uid;              // shared by the object's versions and by its dependents' ownerReferences
  std::string resource_version;  // etcd mod_revision as a decimal string; empty before creation
  int64_t generation = 0;        // bumped by the registry on every spec change (controllers)
  Labels labels;
  Labels annotations;
  std::vector<OwnerReference> owner_references;
  std::optional<TimePoint> creation_timestamp;
  std::optional<TimePoint> deletion_timestamp;
  std::optional<int64_t> deletion_grace_period_seconds;
  std::vector<std::string> finalizers;
  UnknownFields unknown_fields;
  bool operator==(const ObjectMeta&) const = default;

  // The ownerReference with controller=true, if any.
  const OwnerReference* ControllerRef() const;
};

// A member added to Container or PodSpec must be added to ValidatePodUpdate's comparison
// (registry/validation.cc), which lists the members a pod update may not change.
struct Container {
  std::string name;
  std::string image;
  std::vector<std::string> command;
  std::vector<std::string> args;
  UnknownFields unknown_fields;
  bool operator==(const Container&) const = default;
};

struct PodSpec {
  std::string node_name;
  std::string restart_policy = "Always";
  std::optional<int64_t> termination_grace_period_seconds;
  std::vector<Container> containers;
  UnknownFields unknown_fields;
  bool operator==(const PodSpec&) const = default;
};

// Its strings are SharedStrings: every version of a pod repeats its conditions, and their values are
// mostly the same few constants (a condition is 64 bytes, not 160, and copying one allocates nothing).
struct PodCondition {
  SharedString type;    // "Ready", "PodScheduled", ...
  SharedString status;  // "True", "False", "Unknown"
  std::optional<TimePoint> last_transition_time;
  SharedString reason;
  SharedString message;
  UnknownFields unknown_fields;
  bool operator==(const PodCondition&) const = default;
};

// An optional T kept on the heap: for members that are large and mostly absent. A container's state
// sets at most one of waiting, running and terminated, and its last_state is mostly empty, yet
// std::optional keeps every alternative inline: ContainerStatus was 768 bytes, 528 of them empty
// states, in every stored version of every pod. A box is one pointer. Its interface is the part of
// std::optional's in use; copies are deep, so it behaves as a value.
template <typename T>
class Boxed {
 public:
  Boxed() = default;
  // Implicit, as std::optional's: `state.running = ContainerStateRunning{...}` and `= std::nullopt`.
  Boxed(std::nullopt_t) {}
  Boxed(const T& v) : p_(std::make_unique<T>(v)) {}
  Boxed(T&& v) : p_(std::make_unique<T>(std::move(v))) {}
  Boxed(const Boxed& o) : p_(o.p_ ? std::make_unique<T>(*o.p_) : nullptr) {}
  Boxed(Boxed&&) noexcept = default;
  Boxed& operator=(const Boxed& o) {
    if (this != &o) p_ = o.p_ ? std::make_unique<T>(*o.p_) : nullptr;
    return *this;
  }
  Boxed& operator=(Boxed&&) noexcept = default;
  Boxed& operator=(std::nullopt_t) {
    p_.reset();
    return *this;
  }
  Boxed& operator=(const T& v) { return *this = T(v); }
  Boxed& operator=(T&& v) {
    if (p_) {
      *p_ = std::move(v);
    } else {
      p_ = std::make_unique<T>(std::move(v));
    }
    return *this;
  }
  ~Boxed() = default;

  template <typename... Args>
  T& emplace(Args&&... args) {
    p_ = std::make_unique<T>(std::forward<Args>(args)...);
    return *p_;
  }
  void reset() { p_.reset(); }

  bool has_value() const { return p_ != nullptr; }
  explicit operator bool() const { return p_ != nullptr; }
  T* operator->() { return p_.get(); }
  const T* operator->() const { return p_.get(); }
  T& operator*() { return *p_; }
  const T& operator*() const { return *p_; }

  friend bool operator==(const Boxed& a, const Boxed& b) { return a.p_ ? (b.p_ && *a.p_ == *b.p_) : !b.p_; }
  friend bool operator==(const Boxed& a, std::nullopt_t) { return !a.p_; }

 private:
  std::unique_ptr<T> p_;
};

// core/v1 ContainerState: at most one of waiting, running and terminated is set; none is the
// empty state `{}` (a status a client wrote without one).
struct ContainerStateWaiting {
  std::string reason;  // "ContainerCreating", "CrashLoopBackOff", ...
  std::string message;
  UnknownFields unknown_fields;
  bool operator==(const ContainerStateWaiting&) const = default;
};

struct ContainerStateRunning {
  std::optional<TimePoint> started_at;
  UnknownFields unknown_fields;
  bool operator==(const ContainerStateRunning&) const = default;
};

struct ContainerStateTerminated {
  int32_t exit_code = 0;
  int32_t signal = 0;
  std::string reason;  // "Completed" (exit code 0), "Error", "ContainerCannotRun"
  std::string message;
  std::optional<TimePoint> started_at;
  std::optional<TimePoint> finished_at;
  std::string container_id;
  UnknownFields unknown_fields;
  bool operator==(const ContainerStateTerminated&) const = default;
};

struct ContainerState {
  Boxed<ContainerStateWaiting> waiting;
  Boxed<ContainerStateRunning> running;
  Boxed<ContainerStateTerminated> terminated;
  UnknownFields unknown_fields;
  bool operator==(const ContainerState&) const = default;
};

// Its strings, and PodStatus's, are SharedStrings: each status write repeats them, and the node agent
// that writes them keeps them, so every version shares one copy.
struct ContainerStatus {
  SharedString name;
  ContainerState state;
  ContainerState last_state;  // the previous termination, if the container ran before
  bool ready = false;
  int32_t restart_count = 0;
  SharedString image;
  SharedString image_id;
  SharedString container_id;  // "<runtime>://<id>" of the current (or last) run
  std::optional<bool> started;
  UnknownFields unknown_fields;
  bool operator==(const ContainerStatus&) const = default;
};

namespace phase {
inline constexpr const char* kPending = "Pending";
inline constexpr const char* kRunning = "Running";
inline constexpr const char* kSucceeded = "Succeeded";
inline constexpr const char* kFailed = "Failed";
inline constexpr const char* kUnknown = "Unknown";
}  // namespace phase

struct PodStatus {
  SharedString phase = phase::kPending;
  std::vector<PodCondition> conditions;
  std::vector<ContainerStatus> container_statuses;
  SharedString host_ip;
  SharedString pod_ip;
  SharedString reason;
  SharedString message;
  std::optional<TimePoint> start_time;
  UnknownFields unknown_fields;
  bool operator==(const PodStatus&) const = default;
};

struct Pod {
  ObjectMeta metadata;
  PodSpec spec;
  PodStatus status;
  UnknownFields unknown_fields;
  bool operator==(const Pod&) const = default;
};
using PodPtr = std::shared_ptr<const Pod>;

struct PodTemplateSpec {
  ObjectMeta metadata;
  PodSpec spec;
  UnknownFields unknown_fields;
  bool operator==(const PodTemplateSpec&) const = default;
};

struct ReplicationControllerSpec {
  int32_t replicas = 1;
  int32_t min_ready_seconds = 0;
  Labels selector;  // empty means "default to the template's labels" at creation
  std::optional<PodTemplateSpec> template_;
  UnknownFields unknown_fields;
  bool operator==(const ReplicationControllerSpec&) const = default;
};

// A ReplicationControllerCondition (core/v1) has the fields of a pod condition: type, status,
// lastTransitionTime, reason, message.
using ReplicationControllerCondition = PodCondition;
// The condition the manager sets while creating or deleting pods fails (reason FailedCreate or
// FailedDelete, message from the API) and removes after a sync whose writes succeeded.
inline constexpr const char* kReplicaFailure = "ReplicaFailure";

struct ReplicationControllerStatus {
  int32_t replicas = 0;
  int32_t fully_labeled_replicas = 0;
  int32_t ready_replicas = 0;
  int32_t available_replicas = 0;
  int64_t observed_generation = 0;
  std::vector<ReplicationControllerCondition> conditions;
  UnknownFields unknown_fields;
  bool operator==(const ReplicationControllerStatus&) const = default;
};

struct ReplicationController {
  ObjectMeta metadata;
  ReplicationControllerSpec spec;
  ReplicationControllerStatus status;
  UnknownFields unknown_fields;
  bool operator==(const ReplicationController&) const = default;
};
using ControllerPtr = std::shared_ptr<const ReplicationController>;

// autoscaling/v1 Scale, for the /scale subresource.
struct Scale {
  ObjectMeta metadata;
  int32_t spec_replicas = 0;
  int32_t status_replicas = 0;
  std::string status_selector;  // "app=web"
  bool operator==(const Scale&) const = default;
};

// --- Pod predicates shared by the engine, the checkers and the reports. ---

// Terminated: phase Succeeded or Failed.
bool IsTerminated(const Pod& pod);
// Active: not terminated and not being deleted (no deletionTimestamp). What a controller counts.
bool IsActive(const Pod& pod);
// Ready condition is True.
bool IsReady(const Pod& pod);
// Ready for at least min_ready_seconds at `now`.
bool IsAvailable(const Pod& pod, int32_t min_ready_seconds, TimePoint now);
// Phase Running and ready.
bool IsRunningAndReady(const Pod& pod);
// "namespace/name", the work-queue key.
std::string KeyOf(const ObjectMeta& meta);

}  // namespace rcsim

#endif  // RCSIM_ENGINE_TYPES_H_
