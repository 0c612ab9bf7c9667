-- EASY backfilling (Lifka; Mu'alem & Feitelson), shared by easy_backfill.lua
-- and elastic.lua.
--
-- Start jobs in priority order while they fit. When the head job does not
-- fit, reserve for it the earliest time at which enough nodes are free,
-- judged by the running jobs' estimated ends (est_end: start + walltime,
-- plus what adaptations added to the limit). Then start
-- later jobs that fit now and either end by that time, or use only nodes
-- the head will not need then (the "extra" nodes).
local moldable = require("lib.moldable")
local urgent = require("lib.urgent")

local M = {}

local huge = math.huge

-- What a pass that started nothing leaves for the next one (incremental
-- mode): when only submissions at the end of the queue came since
-- (ctx.appended), the old jobs would be refused again, for the same reasons,
-- so the next pass looks at the new ones only. nil: the next pass is whole.
local last

-- Phase 3 from position `from`: backfill behind the head without delaying
-- it. Returns what is left of idle and extra, and how many jobs it started
-- (added to `started` when given).
local function backfill(ctx, started, from, shadow, extra, idle, depth)
  local count = 0
  local now = ctx.now
  -- ctx:next_fit skips, in C++, the jobs that pass neither test below; it
  -- returns the job with its position (cheaper than reading pending[k]).
  local k, job = ctx:next_fit(from, idle, shadow, extra)
  while k and k <= depth do
    -- A moldable job takes the largest size that fits (lib/moldable.lua):
    -- all the idle nodes allow if it ends in time, the spare ones if not.
    -- A rigid one fits at its size (next_fit found it so), without a call.
    local size = job.nodes
    if job.kind == "moldable" then
      size = moldable.size(job, idle)
    end
    local walltime = job.walltime
    if size and walltime > 0 and now + walltime <= shadow then
      if ctx:start(job, size) then
        idle = idle - size
        count = count + 1
        if started then
          started[job] = true
        end
      end
    else
      size = size and moldable.size(job, extra < idle and extra or idle)
      if size and ctx:start(job, size) then
        idle = idle - size
        extra = extra - size
        count = count + 1
        if started then
          started[job] = true
        end
      end
    end
    if idle == 0 then
      break
    end
    k, job = ctx:next_fit(k + 1, idle, shadow, extra)
  end
  return idle, extra, count
end

-- The last pass's memo still stands for this one: nothing but appends since
-- (ctx.appended: the engine also checks that no running job's estimated end
-- has passed, which would move the reservation) and the same idle nodes.
local function memo_holds(ctx, memo)
  return memo and ctx.appended and ctx.nodes_idle == memo.idle
    and (memo.shadow or ctx.appended == 1)
end

-- The whole pass from position `first` (lib.urgent started those before);
-- returns its memo (see `last`), written into `memo`, and how many jobs it
-- started (added to `started` when given).
local function whole(ctx, started, depth, first, memo)
  local pending = ctx.pending
  local i = first

  -- Phase 1: first come, first served while jobs fit. (pending[i] is nil
  -- past the end: no #pending, a call, in the common pass whose head waits.)
  local head = pending[i]
  while head do
    -- lib/moldable.lua's size, without a call for a rigid job (the common
    -- kind; every pass asks it of the head).
    local size
    if head.kind ~= "moldable" then
      size = head.nodes <= ctx.nodes_idle and head.nodes or nil
    else
      size = moldable.size(head, ctx.nodes_idle)
    end
    if not size or not ctx:start(head, size) then
      break
    end
    if started then
      started[head] = true
    end
    i = i + 1
    head = pending[i]
  end
  if head == nil then
    memo.idle, memo.extra, memo.shadow = ctx.nodes_idle, nil, nil
    return memo, i - first
  end

  -- Phase 2: reserve for the head the earliest time enough nodes are free,
  -- by the running jobs' estimated ends (est_end includes what adaptations
  -- added to a job's limit) and the ends of the jobs phase 1 started; extra:
  -- the nodes free then beyond the head's.
  local least = head.kind == "moldable" and moldable.least(head) or head.nodes
  local shadow, extra = ctx:earliest_start(least)
  if shadow < huge then
    ctx:reserve(head, shadow)
  end

  -- Phase 3.
  local idle = ctx.nodes_idle
  local backfilled
  memo.idle, memo.extra, backfilled = backfill(ctx, started, i + 1, shadow, extra, idle, depth)
  memo.shadow = shadow
  return memo, i - first + backfilled
end

-- The table whole() writes its memo into, the same every pass (a pass
-- makes no table it can do without), unless `last` still holds it (a dry
-- pass keeps `last` for the next real one).
local memo_table = {}

-- The backfill depth: how many jobs from the front of the queue phase 3
-- may look at (Slurm's bf_max_job_test); unlimited unless given.
local function depth_of(opts)
  local depth = opts and opts.max_job_test
  if depth == nil then
    return huge
  end
  if math.type(depth) ~= "integer" or depth < 1 then
    error("max_job_test must be a positive integer, not " .. tostring(depth), 0)
  end
  return depth
end

-- One EASY pass over ctx.pending, after lib.urgent's (urgent jobs first,
-- suspended jobs resumed). A caller may have resized running jobs
-- earlier in the same pass: ctx:earliest_start judges them at the sizes the
-- pass left them at. `opts.incremental`: the caller's pass does nothing but
-- this, so a pass after one that started nothing may look at the new jobs
-- only (the same decisions as a whole pass; tests/policies check it).
-- `opts.max_job_test`: the backfill depth (depth_of).
-- `started` (optional): a set the jobs it starts are added to (job → true),
-- as lib.urgent's; without one, a pass makes no table for them.
function M.schedule(ctx, opts, started)
  local depth = opts and opts.max_job_test ~= nil and depth_of(opts) or huge
  local first, acted = urgent.schedule(ctx, started)
  -- What lib.urgent did is not in the memo: the pass is whole.
  local incremental = opts and opts.incremental and not ctx.dry and not acted
  local memo = incremental and last or nil
  if opts and opts.incremental and not ctx.dry then
    last = nil
  end
  local count, _
  if memo and memo_holds(ctx, memo) then
    if memo.shadow then
      _, _, count = backfill(ctx, started, ctx.appended, memo.shadow, memo.extra, memo.idle, depth)
    else
      _, count = whole(ctx, started, depth, 1, {})  -- the queue was empty: only new jobs in it
    end
  else
    memo, count = whole(ctx, started, depth, first, last == memo_table and {} or memo_table)
  end
  if incremental and count == 0 then
    last = memo
  end
end

return M
