// Invasive partitions (issue 20 item 2; sched/core_map.hpp): a partition of
// kind "cores" gives its jobs cores of its nodes, packed by socket, several
// jobs a node; a named core that is busy is refused (core_busy), a job that
// asks more cores than the partition has is refused at submit, and a job's
// cores come back when it ends. A partition of whole nodes beside it works
// as before.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "cores_fixture.hpp"
#include "lua_test_support.hpp"
#include "sched/core_map.hpp"
#include "sched/lua_policy.hpp"

namespace sched::test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// ---------------------------------------------------------------- placement

TEST(CorePlacement, PacksIntoOneSocketWhenOneHoldsTheJob) {
  CoreMap map;
  map.track(0, 8, 2);  // sockets: cores 0-3 and 4-7
  map.take(99, {NodeCores{0, {0, 1}}});
  // Socket 0 has 2 free, socket 1 has 4: 2 cores go to the fuller socket
  // (best fit), leaving socket 1 whole.
  auto set = place_cores(map, 2, {0});
  ASSERT_TRUE(set);
  EXPECT_THAT(*set, ElementsAre(NodeCores{0, {2, 3}}));
  // 3 cores: only socket 1 holds them.
  set = place_cores(map, 3, {0});
  ASSERT_TRUE(set);
  EXPECT_THAT(*set, ElementsAre(NodeCores{0, {4, 5, 6}}));
  // 5 cores: socket 1 filled first (most free), then socket 0.
  set = place_cores(map, 5, {0});
  ASSERT_TRUE(set);
  EXPECT_THAT(*set, ElementsAre(NodeCores{0, {2, 4, 5, 6, 7}}));
  EXPECT_FALSE(place_cores(map, 7, {0})) << "6 free cores";
}

TEST(CorePlacement, OneNodeWhenOneFitsElseTheFewestNodes) {
  CoreMap map;
  for (NodeIndex n = 0; n < 3; ++n) map.track(n, 4, 1);
  map.take(1, {NodeCores{1, {0, 1}}});  // node 1: 2 free
  // 2 cores fit on node 1 (best fit) rather than opening an empty node.
  auto set = place_cores(map, 2, {0, 1, 2});
  ASSERT_TRUE(set);
  EXPECT_THAT(*set, ElementsAre(NodeCores{1, {2, 3}}));
  // 6 cores fit on no node: the emptiest nodes first, the first of equals.
  set = place_cores(map, 6, {0, 1, 2});
  ASSERT_TRUE(set);
  EXPECT_THAT(*set, ElementsAre(NodeCores{0, {0, 1, 2, 3}}, NodeCores{2, {0, 1}}));
  // Deterministic: the same question, the same answer.
  EXPECT_EQ(place_cores(map, 6, {0, 1, 2}), set);
}

TEST(CorePlacement, ChecksRefuseBusyMissingAndRepeatedCores) {
  CoreMap map;
  map.track(0, 4, 2);
  map.take(7, {NodeCores{0, {1}}});
  auto busy = map.check({NodeCores{0, {1, 2}}});
  ASSERT_TRUE(busy);
  EXPECT_TRUE(busy->busy);
  EXPECT_THAT(busy->why, HasSubstr("job 7"));
  EXPECT_FALSE(map.check({NodeCores{0, {4}}})->busy) << "no core 4";
  EXPECT_FALSE(map.check({NodeCores{0, {2, 2}}})->busy);
  EXPECT_FALSE(map.check({NodeCores{1, {0}}})->busy) << "node 1 is not tracked";
  EXPECT_THROW(map.take(8, {NodeCores{0, {1}}}), std::logic_error);
  map.release(8, {NodeCores{0, {1}}});  // not 8's: stays 7's
  EXPECT_EQ(map.owner(0, 1), 7);
  map.release(7, {NodeCores{0, {1}}});
  EXPECT_EQ(map.free_count(0), 4);
  EXPECT_THAT(map.free_per_socket(0), ElementsAre(2, 2));
}

// ---------------------------------------------------------------- engine

TEST_F(Cores, TwoJobsShareANodeEachOnItsOwnSocket) {
  const JobId a = run(cores_job(4));
  const JobId b = run(cores_job(4));
  EXPECT_THAT(job(a).run->cores, ElementsAre(NodeCores{node("n2"), {0, 1, 2, 3}}));
  EXPECT_THAT(job(b).run->cores, ElementsAre(NodeCores{node("n2"), {4, 5, 6, 7}}));
  EXPECT_THAT(job(a).allocation, ElementsAre(node("n2")));
  EXPECT_THAT(job(b).allocation, ElementsAre(node("n2")));
  // The shared node is not idle; the partition's other node still is.
  EXPECT_EQ(engine->cluster().node(node("n2")).job, kCoresShared);
  EXPECT_EQ(engine->cluster().idle_count(1), 1);
  EXPECT_EQ(engine->core_map().free_count(node("n2")), 0);
  // The rigid partition is untouched.
  EXPECT_EQ(engine->cluster().idle_count(0), 2);
}

