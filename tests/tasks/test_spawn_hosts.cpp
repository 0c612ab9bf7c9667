// Where MPI_Comm_spawn's children go (issue 16 item 2): Open MPI's "host"
// info text, and the step layout schedd makes of it.
#include <gtest/gtest.h>

#include <stdexcept>

#include "sched/tasks/spawn_hosts.hpp"

namespace sched::tasks {
namespace {

using Names = std::vector<std::string>;

TEST(SpawnHosts, OneNamePerChild) {
  EXPECT_EQ(spawn_hosts("n3,n3,n4,n4", 4), (Names{"n3", "n3", "n4", "n4"}));
}

TEST(SpawnHosts, NamesWithCounts) {
  EXPECT_EQ(spawn_hosts("n3:2,n4:2", 4), (Names{"n3", "n3", "n4", "n4"}));
  EXPECT_EQ(spawn_hosts("n3:1,n4,n3", 3), (Names{"n3", "n4", "n3"}));
}

TEST(SpawnHosts, DistinctNamesAreSpreadOverInBlocks) {
  EXPECT_EQ(spawn_hosts("n3,n4", 4), (Names{"n3", "n3", "n4", "n4"}));
  EXPECT_EQ(spawn_hosts("n2", 3), (Names{"n2", "n2", "n2"}));
}

TEST(SpawnHosts, WrongTextIsRefusedWithItsReason) {
  EXPECT_THROW(spawn_hosts("", 2), std::invalid_argument);
  EXPECT_THROW(spawn_hosts("n3,,n4", 2), std::invalid_argument);
  EXPECT_THROW(spawn_hosts("n3:0", 1), std::invalid_argument);
  EXPECT_THROW(spawn_hosts("n3:x", 1), std::invalid_argument);
  EXPECT_THROW(spawn_hosts("n3:", 1), std::invalid_argument);
  EXPECT_THROW(spawn_hosts("n3,n3,n4", 4), std::invalid_argument);  // neither per child nor a set
  EXPECT_THROW(spawn_hosts("n3:2,n4:1", 4), std::invalid_argument);
  EXPECT_THROW(spawn_hosts("n3:3,n4:2", 4), std::invalid_argument);  // more than asked
  EXPECT_THROW(spawn_hosts("n3", 0), std::invalid_argument);
  try {
    spawn_hosts("n3:2,n4:1", 4);
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "host list 'n3:2,n4:1' names 3 children; 4 were asked for");
  }
}

TEST(SpawnLayout, BlockWhenEachNodeHoldsARun) {
  const auto layout = spawn_layout({"n3", "n3", "n4", "n4"});
  ASSERT_TRUE(layout);
  EXPECT_EQ(layout->nodes, (Names{"n3", "n4"}));
  EXPECT_EQ(layout->distribution, Distribution::Block);
}

TEST(SpawnLayout, CyclicWhenTheNodesAlternate) {
  const auto layout = spawn_layout({"n4", "n3", "n4", "n3"});
  ASSERT_TRUE(layout);
  EXPECT_EQ(layout->nodes, (Names{"n4", "n3"}));
  EXPECT_EQ(layout->distribution, Distribution::Cyclic);
}

TEST(SpawnLayout, NoneForAnUnevenSplit) {
  EXPECT_FALSE(spawn_layout({"n3", "n3", "n3", "n4"}));
  EXPECT_FALSE(spawn_layout({}));
}

}  // namespace
}  // namespace sched::tasks
