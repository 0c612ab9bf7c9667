// Failing policies (issue 13, item 3): a pass has a time bound read from the
// injected clock, and a version that passes the reload's dry pass but fails
// every live pass is given up for the last good policy after N passes in a
// row (policy.reverted), with the failure's file and line kept.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "lua_test_support.hpp"
#include "policy_source.hpp"
#include "sched/lua_policy.hpp"
#include "sched/policy_host.hpp"

namespace sched {
namespace {

using luatest::Harness;
using luatest::policy;
using luatest::TempDir;
using ::testing::HasSubstr;

// A clock whose monotonic reading moves by `step` every time it is read:
// the time bound is tested without depending on how fast the machine is.
class SteppingClock : public Clock {
 public:
  explicit SteppingClock(double step) : step_(step) {}
  double now() const override { return 0; }
  double monotonic() const override { return reads_++ * step_; }
  long reads() const { return reads_; }

 private:
  double step_;
  mutable long reads_ = 0;
};

// ---------------------------------------------------------------- time bound

TEST(PolicyTimeBound, ALoopingPassFailsAtTheTimeBound) {
  TempDir dir;
  Harness h(2);
  SteppingClock clock(0.001);  // 1 ms per hook check (every 1000 instructions)
  auto options = luatest::quick_options();
  options.instruction_limit = 1'000'000'000'000;  // only the time bound can stop it
  options.time_limit_s = 0.05;
  options.clock = &clock;
  h.use(dir.write("loop.lua", policy("loop", "while true do end")), options);
  h.submit(luatest::rigid(1));
  const auto error = h.pass();
  ASSERT_TRUE(error) << "the looping pass should have failed";
  EXPECT_THAT(*error, HasSubstr("time limit (0.05 s) exceeded"));
  const auto& failure = h.engine.stats().last_failure;
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->code, PolicyFailureCode::Timeout);
  EXPECT_EQ(failure->file, "loop.lua");
  EXPECT_EQ(failure->line, 3);
  // 50 checks of the clock: the hook looks at it often, and stops soon after.
  EXPECT_GE(clock.reads(), 50);
  EXPECT_LE(clock.reads(), 60);
  EXPECT_EQ(h.job(1).state, JobState::Pending);
}

TEST(PolicyTimeBound, APcallCannotSwallowTheTimeBound) {
  TempDir dir;
  Harness h(2);
  SteppingClock clock(0.001);
  auto options = luatest::quick_options();
  options.instruction_limit = 1'000'000'000'000;
  options.time_limit_s = 0.02;
  options.clock = &clock;
  h.use(dir.write("p.lua", policy("p",
                                  "local ok = false; while not ok do ok = pcall(function() "
                                  "while true do end end) end")),
        options);
  h.submit(luatest::rigid(1));
  const auto error = h.pass();
  ASSERT_TRUE(error);
  EXPECT_THAT(*error, HasSubstr("time limit"));
  EXPECT_EQ(h.job(1).state, JobState::Pending);
  EXPECT_TRUE(h.enactor.calls.empty());
}

TEST(PolicyTimeBound, WithoutAClockThereIsNoTimeBound) {
  // The simulator's case: no clock, so only the instruction bound applies and
  // runs do not depend on the machine's speed.
  TempDir dir;
  Harness h(2);
  auto options = luatest::quick_options();
  options.instruction_limit = 100'000;
  options.time_limit_s = 0.000001;
  h.use(dir.write("p.lua", policy("p", "local n = 0; for i = 1, 10000 do n = n + i end")), options);
  h.submit(luatest::rigid(1));
  h.ok_pass();
  EXPECT_EQ(h.job(1).state, JobState::Starting);
}

// Measured on the real clock: how long a looping pass holds the caller.
TEST(PolicyTimeBound, ALoopingPassHoldsTheCallerNoLongerThanTheBound) {
  TempDir dir;
  Harness h(2);
  SystemClock clock;
  auto options = luatest::quick_options();
  options.instruction_limit = 1'000'000'000'000;
  options.time_limit_s = 0.2;
  options.clock = &clock;
  h.use(dir.write("loop.lua", policy("loop", "local t = {}; while true do t[1] = #t end")),
        options);
  h.submit(luatest::rigid(1));
  const auto t0 = std::chrono::steady_clock::now();
  const auto error = h.pass();
  const double held = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(error);
  EXPECT_THAT(*error, HasSubstr("time limit (0.2 s) exceeded"));
  EXPECT_GE(held, 0.2);
  RecordProperty("looping_pass_held_s", std::to_string(held));
}

TEST(PolicyTimeBound, AnEndlessAllocationStopsAtABound) {
  TempDir dir;
  Harness h(2);
  SystemClock clock;
  auto options = luatest::quick_options();
  options.instruction_limit = 1'000'000'000'000;
  options.memory_limit = 256u << 20;  // the default: allocation runs on for a while
  options.time_limit_s = 0.2;
  options.clock = &clock;
  h.use(dir.write("hog.lua", policy("hog",
                                    "local t = {}; local i = 0; while true do i = i + 1; "
                                    "t[i] = {i, tostring(i)} end")),
        options);
  h.submit(luatest::rigid(1));
  const auto t0 = std::chrono::steady_clock::now();
  const auto error = h.pass();
  const double held = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(error);
  const auto& failure = h.engine.stats().last_failure;
  ASSERT_TRUE(failure);
  EXPECT_TRUE(failure->code == PolicyFailureCode::Timeout ||
              failure->code == PolicyFailureCode::Memory)
      << to_string(failure->code);
  // The state is usable again: its memory was given back.
  EXPECT_LT(h.policy->memory_used(), std::size_t{16} << 20);
  RecordProperty("allocating_pass_held_s", std::to_string(held));
}

// ---------------------------------------------------------------- revert

class PolicyRevertTest : public ::testing::Test {
 protected:
  PolicyRevertTest() : h(4, config()), host(h.engine, luatest::quick_options()) {}
  static EngineConfig config() {
    EngineConfig c;
    c.revert_after_failures = 3;
    return c;
  }