TEST_F(Cores, APolicyCountingNodesStartsJobsOnAPartlyBusyNode) {
  // As fcfs does: a job of 1 node starts while nodes_idle allows; in an
  // invasive partition a node with a free core counts.
  const auto fcfs = [](PassContext& ctx) {
    for (const Job* job : ctx.pending()) {
      if (job->spec.nodes > ctx.nodes_idle() || ctx.start(job->id)) return;
    }
  };
  const JobId a = submit(cores_job(6));
  in_inv(fcfs);
  EXPECT_EQ(state(a), JobState::Starting);
  const JobId b = submit(cores_job(2));
  const JobId c = submit(cores_job(8));
  const JobId d = submit(cores_job(3));
  in_inv(fcfs);
  EXPECT_THAT(job(b).run->cores, ElementsAre(NodeCores{node("n2"), {6, 7}})) << "beside a";
  EXPECT_EQ(job(c).run->cores.size(), 1u);
  EXPECT_EQ(job(c).run->cores[0].node, node("n3"));
  EXPECT_EQ(state(d), JobState::Pending) << "no free core left";
}

TEST_F(Cores, ANamedBusyCoreIsRefusedWithItsCode) {
  const JobId a = run(cores_job(2));
  ASSERT_THAT(job(a).run->cores, ElementsAre(NodeCores{node("n2"), {0, 1}}));
  const JobId b = submit(cores_job(2));
  Verdict verdict;
  in_inv([&](PassContext& ctx) { verdict = ctx.start(b, CoreSet{NodeCores{node("n2"), {1, 2}}}); });
  ASSERT_TRUE(verdict);
  EXPECT_EQ(verdict->code, RefusalCode::CoreBusy);
  EXPECT_THAT(verdict->message(), HasSubstr("core_busy"));
  EXPECT_EQ(state(b), JobState::Pending);
  // Named free cores are taken as named.
  in_inv([&](PassContext& ctx) {
    EXPECT_EQ(ctx.start(b, CoreSet{NodeCores{node("n3"), {5, 6}}}), std::nullopt);
  });
  EXPECT_THAT(job(b).run->cores, ElementsAre(NodeCores{node("n3"), {5, 6}}));
  // The wrong number of cores, or a node of the other partition, is refused.
  const JobId c = submit(cores_job(2));
  in_inv([&](PassContext& ctx) {
    auto wrong = ctx.start(c, CoreSet{NodeCores{node("n3"), {0}}});
    ASSERT_TRUE(wrong);
    EXPECT_EQ(wrong->code, RefusalCode::BadArgument);
    auto other = ctx.start(c, CoreSet{NodeCores{node("n0"), {0, 1}}});
    ASSERT_TRUE(other);
    EXPECT_EQ(other->code, RefusalCode::Placement);
  });
  EXPECT_EQ(state(c), JobState::Pending);
}

TEST_F(Cores, TwoStartsInOnePassDoNotTakeTheSameCores) {
  const JobId a = submit(cores_job(6));
  const JobId b = submit(cores_job(6));
  const JobId c = submit(cores_job(6));
  in_inv([&](PassContext& ctx) {
    EXPECT_EQ(ctx.start(a), std::nullopt);
    EXPECT_EQ(ctx.start(b), std::nullopt);
    auto full = ctx.start(c);
    ASSERT_TRUE(full) << "4 cores are left";
    EXPECT_EQ(full->code, RefusalCode::Cores);
    EXPECT_EQ(full->want, 6);
    EXPECT_EQ(full->have, 4);
    EXPECT_EQ(ctx.nodes_idle(), 2) << "each node has 2 free cores";
  });
  EXPECT_EQ(job(a).run->cores.size(), 1u);
  EXPECT_EQ(job(b).run->cores.size(), 1u);
  EXPECT_NE(job(a).run->cores[0].node, job(b).run->cores[0].node);
  EXPECT_EQ(state(c), JobState::Pending);
}

