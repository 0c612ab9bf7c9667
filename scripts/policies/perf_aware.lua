-- Performance-aware scheduling of rigid and malleable jobs (Chadha, John &
-- Gerndt, Algorithm 1; the pass itself is in lib/malleable.lua). To start a
-- waiting head, the least efficient jobs give nodes first: shrink in
-- decreasing MTCT (time in communication / time in computation); idle nodes
-- go to the most efficient first: expand in increasing MTCT. Jobs without
-- MTCT data come last in both orders and get a data request (unless they
-- are resized in the same pass, which resets the MTCT anyway).
--
-- Parameter expand_when_idle (default true): see lib/malleable.lua.
local malleable = require("lib.malleable")

local P = { name = "perf_aware", api = 1 }

-- Decisions depend on the state shown (queue, sizes, MTCT, adapting), never
-- on the clock; a fresh MTCT report asks for a pass by itself.
P.time_dependent = false

local started_before = malleable.started_before

-- A NaN report counts as no data: it would break the sort's total order.
local function mtct_of(job)
  local m = job.mtct
  if m ~= m then
    return nil
  end
  return m
end

-- Jobs with data before jobs without; among those with data, `before`
-- compares the MTCT values; ties by start time.
local function by_mtct(before)
  return function(a, b)
    local x, y = mtct_of(a), mtct_of(b)
    if x ~= nil and y ~= nil and x ~= y then
      return before(x, y)
    end
    if (x == nil) ~= (y == nil) then
      return x ~= nil
    end
    return started_before(a, b)
  end
end

local ordering = {
  shrink_first = by_mtct(function(x, y) return x > y end),
  expand_first = by_mtct(function(x, y) return x < y end),
  wants_mtct = true,
}

function P.schedule(ctx)
  malleable.schedule(ctx, ordering)
end

return P
