// Fast JSON parsing into nlohmann::json, for the codec's hot paths (request bodies, values read from
// etcd, watch lines and replies in the HTTP client).
//
// nlohmann's parser reads a byte at a time: about 10 us for a 1 KB pod, most of a decode. ParseJson
// parses with simdjson (SIMD, ~0.4 us for the same pod) and builds the same nlohmann value from it, so
// every decoder written over nlohmann::json keeps working unchanged. The result is
// json::parse(text, nullptr, false)'s: the same value (a non-negative integer is unsigned, a negative
// one signed, the last of duplicate keys wins), and discarded for malformed text. The one difference:
// "-0" reads as unsigned 0 (nlohmann: signed 0), equal to it and written the same. Whatever simdjson
// refuses or reads differently goes to nlohmann's parser, which then decides: documents over
// kFastJsonMaxBytes (so the per-thread parser stays small), integers beyond 64 bits and nesting beyond
// simdjson's depth (1,024).
//
// Thread-safety: safe from any thread (each thread has its own simdjson parser).
#ifndef RCSIM_ENGINE_JSON_PARSE_H_
#define RCSIM_ENGINE_JSON_PARSE_H_

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string_view>

namespace rcsim {

// Larger documents (lists of many objects) are parsed by nlohmann alone: the simdjson parser keeps
// buffers the size of the largest document it has seen, one per thread.
inline constexpr std::size_t kFastJsonMaxBytes = 1 << 20;

// json::parse(text, nullptr, /*allow_exceptions=*/false), faster: a discarded value when malformed.
nlohmann::json ParseJson(std::string_view text);

}  // namespace rcsim

#endif  // RCSIM_ENGINE_JSON_PARSE_H_
