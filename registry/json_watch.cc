#include "registry/json_watch.h"

#include <utility>

#include "engine/json_parse.h"

namespace rcsim {
namespace {

using json = nlohmann::json;

class JsonWatch final : public RegistryWatch {
 public:
  std::unique_ptr<Watch> watch;
};

}  // namespace

json WithVersion(json obj, int64_t revision) {
  obj["metadata"]["resourceVersion"] = std::to_string(revision);
  return obj;
}

std::unique_ptr<RegistryWatch> StartJsonWatch(Store* store, const std::string& prefix, int64_t after_revision,
                                              JsonWatchFilter filter,
                                              std::function<void(const json& event)> on_event,
                                              std::function<void()> on_end) {
  WatchRequest req;
  req.key = prefix;
  req.range_end = PrefixEnd(prefix);
  req.start_revision = after_revision + 1;
  req.prev_kv = true;
  auto out = std::make_unique<JsonWatch>();
  out->watch = store->StartWatch(req, [filter = std::move(filter), on_event = std::move(on_event),
                                       on_end = std::move(on_end)](const WatchResponse& r) {
    if (r.canceled) {
      const bool gone = r.compact_revision > 0;
      on_event({{"type", "ERROR"},
                {"object",
                 {{"kind", "Status"},
                  {"apiVersion", "v1"},
                  {"metadata", json::object()},
                  {"status", "Failure"},
                  {"message", gone ? "too old resource version" : r.status.message()},
                  {"reason", gone ? "Expired" : "InternalError"},
                  {"code", gone ? 410 : 500}}}});
      on_end();
      return;
    }
    for (const WatchEvent& ev : r.events) {
      const bool put = ev.type == WatchEvent::Type::kPut;
      const KeyValue* kv = put ? &ev.kv : (ev.prev_kv ? &*ev.prev_kv : nullptr);
      if (kv == nullptr) continue;
      json obj = ParseJson(kv->value.bytes());
      if (obj.is_discarded() || !obj.is_object()) continue;
      obj = WithVersion(std::move(obj), ev.kv.mod_revision);
      std::string type = !put                                          ? "DELETED"
                         : ev.kv.create_revision == ev.kv.mod_revision ? "ADDED"
                                                                       : "MODIFIED";
      if (!filter(ev.kv.key, &type, &obj)) continue;
      on_event({{"type", std::move(type)}, {"object", std::move(obj)}});
    }
  });
  return out;
}

}  // namespace rcsim
