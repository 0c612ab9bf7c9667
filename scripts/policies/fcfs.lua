-- First come, first served: start waiting jobs in priority order while they
-- fit; the first job that does not fit blocks everything behind it.
local moldable = require("lib.moldable")

local P = { name = "fcfs", api = 1 }

-- Decisions depend only on the queue and the idle nodes, never on the clock:
-- a tick that changed nothing cannot change them (the engine skips it).
P.time_dependent = false

function P.schedule(ctx)
  for _, job in ipairs(ctx.pending) do
    -- A moldable job starts at the largest size that fits (lib/moldable.lua).
    local size = moldable.size(job, ctx.nodes_idle)
    if not size or not ctx:start(job, size) then
      return
    end
  end
end

return P
