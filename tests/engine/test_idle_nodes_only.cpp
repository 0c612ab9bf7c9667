// P.idle_nodes_only (issue 15): a policy that starts jobs on idle nodes only
// is not run when no node is idle and nothing but submissions at the end of
// the queue came since its last pass; any other change, an idle node, an
// urgent submission, or a policy without the promise, gets the pass.
#include <gtest/gtest.h>

#include "lua_test_support.hpp"

namespace sched {
namespace {

using luatest::Harness;
using luatest::LuaData;
using luatest::TempDir;

// Counts its passes; `promise` is the value of P.idle_nodes_only.
std::string counter(const char* promise) {
  return std::string(R"lua(
local P = { api = 1, time_dependent = false, idle_nodes_only = )lua") +
         promise + R"lua( }
local passes = 0
function P.schedule(ctx) passes = passes + 1 end
function P.save() return { passes = passes } end
return P
)lua";
}

int passes(LuaPolicy& policy) {
  return static_cast<int>(LuaData::saved_by(policy).integer("passes"));
}

// The passes run_pass_if_due ran for the submission of `spec`.
bool submission_ran_a_pass(Harness& h, const JobSpec& spec) {
  const int before = passes(*h.policy);
  h.submit(spec);
  h.engine.run_pass_if_due();
  return passes(*h.policy) == before + 1;
}

TEST(IdleNodesOnly, SkipsTheSubmissionPassOfAFullCluster) {
  TempDir dir;
  Harness h(2);
  h.submit(luatest::rigid(2, 100));
  h.start_all();  // no node idle from here
  h.use(dir.write("p.lua", counter("true")));
  h.ok_pass();  // the policy's first pass: always run
  EXPECT_EQ(passes(*h.policy), 1);
  EXPECT_FALSE(submission_ran_a_pass(h, luatest::rigid(1, 10)));
  EXPECT_FALSE(submission_ran_a_pass(h, luatest::rigid(2, 10)));
  // An urgent job may preempt to start: its pass runs.
  JobSpec urgent = luatest::rigid(1, 10);
  urgent.urgent = true;
  EXPECT_TRUE(submission_ran_a_pass(h, urgent));
  // A cancel is more than an append: the next submission's pass runs.
  ASSERT_TRUE(h.engine.cancel(2).ok());
  EXPECT_TRUE(submission_ran_a_pass(h, luatest::rigid(1, 10)));
  EXPECT_FALSE(submission_ran_a_pass(h, luatest::rigid(1, 10)));
  // The running job past its estimated end: the reservation moves.
  h.clock.advance(200);
  EXPECT_TRUE(submission_ran_a_pass(h, luatest::rigid(1, 10)));
}

TEST(IdleNodesOnly, RunsWhenANodeIsIdleOrWithoutThePromise) {
  TempDir dir;
  Harness h(3);
  h.submit(luatest::rigid(2, 100));
  h.start_all();  // one node idle
  h.use(dir.write("p.lua", counter("true")));
  h.ok_pass();
  EXPECT_TRUE(submission_ran_a_pass(h, luatest::rigid(3, 10)));
  EXPECT_TRUE(submission_ran_a_pass(h, luatest::rigid(3, 10)));

  Harness full(2);
  full.submit(luatest::rigid(2, 100));
  full.start_all();
  full.use(dir.write("q.lua", counter("false")));
  full.ok_pass();
  EXPECT_TRUE(submission_ran_a_pass(full, luatest::rigid(1, 10)));
  EXPECT_TRUE(submission_ran_a_pass(full, luatest::rigid(1, 10)));
}

TEST(IdleNodesOnly, MustBeABoolean) {
  TempDir dir;
  EXPECT_THROW(LuaPolicy::load(dir.write("p.lua", counter("'yes'")), luatest::quick_options()),
               PolicyLoadError);
}

}  // namespace
}  // namespace sched