TEST_F(Cores, AJobLargerThanANodeSpansTheFewestNodes) {
  const JobId a = run(cores_job(12));
  ASSERT_EQ(job(a).run->cores.size(), 2u);
  EXPECT_EQ(core_count(job(a).run->cores), 12);
  EXPECT_EQ(job(a).run->cores[0].cores.size(), 8u) << "the first node taken whole";
  EXPECT_THAT(job(a).allocation, ElementsAre(job(a).run->cores[0].node, job(a).run->cores[1].node));
}

TEST_F(Cores, CoresComeBackWhenTheJobEnds) {
  const JobId a = run(cores_job(4));
  const JobId b = run(cores_job(4));
  engine->job_ended(a, 0);
  EXPECT_EQ(state(a), JobState::Completed);
  EXPECT_TRUE(job(a).run->cores.empty());
  EXPECT_EQ(engine->core_map().free_count(node("n2")), 4);
  EXPECT_EQ(engine->cluster().node(node("n2")).job, kCoresShared) << "b is still there";
  ASSERT_TRUE(engine->cancel(b).ok());
  engine->job_ended(b, -15);
  EXPECT_EQ(engine->core_map().free_count(node("n2")), 8);
  EXPECT_EQ(engine->cluster().node(node("n2")).job, 0) << "idle again";
  EXPECT_EQ(engine->cluster().idle_count(1), 2);
}

TEST_F(Cores, SubmitRefusesMoreCoresThanThePartitionHasAndWhatItCannotDo) {
  auto out = engine->submit(cores_job(17));
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("job needs 17 cores; partition inv has 16"));
  JobSpec moldable = cores_job(2);
  moldable.kind = JobKind::Moldable;
  moldable.min_nodes = 1;
  moldable.max_nodes = 2;
  out = engine->submit(moldable);
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("rigid or malleable"));
  JobSpec ranged = cores_job(2);
  ranged.layout.edit().max_cores = 4;  // a range for a rigid job
  out = engine->submit(ranged);
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("malleable"));
  JobSpec placed = cores_job(2);
  placed.extra.edit().nodelist = {"n2"};
  EXPECT_FALSE(engine->submit(placed).ok());
  EXPECT_TRUE(engine->jobs().empty()) << "nothing changed";
}

TEST_F(Cores, TasksTimesCpusPerTaskAreTheCoresAsked) {
  JobSpec spec = cores_job(0);
  spec.layout.edit().ntasks = 3;
  spec.layout.edit().cpus_per_task = 2;
  const JobId a = submit(spec);
  EXPECT_EQ(job(a).spec.layout->cores, 6);
  JobSpec plain = cores_job(0);
  EXPECT_EQ(job(submit(plain)).spec.layout->cores, 1);
}

TEST_F(Cores, ANodeLostEndsEveryJobWithCoresOnIt) {
  const JobId a = run(cores_job(4));
  const JobId b = run(cores_job(4));
  const JobId c = run(cores_job(2));  // on n3
  ASSERT_TRUE(engine->set_node_up("n2", false, "test").ok());
  EXPECT_EQ(state(a), JobState::Completing);
  EXPECT_EQ(state(b), JobState::Completing);
  EXPECT_EQ(state(c), JobState::Running);
  engine->job_ended(a, -9);
  engine->job_ended(b, -9);
  EXPECT_EQ(state(a), JobState::Failed);
  EXPECT_EQ(engine->core_map().free_count(node("n2")), 8);
  // A down node is never placed on.
  const JobId d = submit(cores_job(7));
  in_inv([&](PassContext& ctx) {
    auto v = ctx.start(d);
    ASSERT_TRUE(v);
    EXPECT_EQ(v->code, RefusalCode::Cores);
  });
}

TEST_F(Cores, JobsRestoredFromTheJournalShareTheirNodeAgain) {
  // The journal keeps nodes, not cores: each job gets as many again there.
  for (JobId id : {41, 42}) {
    Job saved;
    saved.id = id;
    saved.spec = cores_job(3);
    saved.state = JobState::Running;
    saved.start_time = 0;
    ASSERT_TRUE(engine->restore_job(saved, {"n2"}).ok()) << id;
  }
  EXPECT_EQ(core_count(job(41).run->cores), 3);
  EXPECT_EQ(core_count(job(42).run->cores), 3);
  EXPECT_EQ(engine->core_map().free_count(node("n2")), 2);
  Job third;
  third.id = 43;
  third.spec = cores_job(3);
  third.state = JobState::Running;
  EXPECT_EQ(engine->restore_job(third, {"n2"}).code(), StatusCode::Conflict) << "2 cores left";
  engine->job_ended(41, 0);
  engine->job_ended(42, 0);
  EXPECT_EQ(engine->core_map().free_count(node("n2")), 8);
  EXPECT_EQ(engine->cluster().node(node("n2")).job, 0);
}

