// Growing, shrinking and suspending jobs of an invasive partition by cores
// (issue 20 item 2; sched/core_resize.hpp, PassContext::expand/shrink/
// suspend/resume on a cores job): the choice of cores near the job's own,
// whole nodes and sockets given back first, every refusal, the enactor's
// Resize carrying the cores, and the cores' life through done, rollback,
// end, suspension and resumption.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cores_fixture.hpp"
#include "sched/core_resize.hpp"

namespace sched::test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// ---------------------------------------------------------------- choices

TEST(CoreGrow, TakesTheJobsSocketFirstThenItsNodeThenAnotherNode) {
  CoreMap map;
  map.track(0, 8, 2);  // sockets 0-3, 4-7
  map.track(1, 8, 2);
  map.take(7, {NodeCores{0, {4, 5}}});  // job 7 on socket 1
  map.take(9, {NodeCores{0, {0}}});     // another job on socket 0
  const CoreSet held{NodeCores{0, {4, 5}}};
  // Socket 1 first (2 free there).
  auto grown = grow_cores(map, held, 2, {0, 1});
  ASSERT_TRUE(grown);
  EXPECT_THAT(*grown, ElementsAre(NodeCores{0, {6, 7}}));
  // 4: socket 1's two, then socket 0's free ones.
  grown = grow_cores(map, held, 4, {0, 1});
  ASSERT_TRUE(grown);
  EXPECT_THAT(*grown, ElementsAre(NodeCores{0, {1, 2, 6, 7}}));
  // 7: all 5 free of node 0, then 2 on node 1, packed in one socket.
  grown = grow_cores(map, held, 7, {0, 1});
  ASSERT_TRUE(grown);
  EXPECT_THAT(*grown, ElementsAre(NodeCores{0, {1, 2, 3, 6, 7}}, NodeCores{1, {0, 1}}));
  EXPECT_FALSE(grow_cores(map, held, 14, {0, 1})) << "13 free";
  // A node of the job that is not a candidate (down, draining) gives none.
  grown = grow_cores(map, held, 2, {1});
  ASSERT_TRUE(grown);
  EXPECT_THAT(*grown, ElementsAre(NodeCores{1, {0, 1}}));
}

TEST(CoreShrink, GivesBackWholeNodesThenSocketsThenSingleCoresKeepingTheLeader) {
  CoreMap map;
  map.track(0, 8, 2);
  map.track(1, 8, 2);
  map.track(2, 8, 2);
  const CoreSet held{NodeCores{0, {0, 1, 2, 4}}, NodeCores{1, {0, 1, 2, 3, 4}},
                     NodeCores{2, {6, 7}}};
  // 2: node 2 whole.
  auto gone = shrink_cores(map, held, 2);
  ASSERT_TRUE(gone);
  EXPECT_THAT(*gone, ElementsAre(NodeCores{2, {6, 7}}));
  // 3: node 2 whole, then node 1's socket 1 (core 4).
  gone = shrink_cores(map, held, 3);
  ASSERT_TRUE(gone);
  EXPECT_THAT(*gone, ElementsAre(NodeCores{1, {4}}, NodeCores{2, {6, 7}}));
  // 7: both other nodes whole.
  gone = shrink_cores(map, held, 7);
  ASSERT_TRUE(gone);
  EXPECT_THAT(*gone, ElementsAre(NodeCores{1, {0, 1, 2, 3, 4}}, NodeCores{2, {6, 7}}));
  // 10: then the leader's socket 1 (core 4), then its highest: 2.
  gone = shrink_cores(map, held, 9);
  ASSERT_TRUE(gone);
  EXPECT_THAT(*gone, ElementsAre(NodeCores{0, {2, 4}}, NodeCores{1, {0, 1, 2, 3, 4}},
                                 NodeCores{2, {6, 7}}));
  EXPECT_FALSE(shrink_cores(map, held, 11)) << "the leader keeps one core";
  EXPECT_FALSE(shrink_cores(map, held, 0));
}

