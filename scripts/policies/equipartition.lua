-- Equipartition for malleable jobs: start waiting jobs first come, first
-- served; when the head does not fit, take nodes from the running malleable
-- jobs that hold the most above their minimum, one allowed step at a time
-- (lowering the highest "water level" first), but only if the head then
-- fits. Whatever stays idle is shared equally among the running malleable
-- jobs: each grows by the same number of nodes, the smallest jobs get the
-- remainder, within their bounds and node constraints; what a job cannot
-- take goes on to the others. Rigid, moldable and evolving jobs are never
-- resized (evolving jobs' requests are not this policy's business);
-- only RUNNING jobs are resized (not while adapting, nor while starting).
local constraints = require("sched.constraints")

local P = { name = "equipartition", api = 1 }

-- Every decision follows from sizes, bounds and the queue order, never from
-- the clock: a tick that changed nothing cannot change anything.
P.time_dependent = false

local sort = table.sort

local function by_start(a, b)
  if a.start_time ~= b.start_time then
    return a.start_time < b.start_time
  end
  return a.id < b.id
end

-- Running malleable jobs the pass may resize, and the sizes it plans for
-- them (job tables keep the sizes of the pass's start). ctx.running also
-- lists jobs still adapting or starting: those cannot be resized.
local function resizable(ctx)
  local jobs, sizes = {}, {}
  for _, job in ipairs(ctx.running) do
    if job.kind == "malleable" and job.state == "RUNNING" then
      jobs[#jobs + 1] = job
      sizes[job] = job.size
    end
  end
  return jobs, sizes
end

local function copy(sizes)
  local out = {}
  for job, size in pairs(sizes) do
    out[job] = size
  end
  return out
end

-- The next allowed size below `size`, or nil at the bottom.
local function step_down(job, size)
  return constraints.highest(job.node_constraint, job.min_nodes, job.max_nodes, size - 1)
end

-- The job highest above its minimum that can still step down (ties: the
-- larger job, then the one started first).
local function highest_water(jobs, sizes)
  local best, best_excess
  for _, job in ipairs(jobs) do
    local size = sizes[job]
    local excess = size - job.min_nodes
    if step_down(job, size) then
      local better = not best or excess > best_excess
          or (excess == best_excess and (size > sizes[best]
              or (size == sizes[best] and by_start(job, best))))
      if better then
        best, best_excess = job, excess
      end
    end
  end
  return best
end

-- Plans shrinks that free `need` nodes; the planned sizes, or nil when the
-- malleable jobs cannot give that many.
local function plan_shrinks(jobs, sizes, need)
  local planned = copy(sizes)
  local freed = 0
  while freed < need do
    local job = highest_water(jobs, planned)
    if not job then
      return nil
    end
    local to = step_down(job, planned[job])
    freed = freed + planned[job] - to
    planned[job] = to
  end
  return planned
end

-- Shrinks every job to its planned size; remembers which ones shrank.
local function enact_shrinks(ctx, jobs, sizes, planned, shrunk)
  for _, job in ipairs(jobs) do
    if planned[job] < sizes[job] and ctx:shrink(job, planned[job]) then
      sizes[job] = planned[job]
      shrunk[job] = true
    end
  end
end

local function start_pending(ctx, jobs, sizes, shrunk)
  for _, job in ipairs(ctx.pending) do
    local need = job.nodes - ctx.nodes_idle
    if need > 0 then
      local planned = plan_shrinks(jobs, sizes, need)
      if not planned then
        return  -- first come, first served: nothing passes the head
      end
      enact_shrinks(ctx, jobs, sizes, planned, shrunk)
    end
    if not ctx:start(job) then
      return
    end
  end
end

-- The jobs that can still grow: not shrunk in this pass (that would mix
-- the directions) and below their highest allowed size.
local function growable(jobs, sizes, shrunk)
  local list = {}
  for _, job in ipairs(jobs) do
    local top = constraints.highest(job.node_constraint, job.min_nodes, job.max_nodes,
                                    job.max_nodes)
    if not shrunk[job] and top and top > sizes[job] then
      list[#list + 1] = job
    end
  end
  return list
end

local function smallest_first(sizes)
  return function(a, b)
    if sizes[a] ~= sizes[b] then
      return sizes[a] < sizes[b]
    end
    return by_start(a, b)
  end
end

-- One round of equal shares of `idle` nodes, smallest jobs first (they get
-- the remainder); returns the nodes it gave. What a job cannot take (its
-- maximum, its constraint) passes on to the next job.
local function share_round(jobs, planned, idle)
  sort(jobs, smallest_first(planned))
  local each, rest = idle // #jobs, idle % #jobs
  local given, carry = 0, 0
  for i, job in ipairs(jobs) do
    local offer = each + (i <= rest and 1 or 0) + carry
    local size = planned[job]
    local to = constraints.highest(job.node_constraint, job.min_nodes, job.max_nodes, size + offer)
    local taken = 0
    if to and to > size then
      planned[job] = to
      taken = to - size
    end
    given = given + taken
    carry = offer - taken
  end
  return given
end

-- Shares the idle nodes in rounds: what a job cannot take (its maximum, its
-- constraint) goes round again to the others, until nothing more fits.
local function share_idle(ctx, jobs, sizes, shrunk)
  local planned = copy(sizes)
  local idle = ctx.nodes_idle
  while idle > 0 do
    local list = growable(jobs, planned, shrunk)
    if #list == 0 then
      break
    end
    local given = share_round(list, planned, idle)
    if given == 0 then
      break
    end
    idle = idle - given
  end
  for _, job in ipairs(jobs) do
    if planned[job] > sizes[job] then
      ctx:expand(job, planned[job])
    end
  end
end

function P.schedule(ctx)
  local jobs, sizes = resizable(ctx)
  local shrunk = {}
  start_pending(ctx, jobs, sizes, shrunk)
  share_idle(ctx, jobs, sizes, shrunk)
end

return P
