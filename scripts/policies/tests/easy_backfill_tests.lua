-- Tests of easy_backfill.lua (and lib/easy.lua), run by
-- `sched policy test easy_backfill easy_backfill_tests.lua` (and by ctest).

test("starts in order while jobs fit", function(t)
  t:nodes(4)
  local a = t:job{nodes = 1, walltime = 600}
  local b = t:job{nodes = 3, walltime = 600}
  t:expect_start(a, 1)
  t:expect_start(b, 3)
end)

test("reserves for a head that does not fit, at the earliest end", function(t)
  t:nodes(4)
  t:at(1000)
  t:running{nodes = 3, walltime = 500, started = 900}  -- ends at 1400
  local head = t:job{nodes = 4, walltime = 600, submit = 950}
  t:expect_no_start(head)
  local actions = t:pass()
  assert(actions[1].action == "reserve" and actions[1].job == head)
  assert(actions[1].time == 1400, "reserved at " .. tostring(actions[1].time))
end)

test("backfills a short job that ends before the reservation", function(t)
  t:nodes(4)
  t:at(1000)
  t:running{nodes = 3, walltime = 500, started = 900}  -- ends at 1400
  local head = t:job{nodes = 4, walltime = 600, submit = 950}
  local short = t:job{nodes = 1, walltime = 300, submit = 960}  -- ends at 1300
  t:expect_reserve(head)
  t:expect_start(short, 1)
end)

test("does not backfill a job that would delay the head", function(t)
  t:nodes(4)
  t:at(1000)
  t:running{nodes = 3, walltime = 500, started = 900}  -- ends at 1400
  t:job{nodes = 4, walltime = 600, submit = 950}
  local long = t:job{nodes = 1, walltime = 3600, submit = 960}  -- would end at 4600
  t:expect_no_start(long)
end)

test("backfills on the nodes the head leaves spare", function(t)
  t:nodes(6)
  t:at(1000)
  t:running{nodes = 4, walltime = 500, started = 900}  -- 4 free at 1400: 6 then
  local head = t:job{nodes = 5, walltime = 600, submit = 950}
  local long = t:job{nodes = 1, walltime = 3600, submit = 960}  -- the spare node
  t:expect_reserve(head)
  t:expect_start(long, 1)
end)