  void load(const std::string& text) {
    path = dir.write("policy.lua", text);
    const Status loaded = host.load(path);
    ASSERT_TRUE(loaded.ok()) << loaded.message();
  }

  TempDir dir;
  Harness h;
  PolicyHost host;
  std::string path;
};

// Fails every live pass, passes the dry pass of a reload.
const char* kLiveOnlyError = "if not ctx.dry then error('live passes fail') end";

TEST_F(PolicyRevertTest, AVersionFailingEveryLivePassIsRevertedToTheLastGood) {
  load(policy("one"));
  h.ok_pass();  // "one" completes a live pass: it is the last good policy
  dir.write("policy.lua", policy("two", kLiveOnlyError));
  ASSERT_TRUE(host.reload().ok()) << "the dry pass should succeed";
  ASSERT_EQ(host.current()->name(), "two");

  const JobId id = h.submit(luatest::rigid(1));
  EXPECT_TRUE(h.pass());
  EXPECT_TRUE(h.pass());
  EXPECT_EQ(h.engine.stats().consecutive_failed, 2);
  EXPECT_EQ(host.current()->name(), "two") << "not reverted before the third failure";
  EXPECT_EQ(h.log.count(EventType::PolicyReverted), 0u);
  EXPECT_TRUE(h.pass());

  // Reverted: published, counted, and the last good policy runs again.
  const auto reverted = h.log.of_type(EventType::PolicyReverted);
  ASSERT_EQ(reverted.size(), 1u);
  EXPECT_EQ(topic(reverted[0].type), "policy.reverted");
  EXPECT_EQ(reverted[0].code, "runtime");
  EXPECT_EQ(reverted[0].file, "policy.lua");
  EXPECT_EQ(reverted[0].line, 3);
  EXPECT_THAT(reverted[0].message, HasSubstr("policy two failed 3 passes in a row"));
  EXPECT_THAT(reverted[0].message, HasSubstr("reverted to one"));
  EXPECT_EQ(h.log.count(EventType::PolicyError), 3u);  // one per failed pass
  EXPECT_EQ(host.current()->name(), "one");
  EXPECT_EQ(h.engine.policy(), host.current().get());
  EXPECT_EQ(h.engine.stats().reverts, 1u);
  EXPECT_EQ(h.engine.stats().consecutive_failed, 0);
  ASSERT_TRUE(h.engine.stats().last_revert);
  EXPECT_EQ(h.engine.stats().last_revert->from, "two");
  EXPECT_EQ(h.engine.stats().last_revert->to, "one");
  EXPECT_EQ(h.engine.stats().last_revert->failures, 3);

  // The host's last failure is the pass's, with file and line.
  const auto failure = host.last_failure();
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->file, "policy.lua");
  EXPECT_EQ(failure->line, 3);
  EXPECT_THAT(failure->message, HasSubstr("live passes fail"));

  // A pass is due at once, and the held-back job starts.
  EXPECT_TRUE(h.engine.pass_due());
  EXPECT_TRUE(h.engine.run_pass_if_due());
  EXPECT_EQ(h.job(id).state, JobState::Starting);
  EXPECT_EQ(h.log.count(EventType::PolicyError), 3u);
}

TEST_F(PolicyRevertTest, TheNextEditReplacesTheRevertedPolicy) {
  load(policy("one", "P.n = (P.n or 0) + 1"));
  h.ok_pass();
  dir.write("policy.lua", policy("two", kLiveOnlyError));
  ASSERT_TRUE(host.reload().ok());
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(h.pass());
  ASSERT_EQ(host.current()->name(), "one");
  // The unchanged bad file is not tried again...
  EXPECT_FALSE(host.reload_if_changed());
  // ...a fixed one replaces the reverted policy as any reload does.
  dir.write("policy.lua", policy("three"));
  EXPECT_TRUE(host.reload_if_changed());
  EXPECT_EQ(host.current()->name(), "three");
  h.submit(luatest::rigid(1));
  h.ok_pass();
}

