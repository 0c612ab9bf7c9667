-- The iScheduler's side of a negotiation (docs/policy-api.md §12): the jobs
-- that have waited longest go first, each on the first offered node with
-- enough cores, taking the cores in the order offered. Sockets do not
-- matter to this side: it optimises waiting time only.
local S = { name = "wait_first" }

function S.map(offer, pending, report)
  local free = {}
  for i, r in ipairs(offer.resources) do
    local cores = {}
    for _, s in ipairs(r.sockets) do
      for _, c in ipairs(s.cores) do cores[#cores + 1] = c end
    end
    free[i] = { node = r.node, cores = cores, next = 1 }
  end
  local mapping = {}
  for _, job in ipairs(pending) do -- longest waiting first
    for _, f in ipairs(free) do
      if #f.cores - f.next + 1 >= job.cores then
        local cores = {}
        for k = f.next, f.next + job.cores - 1 do cores[#cores + 1] = f.cores[k] end
        f.next = f.next + job.cores
        mapping[#mapping + 1] = { job = job.job, node = f.node, cores = cores }
        break
      end
    end
  end
  if #mapping == 0 then return nil, "no pending job fits the offer" end
  return mapping
end

return S
