#include "engine/json_parse.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/codec.h"
#include "engine/types.h"

namespace rcsim {
namespace {

using json = nlohmann::json;

// ParseJson must give what nlohmann's parser gives: the same acceptance, an equal value, the same
// number types (unsigned for non-negative integers) and the same text when written again.
void ExpectSameAsNlohmann(const std::string& text) {
  SCOPED_TRACE(text.size() < 200 ? text : text.substr(0, 200) + "...");
  const json want = json::parse(text, nullptr, /*allow_exceptions=*/false);
  const json got = ParseJson(text);
  ASSERT_EQ(got.is_discarded(), want.is_discarded());
  if (want.is_discarded()) return;
  EXPECT_EQ(got, want);
  EXPECT_EQ(got.dump(), want.dump());
  // The types of every number, not only their values.
  std::vector<std::pair<const json*, const json*>> stack{{&got, &want}};
  while (!stack.empty()) {
    auto [g, w] = stack.back();
    stack.pop_back();
    ASSERT_EQ(g->type(), w->type()) << w->dump();
    if (w->is_structured()) {
      ASSERT_EQ(g->size(), w->size());
      auto gi = g->begin();
      for (auto wi = w->begin(); wi != w->end(); ++wi, ++gi) stack.emplace_back(&*gi, &*wi);
    }
  }
}

TEST(JsonParseTest, ValidDocumentsReadAsNlohmannReadsThem) {
  for (
      const char* text : {
          R"({"a":1,"b":-2,"c":1.5,"d":true,"e":false,"f":null,"g":"s","h":[],"i":{}})",
          R"([1, -1, 0, 1.0, -1.5e3, 2E-2, 18446744073709551615, -9223372036854775808, 9223372036854775808])",
          R"("just a string")",
          R"(42)",
          R"(  {"spaced" :	[ 1 ,2 ] }  )",
          "{\"nl\":\n[\r\n1]}",
          R"({"dup":1,"dup":2})",
          R"({"dup":{"x":1},"dup":[3]})",
          R"({"esc":"\"\\\/\b\f\n\r\t\u00e9\u20ac\ud83d\ude00\u0000"})",
          R"({"utf8":"héllo wörld €"})",
          R"({"big":1.7976931348623157e308,"tiny":5e-324,"third":0.3333333333333333})",
          R"({"z":1,"a":2,"m":{"y":[{"b":1,"a":2}]}})",
      }) {
    ExpectSameAsNlohmann(text);
  }
}

TEST(JsonParseTest, MalformedDocumentsAreDiscarded) {
  for (const std::string& text : {
           std::string(""),
           std::string("   "),
           std::string("{"),
           std::string("[1,]"),
           std::string("{\"a\":}"),
           std::string("{} {}"),
           std::string("{} x"),
           std::string("01"),
           std::string("1."),
           std::string("+1"),
           std::string("NaN"),
           std::string("nul"),
           std::string("'single'"),
           std::string("{\"a\" 1}"),
           std::string("\"unterminated"),
           std::string("\"ctl\x01\""),
           std::string("\"tab\tin string\""),
           std::string("\"\\x\""),
           std::string("\"\\u12\""),
           std::string("\"bad utf8 \xff\""),
           std::string("\"overlong \xc0\xaf\""),
           std::string("[1e400]"),
           std::string("[-1e400]"),
           std::string("{\"a\":1,}"),
           std::string("[1 2]"),
       }) {
    ExpectSameAsNlohmann(text);
  }
}

// Where simdjson refuses or would read differently, nlohmann's parser decides.
TEST(JsonParseTest, WhatSimdjsonReadsDifferentlyIsLeftToNlohmann) {
  // Integers beyond 64 bits: nlohmann reads them as floating point.
  ExpectSameAsNlohmann("[18446744073709551616, -9223372036854775809, 123456789012345678901234567890]");
  // Lone surrogates: nlohmann refuses them; the value must never hold invalid UTF-8.
  ExpectSameAsNlohmann(R"(["\ud800"])");
  ExpectSameAsNlohmann(R"(["\udc00"])");
  ExpectSameAsNlohmann(R"({"\udc00":1})");
  ExpectSameAsNlohmann(R"(["\ud800\u0041"])");
  // A byte order mark before the document.
  ExpectSameAsNlohmann("\xef\xbb\xbf{\"a\":1}");
  // Nesting beyond simdjson's default depth (1,024).
  ExpectSameAsNlohmann(std::string(1500, '[') + std::string(1500, ']'));
  // Bigger than the fast path takes.
  std::string big = "[";
  while (big.size() <= kFastJsonMaxBytes) big += "\"0123456789abcdef0123456789abcdef\",";
  big += "1]";
  ExpectSameAsNlohmann(big);
}

TEST(JsonParseTest, MinusZeroIsZero) {
  const json got = ParseJson("[-0]");
  ASSERT_FALSE(got.is_discarded());
  EXPECT_EQ(got, json::parse("[-0]"));
  EXPECT_EQ(got.dump(), "[0]");
}

TEST(JsonParseTest, APodDecodesTheSameThroughEitherParser) {
  Pod pod;
  pod.metadata.name = "web-7f9c4-xk2lp";
  pod.metadata.namespace_ = "default";
  pod.metadata.uid = "0b8f2a6e-3c1d-4e5f-9a7b-1c2d3e4f5a6b";
  pod.metadata.labels = {{"app", "web"}, {"tier", "frontend"}};
  Container c;
  c.name = "main";
  c.image = "nginx:1.7.9";
  c.command = {"nginx", "-g", "daemon off;"};
  pod.spec.containers.push_back(c);
  pod.status.phase = phase::kRunning;
  const std::string text = EncodePod(pod);
  ExpectSameAsNlohmann(text);
  Result<Pod> fast = PodFromJson(ParseJson(text));
  ASSERT_TRUE(fast.ok()) << fast.status().ToString();
  EXPECT_EQ(EncodePod(*fast), text);
}

// The per-thread parser is reused: a long document, then a short one, then a malformed one, then a
// valid one again, each read correctly.
TEST(JsonParseTest, TheReusedParserCarriesNothingOver) {
  std::string long_doc = "{\"items\":[";
  for (int i = 0; i < 1000; ++i) long_doc += (i ? "," : "") + std::to_string(i);
  long_doc += "]}";
  ExpectSameAsNlohmann(long_doc);
  ExpectSameAsNlohmann("{\"a\":1}");
  ExpectSameAsNlohmann("{\"a\":");
  ExpectSameAsNlohmann("[true]");
}

}  // namespace
}  // namespace rcsim
