// sched.lp: small mixed-integer linear programs for policies, solved by
// GLPK (docs/policy-api.md §10). Private to the engine library.
#pragma once

#include <lua.hpp>

namespace sched {

// Pushes the sched.lp module table ({solve = ...}); used by require.
int open_lp(lua_State* L);

}  // namespace sched
