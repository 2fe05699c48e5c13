#include "engine/json_parse.h"

#include <simdjson.h>

#include <cstdint>
#include <string>

namespace rcsim {
namespace {

using json = nlohmann::json;

// Builds into *out the nlohmann value of `e` (a document simdjson accepted, so one nlohmann's parser
// reads the same way).
void Build(simdjson::dom::element e, json* out) {
  using simdjson::dom::element_type;
  switch (e.type()) {
    case element_type::ARRAY: {
      *out = json::array();
      auto& items = out->get_ref<json::array_t&>();
      const simdjson::dom::array array = e.get_array().value_unsafe();
      items.reserve(array.size());
      for (simdjson::dom::element item : array) Build(item, &items.emplace_back());
      return;
    }
    case element_type::OBJECT: {
      *out = json::object();
      auto& fields = out->get_ref<json::object_t&>();
      const simdjson::dom::object object = e.get_object().value_unsafe();
      for (simdjson::dom::key_value_pair field : object) {
        // try_emplace and an overwrite: the last of duplicate keys wins, as in nlohmann's parser. The
        // hint makes sorted keys (what nlohmann writes, so every object this codec encodes) one
        // comparison each instead of a search.
        Build(field.value, &fields.try_emplace(fields.end(), std::string(field.key))->second);
      }
      return;
    }
    // simdjson has checked that the text is UTF-8 and refuses a lone surrogate escape, as nlohmann
    // does (json_parse_test holds it to that): a string read here is valid UTF-8.
    case element_type::STRING: *out = std::string(e.get_string().value_unsafe()); return;
    case element_type::INT64: {
      // nlohmann keeps a non-negative integer as unsigned, a negative one as signed.
      const int64_t v = e.get_int64().value_unsafe();
      if (v >= 0) {
        *out = static_cast<uint64_t>(v);
      } else {
        *out = v;
      }
      return;
    }
    case element_type::UINT64: *out = e.get_uint64().value_unsafe(); return;
    case element_type::DOUBLE: *out = e.get_double().value_unsafe(); return;
    case element_type::BOOL: *out = e.get_bool().value_unsafe(); return;
    case element_type::NULL_VALUE: *out = nullptr; return;
  }
}

}  // namespace

json ParseJson(std::string_view text) {
  if (text.size() <= kFastJsonMaxBytes) {
    thread_local simdjson::dom::parser parser;
    simdjson::dom::element doc;
    // realloc_if_needed: simdjson copies the text into its own padded buffer (reused), so `text`
    // needs no padding of its own.
    if (parser.parse(text.data(), text.size(), /*realloc_if_needed=*/true).get(doc) == simdjson::SUCCESS) {
      json out;
      Build(doc, &out);
      return out;
    }
  }
  return json::parse(text, nullptr, /*allow_exceptions=*/false);
}

}  // namespace rcsim
