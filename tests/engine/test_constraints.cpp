// Node-count constraints (docs/design.md §3) and the helpers policies use to pick sizes.
#include <gtest/gtest.h>

#include <vector>

#include "sched/constraints.hpp"

namespace sched {
namespace {

using V = std::vector<int>;

TEST(Constraints, AllowedSizesPerConstraint) {
  EXPECT_EQ(allowed_sizes(NodeConstraint::None, 1, 6), (V{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(allowed_sizes(NodeConstraint::Pof2, 1, 40), (V{1, 2, 4, 8, 16, 32}));
  EXPECT_EQ(allowed_sizes(NodeConstraint::Even, 1, 10), (V{2, 4, 6, 8, 10}));
  EXPECT_EQ(allowed_sizes(NodeConstraint::Odd, 1, 10), (V{1, 3, 5, 7, 9}));
  EXPECT_EQ(allowed_sizes(NodeConstraint::Ncube, 1, 130), (V{1, 8, 27, 64, 125}));
}

TEST(Constraints, AllowedSizesStayWithinBounds) {
  EXPECT_EQ(allowed_sizes(NodeConstraint::Pof2, 3, 20), (V{4, 8, 16}));
  EXPECT_EQ(allowed_sizes(NodeConstraint::Pof2, 4, 16), (V{4, 8, 16})) << "bounds included";
  EXPECT_EQ(allowed_sizes(NodeConstraint::Even, 3, 7), (V{4, 6}));
  EXPECT_EQ(allowed_sizes(NodeConstraint::Odd, 2, 8), (V{3, 5, 7}));
  EXPECT_EQ(allowed_sizes(NodeConstraint::Ncube, 2, 27), (V{8, 27}));
  EXPECT_EQ(allowed_sizes(NodeConstraint::None, 5, 5), (V{5}));
  EXPECT_EQ(allowed_sizes(NodeConstraint::None, -3, 2), (V{1, 2})) << "never below 1";
  EXPECT_EQ(allowed_sizes(NodeConstraint::None, 0, 0), V{});
  EXPECT_EQ(allowed_sizes(NodeConstraint::Even, 3, 3), V{});
  EXPECT_EQ(allowed_sizes(NodeConstraint::Ncube, 9, 26), V{});
  EXPECT_EQ(allowed_sizes(NodeConstraint::None, 6, 2), V{}) << "empty range";
}

TEST(Constraints, IsAllowedSize) {
  for (NodeConstraint c : {NodeConstraint::None, NodeConstraint::Pof2, NodeConstraint::Even,
                           NodeConstraint::Odd, NodeConstraint::Ncube}) {
    EXPECT_FALSE(is_allowed_size(c, 0)) << to_string(c);
    EXPECT_FALSE(is_allowed_size(c, -1)) << to_string(c);
  }
  EXPECT_TRUE(is_allowed_size(NodeConstraint::Pof2, 1024));
  EXPECT_FALSE(is_allowed_size(NodeConstraint::Pof2, 1023));
  EXPECT_FALSE(is_allowed_size(NodeConstraint::Pof2, 6));
  EXPECT_TRUE(is_allowed_size(NodeConstraint::Ncube, 1000));
  EXPECT_FALSE(is_allowed_size(NodeConstraint::Ncube, 999));
  EXPECT_FALSE(is_allowed_size(NodeConstraint::Ncube, 2));
  EXPECT_TRUE(is_allowed_size(NodeConstraint::Odd, 1));
  EXPECT_FALSE(is_allowed_size(NodeConstraint::Even, 1));
  EXPECT_TRUE(is_allowed_size(NodeConstraint::None, 7));
}

TEST(Constraints, HighestAllowedAtMost) {
  EXPECT_EQ(highest_allowed_at_most(NodeConstraint::Pof2, 1, 32, 20), 16);
  EXPECT_EQ(highest_allowed_at_most(NodeConstraint::Pof2, 1, 32, 100), 32) << "capped at hi";
  EXPECT_EQ(highest_allowed_at_most(NodeConstraint::Pof2, 1, 12, 100), 8);
  EXPECT_EQ(highest_allowed_at_most(NodeConstraint::Even, 1, 32, 7), 6);
  EXPECT_EQ(highest_allowed_at_most(NodeConstraint::Odd, 1, 32, 8), 7);
  EXPECT_EQ(highest_allowed_at_most(NodeConstraint::Ncube, 1, 100, 63), 27);
  EXPECT_EQ(highest_allowed_at_most(NodeConstraint::None, 3, 10, 5), 5);
  EXPECT_EQ(highest_allowed_at_most(NodeConstraint::None, 3, 10, 2), std::nullopt) << "below lo";
  EXPECT_EQ(highest_allowed_at_most(NodeConstraint::Even, 1, 32, 1), std::nullopt);
  EXPECT_EQ(highest_allowed_at_most(NodeConstraint::Pof2, 5, 7, 7), std::nullopt);
}

TEST(Constraints, LowestAllowedAtLeast) {
  EXPECT_EQ(lowest_allowed_at_least(NodeConstraint::Pof2, 1, 32, 5), 8);
  EXPECT_EQ(lowest_allowed_at_least(NodeConstraint::Pof2, 1, 32, 0), 1);
  EXPECT_EQ(lowest_allowed_at_least(NodeConstraint::Pof2, 3, 32, 1), 4) << "raised to lo";
  EXPECT_EQ(lowest_allowed_at_least(NodeConstraint::Even, 1, 32, 1), 2);
  EXPECT_EQ(lowest_allowed_at_least(NodeConstraint::Odd, 1, 32, 4), 5);
  EXPECT_EQ(lowest_allowed_at_least(NodeConstraint::Ncube, 1, 100, 9), 27);
  EXPECT_EQ(lowest_allowed_at_least(NodeConstraint::Ncube, 1, 26, 9), std::nullopt) << "above hi";
  EXPECT_EQ(lowest_allowed_at_least(NodeConstraint::None, 1, 4, 5), std::nullopt);
}

// The paper's example: a job on 8 nodes with the even constraint, 6 nodes
// still needed: shrink to 2 (the next lower allowed size that covers it).
TEST(Constraints, ShrinkTargetPaperExample) {
  EXPECT_EQ(shrink_target(NodeConstraint::Even, 2, 8, 8, 6), 2);
}

TEST(Constraints, ShrinkTargetCoversTheNeedWithTheLargestAllowedSize) {
  EXPECT_EQ(shrink_target(NodeConstraint::Even, 2, 8, 8, 3), 4) << "8-3=5 → 4";
  EXPECT_EQ(shrink_target(NodeConstraint::Even, 2, 8, 8, 1), 6);
  EXPECT_EQ(shrink_target(NodeConstraint::Pof2, 1, 16, 16, 1), 8);
  EXPECT_EQ(shrink_target(NodeConstraint::Pof2, 1, 16, 16, 9), 4);
  EXPECT_EQ(shrink_target(NodeConstraint::None, 1, 16, 10, 3), 7);
  EXPECT_EQ(shrink_target(NodeConstraint::Odd, 1, 9, 9, 2), 7);
  EXPECT_EQ(shrink_target(NodeConstraint::Ncube, 1, 64, 64, 30), 27);
}

TEST(Constraints, ShrinkTargetFreesWhatItCanWhenItCannotCover) {
  // 8 → at least 2 (min) frees 6 < 7: the smallest allowed size.
  EXPECT_EQ(shrink_target(NodeConstraint::Even, 2, 8, 8, 7), 2);
  EXPECT_EQ(shrink_target(NodeConstraint::None, 3, 10, 6, 5), 3);
  EXPECT_EQ(shrink_target(NodeConstraint::Pof2, 2, 16, 16, 100), 2);
}

TEST(Constraints, ShrinkTargetWhenTheJobCannotShrink) {
  EXPECT_EQ(shrink_target(NodeConstraint::Even, 2, 8, 2, 1), std::nullopt) << "already at min";
  EXPECT_EQ(shrink_target(NodeConstraint::None, 1, 8, 4, 0), std::nullopt) << "nothing needed";
  EXPECT_EQ(shrink_target(NodeConstraint::None, 1, 8, 4, -2), std::nullopt);
  EXPECT_EQ(shrink_target(NodeConstraint::None, 4, 4, 4, 1), std::nullopt) << "rigid range";
  EXPECT_EQ(shrink_target(NodeConstraint::Ncube, 8, 27, 8, 3), std::nullopt);
}

}  // namespace
}  // namespace sched
