#include "fakes/trace_recorder.h"

#include <gtest/gtest.h>

#include "fakes/sim_loop.h"

namespace rcsim {
namespace {

TEST(TraceRecorderTest, FormatsLinesWithVirtualSecondsSinceConstruction) {
  SimLoop loop;
  loop.RunFor(std::chrono::seconds(100));  // the trace's origin is construction time, not the epoch
  TraceRecorder trace(&loop, /*keep_lines=*/true);
  trace.Record("nodes", "bind default/a node-1");
  loop.RunFor(std::chrono::microseconds(1500001));
  trace.Record("manager", "create default/b");
  ASSERT_EQ(trace.lines().size(), 2u);
  EXPECT_EQ(trace.lines()[0], "0.000000 nodes bind default/a node-1");
  EXPECT_EQ(trace.lines()[1], "1.500001 manager create default/b");
  EXPECT_EQ(trace.line_count(), 2u);
}

TEST(TraceRecorderTest, DigestIsFnvOfTheWholeTraceText) {
  SimLoop loop;
  TraceRecorder trace(&loop);
  EXPECT_EQ(trace.digest(), Fnv1a64(""));
  trace.Record("a", "x");
  loop.RunFor(std::chrono::seconds(2));
  trace.Record("b", "y z");
  EXPECT_EQ(trace.digest(), Fnv1a64("0.000000 a x\n2.000000 b y z\n"));
  EXPECT_TRUE(trace.lines().empty());  // not kept unless asked
  EXPECT_EQ(trace.line_count(), 2u);
}

TEST(TraceRecorderTest, DigestDependsOnTimeActorEventAndOrder) {
  auto digest_of = [](auto record) {
    SimLoop loop;
    TraceRecorder trace(&loop);
    record(loop, trace);
    return trace.digest();
  };
  const uint64_t base = digest_of([](SimLoop&, TraceRecorder& t) {
    t.Record("a", "x");
    t.Record("b", "y");
  });
  EXPECT_EQ(base, digest_of([](SimLoop&, TraceRecorder& t) {
              t.Record("a", "x");
              t.Record("b", "y");
            }));
  EXPECT_NE(base, digest_of([](SimLoop&, TraceRecorder& t) {
              t.Record("b", "y");
              t.Record("a", "x");
            }));
  EXPECT_NE(base, digest_of([](SimLoop& l, TraceRecorder& t) {
              t.Record("a", "x");
              l.RunFor(std::chrono::microseconds(1));
              t.Record("b", "y");
            }));
  // The separator keeps ("a b", "x") apart from ("a", "b x")? No: both render "a b x"; actors never
  // contain spaces, so only distinct lines need distinct digests.
  EXPECT_NE(base, digest_of([](SimLoop&, TraceRecorder& t) {
              t.Record("a", "x");
              t.Record("b", "z");
            }));
}

}  // namespace
}  // namespace rcsim
