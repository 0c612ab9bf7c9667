-- Tests of perf_aware.lua (Algorithm 1 in lib/malleable.lua), run by
-- `sched policy test perf_aware perf_aware_tests.lua` (and by ctest).

test("a waiting head is started by shrinking the least efficient job", function(t)
  t:nodes(8)
  local wasteful = t:running{kind = "malleable", nodes = 4, min_nodes = 2, max_nodes = 8, mtct = 0.9}
  local efficient = t:running{kind = "malleable", nodes = 4, min_nodes = 2, max_nodes = 8, mtct = 0.1}
  local head = t:job{nodes = 2}
  t:expect_shrink(wasteful, 2)
  t:expect_start(head, 2)
  local actions = t:pass()
  for _, a in ipairs(actions) do
    assert(a.job ~= efficient, "the efficient job is left alone")
  end
end)

test("idle nodes go to the most efficient job first", function(t)
  t:nodes(8)
  local wasteful = t:running{kind = "malleable", nodes = 2, min_nodes = 2, max_nodes = 4, mtct = 0.9}
  local efficient = t:running{kind = "malleable", nodes = 2, min_nodes = 2, max_nodes = 4, mtct = 0.1}
  local actions = t:pass()
  assert(actions[1].action == "expand" and actions[1].job == efficient,
         "the efficient job grows first")
  t:expect_expand(efficient, 4)
  t:expect_expand(wasteful, 4)
end)

test("expand_when_idle = false leaves idle nodes idle with an empty queue", function(t)
  t:nodes(8)
  t:params{expand_when_idle = false}
  t:running{kind = "malleable", nodes = 2, min_nodes = 2, max_nodes = 4, mtct = 0.5}
  t:expect_no_action()
end)

test("rigid jobs are never resized", function(t)
  t:nodes(4)
  t:running{nodes = 4}
  local head = t:job{nodes = 2}
  t:expect_no_start(head)
  t:expect_no_action()
end)