TEST_F(Cores, AJobRestoredWithItsJournaledCoresGetsThoseCores) {
  Job saved;
  saved.id = 51;
  saved.spec = cores_job(3);
  saved.state = JobState::Running;
  saved.start_time = 0;
  saved.run.edit().cores = {{-1, {2, 5, 7}}};  // as the journal reads them back: no node index
  ASSERT_TRUE(engine->restore_job(saved, {"n2"}).ok());
  ASSERT_EQ(job(51).run->cores.size(), 1u);
  EXPECT_EQ(job(51).run->cores[0].node, node("n2"));
  EXPECT_EQ(job(51).run->cores[0].cores, (std::vector<int>{2, 5, 7}));
  EXPECT_EQ(engine->core_map().owner(node("n2"), 5), 51);
  // Another job journaled on a core now taken gets as many others there.
  Job other = saved;
  other.id = 52;
  other.spec = cores_job(2);
  other.run.edit().cores = {{-1, {5, 6}}};
  ASSERT_TRUE(engine->restore_job(other, {"n2"}).ok());
  EXPECT_EQ(core_count(job(52).run->cores), 2);
  EXPECT_EQ(engine->core_map().owner(node("n2"), 5), 51) << "the first keeps its core";
  EXPECT_EQ(engine->core_map().free_count(node("n2")), 3);
}

TEST_F(Cores, ThePartitionOfWholeNodesIsAsBefore) {
  JobSpec spec;
  spec.name = "r";
  spec.user = "alice";
  spec.nodes = 2;
  const JobId r = submit(spec);
  in_pass([r](PassContext& ctx) {
    if (ctx.partition_name() == "batch") {
      EXPECT_EQ(ctx.start(r), std::nullopt);
    }
  });
  engine->job_started(r);
  EXPECT_TRUE(job(r).run->cores.empty());
  EXPECT_THAT(job(r).allocation, ElementsAre(node("n0"), node("n1")));
  EXPECT_EQ(job(r).spec.layout->cores, 0);
}

// ---------------------------------------------------------------- Lua

TEST(CoresLua, APolicySeesFreeCoresAndStartsOnNamedOrPlacedCores) {
  luatest::TempDir dir;
  luatest::Harness h(0);
  h.engine.add_node("c01", 4);
  h.engine.add_node("c02", 4);
  ASSERT_TRUE(
      h.engine.set_partitions({partition("inv", {"c01", "c02"}, PartitionKind::Cores, true)}).ok());
  ASSERT_TRUE(h.engine.set_node_sockets("c01", 2).ok());
  h.use(dir.write("p.lua", R"lua(
local P = { name = 'cores', api = 1 }
local seen = {}
function P.schedule(ctx)
  local free = ctx:free_cores()
  seen.c01_free, seen.c01_total = free.c01.free, free.c01.total
  seen.c01_sockets = #free.c01.sockets
  for _, job in ipairs(ctx.pending) do
    if job.id == 1 then
      seen.wants = job.cores
      assert(ctx:start(job.id, { cores = { c02 = { 1, 3 } } }))
    else
      local ok, refusal = ctx:start(job.id, { cores = { c02 = { 3 } } })
      seen.refusal = refusal and refusal.code
      assert(ctx:start(job.id))
    end
  end
  seen.after = ctx:free_cores().c02.free
end
function P.save() return seen end
return P
)lua"));
  h.submit(cores_job(2, ""));
  h.submit(cores_job(1, ""));
  h.ok_pass();
  luatest::LuaData seen = luatest::LuaData::saved_by(*h.policy);
  EXPECT_EQ(seen.integer("c01_free"), 4);
  EXPECT_EQ(seen.integer("c01_total"), 4);
  EXPECT_EQ(seen.integer("c01_sockets"), 2);
  EXPECT_EQ(seen.integer("wants"), 2);
  EXPECT_EQ(seen.str("refusal"), "core_busy");
  EXPECT_EQ(seen.integer("after"), 1) << "c02: 1 and 3 named, the second job best-fits there";
  EXPECT_THAT(h.job(1).run->cores, ElementsAre(NodeCores{1, {1, 3}}));
  EXPECT_THAT(h.job(2).run->cores, ElementsAre(NodeCores{1, {0}}));
}

}  // namespace
}  // namespace sched::test
