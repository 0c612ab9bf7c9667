// Cluster: node bookkeeping, allocation order, releasing and promised nodes.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "sched/cluster.hpp"

namespace sched {
namespace {

Cluster make_cluster(int nodes) {
  Cluster cluster;
  for (int i = 0; i < nodes; ++i) cluster.add_node("n" + std::to_string(i));
  return cluster;
}

// The cluster's cached counts agree with a count over its nodes.
void expect_consistent(const Cluster& cluster) {
  int idle = 0;
  int releasing_unpromised = 0;
  for (const Node& node : cluster.nodes()) {
    const bool usable = node.up && !node.draining;
    if (usable && node.job == 0) ++idle;
    if (usable && node.releasing && node.promised == 0) ++releasing_unpromised;
    if (node.releasing || node.promised != 0) {
      EXPECT_NE(node.job, 0) << node.name << ": only a held node can be released or promised";
    }
    if (node.promised != 0) {
      EXPECT_TRUE(node.releasing) << node.name;
    }
  }
  EXPECT_EQ(cluster.idle_count(), idle);
  EXPECT_EQ(cluster.releasing_unpromised_count(), releasing_unpromised);
}

TEST(Cluster, AddAndFindNodes) {
  Cluster cluster;
  EXPECT_EQ(cluster.add_node("a", 16), 0);
  EXPECT_EQ(cluster.add_node("b", 0), 1);
  EXPECT_EQ(cluster.size(), 2);
  EXPECT_EQ(cluster.node(0).name, "a");
  EXPECT_EQ(cluster.node(0).cores, 16);
  EXPECT_EQ(cluster.node(1).cores, 1) << "at least one core";
  EXPECT_EQ(cluster.find("b"), 1);
  EXPECT_EQ(cluster.find("c"), std::nullopt);
  EXPECT_EQ(cluster.idle_count(), 2);
  EXPECT_EQ(cluster.usable_count(), 2);
  EXPECT_TRUE(cluster.node(0).up);
  EXPECT_FALSE(cluster.node(0).draining);
  EXPECT_EQ(cluster.node(0).job, 0);
}

TEST(Cluster, DuplicateNodeNamesThrow) {
  Cluster cluster;
  cluster.add_node("a");
  EXPECT_THROW(cluster.add_node("a"), std::invalid_argument);
  EXPECT_EQ(cluster.size(), 1);
  EXPECT_EQ(cluster.idle_count(), 1);
}

TEST(Cluster, AllocatesLowestIndicesFirst) {
  Cluster cluster = make_cluster(6);
  std::vector<NodeIndex> promised;
  EXPECT_EQ(cluster.allocate(1, 2, &promised), (std::vector<NodeIndex>{0, 1}));
  EXPECT_EQ(cluster.allocate(2, 2, &promised), (std::vector<NodeIndex>{2, 3}));
  EXPECT_TRUE(promised.empty());
  EXPECT_EQ(cluster.idle_count(), 2);
  EXPECT_EQ(cluster.node(0).job, 1);
  EXPECT_EQ(cluster.node(3).job, 2);

  EXPECT_EQ(cluster.release(1), 0) << "nobody was promised it";
  EXPECT_EQ(cluster.node(1).job, 0);
  EXPECT_EQ(cluster.idle_count(), 3);
  EXPECT_EQ(cluster.allocate(3, 2, nullptr), (std::vector<NodeIndex>{1, 4}))
      << "a freed low node comes first";
  expect_consistent(cluster);
}

TEST(Cluster, AllocateThrowsWhenNotEnoughIsFree) {
  Cluster cluster = make_cluster(3);
  cluster.allocate(1, 2, nullptr);
  EXPECT_THROW(cluster.allocate(2, 2, nullptr), std::logic_error);
  EXPECT_EQ(cluster.idle_count(), 1) << "a failed allocation takes nothing";
  EXPECT_EQ(cluster.node(2).job, 0);
}

TEST(Cluster, ReleasingNodesArePromisedToTheNextJob) {
  Cluster cluster = make_cluster(4);
  cluster.allocate(1, 3, nullptr);  // n0-n2 for job 1, n3 idle
  cluster.mark_releasing(1);
  cluster.mark_releasing(2);
  EXPECT_TRUE(cluster.node(1).releasing);
  EXPECT_EQ(cluster.node(1).job, 1) << "still the holder's";
  EXPECT_EQ(cluster.idle_count(), 1) << "releasing is not idle";
  EXPECT_EQ(cluster.releasing_unpromised_count(), 2);
  cluster.mark_releasing(1);  // twice: counted once
  EXPECT_EQ(cluster.releasing_unpromised_count(), 2);
  expect_consistent(cluster);

  std::vector<NodeIndex> promised;
  const auto taken = cluster.allocate(2, 2, &promised);
  EXPECT_EQ(taken, (std::vector<NodeIndex>{3})) << "idle nodes first";
  EXPECT_EQ(promised, (std::vector<NodeIndex>{1}));
  EXPECT_EQ(cluster.node(1).promised, 2);
  EXPECT_EQ(cluster.node(1).job, 1);
  EXPECT_EQ(cluster.releasing_unpromised_count(), 1);
  EXPECT_EQ(cluster.idle_count(), 0);
  expect_consistent(cluster);

  EXPECT_EQ(cluster.release(1), 2) << "handed over to the promised job";
  EXPECT_EQ(cluster.node(1).job, 2);
  EXPECT_EQ(cluster.node(1).promised, 0);
  EXPECT_FALSE(cluster.node(1).releasing);
  EXPECT_EQ(cluster.idle_count(), 0);

  EXPECT_EQ(cluster.release(2), 0);
  EXPECT_EQ(cluster.idle_count(), 1);
  EXPECT_EQ(cluster.releasing_unpromised_count(), 0);
  expect_consistent(cluster);
}

TEST(Cluster, KeepAndUnpromiseUndoTheBookkeeping) {
  Cluster cluster = make_cluster(2);
  cluster.allocate(1, 2, nullptr);
  cluster.mark_releasing(0);
  cluster.mark_releasing(1);
  std::vector<NodeIndex> promised;
  cluster.allocate(2, 1, &promised);
  ASSERT_EQ(promised, (std::vector<NodeIndex>{0}));
  EXPECT_EQ(cluster.releasing_unpromised_count(), 1);

  cluster.unpromise(0);
  EXPECT_EQ(cluster.node(0).promised, 0);
  EXPECT_TRUE(cluster.node(0).releasing);
  EXPECT_EQ(cluster.releasing_unpromised_count(), 2);
  cluster.unpromise(0);  // nothing promised: no change
  EXPECT_EQ(cluster.releasing_unpromised_count(), 2);

  cluster.keep(0);
  EXPECT_FALSE(cluster.node(0).releasing);
  EXPECT_EQ(cluster.node(0).job, 1);
  EXPECT_EQ(cluster.releasing_unpromised_count(), 1);
  cluster.keep(0);  // not releasing: no change
  EXPECT_EQ(cluster.releasing_unpromised_count(), 1);

  // keep() of a promised node withdraws the promise too.
  cluster.allocate(3, 1, &promised);
  EXPECT_EQ(cluster.node(1).promised, 3);
  cluster.keep(1);
  EXPECT_EQ(cluster.node(1).promised, 0);
  EXPECT_FALSE(cluster.node(1).releasing);
  EXPECT_EQ(cluster.releasing_unpromised_count(), 0);
  EXPECT_EQ(cluster.idle_count(), 0);
  expect_consistent(cluster);
}

TEST(Cluster, MarkReleasingOfAFreeNodeDoesNothing) {
  Cluster cluster = make_cluster(2);
  cluster.mark_releasing(0);
  EXPECT_FALSE(cluster.node(0).releasing);
  EXPECT_EQ(cluster.releasing_unpromised_count(), 0);
  EXPECT_EQ(cluster.idle_count(), 2);
}

TEST(Cluster, DownAndDrainingNodesAreNeverIdle) {
  Cluster cluster = make_cluster(4);
  cluster.set_up(0, false);
  cluster.set_draining(1, true);
  EXPECT_EQ(cluster.idle_count(), 2);
  EXPECT_EQ(cluster.usable_count(), 2);
  EXPECT_EQ(cluster.allocate(7, 2, nullptr), (std::vector<NodeIndex>{2, 3}))
      << "down and draining nodes are skipped";
  EXPECT_THROW(cluster.allocate(8, 1, nullptr), std::logic_error);

  // Released nodes do not become idle while down or draining.
  cluster.set_draining(2, true);
  cluster.set_up(3, false);
  EXPECT_EQ(cluster.usable_count(), 0);
  EXPECT_EQ(cluster.release(2), 0);
  EXPECT_EQ(cluster.release(3), 0);
  EXPECT_EQ(cluster.idle_count(), 0);
  expect_consistent(cluster);

  cluster.set_up(0, true);
  cluster.set_draining(1, false);
  cluster.set_draining(2, false);
  cluster.set_up(3, true);
  EXPECT_EQ(cluster.idle_count(), 4);
  EXPECT_EQ(cluster.usable_count(), 4);
  cluster.set_up(3, true);  // no change
  EXPECT_EQ(cluster.idle_count(), 4);
  expect_consistent(cluster);
}

TEST(Cluster, ReleasingNodesThatGoDownOrDrainDoNotCount) {
  Cluster cluster = make_cluster(3);
  cluster.allocate(1, 3, nullptr);
  for (NodeIndex n = 0; n < 3; ++n) cluster.mark_releasing(n);
  EXPECT_EQ(cluster.releasing_unpromised_count(), 3);
  cluster.set_up(0, false);
  cluster.set_draining(1, true);
  EXPECT_EQ(cluster.releasing_unpromised_count(), 1);
  expect_consistent(cluster);
  cluster.set_up(0, true);
  EXPECT_EQ(cluster.releasing_unpromised_count(), 2);
  cluster.set_draining(1, false);
  EXPECT_EQ(cluster.releasing_unpromised_count(), 3);
  expect_consistent(cluster);

  // Marked while draining: never counted, and release keeps the count right.
  Cluster other = make_cluster(1);
  other.allocate(1, 1, nullptr);
  other.set_draining(0, true);
  other.mark_releasing(0);
  EXPECT_EQ(other.releasing_unpromised_count(), 0);
  other.release(0);
  EXPECT_EQ(other.releasing_unpromised_count(), 0);
  EXPECT_EQ(other.idle_count(), 0);
  expect_consistent(other);
}

// A releasing node that is down or draining cannot be promised: the job
// would get a node nobody may use, and the counts would go wrong.
TEST(Cluster, AllocateNeverPromisesADrainingOrDownNode) {
  Cluster cluster = make_cluster(4);
  cluster.allocate(1, 4, nullptr);
  for (NodeIndex n = 0; n < 4; ++n) cluster.mark_releasing(n);
  cluster.set_draining(0, true);
  cluster.set_up(1, false);
  ASSERT_EQ(cluster.releasing_unpromised_count(), 2);

  std::vector<NodeIndex> promised;
  EXPECT_TRUE(cluster.allocate(2, 2, &promised).empty());
  EXPECT_EQ(promised, (std::vector<NodeIndex>{2, 3}));
  EXPECT_EQ(cluster.node(0).promised, 0);
  EXPECT_EQ(cluster.node(1).promised, 0);
  EXPECT_EQ(cluster.releasing_unpromised_count(), 0);
  expect_consistent(cluster);
  EXPECT_THROW(cluster.allocate(3, 1, nullptr), std::logic_error);
}

// A job's end gives back all its nodes at once (release_held): each held
// node goes idle or to the job it was promised to, a node only promised to
// the ending job has the promise withdrawn, and the counts stay true.
TEST(Cluster, ReleaseHeldGivesBackEveryNodeAsReleaseWould) {
  Cluster cluster = make_cluster(8);
  const auto a = cluster.allocate(1, 4, nullptr);  // n0-n3
  const auto b = cluster.allocate(2, 2, nullptr);  // n4-n5
  ASSERT_EQ(a, (std::vector<NodeIndex>{0, 1, 2, 3}));
  cluster.set_draining(3, true);  // a drained node of job 1: never idle again
  cluster.mark_releasing(0);
  cluster.mark_releasing(1);
  std::vector<NodeIndex> promised;
  const auto c = cluster.allocate(3, 3, &promised);  // n6, n7 now; n0 promised
  EXPECT_EQ(c, (std::vector<NodeIndex>{6, 7}));
  ASSERT_EQ(promised, (std::vector<NodeIndex>{0}));
  // Job 2 shrinks off n5, which is promised to job 4; job 4 gives up, and
  // its promise on n5 is what release_held(4, ...) withdraws.
  cluster.mark_releasing(5);
  std::vector<NodeIndex> promised4;
  EXPECT_TRUE(cluster.allocate(4, 2, &promised4).empty());  // n1 and n5 promised
  ASSERT_EQ(promised4, (std::vector<NodeIndex>{1, 5}));
  expect_consistent(cluster);

  std::vector<JobId> handed_to;
  cluster.release_held(1, a, handed_to);
  EXPECT_EQ(handed_to, (std::vector<JobId>{3, 4})) << "n0 to job 3, n1 to job 4";
  EXPECT_EQ(cluster.node(0).job, 3);
  EXPECT_EQ(cluster.node(1).job, 4);
  EXPECT_EQ(cluster.node(2).job, 0);
  EXPECT_TRUE(cluster.idle(2));
  EXPECT_EQ(cluster.node(3).job, 0);
  EXPECT_FALSE(cluster.idle(3)) << "draining";
  EXPECT_FALSE(cluster.node(0).releasing);
  EXPECT_EQ(cluster.node(0).promised, 0);
  expect_consistent(cluster);

  handed_to.clear();
  cluster.release_held(4, {1, 5}, handed_to);  // n1 held, n5 only promised
  EXPECT_TRUE(handed_to.empty());
  EXPECT_TRUE(cluster.idle(1));
  EXPECT_EQ(cluster.node(5).job, 2) << "still job 2's, releasing, promised to nobody";
  EXPECT_EQ(cluster.node(5).promised, 0);
  EXPECT_TRUE(cluster.node(5).releasing);
  EXPECT_EQ(cluster.releasing_unpromised_count(), 1);
  expect_consistent(cluster);
  EXPECT_EQ(cluster.idle_count(), 2);  // n1, n2
  EXPECT_EQ(cluster.idle_count(0), 2);
}

}  // namespace
}  // namespace sched
