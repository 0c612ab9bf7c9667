-- Benchmark baseline: start the head of the queue when it fits, nothing
-- else. Measures what a pass costs in the Lua host itself.
local P = { name = "head_only", api = 1, time_dependent = false }

function P.schedule(ctx)
  local head = ctx.pending[1]
  if head and head.nodes <= ctx.nodes_idle then
    ctx:start(head)
  end
end

return P
