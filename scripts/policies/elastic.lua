-- Elastic scheduling of rigid, malleable and evolving jobs, after Lina,
-- Ghafoor and Hines (JSSPP 2022). Each pass, in this order:
--   1. grant the evolving jobs' own requests: a shrink at once; an expand
--      from idle nodes, or else by shrinking malleable victims;
--   2. start pending jobs first come, first served with EASY backfilling;
--   3. start further pending jobs by shrinking malleable victims (a
--      malleable job needs only its smallest allowed size);
--   4. expand running malleable jobs into the idle nodes, longest-running
--      first.
-- A gate decides whether any shrinking happens in a pass; a victim order
-- decides which malleable jobs shrink first. Rigid and moldable jobs are
-- never resized, evolving jobs only as they asked, and only RUNNING jobs at
-- all (not while adapting, nor while still starting).
--
-- Parameters (ctx.params):
--   gate     "default" (always shrink), "application" (no shrinking while a
--            job ends within t seconds; never shrink a job more than x%
--            done) or "system" (no shrinking while utilisation is above u%
--            and a job ends within t seconds). Default "default".
--   t        seconds; default 5, the paper's value.
--   x        percent done; default 100, i.e. no job is spared. The paper
--            names x but gives it no value.
--   u        utilisation percent; default 80, the paper's value.
--   victims  "random", "gain" (highest gain first), "resources" (most
--            nodes above the minimum first, then the larger job),
--            "expansions" (most expansions first), "adaptation" (cheapest
--            shrink first) or "time" (least time left first). Default
--            "gain": the paper finds it best for average turnaround time
--            in most of its cases.
--   b, alpha, beta  the adaptation cost model of the "adaptation" order, in
--            seconds: b·|dn| + alpha·|dn| + beta/(n_old + n_new) (Lina et
--            al.'s process and redistribution costs). Defaults 0.5, 0.25,
--            2.0: the simulator's costs of a shrink (docs/app-model.md:
--            adapt_stop_s, adapt_alpha_s, adapt_beta_s), the only
--            adaptation this order ever estimates.
-- Ties in every order go to the job that started first, then the lower id.
--
-- Where the paper is silent: requests are served oldest job first (the
-- policy sees no request times); step 3 leaves alone a job that fits as it
-- is (EASY kept it back for the head's reservation); "x% done" is elapsed
-- time over the job's current limit (est_end − start); a job without a
-- walltime is never about to end and comes last in the "time" order.
local constraints = require("sched.constraints")
local easy = require("lib.easy")
local log = require("sched.log")

local P = { name = "elastic", api = 1 }

-- The gates look at how soon jobs end, which changes with the clock alone.
P.time_dependent = true

local huge = math.huge
local min = math.min
local sort = table.sort

-- ---------------------------------------------------------------- parameters

local GATES = { default = true, application = true, system = true }
local ORDERS = {
  random = true, gain = true, resources = true,
  expansions = true, adaptation = true, time = true,
}

local function choice(params, key, default, allowed, names)
  local value = params[key]
  if value == nil then
    return default
  end
  if not allowed[value] then
    error(("elastic: unknown %s %q (one of: %s)"):format(key, tostring(value), names), 0)
  end
  return value
end

local function number(params, key, default)
  local value = params[key]
  if value == nil then
    return default
  end
  if type(value) ~= "number" then
    error(("elastic: parameter %s must be a number, not %q"):format(key, tostring(value)), 0)
  end
  return value
end

-- Read every pass: a bad value fails the pass with a clear message, while
-- the file itself still loads.
local function read_params(params)
  params = params or {}
  return {
    gate = choice(params, "gate", "default", GATES, "default, application, system"),
    victims = choice(params, "victims", "gain", ORDERS,
                     "random, gain, resources, expansions, adaptation, time"),
    t = number(params, "t", 5),
    x = number(params, "x", 100),
    u = number(params, "u", 80),
    b = number(params, "b", 0.5),
    alpha = number(params, "alpha", 0.25),
    beta = number(params, "beta", 2.0),
  }
end

-- ---------------------------------------------------------------- pass state

-- What this pass has done so far. Job tables keep the sizes of the pass's
-- start, so the sizes the pass left jobs at are kept here.
local function new_pass(ctx)
  local running = ctx.running
  return {
    ctx = ctx,
    now = ctx.now,
    cfg = read_params(ctx.params),
    running = running,
    busy = 1 - ctx.nodes_idle / ctx.nodes_total,  -- utilisation at pass start
    sizes = {},   -- job → size after this pass's resizes
    shrunk = {},  -- job → true: shrunk in this pass (cannot grow now)
    grown = {},   -- job → true: grown in this pass (cannot shrink now)
    closed = false,  -- the gate forbids shrinking in this pass (set once)
  }
end

local function size_of(pass, job)
  return pass.sizes[job] or job.size
end

-- Only a RUNNING job can be resized: ctx.running also lists jobs still
-- adapting, and launched jobs that have not reported their start.
local function settled(job)
  return job.state == "RUNNING"
end

local function by_start(a, b)
  if a.start_time ~= b.start_time then
    return a.start_time < b.start_time
  end
  return a.id < b.id
end

-- ---------------------------------------------------------------- gates

local function some_job_ends_within(pass, t)
  for _, job in ipairs(pass.running) do
    local e = job.est_end  -- nil without walltime: never "about to end"
    if e and e - pass.now <= t then
      return true
    end
  end
  return false
end

-- Whether the gate forbids all shrinking in this pass.
local function shrinking_closed(pass)
  local cfg = pass.cfg
  if cfg.gate == "application" then
    return some_job_ends_within(pass, cfg.t)
  elseif cfg.gate == "system" then
    return pass.busy * 100 > cfg.u and some_job_ends_within(pass, cfg.t)
  end
  return false
end

-- Percent of its time limit a job has used (the limit as adaptations left
-- it); nil without a walltime.
local function percent_done(job)
  local e = job.est_end
  if not e or e <= job.start_time then
    return nil
  end
  return 100 * job.elapsed / (e - job.start_time)
end

-- The application gate spares jobs close to their end.
local function spared(pass, job)
  if pass.cfg.gate ~= "application" then
    return false
  end
  local done = percent_done(job)
  return done ~= nil and done > pass.cfg.x
end

-- ---------------------------------------------------------------- victims

local function adaptation_cost(cfg, from, to)
  local delta = math.abs(from - to)
  return cfg.b * delta + cfg.alpha * delta + cfg.beta / (from + to)
end

local function shrink_target(pass, job, need)
  return constraints.next_lower(job.node_constraint, job.min_nodes, job.max_nodes,
                                size_of(pass, job), need)
end

-- Priority keys of a victim, larger first: a primary and a tie-breaker.
local KEYS = {
  gain = function(_, job) return job.gain, 0 end,
  expansions = function(_, job) return job.expansions, 0 end,
  resources = function(pass, job)
    local size = size_of(pass, job)
    return size - job.min_nodes, size
  end,
  adaptation = function(pass, job, need)
    local to = shrink_target(pass, job, need)
    if not to then
      return -huge, 0
    end
    return -adaptation_cost(pass.cfg, size_of(pass, job), to), 0
  end,
  time = function(pass, job)
    local e = job.est_end
    if not e then
      return -huge, 0  -- no walltime: its end is unknown, so last
    end
    return -(e - pass.now), 0
  end,
}

local function shuffle(list)
  for i = #list, 2, -1 do
    local j = math.random(i)
    list[i], list[j] = list[j], list[i]
  end
end

local function sort_victims(pass, list, need)
  sort(list, by_start)  -- a fixed order first: ties and the shuffle rely on it
  local order = pass.cfg.victims
  if order == "random" then
    shuffle(list)
    return
  end
  local key = KEYS[order]
  local first, second = {}, {}
  for _, job in ipairs(list) do
    first[job], second[job] = key(pass, job, need)
  end
  sort(list, function(a, b)
    if first[a] ~= first[b] then
      return first[a] > first[b]
    end
    if second[a] ~= second[b] then
      return second[a] > second[b]
    end
    return by_start(a, b)
  end)
end

-- Running malleable jobs this pass may shrink.
local function shrinkable(pass)
  local list = {}
  for _, job in ipairs(pass.running) do
    if job.kind == "malleable" and settled(job) and not pass.grown[job]
        and size_of(pass, job) > job.min_nodes and not spared(pass, job) then
      list[#list + 1] = job
    end
  end
  return list
end

-- Nodes the victims could free at most (each down to its smallest allowed size).
local function shrinkable_total(pass)
  if pass.closed then
    return 0
  end
  local total = 0
  for _, job in ipairs(shrinkable(pass)) do
    local floor = constraints.lowest(job.node_constraint, job.min_nodes, job.max_nodes,
                                     job.min_nodes)
    local size = size_of(pass, job)
    if floor and floor < size then
      total = total + size - floor
    end
  end
  return total
end

-- Shrinks that free `need` nodes, victims in order, each to the next lower
-- allowed size that covers what is still missing: a list of {job, to}, or
-- nil when the gate is closed or the victims cannot free that many.
local function plan_shrinks(pass, need)
  if pass.closed then
    return nil
  end
  local victims = shrinkable(pass)
  sort_victims(pass, victims, need)
  local plan, freed = {}, 0
  for _, job in ipairs(victims) do
    local to = shrink_target(pass, job, need - freed)
    if to then
      plan[#plan + 1] = { job = job, to = to }
      freed = freed + size_of(pass, job) - to
      if freed >= need then
        return plan
      end
    end
  end
  return nil
end

-- ---------------------------------------------------------------- actions

local function shrink(pass, job, to)
  local ok, why = pass.ctx:shrink(job, to)
  if ok then
    pass.sizes[job] = to
    pass.shrunk[job] = true
  else
    log.warn(("elastic: shrink of job %d to %d refused: %s"):format(job.id, to, tostring(why)))
  end
  return ok
end

local function expand(pass, job, to)
  local ok, why = pass.ctx:expand(job, to)
  if ok then
    pass.sizes[job] = to
    pass.grown[job] = true
  else
    log.warn(("elastic: expand of job %d to %d refused: %s"):format(job.id, to, tostring(why)))
  end
  return ok
end

local function enact(pass, plan)
  for _, step in ipairs(plan) do
    shrink(pass, step.job, step.to)
  end
end

-- Makes `nodes` idle, shrinking victims for what is missing; false, with
-- nothing done, when the victims cannot free enough. (A victim's draining
-- node leaves it without becoming idle: then the shrinks stand and the
-- answer is still false.)
local function make_room(pass, nodes)
  local need = nodes - pass.ctx.nodes_idle
  if need <= 0 then
    return true
  end
  local plan = plan_shrinks(pass, need)
  if not plan then
    return false
  end
  enact(pass, plan)
  return pass.ctx.nodes_idle >= nodes
end

-- ---------------------------------------------------------------- 1. requests

local function grant_request(pass, job)
  local request = job.request
  local size = size_of(pass, job)
  if request.op == "shrink" then
    if request.nodes < size then
      shrink(pass, job, request.nodes)
    end
  elseif request.nodes > size and make_room(pass, request.nodes - size) then
    expand(pass, job, request.nodes)
  end
end

-- Oldest running job first: the policy sees no time of request.
local function grant_requests(pass)
  for _, job in ipairs(pass.running) do
    if job.kind == "evolving" and job.request and settled(job) then
      grant_request(pass, job)
    end
  end
end

-- ---------------------------------------------------------------- 3. starts by shrinking

-- The smallest size a pending job can start at.
local function smallest_start(job)
  if job.kind == "malleable" then
    return constraints.lowest(job.node_constraint, job.min_nodes, job.max_nodes, job.min_nodes)
  end
  return job.nodes
end

-- The size a malleable job starts at: what fits, up to its requested size.
local function start_size(job, idle)
  if job.kind ~= "malleable" then
    return job.nodes
  end
  return constraints.highest(job.node_constraint, job.min_nodes, job.max_nodes,
                             min(job.nodes, idle))
end

local function start_by_shrinking(pass, started)
  local ctx = pass.ctx
  local reach = shrinkable_total(pass)
  for _, job in ipairs(ctx.pending) do
    local idle = ctx.nodes_idle
    if idle + reach == 0 then
      return  -- nothing idle, nothing to take: no need to walk a long queue
    end
    local smallest = smallest_start(job)
    -- A job that fits as it is was EASY's to start: it kept it back for
    -- the head. A malleable job may still start smaller without a shrink.
    local fits = job.nodes <= idle
    if not started[job] and smallest and not fits and smallest <= idle + reach
        and make_room(pass, smallest) then
      if ctx:start(job, start_size(job, ctx.nodes_idle)) then
        started[job] = true
      end
      reach = shrinkable_total(pass)
    end
  end
end

-- ---------------------------------------------------------------- 4. expansion

local function longest_running_first(a, b)
  if a.elapsed ~= b.elapsed then
    return a.elapsed > b.elapsed
  end
  return by_start(a, b)
end

local function expand_into_idle(pass)
  local ctx = pass.ctx
  local list = {}
  for _, job in ipairs(pass.running) do
    if job.kind == "malleable" and settled(job) and not pass.shrunk[job] then
      list[#list + 1] = job
    end
  end
  sort(list, longest_running_first)
  for _, job in ipairs(list) do
    local idle = ctx.nodes_idle
    if idle <= 0 then
      return
    end
    local size = size_of(pass, job)
    local to = constraints.highest(job.node_constraint, job.min_nodes, job.max_nodes, size + idle)
    if to and to > size then
      expand(pass, job, to)
    end
  end
end

-- ---------------------------------------------------------------- the pass

function P.schedule(ctx)
  local pass = new_pass(ctx)
  pass.closed = shrinking_closed(pass)
  grant_requests(pass)
  -- EASY judges running jobs at the sizes grant_requests left them at.
  local started = {}
  easy.schedule(ctx, nil, started)
  start_by_shrinking(pass, started)
  expand_into_idle(pass)
end

return P
