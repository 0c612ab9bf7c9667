-- First come, first served: start waiting jobs in priority order while they
-- fit; the first job that does not fit blocks everything behind it.
-- Self-contained (no lib/ module), so that it can be copied anywhere as the
-- start of a site's own policy.
local constraints = require("sched.constraints")

local P = { name = "fcfs", api = 1 }

-- Decisions depend only on the queue and the idle nodes, never on the clock:
-- a tick that changed nothing cannot change them (the engine skips it).
P.time_dependent = false

-- It starts jobs on idle nodes only: with no node idle and only new
-- submissions since its last pass, nothing can start (the engine skips it).
P.idle_nodes_only = true

-- The nodes a job starts on when `free` are idle, or nil: a moldable job
-- takes the largest size its constraint allows (the rule of lib/moldable.lua).
local function size_now(job, free)
  if job.kind == "moldable" then
    return constraints.highest(job.node_constraint, job.min_nodes, job.max_nodes, free)
  end
  return job.nodes <= free and job.nodes or nil
end

function P.schedule(ctx)
  for _, job in ipairs(ctx.pending) do
    local size = size_now(job, ctx.nodes_idle)
    if not size or not ctx:start(job, size) then
      return
    end
  end
end

return P
