-- A plan of free nodes over time, for backfilling with a reservation for
-- every job looked at (conservative backfilling, Slurm's backfill).
--
-- Steps in time order: steps[i] = { time = t, free = n } means n nodes are
-- free from t until the next step's time (the last step: for ever). It
-- starts from ctx:release_profile() (the running jobs' estimated ends) and
-- loses nodes as the plan gives them to jobs, now or later.
local M = {}

local huge = math.huge

local Profile = {}
Profile.__index = Profile

-- The plan of this pass: now, ctx.nodes_idle free, and the running jobs'
-- nodes coming back at their estimated ends (never without a walltime).
function M.from_ctx(ctx)
  local steps = {}
  for i, step in ipairs(ctx:release_profile()) do
    steps[i] = { time = step.time, free = step.free }
  end
  return setmetatable({ steps = steps }, Profile)
end

-- The index of the step that starts at `time`, splitting the one that
-- covers it when needed; nil for time = math.huge (nothing after for ever).
function Profile:split(time)
  if time == huge then
    return nil
  end
  local steps = self.steps
  for i = 1, #steps do
    local step = steps[i]
    if step.time == time then
      return i
    end
    if step.time > time then
      -- time falls inside step i - 1 (the first step is now: i > 1)
      table.insert(steps, i, { time = time, free = steps[i - 1].free })
      return i
    end
  end
  steps[#steps + 1] = { time = time, free = steps[#steps].free }
  return #steps
end

-- The earliest time at which n nodes are free for `duration` seconds
-- (math.huge: for ever), or math.huge when never. One sweep: `start` is the
-- beginning of the current run of steps with n free.
function Profile:earliest(n, duration)
  local steps = self.steps
  local count = #steps
  local start
  for i = 1, count do
    local step = steps[i]
    if step.time == huge then
      break
    end
    if step.free >= n then
      start = start or step.time
      local after = steps[i + 1]
      if not after or after.time - start >= duration then
        return start
      end
    else
      start = nil
    end
  end
  return huge
end

-- Gives n nodes to a job from `start` for `duration` seconds.
function Profile:take(start, duration, n)
  local first = self:split(start)
  local finish = start + duration
  local stop = self:split(finish)
  local steps = self.steps
  for i = first, (stop and stop - 1 or #steps) do
    steps[i].free = steps[i].free - n
  end
end

return M
