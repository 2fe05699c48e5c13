#include "backends/http/token_auth.h"

#include <gtest/gtest.h>

namespace rcsim {
namespace {

TEST(TokenAuthTest, ReadsKubeApiserverCsv) {
  auto auth = TokenAuthenticator::FromCsv(
      "# comment\n"
      "t0k3n,alice,uid-1,\"system:masters,dev\"\n"
      "\n"
      "other,bob,uid-2\n",
      "tokens.csv");
  ASSERT_TRUE(auth.ok()) << auth.status().ToString();
  auto alice = auth->Authenticate("Bearer t0k3n");
  ASSERT_TRUE(alice.has_value());
  EXPECT_EQ(alice->name, "alice");
  EXPECT_EQ(alice->uid, "uid-1");
  EXPECT_EQ(alice->groups, (std::vector<std::string>{"system:masters", "dev"}));
  EXPECT_EQ(auth->Authenticate("Bearer other")->name, "bob");
}

TEST(TokenAuthTest, BearerSchemeIsCaseInsensitiveAndTokensAreExact) {
  TokenAuthenticator auth;
  auth.Add("abc", TokenUser{"admin", "admin", {}});
  EXPECT_TRUE(auth.Authenticate("Bearer abc"));
  EXPECT_TRUE(auth.Authenticate("bearer abc"));
  EXPECT_TRUE(auth.Authenticate("BEARER   abc"));
  EXPECT_FALSE(auth.Authenticate("Bearer ab"));
  EXPECT_FALSE(auth.Authenticate("Bearer abcd"));
  EXPECT_FALSE(auth.Authenticate("Bearer ABC"));
  EXPECT_FALSE(auth.Authenticate("Basic abc"));
  EXPECT_FALSE(auth.Authenticate("Bearerabc"));
  EXPECT_FALSE(auth.Authenticate("Bearer "));
  EXPECT_FALSE(auth.Authenticate(""));
}

TEST(TokenAuthTest, MalformedCsvIsRefusedWithTheLine) {
  for (const char* bad :
       {"onlytoken\n", "t,u\n", ",u,uid\n", "t,u,uid,\"open\n", "t,u,1\nt,v,2\n", "# none\n"}) {
    auto auth = TokenAuthenticator::FromCsv(bad, "f.csv");
    ASSERT_FALSE(auth.ok()) << bad;
    EXPECT_EQ(auth.status().code(), Code::kInvalid);
    EXPECT_NE(auth.status().message().find("f.csv"), std::string::npos);
  }
}

TEST(TokenAuthTest, HealthPathsNeedNoToken) {
  EXPECT_TRUE(IsUnauthenticatedPath("/healthz"));
  EXPECT_TRUE(IsUnauthenticatedPath("/readyz?verbose"));
  EXPECT_TRUE(IsUnauthenticatedPath("/livez/ping"));
  EXPECT_FALSE(IsUnauthenticatedPath("/healthzx"));
  EXPECT_FALSE(IsUnauthenticatedPath("/api/v1/pods"));
  EXPECT_FALSE(IsUnauthenticatedPath("/"));
}

}  // namespace
}  // namespace rcsim
