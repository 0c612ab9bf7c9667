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

-- When `need` nodes will be free, and how many spare nodes there are then.
-- `ends` lists {t = estimated end, n = nodes} of every job holding nodes.
local function shadow_time(ctx, ends, need)
  local free = ctx.nodes_idle
  if free >= need then
    return ctx.now, free - need
  end
  table.sort(ends, function(a, b) return a.t < b.t end)
  for _, e in ipairs(ends) do
    free = free + e.n
    if free >= need then
      return e.t, free - need
    end
  end
  return huge, 0  -- never, on the nodes there are now
end

local function estimated_end(now, start, walltime)
  if walltime == nil or walltime <= 0 then
    return huge
  end
  return math.max(start + walltime, now)
end

function P.schedule(ctx)
  local pending = ctx.pending
  local now = ctx.now
  local started = {}  -- jobs started in this pass: they hold nodes too
  local i, n = 1, #pending

  -- Phase 1: first come, first served while jobs fit.
  while i <= n do
    local job = pending[i]
    if job.nodes > ctx.nodes_idle or not ctx:start(job) then
      break
    end
    started[#started + 1] = { t = estimated_end(now, now, job.walltime), n = job.nodes }
    i = i + 1
  end
  if i > n then
    return
  end

  -- Phase 2: reserve for the head.
  local head = pending[i]
  local ends = started
  for _, job in ipairs(ctx.running) do
    ends[#ends + 1] = { t = estimated_end(now, job.start_time, job.walltime), n = job.size }
  end
  local shadow, extra = shadow_time(ctx, ends, head.nodes)
  if shadow < huge then
    ctx:reserve(head, shadow)
  end

  -- Phase 3: backfill behind the head without delaying it.
  for k = i + 1, n do
    local idle = ctx.nodes_idle
    if idle == 0 then
      break
    end
    local job = pending[k]
    local size = job.nodes
    if size <= idle then
      local ends_in_time = now + job.walltime <= shadow and job.walltime > 0
      if ends_in_time then
        ctx:start(job)
      elseif size <= extra and ctx:start(job) then
        extra = extra - size
      end
    end
  end
end

return P
