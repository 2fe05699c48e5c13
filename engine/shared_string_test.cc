#include "engine/shared_string.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "engine/types.h"

namespace rcsim {
namespace {

TEST(SharedStringTest, EmptyByDefaultAndFromAnEmptyString) {
  SharedString s;
  EXPECT_TRUE(s.empty());
  EXPECT_EQ(s.size(), 0u);
  EXPECT_EQ(s.str(), "");
  EXPECT_STREQ(s.c_str(), "");
  EXPECT_TRUE(SharedString(std::string()).empty());
  EXPECT_EQ(s, SharedString(""));
}

TEST(SharedStringTest, KnownConditionValuesAreSharedConstants) {
  for (const char* v :
       {"True", "False", "Unknown", "Ready", "ContainersReady", "PodScheduled", "Initialized"}) {
    SharedString a(v);
    SharedString b{std::string(v)};
    EXPECT_TRUE(a.is_constant()) << v;
    EXPECT_EQ(&a.str(), &b.str()) << v;  // one buffer for every occurrence
    EXPECT_EQ(a, v);
  }
  EXPECT_FALSE(SharedString("Truee").is_constant());
  EXPECT_FALSE(SharedString("true").is_constant());
}

TEST(SharedStringTest, CopiesShareOneBufferThatOutlivesTheOriginal) {
  auto original = std::make_unique<SharedString>(std::string(100, 'x') + " a message no constant matches");
  EXPECT_FALSE(original->is_constant());
  SharedString copy = *original;
  EXPECT_EQ(&copy.str(), &original->str());
  SharedString assigned;
  assigned = copy;
  original.reset();
  EXPECT_EQ(copy.str(), std::string(100, 'x') + " a message no constant matches");
  EXPECT_EQ(assigned, copy);
  SharedString moved = std::move(copy);
  EXPECT_TRUE(copy.empty());  // NOLINT(bugprone-use-after-move): a moved-from SharedString is empty
  EXPECT_EQ(moved, assigned);
  const SharedString& alias = moved;
  moved = alias;  // self-assignment keeps the value
  EXPECT_EQ(moved.size(), 130u);
  moved.clear();
  EXPECT_TRUE(moved.empty());
  EXPECT_FALSE(assigned.empty());
}

TEST(SharedStringTest, ComparesAndConvertsAsAStdString) {
  const SharedString s("NodeLost");
  const std::string same = "NodeLost";
  EXPECT_TRUE(s == "NodeLost");
  EXPECT_TRUE(s == same);
  EXPECT_TRUE(same == s);
  EXPECT_TRUE(s == std::string_view("NodeLost"));
  EXPECT_TRUE(s != "NodeLos");
  EXPECT_TRUE(SharedString("a") < SharedString("b"));
  const std::string& ref = s;
  std::string_view view = s;
  EXPECT_EQ(ref, "NodeLost");
  EXPECT_EQ(view, "NodeLost");
  std::ostringstream os;
  os << s;
  EXPECT_EQ(os.str(), "NodeLost");
  nlohmann::json j;
  j["reason"] = SharedString("disk \"full\"");
  EXPECT_EQ(j.dump(), R"({"reason":"disk \"full\""})");
}

// A condition of a pod version is a quarter of what it was with std::strings (160 bytes), so its
// four conditions no longer dominate a status.
TEST(SharedStringTest, APodConditionIsSmall) { EXPECT_LE(sizeof(PodCondition), 64u); }

// Versions are shared between threads in production: copies and releases from two threads keep the
// count right (TSan runs this test; ASan would see a double free or a leak).
TEST(SharedStringTest, CopiesInTwoThreadsKeepTheCount) {
  const SharedString shared(std::string(40, 'm'));
  auto churn = [&] {
    std::vector<SharedString> copies;
    for (int round = 0; round < 200; ++round) {
      for (int i = 0; i < 50; ++i) copies.push_back(shared);
      copies.clear();
    }
  };
  std::thread other(churn);
  churn();
  other.join();
  EXPECT_EQ(shared.str(), std::string(40, 'm'));
}

}  // namespace
}  // namespace rcsim
