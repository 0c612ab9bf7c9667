// The ctx object's methods (docs/design.md §4 actions) and its lazily built lists.
#include <cmath>

#include "lua_runtime.hpp"
#include "sched/pass_context.hpp"

namespace sched {
namespace {

PassContext& pass_or_error(lua_State* L, const char* what) {
  PassContext* pass = LuaRuntime::of(L).pass();
  if (!pass) luaL_error(L, "ctx.%s is only available during a scheduling pass", what);
  return *pass;
}

// A job argument: a job table (its id field) or a job id.
JobId job_arg(lua_State* L, int arg) {
  if (lua_isinteger(L, arg)) return lua_tointeger(L, arg);
  if (lua_istable(L, arg)) {
    lua_getfield(L, arg, "id");
    if (lua_isinteger(L, -1)) {
      const JobId id = lua_tointeger(L, -1);
      lua_pop(L, 1);
      return id;
    }
    lua_pop(L, 1);
  }
  luaL_argerror(L, arg, "expected a job table or a job id");
  return 0;
}

int size_arg(lua_State* L, int arg) {
  if (!lua_isinteger(L, arg)) {
    if (lua_type(L, arg) == LUA_TNUMBER) luaL_argerror(L, arg, "node count must be an integer");
    luaL_typeerror(L, arg, "integer");
  }
  const lua_Integer n = lua_tointeger(L, arg);
  if (n < -1000000000 || n > 1000000000) luaL_argerror(L, arg, "node count out of range");
  return static_cast<int>(n);
}

// true, or false plus a refusal table; keeps ctx.nodes_idle current.
int answer(lua_State* L, PassContext& pass, const Verdict& verdict) {
  lua_pushinteger(L, pass.nodes_idle());
  lua_setfield(L, 1, "nodes_idle");
  if (!verdict) {
    lua_pushboolean(L, 1);
    return 1;
  }
  lua_pushboolean(L, 0);
  LuaRuntime::of(L).push_refusal(*verdict);
  return 2;
}

int ctx_start(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  PassContext& pass = pass_or_error(L, "start");
  const JobId id = job_arg(L, 2);
  std::optional<int> nodes;
  if (!lua_isnoneornil(L, 3)) nodes = size_arg(L, 3);
  return answer(L, pass, pass.start(id, nodes));
}

int ctx_expand(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  PassContext& pass = pass_or_error(L, "expand");
  const JobId id = job_arg(L, 2);
  return answer(L, pass, pass.expand(id, size_arg(L, 3)));
}

int ctx_shrink(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  PassContext& pass = pass_or_error(L, "shrink");
  const JobId id = job_arg(L, 2);
  return answer(L, pass, pass.shrink(id, size_arg(L, 3)));
}

int ctx_request_perf(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  PassContext& pass = pass_or_error(L, "request_perf");
  return answer(L, pass, pass.request_perf(job_arg(L, 2)));
}

int ctx_preempt(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  PassContext& pass = pass_or_error(L, "preempt");
  const JobId id = job_arg(L, 2);
  static const char* const modes[] = {"requeue", "cancel", nullptr};
  const int mode = luaL_checkoption(L, 3, "requeue", modes);
  return answer(L, pass, pass.preempt(id, mode == 0 ? PreemptMode::Requeue : PreemptMode::Cancel));
}

int ctx_reserve(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  PassContext& pass = pass_or_error(L, "reserve");
  const JobId id = job_arg(L, 2);
  const double time = luaL_checknumber(L, 3);
  return answer(L, pass, pass.reserve(id, time));
}

// ctx.running is a fresh plain table of the running jobs, made on first
// read in a pass (a policy may sort it). ctx.pending can be thousands of
// jobs long and a pass often looks at the first few only, so it is a
// read-only sequence filled on demand: indexing, ipairs and # work; writing
// to it is an error (copy it to sort it).
int ctx_index(lua_State* L) {
  const char* key = lua_tostring(L, 2);
  if (key && (std::string_view(key) == "pending" || std::string_view(key) == "running")) {
    PassContext& pass = pass_or_error(L, key);
    LuaRuntime& rt = LuaRuntime::of(L);
    if (key[0] == 'r') {
      rt.push_running_list(pass);
    } else {
      rt.push_pending_list(pass);
    }
    lua_pushvalue(L, -1);
    lua_setfield(L, 1, key);
    return 1;
  }
  if (key && std::string_view(key) == "power") {
    PassContext& pass = pass_or_error(L, key);
    LuaRuntime::of(L).push_power(pass);
    lua_pushvalue(L, -1);
    lua_setfield(L, 1, key);
    return 1;
  }
  lua_pushvalue(L, 2);
  lua_rawget(L, lua_upvalueindex(1));  // methods
  return 1;
}

// ctx.pending is an empty table whose metatable's __index is the store of
// jobs, a table kept across passes: a position read once is a plain table
// read from then on, in the VM (no C call). A position not filled yet
// reaches the store's own __index, which fills it.
int pending_fill(lua_State* L) {
  if (!lua_isinteger(L, 2)) return 0;
  const lua_Integer index = lua_tointeger(L, 2);
  LuaRuntime& rt = LuaRuntime::of(L);
  if (!rt.pass()) return luaL_error(L, "this ctx.pending belongs to an earlier pass");
  if (index < 1 || static_cast<std::size_t>(index) > rt.pass()->pending_count()) return 0;
  rt.fill_pending(index);
  lua_rawgeti(L, 1, index);
  return 1;
}

LuaRuntime& current_pending_list(lua_State* L) {
  LuaRuntime& rt = LuaRuntime::of(L);
  if (!rt.pass() || !rt.is_current_pending_list(1)) {
    luaL_error(L, "this ctx.pending belongs to an earlier pass");
  }
  return rt;
}

int pending_len(lua_State* L) {
  LuaRuntime& rt = current_pending_list(L);
  lua_pushinteger(L, static_cast<lua_Integer>(rt.pass()->pending_count()));
  return 1;
}

// pairs(ctx.pending) sees the whole queue, in order.
int pending_next(lua_State* L) {
  const lua_Integer index = lua_isnil(L, 2) ? 1 : luaL_checkinteger(L, 2) + 1;
  lua_pushinteger(L, index);
  if (lua_geti(L, 1, index) == LUA_TNIL) return 1;
  return 2;
}

int pending_pairs(lua_State* L) {
  current_pending_list(L);
  lua_pushcfunction(L, pending_next);
  lua_pushvalue(L, 1);
  lua_pushnil(L);
  return 3;
}

int pending_write(lua_State* L) {
  return luaL_error(L, "ctx.pending is read-only (copy it to change or sort it)");
}

int pending_stale(lua_State* L) {
  return luaL_error(L, "this ctx.pending belongs to an earlier pass");
}

void set_pending_fields(lua_State* L, lua_CFunction len, lua_CFunction pairs) {
  lua_pushcfunction(L, len);
  lua_setfield(L, -2, "__len");
  lua_pushcfunction(L, pending_write);
  lua_setfield(L, -2, "__newindex");
  lua_pushcfunction(L, pairs);
  lua_setfield(L, -2, "__pairs");
  lua_pushliteral(L, "sched.pending");
  lua_setfield(L, -2, "__metatable");
}

}  // namespace

void push_pending_metatable(lua_State* L, int store) {
  store = lua_absindex(L, store);
  lua_createtable(L, 0, 5);
  lua_pushvalue(L, store);
  lua_setfield(L, -2, "__index");
  set_pending_fields(L, pending_len, pending_pairs);
}

void push_pending_store_metatable(lua_State* L) {
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, pending_fill);
  lua_setfield(L, -2, "__index");
}

void push_stale_pending_metatable(lua_State* L) {
  lua_createtable(L, 0, 5);
  lua_pushcfunction(L, pending_stale);
  lua_setfield(L, -2, "__index");
  set_pending_fields(L, pending_stale, pending_stale);
}

void push_ctx_methods(lua_State* L) {
  static const luaL_Reg methods[] = {{"start", ctx_start},     {"expand", ctx_expand},
                                     {"shrink", ctx_shrink},   {"request_perf", ctx_request_perf},
                                     {"preempt", ctx_preempt}, {"reserve", ctx_reserve},
                                     {nullptr, nullptr}};
  luaL_newlib(L, methods);
  lua_pushcclosure(L, ctx_index, 1);
}

}  // namespace sched