TEST(CoreSets, AddAndRemoveKeepTheOrderAndDropEmptyNodes) {
  CoreSet set{NodeCores{3, {1}}, NodeCores{1, {0}}};
  add_cores(set, {NodeCores{1, {2}}, NodeCores{0, {5}}});
  EXPECT_THAT(set, ElementsAre(NodeCores{3, {1}}, NodeCores{1, {0, 2}}, NodeCores{0, {5}}));
  remove_cores(set, {NodeCores{1, {0, 2}}, NodeCores{0, {4}}});
  EXPECT_THAT(set, ElementsAre(NodeCores{3, {1}}, NodeCores{0, {5}}));
}

// ---------------------------------------------------------------- engine

class CoresResize : public Cores {
 protected:
  JobSpec malleable(int cores, int min, int max) {
    JobSpec spec = cores_job(cores);
    spec.kind = JobKind::Malleable;
    spec.layout.edit().min_cores = min;
    spec.layout.edit().max_cores = max;
    return spec;
  }
  Verdict expand(JobId id, int to) {
    Verdict v;
    in_inv([&](PassContext& ctx) { v = ctx.expand(id, to); });
    return v;
  }
  Verdict shrink(JobId id, int to) {
    Verdict v;
    in_inv([&](PassContext& ctx) { v = ctx.shrink(id, to); });
    return v;
  }
  Resize last_resize(JobId id) const {
    const auto calls = enactor.of(Kind::Resize);
    EXPECT_FALSE(calls.empty());
    EXPECT_EQ(calls.back().job, id);
    return calls.empty() ? Resize{} : calls.back().resize;
  }
};

TEST_F(CoresResize, SubmitFillsTheCoreBoundsAndChecksThem) {
  const JobId a = submit(malleable(4, 2, 12));
  EXPECT_EQ(job(a).spec.layout->min_cores, 2);
  EXPECT_EQ(job(a).spec.layout->max_cores, 12);
  const JobId b = submit(malleable(4, 0, 0));
  EXPECT_EQ(job(b).spec.layout->min_cores, 4);
  EXPECT_EQ(job(b).spec.layout->max_cores, 4);
  EXPECT_EQ(job(submit(malleable(4, 1, 40))).spec.layout->max_cores, 16) << "at most the partition";
  auto out = engine->submit(malleable(4, 6, 8));
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("not in [6, 8]"));
  out = engine->submit(malleable(17, 17, 20));
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("job needs 17 cores"));
}

TEST_F(CoresResize, AnExpandTakesCoresNearItsOwnAndTheEnactorGetsThem) {
  const JobId other = run(cores_job(2));  // n2 socket 0: 0-1
  const JobId a = run(malleable(2, 1, 12));
  ASSERT_THAT(job(a).run->cores, ElementsAre(NodeCores{node("n2"), {2, 3}}));
  EXPECT_EQ(expand(a, 6), std::nullopt);
  EXPECT_EQ(state(a), JobState::Adapting);
  const Resize r = last_resize(a);
  EXPECT_EQ(r.op, Resize::Op::Expand);
  EXPECT_THAT(r.cores, ElementsAre(NodeCores{node("n2"), {4, 5, 6, 7}})) << "its node first";
  EXPECT_EQ(r.cores_from, 2);
  EXPECT_EQ(r.cores_to, 6);
  EXPECT_TRUE(r.added.empty()) << "no node gained whole";
  // Held at once: nothing else may take them while it adapts.
  EXPECT_EQ(engine->core_map().owner(node("n2"), 4), a);
  engine->adaptation_done(a, true);
  EXPECT_EQ(state(a), JobState::Running);
  EXPECT_THAT(job(a).run->cores, ElementsAre(NodeCores{node("n2"), {2, 3, 4, 5, 6, 7}}));
  EXPECT_EQ(job(a).run->expansions, 1);
  // Beyond its node: n3 joins, the enactor is told it gains that node.
  EXPECT_EQ(expand(a, 9), std::nullopt);
  const Resize r2 = last_resize(a);
  EXPECT_THAT(r2.added, ElementsAre(node("n3")));
  EXPECT_EQ(r2.from, 1);
  EXPECT_EQ(r2.to, 2);
  engine->adaptation_done(a, true);
  EXPECT_THAT(job(a).allocation, ElementsAre(node("n2"), node("n3")));
  EXPECT_EQ(core_count(job(a).run->cores), 9);
  EXPECT_EQ(engine->cluster().node(node("n3")).job, kCoresShared);
  EXPECT_EQ(state(other), JobState::Running);
}

