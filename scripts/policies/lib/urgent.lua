-- Urgent jobs and suspended jobs, shared by the bundled policies (issue 17
-- item 3). A policy calls M.schedule(ctx, started) first in its pass. It
-- returns the position in ctx.pending of the first job it did not start
-- (the jobs it started are a prefix of the queue: urgent jobs come first),
-- where the policy's own walk begins, and whether it acted, so that a policy
-- that remembers its last pass (incremental EASY) knows the picture changed.
-- `started` (optional): a set the jobs it started are added to (job → true).
--
-- One call:
--  1. Urgent jobs come first in ctx.pending. Each urgent pending job, in
--     order, starts at once if it fits (at its smallest size for a moldable
--     job, lib.moldable). If it does not:
--     a. shrink running malleable jobs (not urgent, RUNNING, not adapting),
--        most nodes to give first, each to the next lower size its bounds
--        and constraint allow (sched.constraints.next_lower), until the
--        missing nodes are covered;
--     b. if that is not enough, also stop the lowest-priority running jobs
--        that are not urgent and were not shrunk (latest started first among
--        equals): suspended (ctx:suspend, the default) or requeued
--        (ctx:preempt "requeue") when ctx.params.urgent_preempt is
--        "requeue", until the rest is covered.
--     Nothing is done unless the plan covers the need: a partial plan would
--     stop jobs and start nothing. The urgent job is then started in the
--     same pass; on nodes a shrink frees it waits in STARTING until the
--     shrink completes (the adaptation protocol), on nodes a suspension
--     frees it launches at once. An urgent job that cannot be served even
--     so waits, and so do the urgent jobs behind it.
--  2. Suspended jobs resume, highest priority first, on their own nodes as
--     soon as all of them are idle (the engine refuses a resume otherwise):
--     before the policy's own starts can take those nodes.
--
-- In an invasive partition (issue 20 item 2: the urgent job asks for
-- job.cores) the same is done by cores: the missing cores are the job's
-- minus the partition's free ones (ctx:free_cores()); malleable jobs shrink
-- towards their min_cores, most cores to give first, then jobs are stopped
-- for the rest. Cores a suspension frees serve the urgent job in the same
-- pass; cores a shrink frees come once the application has let them go (the
-- adaptation), those of a requeued job once it has ended, so the urgent job
-- starts in the pass after that, and nothing more is shrunk or stopped
-- while a job of the partition adapts or ends.
--
-- Parameter (ctx.params) urgent_preempt: "suspend" (default) or "requeue".
local constraints = require("sched.constraints")
local moldable = require("lib.moldable")

local M = {}

local sort = table.sort

-- Lowest priority first; among equals the latest started (it loses least).
local function victim_first(a, b)
  if a.priority ~= b.priority then
    return a.priority < b.priority
  end
  if a.start_time ~= b.start_time then
    return a.start_time > b.start_time
  end
  return a.id > b.id
end

