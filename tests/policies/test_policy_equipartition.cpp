// scripts/policies/equipartition.lua on small crafted clusters: idle nodes
// shared equally among running malleable jobs within their bounds and
// constraints, and the head of the queue started by lowering the jobs
// highest above their minimum, one allowed step at a time.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "lua_test_support.hpp"
#include "sched/lua_policy.hpp"
#include "test_paths.hpp"

namespace sched {
namespace {

using luatest::Harness;
using luatest::malleable;
using luatest::rigid;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::string equipartition_file() {
  return std::string(SCHED_SOURCE_POLICY_DIR) + "/equipartition.lua";
}

JobSpec evolving(int nodes, int min_nodes, int max_nodes) {
  JobSpec spec = malleable(nodes, min_nodes, max_nodes);
  spec.kind = JobKind::Evolving;
  return spec;
}

// One pass that must succeed, with the shrinks it asked for completed: a
// job started on nodes a shrink gives back waits for them, and only then
// shows up in the enactor's calls.
void run(Harness& h) {
  h.ok_pass();
  const std::vector<std::string> calls = h.enactor.calls;
  for (const std::string& call : calls) {
    if (call.rfind("shrink ", 0) == 0) h.engine.adaptation_done(std::stoll(call.substr(7)), true);
  }
}

// 12 nodes, 5 idle: malleable jobs of 2 and 4 nodes each get 5 / 2 = 2
// more, and the smaller one also the remainder: 2 → 5, 4 → 6. The rigid
// job stays as it is.
TEST(PolicyEquipartition, SharesIdleNodesEquallyWithTheRemainderToTheSmallest) {
  Harness h(12);
  h.use(equipartition_file());
  h.submit(malleable(2, 1, 16));  // 1
  h.submit(malleable(4, 1, 16));  // 2
  h.submit(rigid(1));             // 3
  h.start_all();
  run(h);
  EXPECT_THAT(h.enactor.calls, ElementsAre("expand 1 2->5", "expand 2 4->6"));
}

// 13 nodes, 6 idle, three malleable jobs of 2 nodes: 2 more each. Job 1
// stops at its maximum 3; job 2 (pof2) takes 2 → 4 of the 3 it is offered;
// job 3 gets the 2 nodes the others could not take: 2 → 5. The evolving
// job 4 is never resized by the policy.
TEST(PolicyEquipartition, SharingRespectsBoundsAndConstraints) {
  Harness h(13);
  h.use(equipartition_file());
  h.submit(malleable(2, 1, 3));                         // 1
  h.submit(malleable(2, 1, 16, NodeConstraint::Pof2));  // 2
  h.submit(malleable(2, 1, 16));                        // 3
  h.submit(evolving(1, 1, 8));                          // 4
  h.start_all();
  run(h);
  EXPECT_THAT(h.enactor.calls, ElementsAre("expand 1 2->3", "expand 2 2->4", "expand 3 2->5"));
  EXPECT_EQ(h.engine.cluster().idle_count(), 0);
}

// 12 nodes, all held by malleable jobs of 6 (min 2), 4 and 2 (min 1). A
// rigid 5-node job waits. Lowering the highest water level one node at a
// time: 1: 6→5, 1: 5→4 (tie on 3 above the minimum, the larger job), 2:
// 4→3, 1: 4→3, 2: 3→2. Job 3 keeps its nodes.
TEST(PolicyEquipartition, ShrinksTheJobsHighestAboveTheirMinimumToStartTheHead) {
  Harness h(12);
  h.use(equipartition_file());
  h.submit(malleable(6, 2, 12));  // 1
  h.submit(malleable(4, 1, 12));  // 2
  h.submit(malleable(2, 1, 12));  // 3
  h.start_all();
  h.submit(rigid(5));  // 4
  run(h);
  EXPECT_THAT(h.enactor.calls, ElementsAre("shrink 1 6->3", "shrink 2 4->2", "start 4 on 5"));
}

// 11 nodes: malleable jobs of 6 (min 2) and 5 (min 1) are both 4 above
// their minimum. A 1-node job waits: the larger job gives the node.
TEST(PolicyEquipartition, AtEqualWaterLevelsTheLargerJobShrinks) {
  Harness h(11);
  h.use(equipartition_file());
  h.submit(malleable(5, 1, 12));  // 1
  h.submit(malleable(6, 2, 12));  // 2
  h.start_all();
  h.submit(rigid(1));  // 3
  run(h);
  EXPECT_THAT(h.enactor.calls, ElementsAre("shrink 2 6->5", "start 3 on 1"));
}

// The cluster of ShrinksTheJobsHighestAboveTheirMinimumToStartTheHead, but
// the head needs 9 and the jobs can give only 4 + 3 + 1: nobody shrinks,
// and the 1-node job behind the head does not start either (first come,
// first served).
TEST(PolicyEquipartition, DoesNotShrinkWhenTheHeadWouldStillNotFit) {
  Harness h(12);
  h.use(equipartition_file());
  h.submit(malleable(6, 2, 12));  // 1
  h.submit(malleable(4, 1, 12));  // 2
  h.submit(malleable(2, 1, 12));  // 3
  h.start_all();
  h.submit(rigid(9));  // 4
  h.submit(rigid(1));  // 5
  run(h);
  EXPECT_THAT(h.enactor.calls, IsEmpty());
  EXPECT_EQ(h.job(4).state, JobState::Pending);
  EXPECT_EQ(h.job(5).state, JobState::Pending);
}

// 12 nodes, all busy: malleable job 1 (pof2, 8 nodes), malleable job 2 (3
// nodes), rigid job 3. A rigid 2-node job waits: job 1 is highest above its
// minimum and its one allowed step down is 8 → 4, which frees 4. The head
// starts on 2; the 2 left over go to job 2 (job 1 just shrank). Both wait
// for job 1's nodes, and go ahead in the order they were asked.
TEST(PolicyEquipartition, AStepDownFollowsTheConstraintAndTheRestIsShared) {
  Harness h(12);
  h.use(equipartition_file());
  h.submit(malleable(8, 1, 8, NodeConstraint::Pof2));  // 1
  h.submit(malleable(3, 1, 8));                        // 2
  h.submit(rigid(1));                                  // 3
  h.start_all();
  h.submit(rigid(2));  // 4
  run(h);
  EXPECT_THAT(h.enactor.calls, ElementsAre("shrink 1 8->4", "start 4 on 2", "expand 2 3->5"));
}

// 4 nodes: malleable job 1 was launched but has not reported its start
// (STARTING): the idle node is not shared with it, and the engine has
// nothing to refuse.
TEST(PolicyEquipartition, AJobStillStartingIsNotGrown) {
  Harness h(4);
  h.use(equipartition_file());
  h.submit(malleable(3, 1, 4));  // 1
  h.ok_pass();
  ASSERT_EQ(h.job(1).state, JobState::Starting);
  h.enactor.calls.clear();
  run(h);
  EXPECT_THAT(h.enactor.calls, IsEmpty());
  EXPECT_EQ(h.engine.stats().refusals, 0u);
}

TEST(PolicyEquipartition, IsNotTimeDependent) {
  Harness h(1);
  EXPECT_FALSE(h.use(equipartition_file()).time_dependent());
  EXPECT_EQ(h.policy->name(), "equipartition");
}

}  // namespace
}  // namespace sched
