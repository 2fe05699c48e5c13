#include "engine/go_duration.h"

#include <gtest/gtest.h>

namespace rcsim {
namespace {

TEST(GoDurationTest, ParsesWhatKubernetesFlagsTake) {
  EXPECT_EQ(ParseGoDuration("15s"), Duration(std::chrono::seconds(15)));
  EXPECT_EQ(ParseGoDuration("500ms"), Duration(std::chrono::milliseconds(500)));
  EXPECT_EQ(ParseGoDuration("5m0s"), Duration(std::chrono::minutes(5)));
  EXPECT_EQ(ParseGoDuration("1m30s"), Duration(std::chrono::seconds(90)));
  EXPECT_EQ(ParseGoDuration("1.5h"), Duration(std::chrono::minutes(90)));
  EXPECT_EQ(ParseGoDuration("0"), Duration::zero());
}

TEST(GoDurationTest, RejectsWhatGoRejects) {
  EXPECT_FALSE(ParseGoDuration(""));
  EXPECT_FALSE(ParseGoDuration("15"));
  EXPECT_FALSE(ParseGoDuration("s"));
  EXPECT_FALSE(ParseGoDuration("10 s"));
  EXPECT_FALSE(ParseGoDuration("3d"));
  EXPECT_FALSE(ParseGoDuration("-5s"));
  EXPECT_FALSE(ParseGoDuration("99999999999h"));
}

}  // namespace
}  // namespace rcsim
