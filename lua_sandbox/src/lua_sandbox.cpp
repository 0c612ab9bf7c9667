#include "sched/lua_sandbox.hpp"

#include <cstddef>
#include <initializer_list>

namespace sched {

int lua_sandbox_load(lua_State* L) {
  std::size_t len = 0;
  const char* chunk = luaL_checklstring(L, 1, &len);
  const char* chunkname = luaL_optstring(L, 2, "=(load)");
  const int env = lua_isnone(L, 4) ? 0 : 4;
  if (luaL_loadbufferx(L, chunk, len, chunkname, "t") != LUA_OK) {
    luaL_pushfail(L);
    lua_insert(L, -2);
    return 2;
  }
  if (env != 0) {
    lua_pushvalue(L, env);
    if (!lua_setupvalue(L, -2, 1)) lua_pop(L, 1);
  }
  return 1;
}

void open_lua_sandbox(lua_State* L, lua_CFunction print, lua_Integer seed) {
  static const luaL_Reg libs[] = {{LUA_GNAME, luaopen_base},
                                  {LUA_STRLIBNAME, luaopen_string},
                                  {LUA_TABLIBNAME, luaopen_table},
                                  {LUA_MATHLIBNAME, luaopen_math},
                                  {LUA_UTF8LIBNAME, luaopen_utf8}};
  for (const luaL_Reg& lib : libs) {
    luaL_requiref(L, lib.name, lib.func, 1);
    lua_pop(L, 1);
  }
  // Nothing that reaches files or loads bytecode.
  for (const char* name : {"dofile", "loadfile"}) {
    lua_pushnil(L);
    lua_setglobal(L, name);
  }
  lua_register(L, "load", lua_sandbox_load);
  lua_register(L, "print", print);
  // Deterministic randomness: seeded from the run, not reseedable.
  lua_getglobal(L, LUA_MATHLIBNAME);
  lua_getfield(L, -1, "randomseed");
  lua_pushinteger(L, seed);
  lua_call(L, 1, 0);
  lua_pushnil(L);
  lua_setfield(L, -2, "randomseed");
  lua_pop(L, 1);
}

}  // namespace sched
