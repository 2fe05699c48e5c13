// JSON merge patch, strategic merge patch and JSON patch bodies applied to a Pod, as PATCH does.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "backends/http/patch.h"
#include "engine/codec.h"

namespace {

const nlohmann::json& Target() {
  static const nlohmann::json target = nlohmann::json::parse(R"({
    "apiVersion":"v1","kind":"Pod",
    "metadata":{"name":"a","namespace":"default","labels":{"app":"web"},"annotations":{"x":"1"}},
    "spec":{"containers":[{"name":"c","image":"nginx","args":["-v"]}]},
    "status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}})");
  return target;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static constexpr rcsim::PatchType kTypes[] = {rcsim::PatchType::kMerge, rcsim::PatchType::kStrategicMerge,
                                                rcsim::PatchType::kJsonPatch};
  const rcsim::PatchType type = kTypes[data[0] % 3];
  const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  rcsim::Result<nlohmann::json> patched = rcsim::ApplyPatch(Target(), type, body);
  if (patched.ok()) {
    (void)patched->dump();
    (void)rcsim::PodFromJson(*patched);
  }
  return 0;
}
