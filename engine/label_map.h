// Labels: a label, annotation or selector map, shared copy-on-write (label selectors: engine/labels.h).
//
// A controller's pods carry their template's labels, and every stored version of a pod repeats them.
// As a std::map each copy was a tree of its own (a node of about 100 bytes per label, plus 48 bytes in
// the object). Copies of a Labels share one map, and the first change to a copy gives it a map of its
// own, so the manager's pods share their template's map and a pod's versions share theirs. A Labels is
// one pointer; an empty one allocates nothing.
//
// Reading is std::map<std::string, std::string>'s (const iterators, find, at, count, contains, size,
// ==), in the same key order, and a Labels converts to `const std::map&` for code that takes one.
// Changing is std::map's too (operator[], insert, insert_or_assign, emplace, erase, clear), through
// a map of this value's own. As with any copy-on-write value, a reference or iterator obtained from
// a change is valid until this value is next copied or changed.
//
// The reference count is atomic: objects are shared between threads in production. A change is made
// in place only while this value is its map's only owner, read with an acquire load, so every other
// owner's reads of the map happened before it.
#ifndef RCSIM_ENGINE_LABEL_MAP_H_
#define RCSIM_ENGINE_LABEL_MAP_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <utility>

namespace rcsim {

class Labels {
 public:
  using Map = std::map<std::string, std::string>;
  using key_type = Map::key_type;
  using mapped_type = Map::mapped_type;
  using value_type = Map::value_type;
  using size_type = Map::size_type;
  using const_iterator = Map::const_iterator;
  using iterator = Map::const_iterator;  // reading only: a change goes through the mutators
  using const_reference = Map::const_reference;
  using reference = Map::const_reference;

  Labels() noexcept = default;
  Labels(std::initializer_list<value_type> init) : Labels(Map(init)) {}
  // Implicit, as the std::map it replaces: `labels = some_map`.
  Labels(const Map& m) : Labels(Map(m)) {}  // NOLINT(google-explicit-constructor)
  Labels(Map&& m)
      : rep_(m.empty() ? nullptr : new Rep{std::move(m)}) {}  // NOLINT(google-explicit-constructor)
  template <typename It>
  Labels(It first, It last) : Labels(Map(first, last)) {}
  Labels(const Labels& o) noexcept : rep_(o.rep_) { Ref(); }
  Labels(Labels&& o) noexcept : rep_(o.rep_) { o.rep_ = nullptr; }
  Labels& operator=(const Labels& o) noexcept {
    if (rep_ != o.rep_) {
      o.Ref();
      Unref();
      rep_ = o.rep_;
    }
    return *this;
  }
  Labels& operator=(Labels&& o) noexcept {
    if (this != &o) {
      Unref();
      rep_ = o.rep_;
      o.rep_ = nullptr;
    }
    return *this;
  }
  ~Labels() { Unref(); }

  // Reading.
  const Map& map() const noexcept { return rep_ != nullptr ? rep_->map : Empty(); }
  operator const Map&() const noexcept { return map(); }  // NOLINT(google-explicit-constructor)
  const_iterator begin() const noexcept { return map().begin(); }
  const_iterator end() const noexcept { return map().end(); }
  const_iterator cbegin() const noexcept { return map().begin(); }
  const_iterator cend() const noexcept { return map().end(); }
  bool empty() const noexcept { return map().empty(); }
  size_type size() const noexcept { return map().size(); }
  const_iterator find(const std::string& key) const { return map().find(key); }
  size_type count(const std::string& key) const { return map().count(key); }
  bool contains(const std::string& key) const { return map().contains(key); }
  const std::string& at(const std::string& key) const { return map().at(key); }
  // Whether the two share one map (a copy not changed since): for tests.
  bool shares_with(const Labels& o) const noexcept { return rep_ != nullptr && rep_ == o.rep_; }

  friend bool operator==(const Labels& a, const Labels& b) { return a.rep_ == b.rep_ || a.map() == b.map(); }

  // Changing: each works on a map of this value's own (copied first if shared).
  std::string& operator[](const std::string& key) { return Own()[key]; }
  std::string& operator[](std::string&& key) { return Own()[std::move(key)]; }
  std::pair<Map::iterator, bool> insert(const value_type& v) { return Own().insert(v); }
  std::pair<Map::iterator, bool> insert(value_type&& v) { return Own().insert(std::move(v)); }
  template <typename It>
  void insert(It first, It last) {
    Own().insert(first, last);
  }
  template <typename V>
  std::pair<Map::iterator, bool> insert_or_assign(const std::string& key, V&& v) {
    return Own().insert_or_assign(key, std::forward<V>(v));
  }
  template <typename... Args>
  std::pair<Map::iterator, bool> emplace(Args&&... args) {
    return Own().emplace(std::forward<Args>(args)...);
  }
  template <typename... Args>
  std::pair<Map::iterator, bool> try_emplace(const std::string& key, Args&&... args) {
    return Own().try_emplace(key, std::forward<Args>(args)...);
  }
  size_type erase(const std::string& key);
  // Erases the entry `it` points at (an iterator of this value's map, which a copy may replace: so by key).
  void erase(const_iterator it) { erase(std::string(it->first)); }
  void clear() noexcept {
    Unref();
    rep_ = nullptr;
  }
  void swap(Labels& o) noexcept { std::swap(rep_, o.rep_); }

 private:
  struct Rep {
    Map map;
    std::atomic<std::uint32_t> refs{1};
  };
  void Ref() const noexcept {
    if (rep_ != nullptr) rep_->refs.fetch_add(1, std::memory_order_relaxed);
  }
  void Unref() noexcept {
    if (rep_ != nullptr && rep_->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete rep_;
  }
  // This value's own map, copied from the shared one first if it has other owners.
  Map& Own();
  static const Map& Empty() noexcept;

  Rep* rep_ = nullptr;
};

}  // namespace rcsim

#endif  // RCSIM_ENGINE_LABEL_MAP_H_
