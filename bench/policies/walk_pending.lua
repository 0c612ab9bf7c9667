-- Benchmark baseline: read every waiting job's size and every running job's
-- estimated end, decide nothing. Its pass time over the jobs it visits is
-- the Lua host's cost per job visited.
local P = { name = "walk_pending", api = 1, time_dependent = false }

function P.schedule(ctx)
  local nodes = 0
  for _, job in ipairs(ctx.pending) do
    nodes = nodes + job.nodes
  end
  for _, job in ipairs(ctx.running) do
    nodes = nodes + (job.est_end or 0)
  end
  return nodes
end

return P
