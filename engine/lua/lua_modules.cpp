// The modules a policy may require: sched.constraints, sched.log, sched.lp, and the
// shared Lua helpers under the policy folder's lib/ (require("lib.name")).
#include <spdlog/spdlog.h>

#include <cctype>
#include <fstream>
#include <sstream>

#include "lua_lp.hpp"
#include "lua_runtime.hpp"
#include "sched/constraints.hpp"

namespace sched {
namespace {

NodeConstraint constraint_arg(lua_State* L, int arg) {
  const char* name = luaL_checkstring(L, arg);
  auto constraint = parse_node_constraint(name);
  if (!constraint) luaL_argerror(L, arg, "unknown node constraint (none, pof2, even, odd, ncube)");
  return *constraint;
}

int int_arg(lua_State* L, int arg) { return static_cast<int>(luaL_checkinteger(L, arg)); }

void push_optional(lua_State* L, const std::optional<int>& value) {
  if (value) {
    lua_pushinteger(L, *value);
  } else {
    lua_pushnil(L);
  }
}

// constraints.allowed(c, lo, hi) → {sizes...}
int c_allowed(lua_State* L) {
  const auto sizes = allowed_sizes(constraint_arg(L, 1), int_arg(L, 2), int_arg(L, 3));
  lua_createtable(L, static_cast<int>(sizes.size()), 0);
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    lua_pushinteger(L, sizes[i]);
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  return 1;
}

int c_is_allowed(lua_State* L) {
  lua_pushboolean(L, is_allowed_size(constraint_arg(L, 1), int_arg(L, 2)));
  return 1;
}

// constraints.highest(c, lo, hi, bound): largest allowed size ≤ bound.
int c_highest(lua_State* L) {
  push_optional(L, highest_allowed_at_most(constraint_arg(L, 1), int_arg(L, 2), int_arg(L, 3),
                                           int_arg(L, 4)));
  return 1;
}

// constraints.lowest(c, lo, hi, bound): smallest allowed size ≥ bound.
int c_lowest(lua_State* L) {
  push_optional(L, lowest_allowed_at_least(constraint_arg(L, 1), int_arg(L, 2), int_arg(L, 3),
                                           int_arg(L, 4)));
  return 1;
}

// constraints.next_lower(c, lo, hi, current, needed): the shrink target.
int c_next_lower(lua_State* L) {
  push_optional(L, shrink_target(constraint_arg(L, 1), int_arg(L, 2), int_arg(L, 3), int_arg(L, 4),
                                 int_arg(L, 5)));
  return 1;
}

int open_constraints(lua_State* L) {
  static const luaL_Reg fns[] = {{"allowed", c_allowed},       {"is_allowed", c_is_allowed},
                                 {"highest", c_highest},       {"lowest", c_lowest},
                                 {"next_lower", c_next_lower}, {nullptr, nullptr}};
  luaL_newlib(L, fns);
  return 1;
}

std::string joined_args(lua_State* L) {
  std::string line;
  for (int i = 1; i <= lua_gettop(L); ++i) {
    if (i > 1) line += ' ';
    line += luaL_tolstring(L, i, nullptr);
    lua_pop(L, 1);
  }
  return line;
}

template <spdlog::level::level_enum Level>
int log_at(lua_State* L) {
  if (spdlog::should_log(Level)) spdlog::log(Level, "[policy] {}", joined_args(L));
  return 0;
}

int open_log(lua_State* L) {
  static const luaL_Reg fns[] = {{"debug", log_at<spdlog::level::debug>},
                                 {"info", log_at<spdlog::level::info>},
                                 {"warn", log_at<spdlog::level::warn>},
                                 {"error", log_at<spdlog::level::err>},
                                 {nullptr, nullptr}};
  luaL_newlib(L, fns);
  return 1;
}

bool valid_lib_name(std::string_view name) {
  if (name.empty() || name.front() == '.' || name.back() == '.') return false;
  char prev = 0;
  for (char c : name) {
    if (c == '.' && prev == '.') return false;
    if (c != '.' && c != '_' && !std::isalnum(static_cast<unsigned char>(c))) return false;
    prev = c;
  }
  return true;
}

// require(name): sched.* built-ins, or lib.<name> from the lib folder.
// Modules are loaded once per state and cached in the registry.
// Pushes lib/NAME.lua (dots in NAME are folders) as a loaded chunk, or the
// reason it cannot be, returning false. It raises no Lua error itself, so
// its C++ objects are always destroyed before the caller raises one.
bool load_lib(lua_State* L, std::string_view lib_name, const char* module) {
  std::string rel(lib_name);
  for (char& c : rel) {
    if (c == '.') c = '/';
  }
  const std::string path = LuaRuntime::of(L).lib_dir() + "/" + rel + ".lua";
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    lua_pushfstring(L, "module '%s' not found (no file %s)", module, path.c_str());
    return false;
  }
  std::ostringstream text;
  text << in.rdbuf();
  const std::string source = text.str();
  const std::string chunkname = "@lib/" + rel + ".lua";
  // Recorded before it is parsed: an edit that breaks it is watched too.
  LuaRuntime::of(L).note_source({path, chunkname.substr(1), source});
  return luaL_loadbufferx(L, source.data(), source.size(), chunkname.c_str(), "t") == LUA_OK;
}

int sandbox_require(lua_State* L) {
  const char* name = luaL_checkstring(L, 1);
  lua_getfield(L, LUA_REGISTRYINDEX, "sched.loaded");
  lua_getfield(L, -1, name);
  if (!lua_isnil(L, -1)) return 1;
  lua_pop(L, 1);
  const std::string_view module(name);
  if (module == "sched.constraints") {
    open_constraints(L);
  } else if (module == "sched.log") {
    open_log(L);
  } else if (module == "sched.lp") {
    open_lp(L);
  } else if (module.rfind("lib.", 0) == 0 && valid_lib_name(module.substr(4))) {
    if (!load_lib(L, module.substr(4), name)) return lua_error(L);
    lua_pushstring(L, name);
    lua_call(L, 1, 1);
    if (lua_isnil(L, -1)) {
      lua_pop(L, 1);
      lua_pushboolean(L, 1);
    }
  } else {
    return luaL_error(L,
                      "module '%s' is not available to policies (sched.constraints, "
                      "sched.log, sched.lp, lib.<name>)",
                      name);
  }
  lua_pushvalue(L, -1);
  lua_setfield(L, -3, name);
  return 1;
}

}  // namespace

void open_sched_modules(lua_State* L) {
  lua_newtable(L);
  lua_setfield(L, LUA_REGISTRYINDEX, "sched.loaded");
  lua_register(L, "require", sandbox_require);
}

}  // namespace sched
