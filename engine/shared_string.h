// SharedString: an immutable string whose copies share one buffer, as Go's strings do.
//
// For the string members that every stored version of an object repeats. A pod's four conditions were
// 640 bytes of each version (a std::string is 32 bytes, and a condition has four), and a status write
// copies them all. A SharedString is one pointer: a copy shares the buffer, and the values the cluster
// writes over and over ("True", "Ready", "ContainersNotReady", ...) are static constants found when the
// string is made, so making, copying and freeing them allocate nothing and touch no reference count.
// Any other value is allocated once and reference-counted (atomically: objects are shared between
// threads in production).
//
// It reads as a std::string: it converts to `const std::string&` and to `std::string_view`, and
// compares with both and with string literals.
#ifndef RCSIM_ENGINE_SHARED_STRING_H_
#define RCSIM_ENGINE_SHARED_STRING_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

namespace rcsim {

class SharedString {
 public:
  SharedString() noexcept = default;
  // Implicit, as std::string's: `condition.status = "True"`.
  SharedString(std::string_view s);                                   // NOLINT(google-explicit-constructor)
  SharedString(const char* s) : SharedString(std::string_view(s)) {}  // NOLINT(google-explicit-constructor)
  // NOLINTNEXTLINE(google-explicit-constructor)
  SharedString(const std::string& s) : SharedString(std::string_view(s)) {}
  SharedString(const SharedString& o) noexcept : rep_(o.rep_) { Ref(); }
  SharedString(SharedString&& o) noexcept : rep_(o.rep_) { o.rep_ = nullptr; }
  SharedString& operator=(const SharedString& o) noexcept {
    if (rep_ != o.rep_) {
      o.Ref();
      Unref();
      rep_ = o.rep_;
    }
    return *this;
  }
  SharedString& operator=(SharedString&& o) noexcept {
    if (this != &o) {
      Unref();
      rep_ = o.rep_;
      o.rep_ = nullptr;
    }
    return *this;
  }
  ~SharedString() { Unref(); }

  const std::string& str() const noexcept { return rep_ != nullptr ? rep_->value : Empty(); }
  operator const std::string&() const noexcept { return str(); }  // NOLINT(google-explicit-constructor)
  operator std::string_view() const noexcept { return str(); }    // NOLINT(google-explicit-constructor)
  const char* c_str() const noexcept { return str().c_str(); }
  std::size_t size() const noexcept { return str().size(); }
  bool empty() const noexcept { return rep_ == nullptr; }
  void clear() noexcept {
    Unref();
    rep_ = nullptr;
  }

  friend bool operator==(const SharedString& a, const SharedString& b) noexcept {
    return a.rep_ == b.rep_ || a.str() == b.str();
  }
  friend bool operator==(const SharedString& a, std::string_view b) noexcept { return a.str() == b; }
  friend bool operator==(const SharedString& a, const std::string& b) noexcept { return a.str() == b; }
  friend bool operator==(const SharedString& a, const char* b) noexcept { return a.str() == b; }
  friend auto operator<=>(const SharedString& a, const SharedString& b) noexcept {
    return a.str() <=> b.str();
  }

  // Whether this value is one of the static constants (shared by every object, so a size estimate
  // counts it as nothing).
  bool is_constant() const noexcept { return rep_ != nullptr && rep_->constant; }

 private:
  struct Rep {
    std::atomic<std::uint32_t> refs{1};
    bool constant = false;  // a static value: never counted, never freed
    std::string value;      // never empty: the empty string has no Rep
  };
  void Ref() const noexcept {
    if (rep_ != nullptr && !rep_->constant) rep_->refs.fetch_add(1, std::memory_order_relaxed);
  }
  void Unref() noexcept {
    if (rep_ != nullptr && !rep_->constant && rep_->refs.fetch_sub(1, std::memory_order_acq_rel) == 1)
      delete rep_;
  }
  static const std::string& Empty() noexcept;
  // The static Rep holding `s`, or nullptr if `s` is not one of the constants.
  static Rep* Constant(std::string_view s);

  Rep* rep_ = nullptr;
};

std::ostream& operator<<(std::ostream& os, const SharedString& s);
// nlohmann's hook: `j["reason"] = condition.reason`.
void to_json(nlohmann::json& j, const SharedString& s);  // NOLINT(readability-identifier-naming)

}  // namespace rcsim

#endif  // RCSIM_ENGINE_SHARED_STRING_H_
