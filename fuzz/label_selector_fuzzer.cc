// The label selector parser (?labelSelector=, RC selectors): arbitrary text must parse or fail with a
// Status, and a parsed selector must print to text that parses to the same selector.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "engine/labels.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  rcsim::Result<rcsim::LabelSelector> sel = rcsim::LabelSelector::Parse(text);
  if (!sel.ok()) return 0;
  const std::string printed = sel->ToString();
  rcsim::Result<rcsim::LabelSelector> again = rcsim::LabelSelector::Parse(printed);
  if (!again.ok() || again->ToString() != printed) std::abort();
  rcsim::Labels labels = {{"app", "web"}, {"tier", "front"}, {"", ""}};
  (void)sel->Matches(labels);
  return 0;
}
