// The process sets of a live adaptation (schedd/adaptations.hpp):
// which ranks join, which leave, and how the others are renumbered.
#include <gtest/gtest.h>

#include "adaptations.hpp"

namespace sched::daemon {
namespace {

using Ranks = std::vector<int>;

TEST(AdaptPlan, AnExpansionAppendsAsManyProcessesPerNodeAsTheFirstNodeHas) {
  const StepLayout layout = {{"n1", {0, 1}}, {"n2", {2, 3}}};
  const WindowPlan plan = plan_window(layout, Resize::Op::Expand, {"n3", "n4"});
  EXPECT_EQ(plan.old_size, 4);
  EXPECT_EQ(plan.new_size, 8);
  EXPECT_EQ(plan.old_ranks, (Ranks{0, 1, 2, 3, -1, -1, -1, -1}));
  EXPECT_EQ(plan.new_ranks, (Ranks{0, 1, 2, 3, 4, 5, 6, 7}));
  const StepLayout after = {{"n1", {0, 1}}, {"n2", {2, 3}}, {"n3", {4, 5}}, {"n4", {6, 7}}};
  EXPECT_EQ(plan.layout, after);
  EXPECT_EQ(plan.involved, (std::vector<std::string>{"n1", "n2", "n3", "n4"}));
}

TEST(AdaptPlan, AShrinkDropsTheLeavingNodesRanksAndClosesUpTheOthers) {
  // An uneven layout (5 tasks on 3 nodes): n2 leaves with ranks 2 and 3.
  const StepLayout layout = {{"n1", {0, 1}}, {"n2", {2, 3}}, {"n3", {4}}};
  const WindowPlan plan = plan_window(layout, Resize::Op::Shrink, {"n2"});
  EXPECT_EQ(plan.old_size, 5);
  EXPECT_EQ(plan.new_size, 3);
  EXPECT_EQ(plan.old_ranks, (Ranks{0, 1, 2, 3, 4}));
  EXPECT_EQ(plan.new_ranks, (Ranks{0, 1, -1, -1, 2}));
  const StepLayout after = {{"n1", {0, 1}}, {"n3", {2}}};
  EXPECT_EQ(plan.layout, after);
  // The leaving node takes part: its processes must commit before they go.
  EXPECT_EQ(plan.involved, (std::vector<std::string>{"n1", "n2", "n3"}));
}

TEST(AdaptPlan, AShrinkOfNodesTheStepDoesNotUseChangesNoProcess) {
  const StepLayout layout = {{"n1", {0}}, {"n2", {1}}};
  const WindowPlan plan = plan_window(layout, Resize::Op::Shrink, {"n7"});
  EXPECT_EQ(plan.old_size, plan.new_size);
  EXPECT_EQ(plan.layout, layout);
}

}  // namespace
}  // namespace sched::daemon
