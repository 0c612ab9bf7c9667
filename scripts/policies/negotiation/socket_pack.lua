-- The iHypervisor's side of a negotiation (docs/policy-api.md §12): it packs
-- jobs by socket. A mapping that spreads a job over more sockets than its
-- core count needs is rejected; the next offer is virtual: it leaves out the
-- free cores where such a job began (the socket fragment too small for it),
-- which steers the iScheduler to place it whole elsewhere, or later.
local H = { name = "socket_pack" }

local function sockets_spanned(cores, per_socket)
  local seen, n = {}, 0
  for _, c in ipairs(cores) do
    local s = c // per_socket
    if not seen[s] then seen[s] = true; n = n + 1 end
  end
  return n
end

local function needed(cores, per_socket)
  return (#cores + per_socket - 1) // per_socket
end

-- The placements of `mapping` that are split beyond need.
local function split(mapping, per_socket)
  local out = {}
  for _, p in ipairs(mapping) do
    if sockets_spanned(p.cores, per_socket) > needed(p.cores, per_socket) then
      out[#out + 1] = p
    end
  end
  return out
end

function H.make_offer(view)
  local per = view.cores_per_socket
  -- Cores left out: node -> core -> true.
  local held = {}
  for _, mapping in ipairs(view.rejected) do
    for _, p in ipairs(split(mapping, per)) do
      local first = p.cores[1] // per
      held[p.node] = held[p.node] or {}
      for _, c in ipairs(p.cores) do
        if c // per == first then held[p.node][c] = true end
      end
    end
  end
  local resources, virtual = {}, false
  for _, node in ipairs(view.nodes) do
    local sockets = {}
    for _, s in ipairs(node.sockets) do
      local cores = {}
      for _, c in ipairs(s.free) do
        if held[node.name] and held[node.name][c] then
          virtual = true
        else
          cores[#cores + 1] = c
        end
      end
      if #cores > 0 then sockets[#sockets + 1] = { socket = s.socket, cores = cores } end
    end
    if #sockets > 0 then resources[#resources + 1] = { node = node.name, sockets = sockets } end
  end
  return { virtual = virtual, resources = resources }
end

function H.judge(offer, mapping, view)
  local bad = split(mapping, view.cores_per_socket)
  if #bad == 0 then return true end
  local p = bad[1]
  return false, string.format("job %d split over %d sockets (needs %d)", p.job,
    sockets_spanned(p.cores, view.cores_per_socket), needed(p.cores, view.cores_per_socket))
end

return H
