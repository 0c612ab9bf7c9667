-- The adaptation benchmark's policy (bench/adapt): start waiting jobs first
-- come, first served; then walk every running malleable job one node at a
-- time from its size up to max_nodes, then back down to min_nodes, one step
-- per pass. A pass runs on every job.resized, so the next step begins as
-- soon as the previous one ended.
--
-- The phase comes from the job's counters: it grows while it has made fewer
-- than max_nodes - size_at_start expansions (a job started on one node:
-- expansions < max_nodes - 1), then shrinks until it holds min_nodes. A
-- rolled back step changes no counter and is tried again after the engine's
-- adapt_backoff_s (the benchmark stops at the first rollback anyway).
--
-- The first step waits for the job's first MTCT (adapt_app reports a phase
-- as soon as it is up): a job whose step has not started yet has no
-- processes to adapt and would be resized at once, which times nothing.
local P = { name = "step_policy", api = 1 }

-- Decisions depend only on the state shown, never on the clock.
P.time_dependent = false

local function step(ctx, job)
  if job.kind ~= "malleable" or job.state ~= "RUNNING" or job.adapting then
    return
  end
  if job.expansions + job.shrinks == 0 and job.mtct == nil then
    ctx:request_perf(job)
    return
  end
  local size = job.size
  -- Expansions needed to go from the start size (the requested one) to the
  -- largest.
  local growth = job.max_nodes - job.nodes
  if job.expansions < growth and size < job.max_nodes then
    if ctx.nodes_idle >= 1 then
      ctx:expand(job, size + 1)
    end
  elseif job.expansions >= growth and size > job.min_nodes then
    ctx:shrink(job, size - 1)
  end
end

function P.schedule(ctx)
  for _, job in ipairs(ctx.pending) do
    if job.nodes > ctx.nodes_idle or not ctx:start(job) then
      break
    end
  end
  for _, job in ipairs(ctx.running) do
    step(ctx, job)
  end
end

return P