-- Shrinks of malleable jobs towards `need` nodes: a list of {job, to} and
-- the nodes they free.
local function plan_shrinks(running, need)
  local candidates = {}
  for _, job in ipairs(running) do
    if job.kind == "malleable" and not job.urgent and job.state == "RUNNING" then
      candidates[#candidates + 1] = job
    end
  end
  -- The jobs with the most to give first: fewer adaptations.
  sort(candidates, function(a, b)
    local x, y = a.size - a.min_nodes, b.size - b.min_nodes
    if x ~= y then
      return x > y
    end
    return victim_first(a, b)
  end)
  local plan, freed = {}, 0
  for _, job in ipairs(candidates) do
    if freed >= need then
      break
    end
    local to = constraints.next_lower(job.node_constraint, job.min_nodes, job.max_nodes,
                                      job.size, need - freed)
    if to and to < job.size then
      plan[#plan + 1] = { job = job, to = to }
      freed = freed + job.size - to
    end
  end
  return plan, freed
end

-- Jobs to stop for the `need` nodes the shrinks leave missing.
local function plan_stops(running, shrunk, need)
  local candidates = {}
  for _, job in ipairs(running) do
    if not job.urgent and job.state == "RUNNING" and not shrunk[job.id] then
      candidates[#candidates + 1] = job
    end
  end
  sort(candidates, victim_first)
  local plan, freed = {}, 0
  for _, job in ipairs(candidates) do
    if freed >= need then
      break
    end
    plan[#plan + 1] = job
    freed = freed + job.size
  end
  return plan, freed
end

-- Frees `need` (nodes or cores, as the planners count) by shrinking first
-- and stopping (suspend, or requeue) for the rest, and carries it out;
-- false, with nothing done, when even both cannot free enough.
local function free_by(ctx, need, mode, plan_shrinks_of, plan_stops_of)
  local running = ctx.running
  local shrinks, freed = plan_shrinks_of(running, need)
  local shrunk = {}
  for _, step in ipairs(shrinks) do
    shrunk[step.job.id] = true
  end
  local stops = {}
  if freed < need then
    local stopped
    stops, stopped = plan_stops_of(running, shrunk, need - freed)
    if freed + stopped < need then
      return false
    end
  end
  for _, step in ipairs(shrinks) do
    ctx:shrink(step.job, step.to)
  end
  for _, victim in ipairs(stops) do
    if mode == "requeue" then
      ctx:preempt(victim, "requeue")
    else
      ctx:suspend(victim)
    end
  end
  return true
end

-- Serves one urgent job that does not fit; whether it started.
local function make_room(ctx, job, mode)
  local least = moldable.least(job)
  if not free_by(ctx, least - ctx.nodes_idle, mode, plan_shrinks, plan_stops) then
    return false
  end
  return (ctx:start(job, moldable.size(job, ctx.nodes_idle) or least))
end

-- ---- by cores, in an invasive partition

local function free_cores(ctx)
  local free = 0
  for _, node in pairs(ctx:free_cores()) do
    free = free + node.free
  end
  return free
end

local function plan_core_shrinks(running, need)
  local candidates = {}
  for _, job in ipairs(running) do
    if job.kind == "malleable" and not job.urgent and job.state == "RUNNING" and job.core_count
        and job.core_count > job.min_cores then
      candidates[#candidates + 1] = job
    end
  end
  sort(candidates, function(a, b)
    local x, y = a.core_count - a.min_cores, b.core_count - b.min_cores
    if x ~= y then
      return x > y
    end
    return victim_first(a, b)
  end)
  local plan, freed = {}, 0
  for _, job in ipairs(candidates) do
    if freed >= need then
      break
    end
    local to = math.max(job.min_cores, job.core_count - (need - freed))
    plan[#plan + 1] = { job = job, to = to }
    freed = freed + job.core_count - to
  end
  return plan, freed
end

local function plan_core_stops(running, shrunk, need)
  local candidates = {}
  for _, job in ipairs(running) do
    if not job.urgent and job.state == "RUNNING" and not shrunk[job.id] and job.core_count then
      candidates[#candidates + 1] = job
    end
  end
  sort(candidates, victim_first)
  local plan, freed = {}, 0
  for _, job in ipairs(candidates) do
    if freed >= need then
      break
    end
    plan[#plan + 1] = job
    freed = freed + job.core_count
  end
  return plan, freed
end

-- Serves one urgent job of an invasive partition that does not fit; whether
-- it started (in this pass).
local function make_room_cores(ctx, job, mode)
  for _, other in ipairs(ctx.running) do
    if other.adapting or other.state == "COMPLETING" then
      return false  -- a shrink or a stop under way may be giving back what it needs
    end
  end
  if not free_by(ctx, job.cores - free_cores(ctx), mode, plan_core_shrinks, plan_core_stops) then
    return false
  end
  return (ctx:start(job))
end

-- Step 1; the position of the first pending job it did not start.
local function serve_urgent(ctx, mode, started)
  local i = 1
  while true do
    local job = ctx.pending[i]
    if job == nil or not job.urgent then
      return i
    end
    local size = moldable.size(job, ctx.nodes_idle)
    local room = job.cores and make_room_cores or make_room
    if not (size and ctx:start(job, size)) and not room(ctx, job, mode) then
      return i  -- it waits, and the urgent jobs behind it too
    end
    if started then
      started[job] = true
    end
    i = i + 1
  end
end

-- Step 2, when a job is suspended; whether it acted.
local function resume_suspended(ctx)
  local acted = false
  for _, job in ipairs(ctx.suspended) do
    if ctx:resume(job) then
      acted = true
    end
  end
  return acted
end

function M.schedule(ctx, started)
  local mode = ctx.params.urgent_preempt or "suspend"
  if mode ~= "suspend" and mode ~= "requeue" then
    error("urgent_preempt must be \"suspend\" or \"requeue\", not " .. tostring(mode), 0)
  end
  -- Seldom an urgent job heads the queue: no call then.
  local head = ctx.pending[1]
  local first = head and head.urgent and serve_urgent(ctx, mode, started) or 1
  -- Seldom a job is suspended: no call, nor ctx.suspended (a table), then.
  local resumed = ctx.suspended_count > 0 and resume_suspended(ctx)
  return first, first > 1 or resumed
end

return M
