#include "backends/http/log_query.h"

#include <gtest/gtest.h>

namespace rcsim {
namespace {

TEST(LogQueryTest, ParsesWhatPodsLogAndTheKubeletTake) {
  Result<LogQuery> q = ParseLogQuery("container=web%2D1&tailLines=20&follow=true&previous=1&pretty=true");
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  EXPECT_EQ(q->container, "web-1");
  EXPECT_EQ(q->tail_lines, 20);
  EXPECT_TRUE(q->follow);
  EXPECT_TRUE(q->previous);
  EXPECT_EQ(KubeletLogQuery(*q), "tailLines=20&follow=true&previous=true") << "the container is in the path";
  Result<LogQuery> none = ParseLogQuery("");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->tail_lines.has_value());
  EXPECT_EQ(KubeletLogQuery(*none), "");
  Result<LogQuery> off = ParseLogQuery("follow=false&previous=");
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(off->follow);
  EXPECT_FALSE(off->previous);
}

TEST(LogQueryTest, RefusesBadValuesNamingTheParameter) {
  for (const char* bad :
       {"tailLines=-1", "tailLines=x", "tailLines=1x", "follow=yes", "previous=2", "a=%zz"}) {
    Result<LogQuery> q = ParseLogQuery(bad);
    ASSERT_FALSE(q.ok()) << bad;
    EXPECT_EQ(q.status().code(), Code::kBadRequest) << bad;
  }
  EXPECT_NE(ParseLogQuery("tailLines=x").status().message().find("tailLines"), std::string::npos);
  EXPECT_NE(ParseLogQuery("follow=yes").status().message().find("follow"), std::string::npos);
}

}  // namespace
}  // namespace rcsim
