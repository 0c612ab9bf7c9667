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

-- One EASY pass over ctx.pending. A caller may have resized running jobs
-- earlier in the same pass: ctx:earliest_start judges them at the sizes the
-- pass left them at. Returns the set of jobs it started (job table → true).
function M.schedule(ctx)
  local pending = ctx.pending
  local now = ctx.now
  local n = #pending
  local started = {}
  local i = 1

  -- Phase 1: first come, first served while jobs fit.
  while i <= n do
    local job = pending[i]
    if job.nodes > ctx.nodes_idle or not ctx:start(job) then
      break
    end
    started[job] = true
    i = i + 1
  end
  if i > n then
    return started
  end

  -- Phase 2: reserve for the head the earliest time enough nodes are free,
  -- by the running jobs' estimated ends (est_end includes what adaptations
  -- added to a job's limit) and the ends of the jobs phase 1 started; extra:
  -- the nodes free then beyond the head's.
  local head = pending[i]
  local shadow, extra = ctx:earliest_start(head.nodes)
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
