#include "harness/duration.h"

#include <gtest/gtest.h>

namespace rcsim {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

Duration Ok(std::string_view text) {
  Result<Duration> d = ParseDuration(text);
  EXPECT_TRUE(d.ok()) << text << ": " << d.status().ToString();
  return d.ok() ? *d : Duration(-1);
}

TEST(DurationTest, ParsesEachUnit) {
  EXPECT_EQ(Ok("500ms"), milliseconds(500));
  EXPECT_EQ(Ok("30s"), seconds(30));
  EXPECT_EQ(Ok("10m"), minutes(10));
  EXPECT_EQ(Ok("2h"), hours(2));
  EXPECT_EQ(Ok("0"), Duration::zero());
  EXPECT_EQ(Ok("0s"), Duration::zero());
}

TEST(DurationTest, ParsesCombinationsAndFractions) {
  EXPECT_EQ(Ok("1m30s"), seconds(90));
  EXPECT_EQ(Ok("1h2m3s4ms"), hours(1) + minutes(2) + seconds(3) + milliseconds(4));
  EXPECT_EQ(Ok("1.5s"), milliseconds(1500));
  EXPECT_EQ(Ok("0.25ms"), std::chrono::microseconds(250));
  EXPECT_EQ(Ok(".5s"), milliseconds(500));
}

TEST(DurationTest, RefusesMalformedInput) {
  for (std::string_view bad : {"", "10", "-5s", "+5s", "5x", "5 s", "s", "1m30", "ms", "5sec", "1..5s",
                               "99999999999999999999h", "3000000h"}) {
    Result<Duration> d = ParseDuration(bad);
    EXPECT_FALSE(d.ok()) << "accepted \"" << bad << "\"";
    if (!d.ok()) {
      EXPECT_EQ(d.status().code(), Code::kInvalid);
    }
  }
}

TEST(DurationTest, ReasonNamesTheProblem) {
  EXPECT_NE(ParseDuration("10").status().message().find("missing unit"), std::string::npos);
  EXPECT_NE(ParseDuration("5d").status().message().find("unknown unit \"d\""), std::string::npos);
}

TEST(DurationTest, FormatRoundTrips) {
  for (Duration d : {Duration::zero(), Duration(milliseconds(500)), Duration(seconds(90)),
                     Duration(hours(1) + seconds(5)), Duration(milliseconds(1500)),
                     Duration(std::chrono::microseconds(250)), Duration(std::chrono::nanoseconds(1))}) {
    std::string text = FormatScenarioDuration(d);
    EXPECT_EQ(Ok(text), d) << text;
  }
  EXPECT_EQ(FormatScenarioDuration(seconds(90)), "1m30s");
  EXPECT_EQ(FormatScenarioDuration(milliseconds(500)), "500ms");
  EXPECT_EQ(FormatScenarioDuration(milliseconds(1500)), "1s500ms");
}

}  // namespace
}  // namespace rcsim
