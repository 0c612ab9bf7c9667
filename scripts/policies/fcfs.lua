-- First come, first served: start waiting jobs in priority order while they
-- fit; the first job that does not fit blocks everything behind it.
local P = { name = "fcfs", api = 1 }

-- Decisions depend only on the queue and the idle nodes, never on the clock:
-- a tick that changed nothing cannot change them (the engine skips it).
P.time_dependent = false

function P.schedule(ctx)
  for _, job in ipairs(ctx.pending) do
    if job.nodes > ctx.nodes_idle or not ctx:start(job) then
      return
    end
  end
end

return P
