#include "engine/store.h"

#include <mutex>

#include "engine/codec.h"

namespace rcsim {

struct Value::Rep {
  mutable std::once_flag once;
  mutable std::string bytes;
  PodPtr pod;
  ControllerPtr controller;
};

Value::Value() {
  // One shared empty representation: default-constructed values allocate nothing.
  static const auto* empty = new std::shared_ptr<Rep>(std::make_shared<Rep>());
  rep_ = *empty;
}

Value::Value(std::string bytes) : rep_(std::make_shared<Rep>()) {
  rep_->bytes = std::move(bytes);
  std::call_once(rep_->once, [] {});
}

Value::Value(PodPtr pod) : rep_(std::make_shared<Rep>()) { rep_->pod = std::move(pod); }

Value::Value(ControllerPtr controller) : rep_(std::make_shared<Rep>()) {
  rep_->controller = std::move(controller);
}

const std::string& Value::bytes() const {
  const Rep& r = *rep_;
  std::call_once(r.once, [&r] {
    if (r.pod) {
      r.bytes = EncodePod(*r.pod);
    } else if (r.controller) {
      r.bytes = EncodeController(*r.controller);
    }
  });
  return r.bytes;
}

const PodPtr& Value::pod() const { return rep_->pod; }
const ControllerPtr& Value::controller() const { return rep_->controller; }

std::string PrefixEnd(std::string_view prefix) {
  std::string end(prefix);
  for (int i = static_cast<int>(end.size()) - 1; i >= 0; --i) {
    if (static_cast<unsigned char>(end[i]) < 0xff) {
      end[i] = static_cast<char>(static_cast<unsigned char>(end[i]) + 1);
      end.resize(i + 1);
      return end;
    }
  }
  return std::string(1, '\0');  // every key: etcd's "\x00" range end
}

Result<std::optional<KeyValue>> Store::Get(const std::string& key) {
  RangeRequest req;
  req.key = key;
  auto r = Range(req);
  if (!r.ok()) return r.status();
  if (r->kvs.empty()) return std::optional<KeyValue>();
  return std::optional<KeyValue>(std::move(r->kvs.front()));
}

Result<RangeResponse> Store::GetPrefix(const std::string& prefix, int64_t limit, int64_t revision) {
  RangeRequest req;
  req.key = prefix;
  req.range_end = PrefixEnd(prefix);
  req.limit = limit;
  req.revision = revision;
  return Range(req);
}

}  // namespace rcsim
