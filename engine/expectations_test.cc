#include "engine/expectations.h"

#include <gtest/gtest.h>

#include "fakes/sim_loop.h"

namespace rcsim {
namespace {

TEST(ExpectationsTest, NoRecordIsSatisfied) {
  SimLoop loop;
  Expectations e(&loop, std::chrono::minutes(5));
  EXPECT_TRUE(e.Satisfied("ns/a"));
}

TEST(ExpectationsTest, CreationsSatisfiedWhenAllObserved) {
  SimLoop loop;
  Expectations e(&loop, std::chrono::minutes(5));
  e.ExpectCreations("ns/a", 2);
  EXPECT_FALSE(e.Satisfied("ns/a"));
  e.CreationObserved("ns/a");
  EXPECT_FALSE(e.Satisfied("ns/a"));
  e.CreationObserved("ns/a");
  EXPECT_TRUE(e.Satisfied("ns/a"));
  e.CreationObserved("ns/a");  // extra observations do not go negative
  EXPECT_EQ(e.PendingAdds("ns/a"), 0);
  EXPECT_TRUE(e.Satisfied("ns/b"));
}

TEST(ExpectationsTest, DeletionsTrackedByPodKeyOnce) {
  SimLoop loop;
  Expectations e(&loop, std::chrono::minutes(5));
  e.ExpectDeletions("ns/a", {"ns/p1", "ns/p2"});
  e.DeletionObserved("ns/a", "ns/p1");
  e.DeletionObserved("ns/a", "ns/p1");  // the same deletion seen twice counts once
  e.DeletionObserved("ns/a", "ns/other");
  EXPECT_FALSE(e.Satisfied("ns/a"));
  EXPECT_EQ(e.PendingDeletes("ns/a"), 1u);
  e.DeletionObserved("ns/a", "ns/p2");
  EXPECT_TRUE(e.Satisfied("ns/a"));
}

TEST(ExpectationsTest, ExpireAfterTimeout) {
  SimLoop loop;
  Expectations e(&loop, std::chrono::minutes(5));
  e.ExpectCreations("ns/a", 3);
  loop.RunFor(std::chrono::minutes(5));
  EXPECT_FALSE(e.Satisfied("ns/a"));
  loop.RunFor(std::chrono::seconds(1));
  EXPECT_TRUE(e.Satisfied("ns/a"));
  e.ExpectCreations("ns/a", 1);  // a new record restarts the timeout
  EXPECT_FALSE(e.Satisfied("ns/a"));
}

TEST(ExpectationsTest, LoweringForCreatesThatNeverHappen) {
  SimLoop loop;
  Expectations e(&loop, std::chrono::minutes(5));
  e.ExpectCreations("ns/a", 7);
  e.CreationObserved("ns/a");
  e.LowerCreations("ns/a", 6);
  EXPECT_TRUE(e.Satisfied("ns/a"));
  e.ExpectCreations("ns/a", 2);
  e.Delete("ns/a");
  EXPECT_TRUE(e.Satisfied("ns/a"));
}

}  // namespace
}  // namespace rcsim

namespace rcsim {
namespace {

TEST(ExpectationsUnknownOutcomeTest, ExpireWithinShortensButNeverExtends) {
  SimLoop loop;
  Expectations e(&loop, std::chrono::minutes(5));
  e.ExpectCreations("default/web", 2);
  e.ExpireWithin("default/web", std::chrono::seconds(10));
  loop.RunFor(std::chrono::seconds(9));
  EXPECT_FALSE(e.Satisfied("default/web"));
  loop.RunFor(std::chrono::seconds(2));
  EXPECT_TRUE(e.Satisfied("default/web"));
  // A later, longer grace does not extend an earlier deadline.
  e.ExpectCreations("default/db", 1);
  e.ExpireWithin("default/db", std::chrono::seconds(1));
  e.ExpireWithin("default/db", std::chrono::minutes(1));
  loop.RunFor(std::chrono::seconds(2));
  EXPECT_TRUE(e.Satisfied("default/db"));
}

}  // namespace
}  // namespace rcsim

