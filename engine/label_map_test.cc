#include "engine/label_map.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <thread>
#include <vector>

namespace rcsim {
namespace {

TEST(LabelMapTest, CopiesShareOneMapUntilOneChanges) {
  Labels a{{"app", "web"}, {"tier", "db"}};
  Labels b = a;
  EXPECT_TRUE(b.shares_with(a));
  b["tier"] = "cache";
  EXPECT_FALSE(b.shares_with(a));
  EXPECT_EQ(a.at("tier"), "db");
  EXPECT_EQ(b.at("tier"), "cache");
  EXPECT_EQ(a.size(), 2u);
  // The only owner changes its map in place.
  Labels c = std::move(b);
  c["extra"] = "1";
  EXPECT_EQ(c.size(), 3u);
  EXPECT_EQ(a.size(), 2u);
}

TEST(LabelMapTest, EveryMutatorLeavesTheOtherCopiesAlone) {
  const Labels base{{"a", "1"}, {"b", "2"}};
  auto check_base = [&] { EXPECT_EQ(base.map(), (Labels::Map{{"a", "1"}, {"b", "2"}})); };
  Labels x = base;
  x.insert({"c", "3"});
  check_base();
  x = base;
  x.insert_or_assign("a", "9");
  check_base();
  EXPECT_EQ(x.at("a"), "9");
  x = base;
  x.emplace("d", "4");
  check_base();
  x = base;
  x.try_emplace("e", "5");
  check_base();
  x = base;
  EXPECT_EQ(x.erase("a"), 1u);
  check_base();
  EXPECT_FALSE(x.contains("a"));
  x = base;
  x.erase(x.find("b"));  // an iterator of the shared map: erased by key from the copy
  check_base();
  EXPECT_EQ(x.map(), (Labels::Map{{"a", "1"}}));
  x = base;
  x.clear();
  check_base();
  EXPECT_TRUE(x.empty());
}

TEST(LabelMapTest, ErasingAnAbsentKeyKeepsSharing) {
  const Labels a{{"app", "web"}};
  Labels b = a;
  EXPECT_EQ(b.erase("other"), 0u);
  EXPECT_TRUE(b.shares_with(a));
}

TEST(LabelMapTest, ReadsAsTheStdMapItReplaces) {
  const Labels::Map m{{"z", "1"}, {"a", "2"}, {"m", "3"}};
  const Labels l = m;
  const Labels::Map& as_map = l;
  EXPECT_EQ(as_map, m);
  std::vector<std::string> keys;
  for (const auto& [k, v] : l) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"a", "m", "z"}));
  EXPECT_EQ(l.count("m"), 1u);
  EXPECT_EQ(l.find("q"), l.end());
  EXPECT_THROW((void)l.at("q"), std::out_of_range);
  // Equal by value whether shared or not; empty equals empty.
  EXPECT_EQ(l, Labels(m));
  EXPECT_NE(l, Labels({{"z", "1"}}));
  EXPECT_EQ(Labels(), Labels(Labels::Map{}));
  EXPECT_TRUE(Labels().empty());
  EXPECT_TRUE(Labels(Labels::Map{}).empty());
}

// Threads copy one shared value and change their copies while others read the original: no copy sees
// another's change. And a value changed while a reader on another thread drops its copy of it: the
// change is made in place once the reader is gone (else on a copy), and TSan (this test runs under
// it) sees the reader's reads happen before it.
TEST(LabelMapTest, CopiesChangedOnOtherThreadsLeaveTheOriginalAlone) {
  const Labels original{{"app", "web"}};
  std::vector<std::thread> threads;
  threads.reserve(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&original, t] {
      for (int i = 0; i < 2000; ++i) {
        Labels mine = original;
        mine["thread"] = std::to_string(t);
        EXPECT_EQ(mine.size(), 2u);
        EXPECT_EQ(original.size(), 1u);
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(original.map(), (Labels::Map{{"app", "web"}}));
}

TEST(LabelMapTest, AChangeAfterAnotherThreadsCopyIsDroppedIsRaceFree) {
  for (int i = 0; i < 200; ++i) {
    Labels mine{{"app", "web"}};
    Labels theirs = mine;
    std::thread reader([copy = std::move(theirs)]() mutable {
      EXPECT_EQ(copy.at("app"), "web");
      copy = Labels();  // dropped while the change below may be under way
    });
    mine["app"] = "db";
    reader.join();
    EXPECT_EQ(mine.at("app"), "db");
  }
}

}  // namespace
}  // namespace rcsim
