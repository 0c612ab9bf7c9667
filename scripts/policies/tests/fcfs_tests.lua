-- Tests of fcfs.lua, run by `sched policy test fcfs fcfs_tests.lua` (and by
-- ctest). An example of a site's own policy tests: docs/policy-api.md
-- "Testing a policy".

test("starts waiting jobs in order while they fit", function(t)
  t:nodes(4)
  local a = t:job{nodes = 2, submit = 0}
  local b = t:job{nodes = 2, submit = 1}
  t:expect_start(a, 2)
  t:expect_start(b, 2)
  t:expect_actions(2)
end)

test("the first job that does not fit blocks the ones behind it", function(t)
  t:nodes(4)
  t:running{nodes = 2, walltime = 3600}
  local big = t:job{nodes = 3, submit = 0}
  local small = t:job{nodes = 1, submit = 5}
  t:expect_no_start(big)
  t:expect_no_start(small)
  t:expect_no_action()
end)

test("an empty queue does nothing", function(t)
  t:nodes(2)
  t:expect_no_action()
end)

test("the pass returns its actions as a list", function(t)
  t:nodes(3)
  local a = t:job{nodes = 3}
  local actions, refusals = t:pass()
  assert(#actions == 1 and actions[1].action == "start" and actions[1].job == a)
  assert(actions[1].nodes == 3)
  assert(#refusals == 0)
end)
