-- Scheduling rigid and malleable jobs together, after the performance-aware
-- function of Chadha, John & Gerndt ("Extending SLURM for Dynamic
-- Resource-Aware Adaptive Batch Scheduling", Algorithm 1). The victim orders
-- are parameters, so perf_aware.lua (by MTCT) and fpsma.lua (by start time)
-- share everything else.
--
-- One pass:
--  1. Start waiting jobs in priority order while they fit. The first one
--     that does not fit is the head; nothing behind it starts (FCFS).
--  2. The head waits: look at the running malleable jobs. Note whether any
--     of them adapts, and which have no performance data.
--  3. If none adapts: choose shrinks in the shrink order until the head's
--     missing nodes are covered, each job to the next lower allowed size
--     that covers what is still missing (or as low as it may go). Only when
--     the choice covers the need are the shrinks enacted and the head
--     started; a partial shrink would cost adaptations and start nothing.
--  4. If the shrinks could not cover the need, or nodes are still idle:
--     grow running malleable jobs in the expand order, each to the highest
--     allowed size the idle nodes permit.
--  5. When the ordering uses MTCT: ask for the data of the jobs from step 2
--     that have none, except those resized in this pass. Algorithm 1 asks in
--     step 2, before deciding; but an adaptation resets the MTCT, so a value
--     measured around it is thrown away (the engine also refuses a request
--     after a resize in the same pass). Asking last keeps the requests that
--     can be used.
--
-- Only jobs of kind "malleable" are resized: rigid and moldable jobs cannot
-- be, and an evolving job's size is its application's choice. While any
-- malleable job adapts, nothing is resized (step 3 waits for a consistent
-- picture), but step 1 still starts what fits.
--
-- Parameter (ctx.params) expand_when_idle, default true: also run step 4
-- when nothing waits (the queue is empty or all of it started) and nodes are
-- idle. Algorithm 1 nests the expansion under "the head cannot start", so
-- with an empty queue idle nodes would stay idle; expand_when_idle = false
-- follows it literally.
--
-- An ordering is a table:
--   shrink_first(a, b)  true when a is shrunk before b (a strict total order)
--   expand_first(a, b)  true when a grows before b
--   wants_mtct          ask for MTCT data of jobs that have none
local constraints = require("sched.constraints")
local moldable = require("lib.moldable")
local urgent = require("lib.urgent")

local M = {}

local sort = table.sort

-- Earlier start first, then lower id: a total order for tie-breaks.
function M.started_before(a, b)
  if a.start_time ~= b.start_time then
    return a.start_time < b.start_time
  end
  return a.id < b.id
end

-- Step 1, from position `first` (lib.urgent started those before). Returns
-- the head, or nil when every waiting job started.
local function start_in_priority_order(ctx, first)
  local pending = ctx.pending
  for i = first, #pending do
    local job = pending[i]
    local size = moldable.size(job, ctx.nodes_idle)
    if not size or not ctx:start(job, size) then
      return job
    end
  end
  return nil
end

-- Step 2. The RUNNING malleable jobs (not adapting, not still starting),
-- those of them without MTCT (in start order), and whether any malleable
-- job adapts.
local function survey(ctx)
  local steady, unmeasured, any_adapting = {}, {}, false
  for _, job in ipairs(ctx.running) do
    if job.kind == "malleable" then
      if job.adapting then
        any_adapting = true
      elseif job.state == "RUNNING" then  -- not a launch still unconfirmed
        steady[#steady + 1] = job
        if job.mtct == nil then
          unmeasured[#unmeasured + 1] = job
        end
      end
    end
  end
  return steady, unmeasured, any_adapting
end

-- Shrinks, in the given order, that free `need` nodes: a list of
-- {job, to}, and whether it frees enough.
local function plan_shrinks(victims, need)
  local plan, freed = {}, 0
  for _, job in ipairs(victims) do
    if freed >= need then
      break
    end
    local to = constraints.next_lower(job.node_constraint, job.min_nodes, job.max_nodes,
                                      job.size, need - freed)
    if to then
      plan[#plan + 1] = { job = job, to = to }
      freed = freed + job.size - to
    end
  end
  return plan, freed >= need
end

-- Step 3. Returns whether the head could be served; marks the jobs shrunk
-- for it in `resized` (they must not grow in the same pass).
local function shrink_for_head(ctx, head, steady, shrink_first, resized)
  sort(steady, shrink_first)
  local plan, covered = plan_shrinks(steady, moldable.least(head) - ctx.nodes_idle)
  if not covered then
    return false
  end
  for _, step in ipairs(plan) do
    ctx:shrink(step.job, step.to)
    resized[step.job] = true
  end
  -- Started on the nodes the shrinks free: it waits in STARTING until then.
  ctx:start(head, moldable.least(head))
  return true
end

-- Step 4. Each job in turn takes what the idle nodes allow.
local function expand_into_idle(ctx, steady, expand_first, resized)
  sort(steady, expand_first)
  for _, job in ipairs(steady) do
    local idle = ctx.nodes_idle
    if idle <= 0 then
      return
    end
    if not resized[job] then
      local to = constraints.highest(job.node_constraint, job.min_nodes, job.max_nodes,
                                     job.size + idle)
      if to and to > job.size and ctx:expand(job, to) then
        resized[job] = true
      end
    end
  end
end

-- Step 5: MTCT requests for the jobs that keep their size in this pass.
local function request_missing_mtct(ctx, unmeasured, resized)
  for _, job in ipairs(unmeasured) do
    if not resized[job] then
      ctx:request_perf(job)
    end
  end
end

-- Steps 3 and 4, once no malleable job adapts.
local function resize(ctx, head, steady, ordering, resized)
  local served = false
  if head ~= nil then
    served = shrink_for_head(ctx, head, steady, ordering.shrink_first, resized)
  end
  if not served or ctx.nodes_idle > 0 then
    expand_into_idle(ctx, steady, ordering.expand_first, resized)
  end
end

-- One pass of the policy with the given ordering.
function M.schedule(ctx, ordering)
  -- Urgent jobs first, suspended jobs resumed (lib/urgent.lua).
  local first = urgent.schedule(ctx)
  local head = start_in_priority_order(ctx, first)
  local expand_when_idle = ctx.params.expand_when_idle ~= false
  if head == nil and not (expand_when_idle and ctx.nodes_idle > 0) then
    return
  end
  local steady, unmeasured, any_adapting = survey(ctx)
  local resized = {}
  if not any_adapting and #steady > 0 then
    resize(ctx, head, steady, ordering, resized)
  end
  if ordering.wants_mtct then
    request_missing_mtct(ctx, unmeasured, resized)
  end
end

return M
