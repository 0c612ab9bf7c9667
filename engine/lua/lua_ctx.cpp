// The ctx object's methods (docs/design.md §4 actions) and its lazily built lists.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lua_runtime.hpp"
#include "sched/cluster.hpp"
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
  // A job table first: the common case (a pass starts every job this way).
  const int type = lua_type(L, arg);
  if (type == LUA_TTABLE) {
    lua_getfield(L, arg, "id");
    int is_integer = 0;
    const JobId id = lua_tointegerx(L, -1, &is_integer);
    lua_pop(L, 1);
    if (is_integer) return id;
  } else if (type == LUA_TNUMBER && lua_isinteger(L, arg)) {
    return lua_tointeger(L, arg);
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

// ctx:earliest_start(n) → time, spare (math.huge, 0: never).
int ctx_earliest_start(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  PassContext& pass = pass_or_error(L, "earliest_start");
  const PassContext::ReleaseStep step = pass.earliest_start(size_arg(L, 2));
  lua_pushnumber(L, step.time);
  lua_pushinteger(L, step.free);
  return 2;
}

// ctx:next_fit(from, n [, until, spare]) → the first position at or after
// `from` of ctx.pending whose job needs at most n nodes (a moldable job: its
// min_nodes) and, with `until`,
// would also end by then if started now (it has a walltime) or needs at most
// `spare` nodes; nil when none. The scan a backfilling pass repeats over a
// long queue, in C++: in Lua it was the larger part of an EASY pass.
int ctx_next_fit(lua_State* L) {
  // A backfill calls it once per job it looks at: the checks take the
  // common case first (issue 15), and give the same errors as luaL_check*.
  if (lua_type(L, 1) != LUA_TTABLE) luaL_checktype(L, 1, LUA_TTABLE);
  PassContext& pass = pass_or_error(L, "next_fit");
  PendingFit fit;
  int is_integer = 0;
  fit.from = lua_tointegerx(L, 2, &is_integer);
  if (!is_integer) fit.from = luaL_checkinteger(L, 2);
  fit.nodes = size_arg(L, 3);
  if (lua_type(L, 4) > LUA_TNIL) {
    fit.now = pass.now();
    int is_number = 0;
    fit.until = lua_tonumberx(L, 4, &is_number);
    if (!is_number) fit.until = luaL_checknumber(L, 4);
    fit.spare = size_arg(L, 5);
  }
  LuaRuntime& rt = LuaRuntime::of(L);
  if (!rt.pending_list_current()) {
    lua_getfield(L, 1, "pending");  // brings the list up to date in this pass
    lua_pop(L, 1);
  }
  if (const auto found = rt.next_pending_fit(fit)) {
    lua_pushinteger(L, static_cast<lua_Integer>(*found));
    // The job too: reading pending[k] would fill the list up to k, and a
    // long filled list costs every later removal a shift.
    rt.push_pending_job(*found);
    return 2;
  }
  lua_pushnil(L);
  return 1;
}

// ctx:release_profile() → { {time = t, free = n}, ... } in time order.
int ctx_release_profile(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  PassContext& pass = pass_or_error(L, "release_profile");
  const auto profile = pass.release_profile();
  lua_createtable(L, static_cast<int>(profile.size()), 0);
  lua_Integer i = 0;
  for (const auto& step : profile) {
    lua_createtable(L, 0, 2);
    lua_pushnumber(L, step.time);
    lua_setfield(L, -2, "time");
    lua_pushinteger(L, step.free);
    lua_setfield(L, -2, "free");
    lua_rawseti(L, -2, ++i);
  }
  return 1;
}

// true, or false plus a refusal table.
int verdict_of(lua_State* L, const Verdict& verdict) {
  if (!verdict) {
    lua_pushboolean(L, 1);
    return 1;
  }
  lua_pushboolean(L, 0);
  LuaRuntime::of(L).push_refusal(*verdict);
  return 2;
}

// The same, keeping ctx.nodes_idle current (after an action that may move it).
int answer(lua_State* L, PassContext& pass, const Verdict& verdict) {
  lua_pushinteger(L, pass.nodes_idle());
  lua_setfield(L, 1, "nodes_idle");
  return verdict_of(L, verdict);
}

// ctx:start(job, {cores = {node = {ids}}}): a job of an invasive partition
// on the cores named (issue 20 item 2). An unknown node name is a refusal
// (bad_argument), as the engine's checks of the set are.
int start_on_named_cores(lua_State* L, PassContext& pass, JobId id) {
  lua_getfield(L, 3, "cores");
  if (lua_isinteger(L, -1)) {
    // ctx:start(job, {cores = n}): a malleable job by cores at n of them.
    const auto count = static_cast<int>(lua_tointeger(L, -1));
    lua_pop(L, 1);
    return answer(L, pass, pass.start_with_cores(id, count));
  }
  if (!lua_istable(L, -1)) {
    luaL_argerror(L, 3, "expected {cores = n} or {cores = {node = {core ids}}}");
  }
  const int set = lua_gettop(L);
  CoreSet cores;
  std::string unknown;
  lua_pushnil(L);
  while (lua_next(L, set) != 0) {
    if (lua_type(L, -2) != LUA_TSTRING || !lua_istable(L, -1)) {
      luaL_argerror(L, 3, "cores: node names to lists of core ids");
    }
    const auto node = pass.cluster().find(lua_tostring(L, -2));
    if (!node) unknown = lua_tostring(L, -2);
    NodeCores nc{node.value_or(0), {}};
    const lua_Integer n = static_cast<lua_Integer>(lua_rawlen(L, -1));
    for (lua_Integer i = 1; i <= n; ++i) {
      lua_rawgeti(L, -1, i);
      if (!lua_isinteger(L, -1)) luaL_argerror(L, 3, "cores: core ids are integers");
      nc.cores.push_back(static_cast<int>(lua_tointeger(L, -1)));
      lua_pop(L, 1);
    }
    cores.push_back(std::move(nc));
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  // Node order does not matter to Lua (pairs): the engine's is by index.
  std::sort(cores.begin(), cores.end(),
            [](const NodeCores& a, const NodeCores& b) { return a.node < b.node; });
  if (!unknown.empty()) {
    return answer(L, pass, Refusal{RefusalCode::BadArgument, id, 0, 0, "no node " + unknown});
  }
  return answer(L, pass, pass.start(id, cores));
}

int ctx_start(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  PassContext& pass = pass_or_error(L, "start");
  const JobId id = job_arg(L, 2);
  if (lua_istable(L, 3)) return start_on_named_cores(L, pass, id);
  std::optional<int> nodes;
  if (!lua_isnoneornil(L, 3)) nodes = size_arg(L, 3);
  return answer(L, pass, pass.start(id, nodes));
}

// ctx:free_cores() → {node = {free = n, total = n, sockets = {free, ...}}}
// over the up, undrained nodes of this pass's invasive partition, as the
// pass has left them; {} in a partition of whole nodes (issue 20 item 2).
int ctx_free_cores(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  PassContext& pass = pass_or_error(L, "free_cores");
  const CoreMap& map = pass.core_map();
  const Cluster& cluster = pass.cluster();
  lua_newtable(L);
  for (NodeIndex i = 0; i < cluster.size(); ++i) {
    const Node& node = cluster.node(i);
    if (!map.tracked(i) || !node.up || node.draining) continue;
    if (pass.partition() >= 0 && node.partition != pass.partition()) continue;
    lua_createtable(L, 0, 3);
    lua_pushinteger(L, map.free_count(i));
    lua_setfield(L, -2, "free");
    lua_pushinteger(L, map.cores(i));
    lua_setfield(L, -2, "total");
    const std::vector<int> sockets = map.free_per_socket(i);
    lua_createtable(L, static_cast<int>(sockets.size()), 0);
    for (std::size_t s = 0; s < sockets.size(); ++s) {
      lua_pushinteger(L, sockets[s]);
      lua_rawseti(L, -2, static_cast<lua_Integer>(s + 1));
    }
    lua_setfield(L, -2, "sockets");
    lua_setfield(L, -2, node.name.c_str());
  }
  return 1;
}

int ctx_expand(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  PassContext& pass = pass_or_error(L, "expand");
  const JobId id = job_arg(L, 2);
  return answer(L, pass, pass.expand(id, size_arg(L, 3)));
}

// ctx:shrink(job, n [, {nodes = {"n3", ...}}]): `nodes` names the nodes that
// leave; without it the engine picks them.
std::optional<std::vector<std::string>> shrink_nodes_arg(lua_State* L, int arg) {
  if (lua_isnoneornil(L, arg)) return std::nullopt;
  luaL_checktype(L, arg, LUA_TTABLE);
  lua_pushnil(L);
  while (lua_next(L, arg) != 0) {
    lua_pop(L, 1);  // the value; the key stays for lua_next
    if (lua_type(L, -1) != LUA_TSTRING || std::string_view(lua_tostring(L, -1)) != "nodes") {
      luaL_argerror(L, arg, "the only option is nodes");
    }
  }
  lua_getfield(L, arg, "nodes");
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    return std::nullopt;
  }
  if (!lua_istable(L, -1)) luaL_argerror(L, arg, "nodes must be a list of node names");
  std::vector<std::string> names;
  const lua_Integer count = luaL_len(L, -1);
  for (lua_Integer i = 1; i <= count; ++i) {
    if (lua_rawgeti(L, -1, i) != LUA_TSTRING) {
      luaL_argerror(L, arg, "nodes must be a list of node names");
    }
    names.emplace_back(lua_tostring(L, -1));
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  return names;
}

int ctx_shrink(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  PassContext& pass = pass_or_error(L, "shrink");
  const JobId id = job_arg(L, 2);
  const int size = size_arg(L, 3);
  return answer(L, pass, pass.shrink(id, size, shrink_nodes_arg(L, 4)));
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

int ctx_suspend(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  PassContext& pass = pass_or_error(L, "suspend");
  return answer(L, pass, pass.suspend(job_arg(L, 2)));
}

int ctx_resume(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  PassContext& pass = pass_or_error(L, "resume");
  return answer(L, pass, pass.resume(job_arg(L, 2)));
}

int ctx_reserve(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  PassContext& pass = pass_or_error(L, "reserve");
  const JobId id = job_arg(L, 2);
  const double time = luaL_checknumber(L, 3);
  // A reservation holds no node now: ctx.nodes_idle stands.
  return verdict_of(L, pass.reserve(id, time));
}

// ctx's __index: the lazily built lists and ctx.power. ctx.running (and ctx.suspended) is a fresh
// plain table of the running (suspended) jobs, made on first read in a pass (a policy may sort it).
// ctx.pending is a plain sequence kept across passes and patched on first read in a pass
// (lua_pending_list.cpp): read-only by contract, with the common ways of changing it refused.
int ctx_index(lua_State* L) {
  const char* key = lua_tostring(L, 2);
  if (key && (std::string_view(key) == "pending" || std::string_view(key) == "running" ||
              std::string_view(key) == "suspended")) {
    PassContext& pass = pass_or_error(L, key);
    LuaRuntime& rt = LuaRuntime::of(L);
    LuaRuntime::CtxLazyField field = LuaRuntime::kCtxPending;
    if (key[0] == 'r') {
      rt.push_job_list(pass, pass.running());
      field = LuaRuntime::kCtxRunning;
    } else if (key[0] == 's') {
      rt.push_job_list(pass, pass.suspended());
      field = LuaRuntime::kCtxSuspended;
    } else {
      rt.push_pending_list(pass);
    }
    lua_pushvalue(L, -1);
    lua_setfield(L, 1, key);
    rt.note_ctx_lazy_field(field);
    return 1;
  }
  if (key && std::string_view(key) == "power") {
    PassContext& pass = pass_or_error(L, key);
    LuaRuntime& rt = LuaRuntime::of(L);
    rt.push_power(pass);
    lua_pushvalue(L, -1);
    lua_setfield(L, 1, key);
    rt.note_ctx_lazy_field(LuaRuntime::kCtxPower);
    return 1;
  }
  return 0;  // the methods are ctx's own fields (add_ctx_methods)
}

int pending_write(lua_State* L) {
  return luaL_error(L, "ctx.pending is read-only (copy it to change or sort it)");
}

// table.sort and the others, refusing ctx.pending. Upvalue 1: the original;
// `dest`: the argument that names the table written to.
template <int dest>
int guarded(lua_State* L) {
  const int target = (dest == 5 && lua_gettop(L) >= 5) ? 5 : 1;
  lua_rawgeti(L, LUA_REGISTRYINDEX, LuaRuntime::of(L).pending_list_ref());
  const bool pending = lua_rawequal(L, target, -1);
  lua_pop(L, 1);
  if (pending) return pending_write(L);
  const int nargs = lua_gettop(L);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, nargs, LUA_MULTRET);
  return lua_gettop(L);
}

// A position of ctx.pending not filled yet (lua_pending_list.cpp).
int pending_index(lua_State* L) {
  if (!lua_isinteger(L, 2)) return 0;
  const lua_Integer index = lua_tointeger(L, 2);
  LuaRuntime& rt = LuaRuntime::of(L);
  if (!rt.pass() || index < 1 || static_cast<std::size_t>(index) > rt.pending_size()) return 0;
  rt.fill_pending(static_cast<std::size_t>(index));
  lua_rawgeti(L, 1, index);
  return 1;
}

int pending_len(lua_State* L) {
  lua_pushinteger(L, static_cast<lua_Integer>(LuaRuntime::of(L).pending_size()));
  return 1;
}

// pairs(ctx.pending) sees the whole queue: filled first.
int pending_pairs(lua_State* L) {
  LuaRuntime& rt = LuaRuntime::of(L);
  if (rt.pass()) rt.fill_pending(rt.pending_size());
  lua_getglobal(L, "next");
  lua_pushvalue(L, 1);
  lua_pushnil(L);
  return 3;
}

}  // namespace

void push_pending_metatable(lua_State* L) {
  lua_createtable(L, 0, 5);
  lua_pushcfunction(L, pending_index);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, pending_len);
  lua_setfield(L, -2, "__len");
  lua_pushcfunction(L, pending_pairs);
  lua_setfield(L, -2, "__pairs");
  lua_pushcfunction(L, pending_write);
  lua_setfield(L, -2, "__newindex");
  lua_pushliteral(L, "sched.pending");
  lua_setfield(L, -2, "__metatable");
}

