// The object codec on arbitrary bytes, as the API server decodes request bodies and etcd values: the
// depth-bounded parse, then Pod, ReplicationController and Scale decoding. Decoding normalises (e.g.
// timestamps to seconds), so the property checked is that an encoded object is a fixed point: encode,
// decode and encode again give the same JSON (the registry stores what it decoded).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "engine/codec.h"
#include "engine/json_depth.h"

namespace {

template <typename T, typename Decode, typename Encode>
void FixedPoint(const nlohmann::json& j, Decode decode, Encode encode) {
  rcsim::Result<T> first = decode(j);
  if (!first.ok()) return;
  const nlohmann::json once = encode(*first);
  rcsim::Result<T> second = decode(once);
  if (!second.ok() || encode(*second) != once) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)rcsim::JsonNestingDepth(text);
  rcsim::Result<nlohmann::json> j = rcsim::ParseBoundedJson(text, "input");
  if (!j.ok()) return 0;
  FixedPoint<rcsim::Pod>(*j, rcsim::PodFromJson, rcsim::PodToJson);
  FixedPoint<rcsim::ReplicationController>(*j, rcsim::ControllerFromJson, rcsim::ControllerToJson);
  (void)rcsim::ScaleFromJson(*j);
  (void)rcsim::DecodePod(text);
  (void)rcsim::DecodeController(text);
  return 0;
}
