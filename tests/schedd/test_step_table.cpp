// The step table (schedd/step_table.hpp) and MPI expansions: the steps an
// expansion's MPI_Comm_spawn started are part of the step they grew, not
// steps of their own to adapt, and go when it ends.
#include <gtest/gtest.h>

#include "step_table.hpp"

namespace sched::daemon {
namespace {

StepRecord running(int tasks) {
  StepRecord record;
  record.remaining = record.tasks = tasks;
  return record;
}

TEST(StepTable, TheNewestStepIsNotOneAnExpansionSpawned) {
  StepTable steps;
  const auto grown = steps.next_id(7);
  steps.add(7, grown, running(2));
  const auto spawned = steps.next_id(7);
  StepRecord children = running(2);
  children.parent = grown;
  children.adapt_of = grown;
  steps.add(7, spawned, std::move(children));
  EXPECT_EQ(steps.newest(7).first, grown);
  // A step MPI_Comm_spawn started outside an expansion is a step of its own.
  const auto other = steps.next_id(7);
  StepRecord plain = running(1);
  plain.parent = grown;
  steps.add(7, other, std::move(plain));
  EXPECT_EQ(steps.newest(7).first, other);
}

TEST(StepTable, AJobWhoseOnlyStepsAreSpawnedOnesHasNoNewest) {
  StepTable steps;
  StepRecord children = running(2);
  children.adapt_of = 1;
  steps.add(3, 2, std::move(children));
  EXPECT_EQ(steps.newest(3).second, nullptr);
}

TEST(StepTable, TheSpawnedStepsGoWithTheStepTheyGrew) {
  StepTable steps;
  steps.add(7, 1, running(1));
  StepRecord children = running(2);
  children.adapt_of = 1;
  steps.add(7, 2, std::move(children));
  steps.add(8, 2, running(1));  // another job's step 2 stays
  ASSERT_TRUE(steps.task_exited(7, 1).has_value());
  EXPECT_EQ(steps.drop_adapted(7, 1), (std::vector<std::int64_t>{2}));
  EXPECT_EQ(steps.find(7, 2), nullptr);
  EXPECT_NE(steps.find(8, 2), nullptr);
  EXPECT_TRUE(steps.drop_adapted(7, 1).empty());
}

}  // namespace
}  // namespace sched::daemon