TEST_F(CoresResize, RefusalsOfResizesByCores) {
  const JobId a = run(malleable(4, 2, 10));
  const JobId rigid = run(cores_job(2));
  auto v = expand(a, 11);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->code, RefusalCode::AboveMax);
  EXPECT_EQ(v->have, 10);
  v = shrink(a, 1);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->code, RefusalCode::BelowMin);
  v = expand(a, 4);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->code, RefusalCode::NotLarger);
  v = shrink(a, 5);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->code, RefusalCode::NotSmaller);
  v = expand(rigid, 3);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->code, RefusalCode::RigidJob);
  // Too few free cores: 16 - 4 - 2 = 10 free, 6 asked... then fill them.
  const JobId filler = run(cores_job(9));
  v = expand(a, 6);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->code, RefusalCode::Cores);
  EXPECT_EQ(v->want, 2);
  EXPECT_EQ(v->have, 1);
  // Naming the nodes that leave is for jobs of whole nodes.
  in_inv([&](PassContext& ctx) {
    auto named = ctx.shrink(a, 2, std::vector<std::string>{"n2"});
    ASSERT_TRUE(named);
    EXPECT_EQ(named->code, RefusalCode::BadArgument);
    // Expand and shrink of one job in one pass.
    EXPECT_EQ(ctx.expand(a, 5), std::nullopt);
    auto mixed = ctx.shrink(a, 3);
    ASSERT_TRUE(mixed);
    EXPECT_EQ(mixed->code, RefusalCode::MixedResize);
  });
  EXPECT_EQ(state(a), JobState::Adapting);
  v = shrink(a, 2);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->code, RefusalCode::Adapting);
  EXPECT_EQ(state(filler), JobState::Running);
}

TEST_F(CoresResize, TwoExpandsInOnePassMoveOneTargetAndTakeDistinctCores) {
  const JobId a = run(malleable(2, 1, 16));
  const JobId b = submit(cores_job(4));
  in_inv([&](PassContext& ctx) {
    EXPECT_EQ(ctx.expand(a, 4), std::nullopt);
    EXPECT_EQ(ctx.expand(a, 6), std::nullopt);
    EXPECT_EQ(ctx.start(b), std::nullopt);
  });
  const Resize r = last_resize(a);
  EXPECT_EQ(r.cores_to, 6);
  EXPECT_EQ(core_count(r.cores), 4);
  for (const NodeCores& nc : job(b).run->cores) {
    for (int c : nc.cores) EXPECT_NE(engine->core_map().owner(nc.node, c), a);
  }
  EXPECT_EQ(enactor.count(Kind::Resize, a), 1) << "one adaptation";
}

