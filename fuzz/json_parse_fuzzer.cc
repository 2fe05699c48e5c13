// engine/json_parse.h against nlohmann's parser on arbitrary bytes: ParseJson must accept exactly what
// json::parse accepts and give an equal value with the same number types, written back the same ("-0",
// read as unsigned 0 rather than signed, is the documented exception: equal, and written the same).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/json_parse.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using json = nlohmann::json;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const json want = json::parse(text, nullptr, /*allow_exceptions=*/false);
  const json got = rcsim::ParseJson(text);
  if (got.is_discarded() != want.is_discarded()) std::abort();
  if (want.is_discarded()) return 0;
  if (got != want || got.dump() != want.dump()) std::abort();
  std::vector<std::pair<const json*, const json*>> stack{{&got, &want}};
  while (!stack.empty()) {
    auto [g, w] = stack.back();
    stack.pop_back();
    if (g->type() != w->type() && !(w->is_number_integer() && *w == 0 && *g == 0)) std::abort();
    if (!w->is_structured()) continue;
    if (g->size() != w->size()) std::abort();
    auto gi = g->begin();
    for (auto wi = w->begin(); wi != w->end(); ++wi, ++gi) stack.emplace_back(&*gi, &*wi);
  }
  return 0;
}