void guard_table_library(lua_State* L) {
  lua_getglobal(L, LUA_TABLIBNAME);
  const std::pair<const char*, lua_CFunction> guards[] = {
      {"sort", guarded<1>}, {"insert", guarded<1>}, {"remove", guarded<1>}, {"move", guarded<5>}};
  for (const auto& [name, fn] : guards) {
    lua_getfield(L, -1, name);
    lua_pushcclosure(L, fn, 1);
    lua_setfield(L, -2, name);
  }
  lua_pop(L, 1);
}

void add_ctx_methods(lua_State* L) {
  static const luaL_Reg methods[] = {{"start", ctx_start},
                                     {"expand", ctx_expand},
                                     {"shrink", ctx_shrink},
                                     {"request_perf", ctx_request_perf},
                                     {"preempt", ctx_preempt},
                                     {"reserve", ctx_reserve},
                                     {"suspend", ctx_suspend},
                                     {"resume", ctx_resume},
                                     {"earliest_start", ctx_earliest_start},
                                     {"release_profile", ctx_release_profile},
                                     {"next_fit", ctx_next_fit},
                                     {"free_cores", ctx_free_cores},
                                     {nullptr, nullptr}};
  luaL_setfuncs(L, methods, 0);
}

void push_ctx_index(lua_State* L) { lua_pushcfunction(L, ctx_index); }

}  // namespace sched