TEST_F(CoresResize, AShrinkFreesItsCoresOnlyOnceDoneAndARollbackKeepsThem) {
  const JobId a = run(malleable(12, 2, 16));  // n2 whole, 4 on n3
  ASSERT_EQ(job(a).run->cores.size(), 2u);
  const NodeIndex second = job(a).run->cores[1].node;
  EXPECT_EQ(shrink(a, 8), std::nullopt);
  Resize r = last_resize(a);
  EXPECT_EQ(r.op, Resize::Op::Shrink);
  EXPECT_THAT(r.removed, ElementsAre(second)) << "the other node, whole";
  EXPECT_EQ(core_count(r.cores), 4);
  // Still busy while the application lets them go: no start there.
  const JobId b = submit(cores_job(8));
  in_inv([&](PassContext& ctx) {
    auto v = ctx.start(b);
    ASSERT_TRUE(v);
    EXPECT_EQ(v->code, RefusalCode::Cores);
  });
  // Rolled back: it keeps them all.
  engine->adaptation_done(a, false);
  EXPECT_EQ(core_count(job(a).run->cores), 12);
  EXPECT_EQ(engine->core_map().free_count(second), 4);
  clock.advance(1000);  // past the backoff
  EXPECT_EQ(shrink(a, 8), std::nullopt);
  engine->adaptation_done(a, true);
  EXPECT_EQ(core_count(job(a).run->cores), 8);
  EXPECT_THAT(job(a).allocation, ElementsAre(job(a).run->cores[0].node));
  EXPECT_EQ(engine->core_map().free_count(second), 8);
  EXPECT_EQ(engine->cluster().node(second).job, 0) << "idle again";
  EXPECT_EQ(job(a).run->shrinks, 1);
  in_inv([&](PassContext& ctx) { EXPECT_EQ(ctx.start(b), std::nullopt); });
}

TEST_F(CoresResize, AShrinkByCoresStretchesTheLimitByCores) {
  JobSpec spec = malleable(8, 2, 8);
  spec.walltime = 1000;
  const JobId a = run(spec);
  EXPECT_EQ(shrink(a, 4), std::nullopt);
  engine->adaptation_done(a, true);
  // 1000 s left at 8 cores: 2000 s at 4.
  EXPECT_DOUBLE_EQ(job(a).est_end(), job(a).start_time + 2000);
}

TEST_F(CoresResize, AnExpandRolledBackOrEndedGivesItsNewCoresBack) {
  const JobId a = run(malleable(8, 1, 16));  // n2
  EXPECT_EQ(expand(a, 12), std::nullopt);
  const NodeIndex gained = last_resize(a).added.at(0);
  EXPECT_EQ(engine->cluster().node(gained).job, kCoresShared);
  engine->adaptation_done(a, false);
  EXPECT_EQ(core_count(job(a).run->cores), 8);
  EXPECT_EQ(engine->core_map().free_count(gained), 8);
  EXPECT_EQ(engine->cluster().node(gained).job, 0);
  clock.advance(1000);
  EXPECT_EQ(expand(a, 12), std::nullopt);
  ASSERT_TRUE(engine->cancel(a).ok());
  engine->job_ended(a, -15);
  EXPECT_EQ(engine->core_map().free_count(node("n2")), 8);
  EXPECT_EQ(engine->core_map().free_count(node("n3")), 8);
  EXPECT_EQ(engine->cluster().idle_count(1), 2);
}

TEST_F(CoresResize, AMalleableJobStartsOnACoreCountWithinItsBounds) {
  JobSpec spec = malleable(8, 2, 8);
  spec.walltime = 100;
  const JobId a = submit(spec);
  const JobId rigid = submit(cores_job(2));
  in_inv([&](PassContext& ctx) {
    auto v = ctx.start_with_cores(a, 1);
    ASSERT_TRUE(v);
    EXPECT_EQ(v->code, RefusalCode::BelowMin);
    v = ctx.start_with_cores(a, 9);
    ASSERT_TRUE(v);
    EXPECT_EQ(v->code, RefusalCode::AboveMax);
    v = ctx.start_with_cores(rigid, 3);
    ASSERT_TRUE(v);
    EXPECT_EQ(v->code, RefusalCode::RigidJob);
    EXPECT_EQ(ctx.start_with_cores(a, 2), std::nullopt);
    EXPECT_EQ(ctx.start_with_cores(rigid, 2), std::nullopt);
  });
  EXPECT_EQ(core_count(job(a).run->cores), 2);
  engine->job_started(a);
  // Started at 2 of its 8 cores: its limit stretches by 8/2.
  EXPECT_DOUBLE_EQ(job(a).est_end(), job(a).start_time + 400);
}

