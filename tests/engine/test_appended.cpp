// ctx.appended (issue 15): when the only changes since a policy's last
// successful pass are submissions at the end of the queue, the position of
// the first new job, so that a policy may look at the new jobs only; nil as
// soon as anything else changed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "lua_test_support.hpp"

namespace sched {
namespace {

using luatest::Harness;
using luatest::LuaData;
using luatest::TempDir;

constexpr const char* kRecorder = R"lua(
local P = { api = 1 }
local seen = {}
function P.schedule(ctx)
  seen[#seen + 1] = ctx.appended or 'nil'
end
function P.save() return seen end
return P
)lua";

TEST(Appended, NamesTheNewJobsOnlyWhenNothingElseChanged) {
  TempDir dir;
  Harness h(2);
  h.submit(luatest::rigid(2, 100));  // job 1 runs until t=100
  h.start_all();
  h.use(dir.write("p.lua", kRecorder));
  h.ok_pass();  // 1: the policy's first pass: nothing to compare with
  h.submit(luatest::rigid(1, 10));
  h.submit(luatest::rigid(1, 10));
  h.ok_pass();  // 2: jobs 2 and 3 are new, from position 1
  h.ok_pass();  // 3: nothing new: one past the end
  h.submit(luatest::rigid(1, 10));
  h.clock.advance(5);
  h.ok_pass();  // 4: job 4 at position 3; time passing alone changes nothing
  ASSERT_TRUE(h.engine.cancel(2).ok());
  h.ok_pass();  // 5: a cancel
  JobSpec urgent = luatest::rigid(1, 10);
  urgent.urgent = true;
  h.submit(urgent);
  h.ok_pass();  // 6: a submission in front of the others
  h.ok_pass();  // 7
  h.clock.advance(200);
  h.ok_pass();  // 8: job 1 runs past its estimated end
  LuaData seen = LuaData::saved_by(*h.policy);
  ASSERT_EQ(seen.length(""), 8);
  EXPECT_EQ(seen.str("1"), "nil");
  EXPECT_EQ(seen.integer("2"), 1);
  EXPECT_EQ(seen.integer("3"), 3);
  EXPECT_EQ(seen.integer("4"), 3);
  EXPECT_EQ(seen.str("5"), "nil");
  EXPECT_EQ(seen.str("6"), "nil");
  EXPECT_EQ(seen.integer("7"), 4) << "3 pending, none new";
  EXPECT_EQ(seen.str("8"), "nil");
}

TEST(Appended, IsNilAfterAFailedPassAndForAnotherPolicy) {
  TempDir dir;
  Harness h(2);
  h.use(dir.write("p.lua", kRecorder));
  h.ok_pass();
  h.ok_pass();  // 2: nothing new
  // Another policy object takes over: its first pass compares with nothing.
  h.use(dir.write("q.lua", kRecorder));
  h.ok_pass();
  h.ok_pass();
  LuaData seen = LuaData::saved_by(*h.policy);
  ASSERT_EQ(seen.length(""), 2);
  EXPECT_EQ(seen.str("1"), "nil");
  EXPECT_EQ(seen.integer("2"), 1);

  h.use(dir.write("bad.lua", R"lua(
local P = { api = 1 }
local n = 0
local seen = {}
function P.schedule(ctx)
  n = n + 1
  seen[#seen + 1] = ctx.appended or 'nil'
  if n == 2 then error('boom') end
end
function P.save() return seen end
return P
)lua"));
  h.ok_pass();            // 1
  EXPECT_TRUE(h.pass());  // 2 fails
  h.ok_pass();            // 3: after a failure: nil
  LuaData bad = LuaData::saved_by(*h.policy);
  ASSERT_EQ(bad.length(""), 3);
  EXPECT_EQ(bad.integer("2"), 1);
  EXPECT_EQ(bad.str("3"), "nil");
}

}  // namespace
}  // namespace sched
