#include "engine/store.h"

#include <mutex>
#include <nlohmann/json.hpp>

#include "engine/codec.h"
#include "engine/event.h"
#include "engine/lease.h"

namespace rcsim {

struct Value::Rep {
  mutable std::once_flag once;
  mutable std::string bytes;
  PodPtr pod;
  ControllerPtr controller;
  std::shared_ptr<const Event> event;
  std::shared_ptr<const Lease> lease;
  // Stampable values: the same object as pod/controller, writable until StampRevision() stamps it.
  std::shared_ptr<Pod> unstamped_pod;
  std::shared_ptr<ReplicationController> unstamped_controller;
  bool stamped = false;
};

namespace {

// A stamped object's bytes, without the stamp: stored bytes never hold a resourceVersion (etcd's
// mod_revision is the version, as in Kubernetes).
template <typename T>
std::string UnstampedBytes(const T& obj, nlohmann::json (*to_json)(const T&)) {
  nlohmann::json j = to_json(obj);
  j["metadata"].erase("resourceVersion");
  return j.dump();
}

}  // namespace

// A default-constructed value has no representation (rep_ is null): it allocates nothing and copying it
// touches no reference count (requests and responses make many). Every accessor reads it as empty.
Value::Value() = default;

Value::Value(std::string bytes) : rep_(std::make_shared<Rep>()) {
  rep_->bytes = std::move(bytes);
  std::call_once(rep_->once, [] {});
}

Value::Value(PodPtr pod) : rep_(std::make_shared<Rep>()) { rep_->pod = std::move(pod); }

Value::Value(ControllerPtr controller) : rep_(std::make_shared<Rep>()) {
  rep_->controller = std::move(controller);
}

Value::Value(std::shared_ptr<const Event> event) : rep_(std::make_shared<Rep>()) {
  rep_->event = std::move(event);
}

Value::Value(std::shared_ptr<const Lease> lease) : rep_(std::make_shared<Rep>()) {
  rep_->lease = std::move(lease);
}

Value Value::Stampable(std::shared_ptr<Pod> pod) {
  Value v{PodPtr(pod)};
  v.rep_->unstamped_pod = std::move(pod);
  return v;
}

Value Value::Stampable(std::shared_ptr<ReplicationController> controller) {
  Value v{ControllerPtr(controller)};
  v.rep_->unstamped_controller = std::move(controller);
  return v;
}

void Value::StampRevision(int64_t revision) const {
  if (!rep_) return;
  Rep& r = *rep_;
  if (r.stamped || (r.unstamped_pod == nullptr && r.unstamped_controller == nullptr)) return;
  r.stamped = true;
  if (r.unstamped_pod != nullptr) r.unstamped_pod->metadata.resource_version = std::to_string(revision);
  if (r.unstamped_controller != nullptr) {
    r.unstamped_controller->metadata.resource_version = std::to_string(revision);
  }
  r.unstamped_pod.reset();
  r.unstamped_controller.reset();
}

const std::string& Value::bytes() const {
  static const std::string kEmpty;
  if (!rep_) return kEmpty;
  const Rep& r = *rep_;
  std::call_once(r.once, [&r] {
    if (r.pod) {
      r.bytes = r.stamped ? UnstampedBytes<Pod>(*r.pod, PodToJson) : EncodePod(*r.pod);
    } else if (r.controller) {
      r.bytes = r.stamped ? UnstampedBytes<ReplicationController>(*r.controller, ControllerToJson)
                          : EncodeController(*r.controller);
    } else if (r.event) {
      r.bytes = EventToJson(*r.event).dump();
    } else if (r.lease) {
      r.bytes = EncodeLease(*r.lease);
    }
  });
  return r.bytes;
}

const PodPtr& Value::pod() const {
  static const PodPtr kNone;
  return rep_ ? rep_->pod : kNone;
}
const ControllerPtr& Value::controller() const {
  static const ControllerPtr kNone;
  return rep_ ? rep_->controller : kNone;
}
const std::shared_ptr<const Event>& Value::event() const {
  static const std::shared_ptr<const Event> kNone;
  return rep_ ? rep_->event : kNone;
}
const std::shared_ptr<const Lease>& Value::lease() const {
  static const std::shared_ptr<const Lease> kNone;
  return rep_ ? rep_->lease : kNone;
}

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