TEST_F(CoresResize, ASuspendedJobFreesItsCoresAndResumesOnTheSameOnes) {
  const JobId a = run(cores_job(6));  // n2
  const CoreSet cores = job(a).run->cores;
  run(cores_job(4));  // n3
  const JobId urgent = submit(cores_job(8));
  in_inv([&](PassContext& ctx) {
    auto v = ctx.start(urgent);
    ASSERT_TRUE(v) << "6 free";
    EXPECT_EQ(ctx.suspend(a), std::nullopt);
    EXPECT_EQ(ctx.start(urgent), std::nullopt) << "its cores are free in the same pass";
  });
  EXPECT_EQ(state(a), JobState::Suspended);
  EXPECT_EQ(job(a).run->cores, cores) << "kept, to resume on";
  EXPECT_EQ(enactor.count(Kind::Suspend, a), 1);
  ASSERT_EQ(job(urgent).run->cores.size(), 1u);
  // While the urgent job holds some of them, resuming is refused.
  in_inv([&](PassContext& ctx) {
    auto v = ctx.resume(a);
    ASSERT_TRUE(v);
    EXPECT_EQ(v->code, RefusalCode::CoreBusy);
  });
  EXPECT_EQ(state(a), JobState::Suspended);
  engine->job_started(urgent);
  engine->job_ended(urgent, 0);
  in_inv([&](PassContext& ctx) { EXPECT_EQ(ctx.resume(a), std::nullopt); });
  EXPECT_EQ(state(a), JobState::Running);
  EXPECT_EQ(job(a).run->cores, cores);
  EXPECT_EQ(engine->core_map().owner(cores[0].node, cores[0].cores[0]), a);
  EXPECT_EQ(enactor.count(Kind::Resume, a), 1);
  engine->job_ended(a, 0);
  EXPECT_EQ(engine->core_map().free_count(node("n2")), 8);
  EXPECT_EQ(engine->core_map().free_count(node("n3")), 4) << "the other job's";
}

TEST_F(CoresResize, ASuspendedJobEndedOrRestoredKeepsThePartitionRight) {
  const JobId a = run(cores_job(4));
  const JobId b = run(cores_job(4));  // the same node, other socket
  in_inv([&](PassContext& ctx) { EXPECT_EQ(ctx.suspend(a), std::nullopt); });
  EXPECT_EQ(engine->core_map().free_count(node("n2")), 4);
  ASSERT_TRUE(engine->cancel(a).ok());
  engine->job_ended(a, -15);
  EXPECT_EQ(state(a), JobState::Cancelled);
  EXPECT_EQ(engine->core_map().owner(node("n2"), 4), b) << "b's cores stay b's";
  // A job journaled suspended gets its cores back to resume on.
  Job saved;
  saved.id = 61;
  saved.spec = cores_job(2);
  saved.spec.layout.edit().min_cores = saved.spec.layout.edit().max_cores = 2;
  saved.state = JobState::Suspended;
  saved.start_time = 0;
  saved.run.edit().cores = {{-1, {0, 1}}};
  ASSERT_TRUE(engine->restore_job(saved, {"n2"}).ok());
  EXPECT_EQ(job(61).run->cores, (CoreSet{NodeCores{node("n2"), {0, 1}}}));
  EXPECT_EQ(engine->core_map().owner(node("n2"), 0), 0) << "free while it is suspended";
  in_inv([&](PassContext& ctx) { EXPECT_EQ(ctx.resume(61), std::nullopt); });
  EXPECT_EQ(engine->core_map().owner(node("n2"), 0), 61);
}

}  // namespace
}  // namespace sched::test
