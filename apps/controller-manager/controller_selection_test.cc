#include "apps/controller-manager/controller_selection.h"

#include <gtest/gtest.h>

namespace rcsim {
namespace {

std::set<std::string> Select(std::string_view flag) {
  auto r = SelectControllers(flag);
  EXPECT_TRUE(r.ok()) << flag << ": " << r.status().ToString();
  return r.ok() ? *r : std::set<std::string>{};
}

TEST(ControllerSelectionTest, StarIsEveryController) {
  EXPECT_EQ(Select("*"), std::set<std::string>(KnownControllers().begin(), KnownControllers().end()));
  EXPECT_EQ(Select("*").size(), 5u);
}

TEST(ControllerSelectionTest, MinusTurnsOneOffFromStar) {
  std::set<std::string> s = Select("*,-nodelifecycle");
  EXPECT_EQ(s.count("nodelifecycle"), 0u);
  EXPECT_EQ(s.count("garbagecollector"), 1u);
  EXPECT_EQ(s.size(), 4u);
}

TEST(ControllerSelectionTest, NamesWithoutStarAreTheOnlyOnes) {
  EXPECT_EQ(Select("replicationcontroller,podgc"), (std::set<std::string>{"replicationcontroller", "podgc"}));
  EXPECT_TRUE(Select("-podgc").empty());
}

TEST(ControllerSelectionTest, FirstItemNamingAControllerWins) {
  EXPECT_EQ(Select("scheduler,-scheduler"), std::set<std::string>{"scheduler"});
  EXPECT_EQ(Select("-scheduler,scheduler,*").count("scheduler"), 0u);
}

TEST(ControllerSelectionTest, UnknownOrEmptyItemIsInvalidAndNamesIt) {
  for (std::string_view bad : {"*,-bogus", "deployment", "", "*,", "--podgc"}) {
    auto r = SelectControllers(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), Code::kInvalid);
    EXPECT_NE(r.status().message().find("known: replicationcontroller"), std::string::npos)
        << r.status().message();
  }
}

}  // namespace
}  // namespace rcsim
