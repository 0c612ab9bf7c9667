-- EASY backfilling (Lifka; Mu'alem & Feitelson), shared by easy_backfill.lua
-- and elastic.lua.
--
-- Start jobs in priority order while they fit. When the head job does not
-- fit, reserve for it the earliest time at which enough nodes are free,
-- judged by the running jobs' estimated ends (est_end: start + walltime,
-- plus what adaptations added to the limit). Then start
-- later jobs that fit now and either end by that time, or use only nodes
-- the head will not need then (the "extra" nodes).
local M = {}

local huge = math.huge
local max = math.max
local sort = table.sort

-- A job started now: no walltime means it holds its nodes for as long as
-- we know.
local function end_if_started_now(now, walltime)
  if walltime <= 0 then
    return huge
  end
  return now + walltime
end

-- The nodes that free up at each estimated end: a list of distinct times
-- and the node count freed at each (plain numbers: cheap to sort).
local function add_end(times, freed, t, n)
  local f = freed[t]
  if f then
    freed[t] = f + n
  else
    times[#times + 1] = t
    freed[t] = n
  end
end

-- When `need` nodes will be free, and how many spare nodes there are then.
local function shadow_time(idle, times, freed, need)
  sort(times)
  local free = idle
  for _, t in ipairs(times) do
    free = free + freed[t]
    if free >= need then
      return t, free - need
    end
  end
  return huge, 0  -- never, on the nodes there are now
end

local function current_size(job)
  return job.size
end

-- One EASY pass over ctx.pending. `size_of(job)` gives the nodes a running
-- job holds; a caller that resized jobs earlier in the same pass passes the
-- sizes it left them at (the job tables still show the sizes at pass start).
-- Returns the set of jobs it started (job table → true).
function M.schedule(ctx, size_of)
  size_of = size_of or current_size
  local pending = ctx.pending
  local now = ctx.now
  local n = #pending
  local times, freed = {}, {}  -- nodes held by jobs, by estimated end
  local started = {}
  local i = 1

  -- Phase 1: first come, first served while jobs fit.
  while i <= n do
    local job = pending[i]
    if job.nodes > ctx.nodes_idle or not ctx:start(job) then
      break
    end
    started[job] = true
    add_end(times, freed, end_if_started_now(now, job.walltime), job.nodes)
    i = i + 1
  end
  if i > n then
    return started
  end

  -- Phase 2: reserve for the head.
  local head = pending[i]
  for _, job in ipairs(ctx.running) do
    -- est_end includes what adaptations added to the job's limit.
    local e = job.est_end
    add_end(times, freed, e and max(e, now) or huge, size_of(job))
  end
  local shadow, extra = shadow_time(ctx.nodes_idle, times, freed, head.nodes)
  if shadow < huge then
    ctx:reserve(head, shadow)
  end

  -- Phase 3: backfill behind the head without delaying it.
  local idle = ctx.nodes_idle
  for k = i + 1, n do
    if idle == 0 then
      break
    end
    local job = pending[k]
    local size = job.nodes
    if size <= idle then
      local walltime = job.walltime
      if walltime > 0 and now + walltime <= shadow then
        if ctx:start(job) then
          idle = idle - size
          started[job] = true
        end
      elseif size <= extra and ctx:start(job) then
        idle = idle - size
        extra = extra - size
        started[job] = true
      end
    end
  end
  return started
end

return M
