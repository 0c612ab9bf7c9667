// The sandbox of a Lua policy (docs/policy-api.md "The sandbox"): the
// libraries a policy may use, and nothing that reaches files, loads
// bytecode or makes a run depend on anything but its seed. Shared by the
// scheduling policy host (engine/lua/) and the negotiation policy host
// (invasive/), so that both give a policy the same world.
#pragma once

#include <lua.hpp>

namespace sched {

// Opens base, string, table, math and utf8 in `L`; removes dofile and
// loadfile; replaces load with lua_sandbox_load and print with `print`;
// seeds math.random with `seed` and removes math.randomseed.
void open_lua_sandbox(lua_State* L, lua_CFunction print, lua_Integer seed);

// load(chunk [, chunkname [, mode [, env]]]) restricted to text chunks.
int lua_sandbox_load(lua_State* L);

}  // namespace sched
