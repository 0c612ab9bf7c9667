// `sched policy test FILE TESTS.lua` (issue 22 item 5): the harness on its
// own (run_policy_tests) and the built command's exit status.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <sstream>
#include <string>

#include "lua_test_support.hpp"
#include "policy_tests.hpp"
#include "test_paths.hpp"

namespace sched::cli {
namespace {

using luatest::TempDir;
using ::testing::HasSubstr;
using ::testing::Not;

const std::string kFcfs = std::string(SCHED_SOURCE_POLICY_DIR) + "/fcfs.lua";

// A policy that starts nothing.
const char* kIdle =
    "local P = { name = 'idle', api = 1 }\nfunction P.schedule(ctx) end\nreturn P\n";

TEST(PolicyTests, PassingAndFailingTestsAreReportedWithTheirLine) {
  TempDir dir;
  const std::string tests = dir.write("t.lua",
                                      "test('starts', function(t)\n"
                                      "  t:nodes(2)\n"
                                      "  local a = t:job{nodes = 2}\n"
                                      "  t:expect_start(a, 2)\n"
                                      "end)\n"
                                      "test('wrong size', function(t)\n"
                                      "  t:nodes(2)\n"
                                      "  local a = t:job{nodes = 1}\n"
                                      "  t:expect_start(a, 2)\n"
                                      "end)\n"
                                      "test('plain assert', function(t)\n"
                                      "  t:nodes(1)\n"
                                      "  local actions = t:pass()\n"
                                      "  assert(#actions == 1, 'no job, no action')\n"
                                      "end)\n");
  std::ostringstream out;
  const PolicyTestReport report = run_policy_tests(kFcfs, tests, {}, out);
  ASSERT_EQ(report.results.size(), 3u) << out.str();
  EXPECT_TRUE(report.results[0].ok) << report.results[0].message;
  EXPECT_FALSE(report.results[1].ok);
  EXPECT_THAT(report.results[1].message,
              HasSubstr("t.lua:9: expected start of job 1 on 2 node(s), got 1"));
  EXPECT_FALSE(report.results[2].ok);
  EXPECT_THAT(report.results[2].message, HasSubstr("t.lua:14: no job, no action"));
  EXPECT_EQ(report.failed(), 2);
  EXPECT_FALSE(report.ok());
  EXPECT_THAT(out.str(), HasSubstr("ok    starts\n"));
  EXPECT_THAT(out.str(), HasSubstr("FAIL  wrong size: t.lua:9:"));
  EXPECT_THAT(out.str(), HasSubstr("3 test(s), 1 passed, 2 failed\n"));
}

TEST(PolicyTests, RunningJobsHoldNodesAndThePolicySeesParams) {
  TempDir dir;
  const std::string policy =
      dir.write("p.lua",
                "local P = { name = 'p', api = 1 }\n"
                "function P.schedule(ctx)\n"
                "  if ctx.params.go ~= true then return end\n"
                "  for _, job in ipairs(ctx.pending) do\n"
                "    if job.nodes <= ctx.nodes_idle then ctx:start(job) end\n"
                "  end\n"
                "end\nreturn P\n");
  const std::string tests = dir.write("t.lua",
                                      "test('params off', function(t)\n"
                                      "  t:nodes(3)\n"
                                      "  t:job{nodes = 1}\n"
                                      "  t:expect_no_action()\n"
                                      "end)\n"
                                      "test('params on, two nodes busy', function(t)\n"
                                      "  t:nodes(3)\n"
                                      "  t:params{go = true}\n"
                                      "  t:running{nodes = 2, walltime = 60}\n"
                                      "  local big = t:job{nodes = 2}\n"
                                      "  local small = t:job{nodes = 1}\n"
                                      "  t:expect_no_start(big)\n"
                                      "  t:expect_start(small, 1)\n"
                                      "end)\n");
  std::ostringstream out;
  const PolicyTestReport report = run_policy_tests(policy, tests, {}, out);
  EXPECT_TRUE(report.ok()) << out.str();
  EXPECT_EQ(report.results.size(), 2u);
}

TEST(PolicyTests, ABrokenPolicyFailsEachTestWithItsError) {
  TempDir dir;
  const std::string policy = dir.write("bad.lua", "local P = { api = 1 }\nif then\n");
  const std::string tests =
      dir.write("t.lua", "test('x', function(t) t:nodes(1) t:expect_no_action() end)\n");
  std::ostringstream out;
  const PolicyTestReport report = run_policy_tests(policy, tests, {}, out);
  ASSERT_EQ(report.results.size(), 1u);
  EXPECT_FALSE(report.results[0].ok);
  EXPECT_THAT(report.results[0].message, HasSubstr("the policy did not load: bad.lua:2:"));
}

TEST(PolicyTests, ABrokenTestsFileRunsNothing) {
  TempDir dir;
  std::ostringstream out;
  auto report = run_policy_tests(kFcfs, dir.write("t.lua", "test('x', function(t)\n"), {}, out);
  EXPECT_FALSE(report.ok());
  EXPECT_THAT(report.error, HasSubstr("t.lua:"));
  EXPECT_TRUE(report.results.empty());
  report = run_policy_tests(kFcfs, dir.write("none.lua", "-- nothing\n"), {}, out);
  EXPECT_THAT(report.error, HasSubstr("declares no test"));
  report = run_policy_tests(kFcfs, (dir.path() / "absent.lua").string(), {}, out);
  EXPECT_THAT(report.error, HasSubstr("cannot read"));
}

TEST(PolicyTests, BadFixtureFieldsFailTheTest) {
  TempDir dir;
  const std::string tests =
      dir.write("t.lua",
                "test('kind', function(t) t:nodes(1) t:job{kind = 'odd'} end)\n"
                "test('busy', function(t) t:nodes(1) t:running{nodes = 2} end)\n");
  std::ostringstream out;
  const auto report = run_policy_tests(kFcfs, tests, {}, out);
  ASSERT_EQ(report.results.size(), 2u);
  EXPECT_THAT(report.results[0].message, HasSubstr("t:job: unknown kind 'odd'"));
  EXPECT_THAT(report.results[1].message, HasSubstr("t:running: not enough idle nodes"));
}

int run(const std::string& command) {
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(PolicyTestCommand, ExitStatusFollowsTheTests) {
  TempDir dir;
  const std::string idle = dir.write("idle.lua", kIdle);
  const std::string tests = dir.write(
      "t.lua", "test('starts', function(t) t:nodes(1) t:expect_start(t:job{nodes = 1}) end)\n");
  const std::string sched = SCHED_CLI_BIN;
  EXPECT_EQ(run(sched + " policy test fcfs " + tests + " >/dev/null"), 0);
  EXPECT_EQ(run(sched + " policy test " + idle + " " + tests + " >/dev/null"), 1);
  // The bundled examples pass.
  const std::string examples = std::string(SCHED_SOURCE_POLICY_DIR) + "/tests/";
  EXPECT_EQ(run(sched + " policy test easy_backfill " + examples + "easy_backfill_tests.lua"), 0);
}

}  // namespace
}  // namespace sched::cli
