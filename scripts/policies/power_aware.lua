-- Power-corridor scheduling of malleable jobs (Chadha, John & Gerndt,
-- Algorithm 2 with Equation 1). The power supplier gives a corridor
-- [lower, upper] watts (ctx.power); each pass:
--
--  1. While any malleable job adapts, do nothing: decide on a settled picture.
--  2. If the cluster's power is outside the corridor and malleable jobs run,
--     look for a new distribution of nodes with the integer program of
--     Equation 1 (sched.lp): sizes k_i of the running malleable jobs within
--     their bounds and allowed sizes, the size m_j of a waiting job j, and
--     idle nodes k_idle, such that
--         lower ≤ Σ k_i·pmin_i + m_j·pmin_j + k_idle·P_idle + P_other
--         upper ≥ Σ k_i·pmax_i + m_j·pmax_j + k_idle·P_idle + P_other
--         Σ k_i + m_j + k_idle = the nodes those jobs hold plus the idle ones
--     minimising k_idle·P_idle (the fewest idle nodes). The waiting job's
--     size m_j is its requested size, fixed, as in Equation 1 (the paper
--     defines m_j as "the nodes required by the job"); params.size = "free"
--     lets the program choose it within the job's bounds instead (beyond
--     the paper: the objective then often starts a job on 1 node of the
--     many it asked for, since only idle nodes count). P_other is the
--     power of the nodes the program does not control (jobs that are not
--     malleable, or still starting). Waiting jobs are tried one at a time in
--     priority order, then in pairs; the first feasible distribution is
--     enacted: shrinks, then expansions, then the start. With
--     params.waiting = false only the running jobs are redistributed (the
--     paper's scenario 2).
--     When none exists the paper changes nothing; with params.best_effort
--     the running jobs' distribution closest to the corridor is enacted
--     instead (when it is closer than now by more than one idle node).
--  3. Otherwise (or when no distribution exists), start waiting jobs in
--     priority order while their nodes are idle and the power they would
--     add keeps the cluster under the upper bound.
--
-- A job's per-node power is its measured power_w when there is one, else
-- its power_min_w/power_max_w estimates (a missing one takes the other's
-- value; neither: the idle power).
--
-- Parameters: waiting (default true), max_waiting (how many waiting jobs,
-- from the head, the program may consider; default 8, so at most 8 + 28
-- programs per pass), time_limit_ms (per program; default 100),
-- best_effort (default false), size ("request", the default and Equation 1,
-- or "free"), prefer_start (default false, the paper's objective: with true,
-- among the distributions with the fewest idle nodes the program prefers
-- the one that gives the starting job(s) the most nodes; this matters with
-- size = "free" only, since a requested size is fixed).
local constraints = require("sched.constraints")
local lp = require("sched.lp")

local P = { name = "power_aware", api = 1 }

-- Every tick, as Algorithm 2 runs periodically: measured power changes
-- between events, and a job started in one pass can be resized only in a
-- later one, once it runs.
P.time_dependent = true

local function per_node_watts(job, idle_w)
  if job.power_w then
    return job.power_w, job.power_w
  end
  local lo, hi = job.power_min_w, job.power_max_w
  if lo <= 0 and hi <= 0 then
    return idle_w, idle_w
  end
  if lo <= 0 then
    lo = hi
  end
  if hi <= 0 then
    hi = lo
  end
  return lo, hi
end

local function corridor_broken(power)
  if power.lower <= 0 and power.upper <= 0 then
    return false
  end
  return power.current_w < power.lower or power.current_w > power.upper
end

-- ---------------------------------------------------------------- Equation 1

-- The program under construction: variables, the three sums (nodes, least
-- power, most power) as coefficient tables, and extra rows.
local function new_program(idle_w, idle_max)
  return {
    vars = { { name = "idle", lo = 0, hi = idle_max, int = true } },
    nodes = { idle = 1 },
    pmin = { idle = idle_w },
    pmax = { idle = idle_w },
    rows = {},
    sizes = {},  -- job → list of {var, size multiplier}
  }
end

-- Adds a job whose size the program chooses among its allowed sizes: one
-- integer variable when every size in the range is allowed, else one binary
-- variable per allowed size with exactly one chosen.
-- With `fixed`, the job's size is its request (job.nodes): one variable
-- held there.
local function add_job(prog, key, job, pmin, pmax, fixed)
  local c = job.node_constraint
  local choices = {}
  if fixed then
    prog.vars[#prog.vars + 1] = { name = key, lo = job.nodes, hi = job.nodes, int = true }
    choices[1] = { var = key, mult = 1 }
  elseif c == "none" then
    prog.vars[#prog.vars + 1] = { name = key, lo = job.min_nodes, hi = job.max_nodes, int = true }
    choices[1] = { var = key, mult = 1 }
  else
    local pick = {}
    for _, size in ipairs(constraints.allowed(c, job.min_nodes, job.max_nodes)) do
      local var = key .. "_" .. size
      prog.vars[#prog.vars + 1] = { name = var, lo = 0, hi = 1, int = true }
      choices[#choices + 1] = { var = var, mult = size }
      pick[var] = 1
    end
    if #choices == 0 then
      return false
    end
    prog.rows[#prog.rows + 1] = { coef = pick, eq = 1 }
  end
  for _, choice in ipairs(choices) do
    prog.nodes[choice.var] = choice.mult
    prog.pmin[choice.var] = choice.mult * pmin
    prog.pmax[choice.var] = choice.mult * pmax
  end
  prog.sizes[job] = choices
  return true
end

-- Solves the program for the running malleable jobs `movable` plus the
-- waiting jobs `extra`. Returns job → size, or nil when infeasible. With
-- `soft`, the corridor's bounds may be missed: the shortfall below lower and
-- the excess over upper are variables, minimised before the idle nodes, so
-- the program always has a solution (the distribution closest to the
-- corridor); the second result is that distance in watts.
-- `options`: { fixed = the waiting jobs keep their requested sizes,
-- prefer_start = weigh the waiting jobs' nodes in the objective }.
local function solve(ctx, movable, extra, other_w, free, time_limit_ms, soft, options)
  options = options or {}
  local power = ctx.power
  local idle_w = power.idle_w_per_node
  local controlled = free
  for _, job in ipairs(movable) do
    controlled = controlled + job.size
  end
  local prog = new_program(idle_w, math.min(controlled, ctx.nodes_total - 1))
  for i, job in ipairs(movable) do
    local lo, hi = per_node_watts(job, idle_w)
    if not add_job(prog, "k" .. i, job, lo, hi) then
      return nil
    end
  end
  for i, job in ipairs(extra) do
    local lo, hi = per_node_watts(job, idle_w)
    if not add_job(prog, "m" .. i, job, lo, hi, options.fixed) then
      return nil
    end
  end
  local rows = prog.rows
  local objective = { idle = idle_w }
  if options.prefer_start and #extra > 0 then
    -- Each node of a starting job weighs less than 1/(controlled + 1) of an
    -- idle node: the fewest idle nodes still come first, then the most
    -- nodes for the jobs that start.
    local reward = -idle_w / (controlled + 1)
    for i = 1, #extra do
      for _, choice in ipairs(prog.sizes[extra[i]]) do
        objective[choice.var] = reward * choice.mult
      end
    end
  end
  if soft then
    -- A watt outside the corridor weighs more than every idle node.
    local weight = idle_w * (controlled + 1)
    prog.vars[#prog.vars + 1] = { name = "short", lo = 0 }
    prog.vars[#prog.vars + 1] = { name = "excess", lo = 0 }
    prog.pmin.short = 1
    prog.pmax.excess = -1
    objective.short = weight
    objective.excess = weight
  end
  rows[#rows + 1] = { coef = prog.nodes, eq = controlled }
  rows[#rows + 1] = { coef = prog.pmin, lo = power.lower - other_w }
  rows[#rows + 1] = { coef = prog.pmax, hi = power.upper - other_w }
  local result = lp.solve{
    sense = "min",
    vars = prog.vars,
    objective = objective,
    constraints = rows,
    time_limit_ms = time_limit_ms,
  }
  if result.status ~= "optimal" and result.status ~= "feasible" then
    return nil
  end
  local sizes = {}
  for job, choices in pairs(prog.sizes) do
    local n = 0
    for _, choice in ipairs(choices) do
      n = n + math.floor(result.values[choice.var] + 0.5) * choice.mult
    end
    sizes[job] = n
  end
  if soft then
    return sizes, result.values.short + result.values.excess
  end
  return sizes
end

-- Shrinks first (their nodes count as idle at once), then expansions, then
-- the starts.
local function enact(ctx, movable, extra, sizes)
  for _, job in ipairs(movable) do
    if sizes[job] < job.size then
      ctx:shrink(job, sizes[job])
    end
  end
  for _, job in ipairs(movable) do
    if sizes[job] > job.size then
      ctx:expand(job, sizes[job])
    end
  end
  for _, job in ipairs(extra) do
    ctx:start(job, sizes[job])
  end
end

-- The running malleable jobs the program may resize, and the power of the
-- nodes it does not control. Returns nil when a malleable job adapts.
local function survey(ctx)
  local idle_w = ctx.power.idle_w_per_node
  local movable = {}
  local movable_w = 0
  for _, job in ipairs(ctx.running) do
    if job.kind == "malleable" then
      if job.adapting then
        return nil
      end
      if job.state == "RUNNING" then
        movable[#movable + 1] = job
        local lo, hi = per_node_watts(job, idle_w)
        movable_w = movable_w + job.size * (lo + hi) / 2
      end
    end
  end
  local other_w = ctx.power.current_w - movable_w - ctx.nodes_idle * idle_w
  return movable, math.max(other_w, 0)
end

-- params.size: "request" (Equation 1) or "free"; anything else fails the
-- pass with a message naming the choices.
local function sizing(params)
  local size = params.size
  if size == nil or size == "request" then
    return true
  end
  if size == "free" then
    return false
  end
  error('size must be "request" or "free", not ' .. tostring(size), 0)
end

local function redistribute(ctx, movable, other_w)
  local params = ctx.params
  local limit = params.time_limit_ms or 100
  local free = ctx.nodes_idle
  local options = { fixed = sizing(params), prefer_start = params.prefer_start == true }
  if params.waiting ~= false then
    local candidates = {}
    local max_waiting = params.max_waiting or 8
    for i, job in ipairs(ctx.pending) do
      if i > max_waiting then
        break
      end
      candidates[#candidates + 1] = job
    end
    for _, job in ipairs(candidates) do
      local sizes = solve(ctx, movable, { job }, other_w, free, limit, false, options)
      if sizes then
        enact(ctx, movable, { job }, sizes)
        return true
      end
    end
    for a = 1, #candidates do
      for b = a + 1, #candidates do
        local pair = { candidates[a], candidates[b] }
        local sizes = solve(ctx, movable, pair, other_w, free, limit, false, options)
        if sizes then
          enact(ctx, movable, pair, sizes)
          return true
        end
      end
    end
  end
  local sizes = solve(ctx, movable, {}, other_w, free, limit)
  if sizes then
    enact(ctx, movable, {}, sizes)
    return true
  end
  return false
end

-- How far (watts) the cluster is outside the corridor.
local function distance(power)
  if power.current_w < power.lower then
    return power.lower - power.current_w
  end
  return math.max(power.current_w - power.upper, 0)
end

-- params.best_effort: no distribution holds the corridor, so take the
-- running jobs' distribution closest to it, when that is closer than now by
-- more than one idle node's worth (no churn for nothing).
local function come_closer(ctx, movable, other_w)
  local limit = ctx.params.time_limit_ms or 100
  local sizes, missed = solve(ctx, movable, {}, other_w, ctx.nodes_idle, limit, true)
  if sizes and missed < distance(ctx.power) - ctx.power.idle_w_per_node then
    enact(ctx, movable, {}, sizes)
    return true
  end
  return false
end

-- Step 3: priority order, while the nodes are idle and the power fits.
local function start_within_budget(ctx)
  local power = ctx.power
  local idle_w = power.idle_w_per_node
  local watts = power.current_w
  local has_corridor = power.lower > 0 or power.upper > 0
  for _, job in ipairs(ctx.pending) do
    if job.nodes > ctx.nodes_idle then
      return
    end
    local _, hi = per_node_watts(job, idle_w)
    local after = watts + job.nodes * (hi - idle_w)
    if has_corridor and after > power.upper then
      return
    end
    if not ctx:start(job) then
      return
    end
    watts = after
  end
end

function P.schedule(ctx)
  -- Bad parameters fail every pass, not only those that meet a violation.
  sizing(ctx.params)
  local prefer = ctx.params.prefer_start
  if prefer ~= nil and type(prefer) ~= "boolean" then
    error("prefer_start must be true or false, not " .. tostring(prefer), 0)
  end
  local movable, other_w = survey(ctx)
  if movable == nil then
    return
  end
  if not corridor_broken(ctx.power) or #movable == 0 then
    start_within_budget(ctx)
    return
  end
  if redistribute(ctx, movable, other_w) then
    return
  end
  if ctx.params.best_effort and come_closer(ctx, movable, other_w) then
    return
  end
  start_within_budget(ctx)
end

return P
