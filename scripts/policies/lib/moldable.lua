-- The size a pending job starts at, shared by the bundled policies.
--
-- A moldable job (`-N 2-4`) may start at any size its constraint allows
-- within [min_nodes, max_nodes], and keeps it. With no speedup model to say
-- which size ends first, it starts at the largest size that fits now, as
-- soon as its smallest size fits: waiting for more nodes would trade a start
-- now for a guess. Its time limit does not depend on the size (it is not
-- resizable: the engine stretches only malleable and evolving jobs' limits).
-- Every other kind starts at its requested size.
local constraints = require("sched.constraints")

local M = {}

-- The nodes `job` starts on when `free` nodes are free; nil when it does
-- not fit.
function M.size(job, free)
  if job.kind ~= "moldable" then
    if job.nodes <= free then
      return job.nodes
    end
    return nil
  end
  return constraints.highest(job.node_constraint, job.min_nodes, job.max_nodes, free)
end

-- The fewest nodes `job` can start on: what a reservation for it waits for.
function M.least(job)
  if job.kind ~= "moldable" then
    return job.nodes
  end
  return constraints.lowest(job.node_constraint, job.min_nodes, job.max_nodes, job.min_nodes)
    or job.nodes
end

-- Its possible sizes, largest first. Each call makes a table: callers in
-- a loop over the queue ask only for moldable jobs.
function M.sizes(job)
  if job.kind ~= "moldable" then
    return { job.nodes }
  end
  local ascending = constraints.allowed(job.node_constraint, job.min_nodes, job.max_nodes)
  local out = {}
  for i = #ascending, 1, -1 do
    out[#out + 1] = ascending[i]
  end
  return out
end

return M
