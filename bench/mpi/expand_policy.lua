-- The MPI expansion benchmark's policy (bench/mpi/expand.sh): start waiting
-- jobs first come, first served; grow a running malleable job to 4 nodes
-- once (after its first MTCT: its processes are up), then shrink it to 2
-- once. A pass runs on every job.resized, so the shrink follows at once.
local P = { name = "expand_policy", api = 1 }

P.time_dependent = false

function P.schedule(ctx)
  for _, job in ipairs(ctx.pending) do
    if job.nodes > ctx.nodes_idle or not ctx:start(job) then
      break
    end
  end
  for _, job in ipairs(ctx.running) do
    if job.kind == "malleable" and job.state == "RUNNING" and not job.adapting then
      if job.expansions == 0 and job.mtct == nil then
        ctx:request_perf(job)
      elseif job.expansions == 0 and ctx.nodes_idle >= 4 - job.size then
        ctx:expand(job, 4)
      elseif job.expansions == 1 and job.shrinks == 0 and job.size > 2 then
        ctx:shrink(job, 2)
      end
    end
  end
end

return P
