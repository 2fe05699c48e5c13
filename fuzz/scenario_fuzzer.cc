// The scenario parser (harness) on arbitrary text, JSON and YAML front ends: a clear error or a
// scenario, never a crash, hang or out-of-memory.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "harness/scenario.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  // The first byte picks the front end; the rest is the document.
  const rcsim::DocumentFormat format =
      data[0] & 1 ? rcsim::DocumentFormat::kYaml : rcsim::DocumentFormat::kJson;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  (void)rcsim::ParseScenarioText(text, "fuzz", format);
  return 0;
}
