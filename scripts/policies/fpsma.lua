-- FPSMA, "favour previously started malleable applications" (the start-time
-- ordering Chadha, John & Gerndt compare against; the pass itself is in
-- lib/malleable.lua): jobs that have run longest keep and gain nodes. To
-- start a waiting head, the most recently started job shrinks first; idle
-- nodes go to the earliest started first. No MTCT data is needed.
--
-- Parameter expand_when_idle (default true): see lib/malleable.lua.
local malleable = require("lib.malleable")

local P = { name = "fpsma", api = 1 }

-- Decisions depend only on the state shown, never on the clock.
P.time_dependent = false

local started_before = malleable.started_before

local ordering = {
  shrink_first = function(a, b) return started_before(b, a) end,
  expand_first = started_before,
  wants_mtct = false,
}

function P.schedule(ctx)
  malleable.schedule(ctx, ordering)
end

return P
