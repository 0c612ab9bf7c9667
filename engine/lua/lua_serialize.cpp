// Plain Lua data as a Lua constructor expression: how P.save() output
// crosses from the old policy state into the new one on reload.
#include <cmath>
#include <cstdio>
#include <set>

#include "lua_runtime.hpp"

namespace sched {
namespace {

constexpr int kMaxDepth = 64;

void append_number(lua_State* L, int index, std::string& out) {
  if (lua_isinteger(L, index)) {
    const lua_Integer v = lua_tointeger(L, index);
    // "-9223372036854775808" would read back as a float (minus applied to
    // a literal too large for an integer); write it as integer arithmetic.
    out += v == LUA_MININTEGER ? "(" + std::to_string(v + 1) + "-1)" : std::to_string(v);
    return;
  }
  const double v = lua_tonumber(L, index);
  if (std::isnan(v)) {
    out += "(0/0)";
  } else if (std::isinf(v)) {
    out += v > 0 ? "(1/0)" : "(-1/0)";
  } else {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    out += buf;
    if (std::string_view(buf).find_first_of(".eE") == std::string_view::npos) out += ".0";
  }
}

void append_string(lua_State* L, int index, std::string& out) {
  std::size_t len = 0;
  const char* s = lua_tolstring(L, index, &len);
  out += '"';
  for (std::size_t i = 0; i < len; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 32 || c == 127) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\%03u", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '"';
}

std::optional<std::string> serialize(lua_State* L, int index, std::string& out, int depth,
                                     std::set<const void*>& open) {
  index = lua_absindex(L, index);
  switch (lua_type(L, index)) {
    case LUA_TNIL:
      out += "nil";
      return std::nullopt;
    case LUA_TBOOLEAN:
      out += lua_toboolean(L, index) ? "true" : "false";
      return std::nullopt;
    case LUA_TNUMBER:
      append_number(L, index, out);
      return std::nullopt;
    case LUA_TSTRING:
      append_string(L, index, out);
      return std::nullopt;
    case LUA_TTABLE:
      break;
    default:
      return std::string("cannot carry a ") + luaL_typename(L, index) + " across a reload";
  }
  if (depth > kMaxDepth) return std::string("tables nested too deep");
  const void* id = lua_topointer(L, index);
  if (!open.insert(id).second) return std::string("the saved table contains a cycle");
  out += '{';
  lua_pushnil(L);
  while (lua_next(L, index) != 0) {
    const int kt = lua_type(L, -2);
    if (kt != LUA_TSTRING && kt != LUA_TNUMBER && kt != LUA_TBOOLEAN) {
      lua_pop(L, 2);
      return std::string("table keys must be strings, numbers or booleans");
    }
    out += '[';
    lua_pushvalue(L, -2);  // a copy: lua_tolstring must not touch the key lua_next uses
    auto error = serialize(L, -1, out, depth + 1, open);
    lua_pop(L, 1);
    if (error) {
      lua_pop(L, 2);
      return error;
    }
    out += "]=";
    if ((error = serialize(L, -1, out, depth + 1, open))) {
      lua_pop(L, 2);
      return error;
    }
    out += ',';
    lua_pop(L, 1);
  }
  out += '}';
  open.erase(id);
  return std::nullopt;
}

}  // namespace

std::optional<std::string> serialize_lua_value(lua_State* L, int index, std::string& out) {
  std::set<const void*> open;
  return serialize(L, index, out, 0, open);
}

}  // namespace sched
