#include "engine/status.h"

namespace rcsim {

const char* CodeName(Code code) {
  switch (code) {
    case Code::kOk: return "ok";
    case Code::kNotFound: return "not_found";
    case Code::kAlreadyExists: return "already_exists";
    case Code::kConflict: return "conflict";
    case Code::kInvalid: return "invalid";
    case Code::kBadRequest: return "bad_request";
    case Code::kGone: return "gone";
    case Code::kCompacted: return "compacted";
    case Code::kFutureRevision: return "future_revision";
    case Code::kTimeout: return "timeout";
    case Code::kUnavailable: return "unavailable";
    case Code::kUnauthorized: return "unauthorized";
    case Code::kForbidden: return "forbidden";
    case Code::kRequestTooLarge: return "request_too_large";
    case Code::kMethodNotAllowed: return "method_not_allowed";
    case Code::kInternal: return "internal";
  }
  return "unknown";
}

const std::string& Status::message() const {
  static const std::string kEmpty;
  return detail_ ? detail_->message : kEmpty;
}

const std::vector<StatusCause>& Status::causes() const {
  static const std::vector<StatusCause> kNone;
  return detail_ ? detail_->causes : kNone;
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  std::string s = CodeName(code_);
  s += ": ";
  s += message();
  return s;
}

}  // namespace rcsim
