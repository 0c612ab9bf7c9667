-- Slurm's scheduling as its documentation describes it (sched/backfill with
-- the main scheduler), the baseline the papers compared against:
--
-- * The main scheduler, at every pass: start jobs in priority order while
--   they fit; the first that does not fit stops it (Slurm skips the rest of
--   that job's partition).
-- * The backfill scheduler, at most every `bf_interval` seconds: walk the
--   queue in priority order, at most `bf_max_job_test` jobs, planning each on
--   a profile of free nodes over time: a job starts now if it fits now and
--   for its whole time limit without touching what the plan gave to the jobs
--   before it; otherwise it gets a reservation at the earliest time it fits
--   (within `bf_window` seconds; later ones reserve nothing), which no later
--   job may delay. Every job tested is protected, not only the head: this is
--   conservative backfilling over the tested jobs. End times are planned at
--   `bf_resolution` seconds.
-- * Time limits are what users gave (job.walltime); a job without one is
--   planned as running for ever.
--
-- Parameters (Slurm's defaults): bf_interval 30 s, bf_max_job_test 500,
-- bf_resolution 60 s, bf_window 86400 s (1440 minutes).
local moldable = require("lib.moldable")
local profile = require("lib.profile")
local urgent = require("lib.urgent")

local P = { name = "slurm_backfill", api = 1 }

-- The backfill cycle runs on time (bf_interval): ticks must give passes.
P.time_dependent = true

local huge = math.huge
local last_backfill -- ctx.now of the last backfill cycle
-- Whether anything changed since that cycle. A cycle on an unchanged state
-- starts nothing a cycle before did not (time only shortens the windows
-- before the running jobs' ends), so it is skipped: Slurm runs it anyway,
-- to the same effect.
local changed = true

local function positive(params, key, default)
  local value = params[key]
  if value == nil then
    return default
  end
  if type(value) ~= "number" or value <= 0 then
    error(key .. " must be a positive number, not " .. tostring(value), 0)
  end
  return value
end

-- The time limit as the plan counts it: rounded up to the resolution.
local function planned(walltime, resolution)
  if walltime <= 0 then
    return huge
  end
  return math.ceil(walltime / resolution) * resolution
end

-- The main scheduler: priority order while jobs fit, from position `first`
-- (lib.urgent started those before). Returns how many of the first
-- positions of ctx.pending are started.
local function main_pass(ctx, first)
  local pending = ctx.pending
  for k = first, #pending do
    local job = pending[k]
    local size = moldable.size(job, ctx.nodes_idle)
    if not size or not ctx:start(job, size) then
      return k - 1
    end
  end
  return #pending
end

-- `from`: the first position the main pass did not start.
local function backfill_pass(ctx, settings, from)
  local plan = profile.from_ctx(ctx)
  local now = ctx.now
  local pending = ctx.pending
  local tested = 0
  for k = from, #pending do
    if tested >= settings.max_job_test then
      break
    end
    tested = tested + 1
    local job = pending[k]
    local duration = planned(job.walltime, settings.resolution)
    -- The largest size that can start now without delaying the plan (a
    -- moldable job has several: lib/moldable.lua), else a reservation for
    -- the smallest.
    local size_now
    if job.kind ~= "moldable" then
      size_now = plan:earliest(job.nodes, duration) == now and job.nodes or nil
    else
      for _, size in ipairs(moldable.sizes(job)) do
        if plan:earliest(size, duration) == now then
          size_now = size
          break
        end
      end
    end
    if size_now and ctx:start(job, size_now) then
      plan:take(now, duration, size_now)
    elseif not size_now then
      local least = moldable.least(job)
      local start = plan:earliest(least, duration)
      if start ~= huge and start - now <= settings.window then
        ctx:reserve(job, start)
        plan:take(start, duration, least)
      end
    end
  end
end

function P.schedule(ctx)
  local params = ctx.params
  local settings = {
    interval = positive(params, "bf_interval", 30),
    max_job_test = positive(params, "bf_max_job_test", 500),
    resolution = positive(params, "bf_resolution", 60),
    window = positive(params, "bf_window", 86400),
  }
  local pending = ctx.pending
  -- Urgent jobs first, suspended jobs resumed (lib/urgent.lua).
  local first, acted = urgent.schedule(ctx)
  if acted or ctx.appended ~= #pending + 1 then
    changed = true
  end
  local started = main_pass(ctx, first)
  if not changed or (last_backfill and ctx.now - last_backfill < settings.interval) then
    return
  end
  if not ctx.dry then
    last_backfill = ctx.now
    changed = false
  end
  backfill_pass(ctx, settings, started + 1)
end

-- A reload keeps the cycle's phase.
function P.save()
  return { last_backfill = last_backfill }
end

function P.restore(state)
  last_backfill = state and state.last_backfill
  changed = true
end

return P
