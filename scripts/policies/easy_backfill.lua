-- EASY backfilling (Lifka; Mu'alem & Feitelson).
--
-- Start jobs in priority order while they fit. When the head job does not
-- fit, reserve for it the earliest time at which enough nodes are free,
-- judged by the running jobs' estimated ends (start + walltime). Then start
-- later jobs that fit now and either end by that time, or use only nodes
-- the head will not need then (the "extra" nodes).
local P = { name = "easy_backfill", api = 1 }

-- Every input of a decision is engine state or an estimated end, which is
-- absolute; an unchanged state later can only make backfilling harder, so a
-- tick that changed nothing changes nothing.
P.time_dependent = false

local huge = math.huge
local max = math.max
local sort = table.sort

local function estimated_end(now, start, walltime)
  if walltime <= 0 then
    return huge  -- no walltime: it holds its nodes for as long as we know
  end
  return max(start + walltime, now)
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

function P.schedule(ctx)
  local pending = ctx.pending
  local now = ctx.now
  local n = #pending
  local times, freed = {}, {}  -- nodes held by jobs, by estimated end
  local i = 1

  -- Phase 1: first come, first served while jobs fit.
  while i <= n do
    local job = pending[i]
    if job.nodes > ctx.nodes_idle or not ctx:start(job) then
      break
    end
    add_end(times, freed, estimated_end(now, now, job.walltime), job.nodes)
    i = i + 1
  end
  if i > n then
    return
  end

  -- Phase 2: reserve for the head.
  local head = pending[i]
  for _, job in ipairs(ctx.running) do
    add_end(times, freed, estimated_end(now, job.start_time, job.walltime), job.size)
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
        if ctx:start(job) then idle = idle - size end
      elseif size <= extra and ctx:start(job) then
        idle = idle - size
        extra = extra - size
      end
    end
  end
end

return P
