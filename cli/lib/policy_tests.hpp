// `sched policy test FILE TESTS.lua` (issue 22 item 5; docs/policy-api.md
// "Testing a policy"): a site's own tests of a policy, run offline on the
// engine the daemon runs (no schedd). TESTS.lua declares tests with
// test(name, function(t) ... end); each test builds a cluster and a queue
// with the fixture `t` (t:nodes, t:job, t:running, t:at, t:params), runs one
// dry pass of a fresh load of FILE (t:pass, the same dry pass as `sched
// policy check`) and asserts on its actions (t:expect_start, ...) or with
// plain assert over the list t:pass() returns.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "sched/lua_policy.hpp"

namespace sched::cli {

struct PolicyTestResult {
  std::string name;
  bool ok = false;
  std::string message;  // why it failed: "tests.lua:12: expected ..."
};

struct PolicyTestReport {
  std::vector<PolicyTestResult> results;
  // The tests file itself could not run (syntax, no tests): nothing ran.
  std::string error;
  int failed() const;
  bool ok() const { return error.empty() && failed() == 0; }
};

// Runs every test of `tests_path` against the policy at `policy_path`,
// printing one line per test ("ok    name", "FAIL  name: why") and the
// totals to `out`. `params` are the policy's ctx.params unless a test sets
// its own.
PolicyTestReport run_policy_tests(const std::string& policy_path, const std::string& tests_path,
                                  const PolicyParams& params, std::ostream& out);

}  // namespace sched::cli
