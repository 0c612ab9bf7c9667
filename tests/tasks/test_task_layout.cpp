// The task layout (issue 16 item 1): placement, Slurm's counts and the
// cores of a task.
#include <gtest/gtest.h>

#include <stdexcept>

#include "sched/tasks/task_layout.hpp"

namespace sched::tasks {
namespace {

using Places = std::vector<TaskPlace>;

TEST(TaskPlacement, BlockFillsANodeBeforeTheNext) {
  EXPECT_EQ(place_tasks(4, 2, Distribution::Block), (Places{{0, 0}, {0, 1}, {1, 0}, {1, 1}}));
}

TEST(TaskPlacement, BlockGivesTheFirstNodesTheRemainder) {
  // 7 over 3: 3, 2, 2 (as Slurm's block with no --ntasks-per-node).
  const Places places = place_tasks(7, 3, Distribution::Block);
  EXPECT_EQ(places, (Places{{0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}, {2, 0}, {2, 1}}));
  EXPECT_EQ(tasks_by_node(places, 3), (std::vector<std::vector<int>>{{0, 1, 2}, {3, 4}, {5, 6}}));
}

TEST(TaskPlacement, CyclicDealsRoundRobin) {
  const Places places = place_tasks(5, 2, Distribution::Cyclic);
  EXPECT_EQ(places, (Places{{0, 0}, {1, 0}, {0, 1}, {1, 1}, {0, 2}}));
  EXPECT_EQ(tasks_by_node(places, 2), (std::vector<std::vector<int>>{{0, 2, 4}, {1, 3}}));
}

TEST(TaskPlacement, OneTaskPerNode) {
  for (auto d : {Distribution::Block, Distribution::Cyclic}) {
    EXPECT_EQ(place_tasks(3, 3, d), (Places{{0, 0}, {1, 0}, {2, 0}}));
  }
}

TEST(TaskPlacement, RefusesFewerTasksThanNodes) {
  EXPECT_THROW(place_tasks(1, 2, Distribution::Block), std::invalid_argument);
  EXPECT_THROW(place_tasks(1, 0, Distribution::Cyclic), std::invalid_argument);
  EXPECT_THROW(tasks_by_node({{2, 0}}, 2), std::invalid_argument);
}

TEST(TaskPlacement, NamesRoundTrip) {
  for (auto d : {Distribution::Block, Distribution::Cyclic}) {
    EXPECT_EQ(parse_distribution(to_string(d)), d);
  }
  for (auto b : {CpuBind::None, CpuBind::Cores}) EXPECT_EQ(parse_cpu_bind(to_string(b)), b);
  EXPECT_EQ(parse_cpu_bind("no"), CpuBind::None);
  EXPECT_FALSE(parse_distribution("plane"));
  EXPECT_FALSE(parse_distribution("Block"));
  EXPECT_FALSE(parse_cpu_bind("sockets"));
}

TEST(TasksPerNode, SlurmCompressedForm) {
  EXPECT_EQ(compress_counts({2, 2, 2, 1}), "2(x3),1");
  EXPECT_EQ(compress_counts({4}), "4");
  EXPECT_EQ(compress_counts({1, 2, 1}), "1,2,1");
  EXPECT_EQ(compress_counts({3, 3}), "3(x2)");
  EXPECT_EQ(compress_counts({}), "");
}

TEST(TaskCores, ConsecutiveCoresPerTask) {
  EXPECT_EQ(task_cores(0, 1, 2), (std::vector<int>{0}));
  EXPECT_EQ(task_cores(1, 1, 2), (std::vector<int>{1}));
  EXPECT_EQ(task_cores(1, 2, 8), (std::vector<int>{2, 3}));
  EXPECT_EQ(task_cores(3, 2, 8), (std::vector<int>{6, 7}));
}

TEST(TaskCores, WrapsWhenTheNodeIsOversubscribed) {
  EXPECT_EQ(task_cores(2, 1, 2), (std::vector<int>{0}));
  EXPECT_EQ(task_cores(1, 3, 4), (std::vector<int>{3, 0, 1}));
  EXPECT_EQ(task_cores(0, 5, 2), (std::vector<int>{0, 1})) << "no core twice";
  EXPECT_THROW(task_cores(-1, 1, 2), std::invalid_argument);
  EXPECT_THROW(task_cores(0, 0, 2), std::invalid_argument);
  EXPECT_THROW(task_cores(0, 1, 0), std::invalid_argument);
}

TEST(NodesForTasks, EnoughNodesForTheCpus) {
  EXPECT_EQ(nodes_for_tasks(4, 1, 4), 1);
  EXPECT_EQ(nodes_for_tasks(5, 1, 4), 2);
  EXPECT_EQ(nodes_for_tasks(4, 2, 4), 2);
  // 3 tasks of 3 cpus on 4-core nodes: one task per node.
  EXPECT_EQ(nodes_for_tasks(3, 3, 4), 3);
  EXPECT_EQ(nodes_for_tasks(1, 1, 1), 1);
  EXPECT_THROW(nodes_for_tasks(2, 5, 4), std::invalid_argument);
  EXPECT_THROW(nodes_for_tasks(0, 1, 4), std::invalid_argument);
}

}  // namespace
}  // namespace sched::tasks
