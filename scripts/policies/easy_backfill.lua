-- EASY backfilling (Lifka; Mu'alem & Feitelson).
--
-- Start jobs in priority order while they fit. When the head job does not
-- fit, reserve for it the earliest time at which enough nodes are free,
-- judged by the running jobs' estimated ends (start + walltime). Then start
-- later jobs that fit now and either end by that time, or use only nodes
-- the head will not need then (the "extra" nodes). The algorithm lives in
-- lib/easy.lua, which the elastic policy shares.
local easy = require("lib.easy")

local P = { name = "easy_backfill", api = 1 }

-- Every input of a decision is engine state or an estimated end, which is
-- absolute; an unchanged state later can only make backfilling harder, so a
-- tick that changed nothing changes nothing.
P.time_dependent = false

-- It starts jobs on idle nodes only (and reserves for the head): with no node
-- idle and only new submissions since its last pass, the old jobs' fate
-- stands and no new job can start, so the engine skips such a pass (an
-- urgent job's submission, which lib.urgent may preempt for, still gets one).
P.idle_nodes_only = true

-- A pass after one that started nothing, with only new submissions since,
-- looks at the new jobs only (lib/easy.lua); set params.incremental = false
-- to make every pass whole.
-- params.max_job_test = N: backfill looks at the first N jobs of the queue
-- only (Slurm's bf_max_job_test); unlimited by default, so replays are exact.
-- The options come from ctx.params, the same table for the life of the
-- policy: made once, not every pass.
local opts, opts_of

function P.schedule(ctx)
  if opts_of ~= ctx.params then
    opts_of = ctx.params
    opts = {
      incremental = ctx.params.incremental ~= false,
      max_job_test = ctx.params.max_job_test,
    }
  end
  easy.schedule(ctx, opts)
end

return P
