#include "engine/label_map.h"

namespace rcsim {

Labels::Map& Labels::Own() {
  if (rep_ == nullptr) {
    rep_ = new Rep{};
  } else if (rep_->refs.load(std::memory_order_acquire) != 1) {
    Rep* own = new Rep{rep_->map};
    Unref();
    rep_ = own;
  }
  return rep_->map;
}

Labels::size_type Labels::erase(const std::string& key) {
  if (!contains(key)) return 0;  // nothing to erase: keep sharing
  return Own().erase(key);
}

const Labels::Map& Labels::Empty() noexcept {
  static const Map empty;
  return empty;
}

}  // namespace rcsim
