#include "engine/types.h"

#include <gtest/gtest.h>

#include <optional>
#include <utility>

namespace rcsim {
namespace {

// Boxed is a value, as the std::optional it replaced: a copy is deep (changing it leaves the original
// alone), equality compares the boxed values, and nullopt empties it.
TEST(BoxedTest, CopiesAreDeepAndCompareByValue) {
  ContainerState a;
  EXPECT_FALSE(a.running.has_value());
  EXPECT_TRUE(a.running == std::nullopt);
  a.running = ContainerStateRunning{TimePoint(std::chrono::seconds(5)), {}};
  ASSERT_TRUE(a.running);
  ContainerState b = a;
  EXPECT_EQ(a, b);
  b.running->started_at = TimePoint(std::chrono::seconds(6));
  EXPECT_EQ(a.running->started_at, TimePoint(std::chrono::seconds(5))) << "the copy shares nothing";
  EXPECT_NE(a, b);

  b = a;  // copy-assign over a value
  EXPECT_EQ(a, b);
  b.running = std::nullopt;
  EXPECT_FALSE(b.running);
  EXPECT_NE(a, b) << "empty and set differ";
  b.terminated.emplace().exit_code = 3;
  EXPECT_EQ(b.terminated->exit_code, 3);
  ContainerState moved = std::move(b);
  EXPECT_EQ(moved.terminated->exit_code, 3);
  moved.terminated.reset();
  EXPECT_EQ(moved, ContainerState{});
}

// What the box saves: a container status holds two states of three alternatives each.
TEST(BoxedTest, AContainerStatusHoldsItsStatesByPointer) {
  EXPECT_LE(sizeof(ContainerState), 3 * sizeof(void*) + sizeof(UnknownFields));
}

}  // namespace
}  // namespace rcsim
