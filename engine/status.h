// Status and Result<T>: expected failures are values, not exceptions.
//
// Codes follow what a caller can act on. kCompacted is etcd's ErrCompacted (the caller must re-list);
// kTimeout means the outcome is unknown (the request may or may not have been applied).
#ifndef RCSIM_ENGINE_STATUS_H_
#define RCSIM_ENGINE_STATUS_H_

#include <cassert>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace rcsim {

enum class Code {
  kOk = 0,
  kNotFound,          // 404 NotFound
  kAlreadyExists,     // 409 AlreadyExists
  kConflict,          // 409 Conflict (stale resourceVersion, failed precondition)
  kInvalid,           // 422 Invalid (object failed validation; see causes)
  kBadRequest,        // 400 BadRequest (malformed request)
  kGone,              // 410 Gone (resourceVersion too old for a watch or list)
  kCompacted,         // store: the requested revision has been compacted
  kFutureRevision,    // store: the requested revision is newer than the store's
  kTimeout,           // outcome unknown: the request may or may not have been applied
  kUnavailable,       // the server could not be reached; not applied
  kUnauthorized,      // 401
  kForbidden,         // 403 Forbidden (authorization, admission: a quota, a namespace being deleted)
  kRequestTooLarge,   // 413
  kMethodNotAllowed,  // 405
  kInternal,          // 500; never for bad input
};

// Returns a stable lower-case name ("not_found", ...), used in logs, metrics and traces.
const char* CodeName(Code code);

// One field-level cause of an Invalid status, as in a Kubernetes Status's details.causes.
struct StatusCause {
  std::string field;    // e.g. "spec.replicas"
  std::string reason;   // e.g. "FieldValueInvalid"
  std::string message;  // human readable
  bool operator==(const StatusCause&) const = default;
};

// A value: copies are cheap. An OK status holds no message, so passing one (every Result a call returns
// carries one) copies a code and a null pointer; a failure's message and causes are shared, immutable.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Code code, std::string message) : Status(code, std::move(message), {}) {}
  Status(Code code, std::string message, std::vector<StatusCause> causes) : code_(code) {
    if (!message.empty() || !causes.empty()) {
      detail_ = std::make_shared<const Detail>(Detail{std::move(message), std::move(causes)});
    }
  }

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const;
  const std::vector<StatusCause>& causes() const;
  // "not_found: pods \"x\" not found"
  std::string ToString() const;
  void IgnoreError() const {}

 private:
  struct Detail {
    std::string message;
    std::vector<StatusCause> causes;
  };
  Code code_ = Code::kOk;
  std::shared_ptr<const Detail> detail_;  // null when the message and the causes are empty
};

// Holds either a value or a non-OK Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}        // NOLINT(google-explicit-constructor)
  Result(Status status) : v_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    assert(!std::get<Status>(v_).ok() && "Result built from an OK Status");
  }

  bool ok() const { return v_.index() == 0; }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & {
    assert(ok());
    return std::get<T>(v_);
  }
  const T& value() const& {
    assert(ok());
    return std::get<T>(v_);
  }
  T&& value() && {
    assert(ok());
    return std::get<T>(std::move(v_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace rcsim

#endif  // RCSIM_ENGINE_STATUS_H_
