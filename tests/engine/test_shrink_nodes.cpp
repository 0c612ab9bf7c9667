// Which nodes a shrink gives back (issue 17 item 4): a policy's named nodes,
// checked; the engine's default order (down, draining, then newest); and a
// drain under a malleable job, which shrinks the job off the node when its
// constraint allows.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine_fixture.hpp"
#include "sched/shrink_choice.hpp"

namespace sched::test {
namespace {

class ShrinkNodes : public EngineFixture {
 protected:
  void SetUp() override { init(6); }

  std::vector<std::string> names(const std::vector<NodeIndex>& nodes) const {
    std::vector<std::string> out;
    for (NodeIndex n : nodes) out.push_back(engine->cluster().node(n).name);
    return out;
  }
  // The nodes of the job's last resize call.
  std::vector<std::string> last_removed() const {
    const auto resizes = enactor.of(Kind::Resize);
    return resizes.empty() ? std::vector<std::string>{} : names(resizes.back().resize.removed);
  }
  std::vector<std::string> allocation(JobId id) const { return names(job(id).allocation); }
};

TEST_F(ShrinkNodes, WithoutNodesTheNewestLeave) {
  const JobId m = run_job(malleable_spec(4, 1, 6));  // n0-n3
  in_pass([&](PassContext& ctx) { EXPECT_EQ(ctx.shrink(m, 2), std::nullopt); });
  EXPECT_EQ(last_removed(), (std::vector<std::string>{"n2", "n3"}));
  engine->adaptation_done(m, true);
  EXPECT_EQ(allocation(m), (std::vector<std::string>{"n0", "n1"}));
}

TEST_F(ShrinkNodes, NamedNodesLeaveAndTheOthersStay) {
  const JobId m = run_job(malleable_spec(4, 1, 6));
  in_pass([&](PassContext& ctx) {
    EXPECT_EQ(ctx.shrink(m, 2, std::vector<std::string>{"n1", "n2"}), std::nullopt);
    ASSERT_EQ(ctx.actions().size(), 1u);
    EXPECT_EQ(names(ctx.actions()[0].leaving), (std::vector<std::string>{"n1", "n2"}));
    EXPECT_EQ(ctx.nodes_idle(), 4);
  });
  EXPECT_EQ(last_removed(), (std::vector<std::string>{"n1", "n2"}));
  engine->adaptation_done(m, true);
  EXPECT_EQ(allocation(m), (std::vector<std::string>{"n0", "n3"}));
  EXPECT_TRUE(engine->cluster().idle(1) && engine->cluster().idle(2));
  expect_nodes_conserved();
}

TEST_F(ShrinkNodes, BadNodeChoicesAreRefusedWithTheirReason) {
  const JobId m = run_job(malleable_spec(4, 1, 6));  // n0-n3
  const JobId other = run_job(rigid_spec(1));        // n4
  (void)other;
  in_pass([&](PassContext& ctx) {
    auto refusal = ctx.shrink(m, 2, std::vector<std::string>{"n1"});
    ASSERT_TRUE(refusal);
    EXPECT_EQ(refusal->code, RefusalCode::BadArgument);
    EXPECT_NE(refusal->message().find("names 1 nodes; the shrink gives back 2"), std::string::npos)
        << refusal->message();
    refusal = ctx.shrink(m, 3, std::vector<std::string>{"n4"});
    ASSERT_TRUE(refusal);
    EXPECT_EQ(refusal->code, RefusalCode::BadArgument);
    EXPECT_NE(refusal->message().find("node n4 is not the job's"), std::string::npos);
    refusal = ctx.shrink(m, 3, std::vector<std::string>{"n0"});
    ASSERT_TRUE(refusal);
    EXPECT_EQ(refusal->code, RefusalCode::LeaderNode);
    refusal = ctx.shrink(m, 2, std::vector<std::string>{"n2", "n2"});
    ASSERT_TRUE(refusal);
    EXPECT_NE(refusal->message().find("named twice"), std::string::npos);
    refusal = ctx.shrink(m, 3, std::vector<std::string>{"n99"});
    ASSERT_TRUE(refusal);
    EXPECT_NE(refusal->message().find("no node n99"), std::string::npos);
    // The size rules come first: a size the job may not have is refused as before.
    refusal = ctx.shrink(m, 0, std::vector<std::string>{"n1", "n2", "n3"});
    ASSERT_TRUE(refusal);
    EXPECT_EQ(refusal->code, RefusalCode::LeaderNode);
    EXPECT_TRUE(ctx.actions().empty()) << "refusals change nothing";
    EXPECT_EQ(ctx.nodes_idle(), 1);
  });
  EXPECT_EQ(state(m), JobState::Running);
}

TEST_F(ShrinkNodes, NamedNodesMustLeaveASizeTheConstraintAllows) {
  const JobId m = run_job(malleable_spec(4, 2, 4, NodeConstraint::Pof2));
  in_pass([&](PassContext& ctx) {
    auto refusal = ctx.shrink(m, 3, std::vector<std::string>{"n1"});
    ASSERT_TRUE(refusal);
    EXPECT_EQ(refusal->code, RefusalCode::Constraint);
    refusal = ctx.shrink(m, 1, std::vector<std::string>{"n1", "n2", "n3"});
    ASSERT_TRUE(refusal);
    EXPECT_EQ(refusal->code, RefusalCode::BelowMin);
    EXPECT_EQ(ctx.shrink(m, 2, std::vector<std::string>{"n1", "n3"}), std::nullopt);
  });
  EXPECT_EQ(last_removed(), (std::vector<std::string>{"n1", "n3"}));
}

TEST_F(ShrinkNodes, ASecondShrinkInAPassTakesOtherNodes) {
  const JobId m = run_job(malleable_spec(5, 1, 6));  // n0-n4
  in_pass([&](PassContext& ctx) {
    EXPECT_EQ(ctx.shrink(m, 4, std::vector<std::string>{"n2"}), std::nullopt);
    auto refusal = ctx.shrink(m, 3, std::vector<std::string>{"n2"});
    ASSERT_TRUE(refusal);
    EXPECT_NE(refusal->message().find("already leaves"), std::string::npos);
    EXPECT_EQ(ctx.shrink(m, 3), std::nullopt);  // the newest of those that stay
    ASSERT_EQ(ctx.actions().size(), 1u);
    EXPECT_EQ(ctx.actions()[0].nodes, 3);
  });
  EXPECT_EQ(last_removed(), (std::vector<std::string>{"n2", "n4"}));
}

TEST_F(ShrinkNodes, TheDefaultChoiceTakesDrainingNodesFirst) {
  policy->set_script({});
  const JobId r = run_job(rigid_spec(1));            // n0
  const JobId m = run_job(malleable_spec(4, 4, 5));  // n1-n4, cannot shrink: min 4
  (void)r;
  // The drain cannot shrink it (min_nodes): it keeps n2, and the event says why.
  ASSERT_EQ(engine->set_node_draining("n2", true, "disk"), Status());
  const auto drains = events.of_type(EventType::NodeDrain);
  ASSERT_EQ(drains.size(), 1u);
  EXPECT_NE(drains[0].message.find("disk; job " + std::to_string(m) + " keeps n2 until it ends"),
            std::string::npos)
      << drains[0].message;
  EXPECT_NE(drains[0].message.find("min_nodes 4"), std::string::npos) << drains[0].message;
  EXPECT_EQ(state(m), JobState::Running);
  // The pure choice: draining first, then the newest.
  EXPECT_EQ(names(default_shrink_nodes(engine->cluster(), job(m), 2)),
            (std::vector<std::string>{"n2", "n4"}));
  EXPECT_EQ(names(drained_nodes_of(engine->cluster(), job(m))), (std::vector<std::string>{"n2"}));
}

TEST_F(ShrinkNodes, ADrainShrinksAMalleableJobOffTheNode) {
  const JobId m = run_job(malleable_spec(4, 1, 6));  // n0-n3
  enactor.clear();
  ASSERT_EQ(engine->set_node_draining("n1", true, "fan"), Status());
  EXPECT_EQ(state(m), JobState::Adapting);
  EXPECT_EQ(last_removed(), (std::vector<std::string>{"n1"}));
  const auto adapting = events.of_type(EventType::JobAdapting);
  ASSERT_FALSE(adapting.empty());
  EXPECT_EQ(adapting.back().message, "shrink 4 -> 3: off draining n1");
  EXPECT_EQ(events.of_type(EventType::NodeDrain).back().message, "fan");
  engine->adaptation_done(m, true);
  EXPECT_EQ(allocation(m), (std::vector<std::string>{"n0", "n2", "n3"}));
  EXPECT_EQ(engine->cluster().node(1).job, 0) << "the drained node is free";
  EXPECT_FALSE(engine->cluster().idle(1)) << "and takes no new work";
  EXPECT_EQ(idle(), 2);
}

TEST_F(ShrinkNodes, ADrainUnderAConstrainedJobShrinksToTheNextAllowedSize) {
  const JobId m = run_job(malleable_spec(4, 1, 4, NodeConstraint::Pof2));  // n0-n3
  ASSERT_EQ(engine->set_node_draining("n2", true), Status());
  EXPECT_EQ(state(m), JobState::Adapting);
  // 3 is not a power of two: 2, with n2 and the newest other node leaving.
  EXPECT_EQ(last_removed(), (std::vector<std::string>{"n2", "n3"}));
  engine->adaptation_done(m, true);
  EXPECT_EQ(allocation(m), (std::vector<std::string>{"n0", "n1"}));
  EXPECT_EQ(idle(), 3) << "n3 is idle again, n2 drained";
}

TEST_F(ShrinkNodes, ADrainOfTheLeaderOrUnderARigidJobWaitsForTheEnd) {
  const JobId m = run_job(malleable_spec(2, 1, 6));  // n0-n1
  const JobId r = run_job(rigid_spec(2));            // n2-n3
  ASSERT_EQ(engine->set_node_draining("n0", true), Status());
  EXPECT_EQ(state(m), JobState::Running);
  EXPECT_NE(events.of_type(EventType::NodeDrain).back().message.find("the leader never leaves"),
            std::string::npos);
  ASSERT_EQ(engine->set_node_draining("n3", true), Status());
  EXPECT_EQ(state(r), JobState::Running);
  EXPECT_EQ(enactor.count(Kind::Resize), 0);
}

TEST_F(ShrinkNodes, ADrainDuringAnAdaptationShrinksOnceItEnds) {
  const JobId m = run_job(malleable_spec(3, 1, 6));                               // n0-n2
  in_pass([&](PassContext& ctx) { EXPECT_EQ(ctx.expand(m, 4), std::nullopt); });  // + n3
  ASSERT_EQ(state(m), JobState::Adapting);
  ASSERT_EQ(engine->set_node_draining("n1", true), Status());
  EXPECT_NE(events.of_type(EventType::NodeDrain).back().message.find("once the adaptation ends"),
            std::string::npos);
  enactor.clear();
  engine->adaptation_done(m, true);
  EXPECT_EQ(state(m), JobState::Adapting) << "the drain's shrink follows at once";
  EXPECT_EQ(last_removed(), (std::vector<std::string>{"n1"}));
  engine->adaptation_done(m, true);
  EXPECT_EQ(allocation(m), (std::vector<std::string>{"n0", "n2", "n3"}));
}

TEST_F(ShrinkNodes, ADrainAfterARolledBackAdaptationWaitsForTheHoldToPass) {
  EngineConfig config;
  config.resize_backoff_s = 30;
  init(6, config);
  const JobId m = run_job(malleable_spec(3, 1, 6));
  in_pass([&](PassContext& ctx) { EXPECT_EQ(ctx.shrink(m, 2), std::nullopt); });
  engine->adaptation_done(m, false);  // rolled back: held for 30 s
  ASSERT_EQ(engine->set_node_draining("n1", true), Status());
  EXPECT_EQ(state(m), JobState::Running);
  enactor.clear();
  clock.advance(31);
  engine->tick();
  EXPECT_EQ(state(m), JobState::Adapting);
  EXPECT_EQ(last_removed(), (std::vector<std::string>{"n1"}));
}

}  // namespace
}  // namespace sched::test