TEST_F(PolicyRevertTest, FailuresMustBeInARow) {
  load(policy("one"));
  h.ok_pass();
  // Fails every other live pass: never three in a row.
  dir.write("policy.lua", policy("flaky",
                                 "if not ctx.dry then P.n = (P.n or 0) + 1; "
                                 "if P.n % 2 == 1 then error('odd pass') end end"));
  ASSERT_TRUE(host.reload().ok());
  for (int i = 0; i < 6; ++i) (void)h.pass();
  EXPECT_EQ(h.engine.stats().failed, 3u);
  EXPECT_EQ(h.log.count(EventType::PolicyReverted), 0u);
  EXPECT_EQ(host.current()->name(), "flaky");
}

TEST_F(PolicyRevertTest, WithoutALastGoodPolicyItKeepsFailingAndSaysSo) {
  load(policy("bad", kLiveOnlyError));  // never completed a pass: nothing to go back to
  h.submit(luatest::rigid(1));
  EXPECT_TRUE(h.pass());
  auto error = h.pass();
  ASSERT_TRUE(error);
  EXPECT_THAT(*error, ::testing::Not(HasSubstr("nothing to revert to")));
  error = h.pass();
  ASSERT_TRUE(error);
  EXPECT_THAT(*error, HasSubstr("nothing to revert to"));
  error = h.pass();
  ASSERT_TRUE(error);
  EXPECT_THAT(*error, HasSubstr("4 passes in a row failed"));
  EXPECT_EQ(h.log.count(EventType::PolicyReverted), 0u);
  EXPECT_EQ(host.current()->name(), "bad");
  EXPECT_FALSE(h.engine.has_fallback_policy());
  EXPECT_EQ(h.engine.stats().consecutive_failed, 4);
  EXPECT_EQ(h.engine.stats().reverts, 0u);
}

TEST_F(PolicyRevertTest, AGoodPolicyThatStartsFailingHasNothingToRevertTo) {
  // The last good policy is the running one: a revert would change nothing.
  load(policy("one", "if not ctx.dry and ctx.pending[1] ~= nil then error('cannot') end"));
  h.ok_pass();
  h.submit(luatest::rigid(1));
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(h.pass());
  EXPECT_EQ(h.log.count(EventType::PolicyReverted), 0u);
  EXPECT_FALSE(h.engine.has_fallback_policy());
}

TEST_F(PolicyRevertTest, TicksRetryAFailedPassOfATimeIndependentPolicy) {
  load(policy("one"));
  h.ok_pass();
  dir.write("policy.lua",
            "local P = { name = 'two', api = 1, time_dependent = false }\n"
            "function P.schedule(ctx)\n"
            "  if not ctx.dry then error('live passes fail') end\n"
            "end\n"
            "return P\n");
  ASSERT_TRUE(host.reload().ok());
  const JobId id = h.submit(luatest::rigid(1));
  ASSERT_TRUE(h.engine.run_pass_if_due());  // the submission's pass: fails
  // Nothing changed since, yet ticks run the failed pass again.
  for (int i = 0; i < 2; ++i) {
    h.engine.request_pass(PassReason::Tick);
    EXPECT_TRUE(h.engine.run_pass_if_due()) << "tick " << i;
  }
  EXPECT_EQ(host.current()->name(), "one");
  EXPECT_TRUE(h.engine.run_pass_if_due());
  EXPECT_EQ(h.job(id).state, JobState::Starting);
}

TEST(PolicyRevertOff, ZeroNeverReverts) {
  TempDir dir;
  Harness h(2);  // EngineConfig's default: 0
  PolicyHost host(h.engine, luatest::quick_options());
  ASSERT_TRUE(host.load(dir.write("policy.lua", policy("one"))).ok());
  h.ok_pass();
  dir.write("policy.lua", policy("two", kLiveOnlyError));
  ASSERT_TRUE(host.reload().ok());
  for (int i = 0; i < 10; ++i) EXPECT_TRUE(h.pass());
  EXPECT_EQ(host.current()->name(), "two");
  EXPECT_EQ(h.log.count(EventType::PolicyReverted), 0u);
}

TEST(PolicyRevertHost, AHostTimeBoundReadsTheEnginesClock) {
  // No clock in the options: the host uses the engine's (the daemon's case).
  TempDir dir;
  Harness h(2);
  auto options = luatest::quick_options();
  options.instruction_limit = 1'000'000'000'000;
  options.time_limit_s = 0.05;
  PolicyHost host(h.engine, options);
  ASSERT_TRUE(host.load(dir.write("loop.lua", policy("loop", "while true do end"))).ok());
  h.submit(luatest::rigid(1));
  const auto error = h.pass();
  ASSERT_TRUE(error);
  EXPECT_THAT(*error, HasSubstr("time limit (0.05 s) exceeded"));
}

}  // namespace
}  // namespace sched