namespace rcsim {
namespace {

// Engine bug 4: one create timeout voided the expectations of the creates known to have succeeded.
TEST(ExpectationsUnknownOutcomeTest, OneCreateTimeoutVoidsExpectationsOfSucceededCreates) {
  SimLoop loop;
  Expectations e(&loop, std::chrono::minutes(5));
  e.ExpectCreations("uid-web", 4);
  e.CreationOutcomeUnknown("uid-web", std::chrono::seconds(10));  // 3 known, 1 unknown
  e.CreationObserved("uid-web");
  loop.RunFor(std::chrono::seconds(11));
  // The unknown one's grace is over, but 2 creates known to have succeeded are still unobserved.
  EXPECT_FALSE(e.Satisfied("uid-web"));
  EXPECT_EQ(e.TimeUntilExpiry("uid-web"), std::chrono::minutes(5) - std::chrono::seconds(11));
  e.CreationObserved("uid-web");
  e.CreationObserved("uid-web");
  EXPECT_TRUE(e.Satisfied("uid-web"));
}

TEST(ExpectationsUnknownOutcomeTest, UnknownCreateIsPendingForItsGraceOnly) {
  SimLoop loop;
  Expectations e(&loop, std::chrono::minutes(5));
  e.ExpectCreations("uid-web", 2);
  e.CreationObserved("uid-web");
  e.CreationOutcomeUnknown("uid-web", std::chrono::seconds(10));
  EXPECT_FALSE(e.Satisfied("uid-web"));
  EXPECT_EQ(e.TimeUntilExpiry("uid-web"), std::chrono::seconds(10));
  loop.RunFor(std::chrono::seconds(10));
  EXPECT_FALSE(e.Satisfied("uid-web"));
  loop.RunFor(std::chrono::milliseconds(1));
  EXPECT_TRUE(e.Satisfied("uid-web"));
  // Observed within the grace: satisfied at once.
  e.ExpectCreations("uid-db", 1);
  e.CreationOutcomeUnknown("uid-db", std::chrono::seconds(10));
  e.CreationObserved("uid-db");
  EXPECT_TRUE(e.Satisfied("uid-db"));
}

// Found by rcsim explore (issue 15): a pod created and then deleted while the pod watch was stalled and
// then dropped never showed in the re-list, so its create stayed expected for the whole 5-minute
// timeout (the controller sat at 5 of 8 pods). After a re-list every pending create waits its grace only.
TEST(ExpectationsUnknownOutcomeTest, PodCreatedAndDeletedDuringAWatchGapIsNeverObserved) {
  SimLoop loop;
  Expectations e(&loop, std::chrono::minutes(5));
  e.ExpectCreations("uid-web", 8);
  for (int i = 0; i < 5; ++i) e.CreationObserved("uid-web");  // the re-list showed 5 of the 8
  e.ExpectCreations("uid-db", 1);
  e.CreationObserved("uid-db");
  EXPECT_EQ(e.CreationsUnobservableAfterGap(std::chrono::seconds(10)), std::vector<std::string>{"uid-web"});
  EXPECT_EQ(e.PendingAdds("uid-web"), 3);
  EXPECT_EQ(e.TimeUntilExpiry("uid-web"), std::chrono::seconds(10));
  e.CreationObserved("uid-web");  // one shows after all
  EXPECT_EQ(e.PendingAdds("uid-web"), 2);
  loop.RunFor(std::chrono::seconds(10));
  EXPECT_FALSE(e.Satisfied("uid-web"));
  loop.RunFor(std::chrono::milliseconds(1));
  EXPECT_TRUE(e.Satisfied("uid-web"));
  EXPECT_TRUE(e.Satisfied("uid-db"));
}

// Engine bug 7: a timed-out delete was counted as observed at once.
TEST(ExpectationsUnknownOutcomeTest, TimedOutDeleteIsCountedAsObservedAtOnce) {
  SimLoop loop;
  Expectations e(&loop, std::chrono::minutes(5));
  e.ExpectDeletions("uid-web", {"ns/p1", "ns/p2"});
  e.DeletionObserved("uid-web", "ns/p2");
  e.DeletionOutcomeUnknown("uid-web", "ns/p1", std::chrono::seconds(10));
  EXPECT_FALSE(e.Satisfied("uid-web"));
  loop.RunFor(std::chrono::seconds(5));
  EXPECT_FALSE(e.Satisfied("uid-web"));
  e.DeletionObserved("uid-web", "ns/p1");  // the delete event arrives
  EXPECT_TRUE(e.Satisfied("uid-web"));
  // Or the grace passes.
  e.ExpectDeletions("uid-web", {"ns/p3"});
  e.DeletionOutcomeUnknown("uid-web", "ns/p3", std::chrono::seconds(10));
  loop.RunFor(std::chrono::seconds(11));
  EXPECT_TRUE(e.Satisfied("uid-web"));
}

}  // namespace
}  // namespace rcsim
