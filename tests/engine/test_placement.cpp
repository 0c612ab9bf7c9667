// Where a job may run (issue 18 item 4): -w/--nodelist, -x/--exclude and
// --gres=gpu:N, checked at submit and honoured when a pass starts the job.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "engine_fixture.hpp"
#include "sched/placement.hpp"

namespace sched::test {
namespace {

class Placement : public EngineFixture {
 protected:
  // n0..n3; n2 and n3 have two GPUs each.
  void SetUp() override {
    init(4);
    ASSERT_TRUE(engine->set_node_gpus("n2", 2).ok());
    ASSERT_TRUE(engine->set_node_gpus("n3", 2).ok());
  }

  std::vector<std::string> names_of(JobId id) const {
    std::vector<std::string> names;
    for (NodeIndex node : job(id).allocation) names.push_back(engine->cluster().node(node).name);
    std::sort(names.begin(), names.end());
    return names;
  }

  std::string refused(const JobSpec& spec) {
    auto out = engine->submit(spec);
    EXPECT_FALSE(out.ok());
    return out.ok() ? "accepted" : out.status().message();
  }
};

JobSpec placed(int nodes, std::vector<std::string> nodelist, std::vector<std::string> exclude = {},
               int gpus = 0) {
  JobSpec spec = rigid_spec(nodes);
  spec.extra.edit().nodelist = std::move(nodelist);
  spec.extra.edit().exclude = std::move(exclude);
  spec.extra.edit().gpus_per_node = gpus;
  return spec;
}

TEST_F(Placement, ANodelistJobGetsItsNodesAndTheRestFromTheLowest) {
  const JobId named = submit(placed(1, {"n3"}));
  const JobId more = submit(placed(2, {"n2"}));
  in_pass([&](PassContext& ctx) {
    EXPECT_EQ(ctx.start(named), std::nullopt);
    EXPECT_EQ(ctx.start(more), std::nullopt);
  });
  EXPECT_EQ(names_of(named), (std::vector<std::string>{"n3"}));
  EXPECT_EQ(names_of(more), (std::vector<std::string>{"n0", "n2"}));
}

TEST_F(Placement, AnExcludedNodeIsNeverTaken) {
  const JobId id = submit(placed(3, {}, {"n0"}));
  in_pass([&](PassContext& ctx) { EXPECT_EQ(ctx.start(id), std::nullopt); });
  EXPECT_EQ(names_of(id), (std::vector<std::string>{"n1", "n2", "n3"}));
}

TEST_F(Placement, AGpuJobRunsOnlyWhereTheGpusAre) {
  const JobId id = submit(placed(2, {}, {}, 2));
  in_pass([&](PassContext& ctx) { EXPECT_EQ(ctx.start(id), std::nullopt); });
  EXPECT_EQ(names_of(id), (std::vector<std::string>{"n2", "n3"}));
  // A second one waits: the GPU nodes are taken, although two nodes are idle.
  const JobId second = submit(placed(1, {}, {}, 1));
  in_pass([&](PassContext& ctx) {
    const Verdict verdict = ctx.start(second);
    ASSERT_TRUE(verdict.has_value());
    EXPECT_EQ(verdict->code, RefusalCode::Placement);
  });
  EXPECT_EQ(state(second), JobState::Pending);
  EXPECT_EQ(idle(), 2);
}

// A placed start and starts of any nodes in one pass: the others take what
// the placed job leaves, whatever the order the policy gave them in.
TEST_F(Placement, StartsOfAnyNodesLeaveThePlacedJobsNodes) {
  const JobId any = submit(rigid_spec(2));
  const JobId named = submit(placed(1, {"n0"}));
  in_pass([&](PassContext& ctx) {
    EXPECT_EQ(ctx.start(any), std::nullopt);
    EXPECT_EQ(ctx.start(named), std::nullopt);
  });
  EXPECT_EQ(names_of(named), (std::vector<std::string>{"n0"}));
  EXPECT_EQ(names_of(any), (std::vector<std::string>{"n1", "n2"}));
  expect_nodes_conserved();
}

TEST_F(Placement, ANamedNodeThatIsBusyKeepsTheJobWaiting) {
  const JobId first = submit(placed(1, {"n1"}));
  const JobId second = submit(placed(1, {"n1"}));
  in_pass([&](PassContext& ctx) {
    EXPECT_EQ(ctx.start(first), std::nullopt);
    const Verdict verdict = ctx.start(second);
    ASSERT_TRUE(verdict.has_value());
    EXPECT_EQ(verdict->code, RefusalCode::Placement);
  });
  engine->job_started(first);
  EXPECT_EQ(state(second), JobState::Pending);
  engine->job_ended(first, 0);
  in_pass([&](PassContext& ctx) { EXPECT_EQ(ctx.start(second), std::nullopt); });
  EXPECT_EQ(names_of(second), (std::vector<std::string>{"n1"}));
}

TEST_F(Placement, SubmissionsThatCanNeverBePlacedAreRefused) {
  EXPECT_NE(refused(placed(1, {"n9"})).find("--nodelist: no node n9"), std::string::npos);
  EXPECT_NE(refused(placed(1, {}, {"n9"})).find("--exclude: no node n9"), std::string::npos);
  EXPECT_NE(refused(placed(1, {"n1"}, {"n1"})).find("both name n1"), std::string::npos);
  EXPECT_NE(refused(placed(1, {"n0"}, {}, 1)).find("n0 has 0 GPUs"), std::string::npos);
  EXPECT_NE(refused(placed(3, {}, {}, 2)).find("Requested node configuration is not available"),
            std::string::npos);
  EXPECT_NE(refused(placed(4, {}, {"n1"})).find("not excluded"), std::string::npos);
  EXPECT_NE(refused(placed(1, {"n1", "n2"})).find("names 2 nodes; the job asks for 1"),
            std::string::npos);
  JobSpec malleable = malleable_spec(2, 1, 4);
  malleable.extra.edit().exclude = {"n1"};
  EXPECT_NE(refused(malleable).find("rigid and moldable"), std::string::npos);
  EXPECT_TRUE(engine->jobs().empty()) << "a refused submission leaves nothing behind";
}

TEST_F(Placement, AMoldableJobStartsNoSmallerThanItsNodelist) {
  JobSpec spec = moldable_spec(3, 1, 3);
  spec.extra.edit().nodelist = {"n1", "n2"};
  const JobId id = submit(spec);
  in_pass([&](PassContext& ctx) {
    const Verdict small = ctx.start(id, 1);
    ASSERT_TRUE(small.has_value());
    EXPECT_EQ(small->code, RefusalCode::Placement);
    EXPECT_EQ(ctx.start(id, 2), std::nullopt);
  });
  EXPECT_EQ(names_of(id), (std::vector<std::string>{"n1", "n2"}));
}

TEST(PlacementRules, MayUseAndHasPlacement) {
  JobSpec spec = rigid_spec(1);
  EXPECT_FALSE(has_placement(spec));
  spec.extra.edit().gpus_per_node = 1;
  EXPECT_TRUE(has_placement(spec));
  Node node;
  node.name = "g1";
  EXPECT_FALSE(may_use(spec, node));
  node.gpus = 1;
  EXPECT_TRUE(may_use(spec, node));
  spec.extra.edit().exclude = {"g1"};
  EXPECT_FALSE(may_use(spec, node));
}

}  // namespace
}  // namespace sched::test
