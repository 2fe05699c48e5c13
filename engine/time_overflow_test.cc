// Finding 7 of issue 7: timestamps outside what int64 nanoseconds hold wrapped silently
// (status.startTime of year 9999 was stored as 1816). They are refused, and so decoding fails.
#include <gtest/gtest.h>

#include <string>

#include "engine/codec.h"
#include "engine/time.h"

namespace rcsim {
namespace {

TEST(TimeOverflowTest, TimestampsOutsideTheRepresentableYearsAreRefusedNotWrapped) {
  for (const char* bad : {"9999-12-31T23:59:59Z", "2262-04-12T00:00:00Z", "2262-01-01T00:00:00Z",
                          "1677-09-21T00:12:44Z", "0001-01-01T00:00:00Z", "1000-01-01T00:00:00Z"}) {
    EXPECT_FALSE(ParseRfc3339(bad).has_value()) << bad;
  }
  for (const char* good : {"1678-01-01T00:00:00Z", "2261-12-31T23:59:59Z", "1970-01-01T00:00:00Z"}) {
    auto t = ParseRfc3339(good);
    ASSERT_TRUE(t.has_value()) << good;
    EXPECT_EQ(FormatRfc3339(*t), good);
  }
}

TEST(TimeOverflowTest, PodWithStartTimeInYear9999DoesNotDecode) {
  auto pod = DecodePod(R"({"metadata":{"name":"p"},"status":{"startTime":"9999-12-31T23:59:59Z"}})");
  ASSERT_FALSE(pod.ok());
  EXPECT_EQ(pod.status().code(), Code::kBadRequest);
  EXPECT_NE(pod.status().message().find("startTime"), std::string::npos) << pod.status().message();
}

}  // namespace
}  // namespace rcsim
