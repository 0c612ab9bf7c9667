// policy.snapshot's content (schedd/policy_snapshot.hpp): the engine's nodes,
// held jobs with their node names, the queue, the window's submissions and
// the running policy's files and parameters.
#include <gtest/gtest.h>

#include "lua_test_support.hpp"
#include "policy_snapshot.hpp"
#include "sched/policy_host.hpp"

namespace sched::daemon {
namespace {

using luatest::Harness;
using luatest::TempDir;

const char* kPolicy =
    "local lib = require('lib.helper')\n"
    "local P = { name = lib.name, api = 1 }\n"
    "function P.schedule(ctx)\n"
    "  for _, job in ipairs(ctx.pending) do\n"
    "    if job.nodes > ctx.nodes_idle or not ctx:start(job) then return end\n"
    "  end\n"
    "end\nreturn P\n";

JobSpec spec(int nodes, double walltime) {
  JobSpec s;
  s.user = "alice";
  s.nodes = nodes;
  s.walltime = walltime;
  s.command = "#!/bin/sh\nsleep 1\n";
  return s;
}

TEST(PolicySnapshot, HoldsTheLiveStateAndThePolicysFiles) {
  TempDir dir;
  dir.write("lib/helper.lua", "return { name = 'mine' }\n");
  const std::string path = dir.write("mine.lua", kPolicy);
  Harness h(3);
  PolicyHost host(h.engine, luatest::quick_options());
  ASSERT_TRUE(host.deploy(path, {{"depth", ParamValue{3LL}}}).ok());

  h.clock.set(100);
  const JobId old = h.submit(spec(1, 10));  // outside the window below
  h.ok_pass();
  h.confirm_starts();
  h.clock.set(150);
  h.engine.job_ended(old, 0);
  h.clock.set(1000);
  const JobId running = h.submit(spec(2, 600));
  h.ok_pass();
  h.confirm_starts();
  h.clock.set(1100);
  const JobId waiting = h.submit(spec(3, 60));
  h.ok_pass();
  ASSERT_TRUE(h.engine.set_node_draining("c03", true).ok());
  h.clock.set(1200);

  const LiveSnapshot s = live_snapshot(h.engine, host, 500);
  EXPECT_DOUBLE_EQ(s.now, 1200);
  ASSERT_EQ(s.nodes.size(), 3u);
  EXPECT_EQ(s.nodes[0].name, "c01");
  EXPECT_TRUE(s.nodes[2].draining);
  ASSERT_EQ(s.running.size(), 1u);
  EXPECT_EQ(s.running[0].job.id, running);
  EXPECT_DOUBLE_EQ(s.running[0].job.start_time, 1000);
  EXPECT_EQ(s.running[0].nodes, (std::vector<std::string>{"c01", "c02"}));
  ASSERT_EQ(s.pending.size(), 1u);
  EXPECT_EQ(s.pending[0].id, waiting);
  // The window [700, 1200] holds the two later submissions, not the first.
  EXPECT_DOUBLE_EQ(s.arrival_window_s, 500);
  ASSERT_EQ(s.arrivals.size(), 2u);
  EXPECT_EQ(s.arrivals[0].id, running);
  EXPECT_DOUBLE_EQ(s.arrivals[0].time, 1000);
  EXPECT_EQ(s.arrivals[1].id, waiting);
  EXPECT_EQ(s.arrivals[1].spec.nodes, 3);
  EXPECT_EQ(s.policy_name, "mine");
  EXPECT_EQ(s.policy_path, path);
  ASSERT_EQ(s.policy_files.size(), 2u);
  EXPECT_EQ(s.policy_files[0].name, "mine.lua");
  EXPECT_EQ(s.policy_files[0].text, kPolicy);
  EXPECT_EQ(s.policy_files[1].name, "lib/helper.lua");
  ASSERT_EQ(s.policy_params.size(), 1u);
  EXPECT_EQ(s.policy_params[0], (std::pair<std::string, std::string>{"depth", "3"}));

  EXPECT_EQ(live_snapshot(h.engine, host, 0).arrivals.size(), 0u);
}

}  // namespace
}  // namespace sched::daemon
