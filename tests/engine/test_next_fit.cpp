// ctx:next_fit(from, n [, until, spare]) (issue 15): the scan for the next
// pending job a backfilling pass could start, done in C++ over ctx.pending.
#include <gtest/gtest.h>

#include "lua_test_support.hpp"

namespace sched {
namespace {

using luatest::Harness;
using luatest::LuaData;
using luatest::TempDir;

// Records ctx:next_fit for a few asks; positions are 1-based, -1 is nil.
constexpr const char* kRecorder = R"lua(
local P = { api = 1 }
local seen = {}
function P.schedule(ctx)
  local function fit(...) return ctx:next_fit(...) or -1 end
  seen[#seen + 1] = {
    any = fit(1, 8),
    two = fit(1, 2),
    two_after_first = fit(2, 2),
    from_zero = fit(0, 2),
    past_end = fit(99, 8),
    none = fit(1, 0),
    -- now is 10: ends by 40 (walltime <= 30), or needs at most 1 node
    by_40_or_1 = fit(1, 8, 40, 1),
    by_40_or_0 = fit(1, 8, 40, 0),
    by_40_or_4 = fit(1, 8, 40, 4),
    never_or_3 = fit(1, 8, math.huge, 3),
    -- the position it gives is the job ctx.pending has there
    id_of_two = ctx.pending[fit(1, 2)].id,
  }
  -- its second result: that job's table, the very one ctx.pending holds
  local k, job = ctx:next_fit(1, 1)
  seen[#seen].job_of_one = job.id
  seen[#seen].same_table = rawequal(job, ctx.pending[k])
  seen[#seen].none_has_no_job = select("#", ctx:next_fit(1, 0)) == 1
  local ok, err = pcall(ctx.next_fit, ctx, 1, 1.5)
  seen[#seen].bad_nodes = ok and "accepted" or tostring(err)
end
function P.save() return seen end
return P
)lua";

// 8 nodes, all idle; pending in order: 6 nodes / 100 s, 4 nodes / no
// walltime, 2 nodes / 30 s, 1 node / 50 s, 3 nodes / 20 s. The clock is at 10.
struct Queue {
  TempDir dir;
  Harness h{8};
  Queue() {
    h.submit(luatest::rigid(8));  // keeps the others pending
    h.start_all();
    h.submit(luatest::rigid(6, 100));
    h.submit(luatest::rigid(4));
    h.submit(luatest::rigid(2, 30));
    h.submit(luatest::rigid(1, 50));
    h.submit(luatest::rigid(3, 20));
    h.use(dir.write("p.lua", kRecorder));
    h.clock.advance(10);
  }
};

TEST(NextFit, FindsTheFirstPendingJobThatFitsFromAPosition) {
  Queue q;
  q.h.ok_pass();
  LuaData seen = LuaData::saved_by(*q.h.policy);
  EXPECT_EQ(seen.integer("1.any"), 1);
  EXPECT_EQ(seen.integer("1.two"), 3) << "the 2-node job, past the 6 and 4";
  EXPECT_EQ(seen.integer("1.two_after_first"), 3);
  EXPECT_EQ(seen.integer("1.from_zero"), 3) << "positions before 1 count from 1";
  EXPECT_EQ(seen.integer("1.past_end"), -1);
  EXPECT_EQ(seen.integer("1.none"), -1) << "no job needs 0 nodes";
  EXPECT_EQ(seen.integer("1.id_of_two"), 4) << "job 4 is the 2-node job";
  EXPECT_EQ(seen.integer("1.job_of_one"), 5) << "the job comes with its position";
  EXPECT_TRUE(seen.boolean("1.same_table"));
  EXPECT_TRUE(seen.boolean("1.none_has_no_job"));
}

TEST(NextFit, WithABoundItSkipsJobsThatWouldEndLaterAndNeedMoreThanTheSpare) {
  Queue q;
  q.h.ok_pass();
  LuaData seen = LuaData::saved_by(*q.h.policy);
  // 6/100 ends at 110 and needs 6 > 1; 4/none never ends; 2/30 ends at 40.
  EXPECT_EQ(seen.integer("1.by_40_or_1"), 3);
  EXPECT_EQ(seen.integer("1.by_40_or_0"), 3);
  EXPECT_EQ(seen.integer("1.by_40_or_4"), 2) << "4 nodes for ever fit in a spare of 4";
  // With no end in sight every job with a walltime qualifies; the one
  // without only by the spare: 6/100 first.
  EXPECT_EQ(seen.integer("1.never_or_3"), 1);
  EXPECT_NE(seen.str("1.bad_nodes"), "accepted") << "a node count must be an integer";
}

TEST(NextFit, OnlyTheSpareAdmitsAJobWithoutAWalltime) {
  TempDir dir;
  Harness h(8);
  h.submit(luatest::rigid(8));
  h.start_all();
  h.submit(luatest::rigid(4));     // no walltime
  h.submit(luatest::rigid(5, 5));  // ends in time but needs 5
  h.use(dir.write("p.lua", R"lua(
local P = { api = 1 }
local seen = {}
function P.schedule(ctx)
  seen[#seen + 1] = { a = ctx:next_fit(1, 4, 1000, 3) or -1, b = ctx:next_fit(1, 4, 1000, 4) or -1 }
end
function P.save() return seen end
return P
)lua"));
  h.ok_pass();
  LuaData seen = LuaData::saved_by(*h.policy);
  EXPECT_EQ(seen.integer("1.a"), -1) << "4 nodes for ever against a spare of 3; 5 > 4";
  EXPECT_EQ(seen.integer("1.b"), 1);
}

}  // namespace
}  // namespace sched
