#include "sched/invasive/lua_host.hpp"

#include <filesystem>
#include <fstream>
#include <lua.hpp>
#include <sstream>

#include "sched/lua_sandbox.hpp"

namespace sched::invasive {

// A state with its bounds. The allocator and the count hook find it through
// the allocator's user data and the state's extra space.
struct LuaHost::State {
  lua_State* L = nullptr;
  std::size_t used = 0;
  std::size_t limit = 0;
  std::uint64_t executed = 0;
  std::uint64_t instruction_limit = 0;
  // Bytes allowed past the limit while the host reads a call's results, so
  // that reading cannot run out of memory outside a protected call.
  std::size_t slack = 0;
  int ref_policy = LUA_NOREF;
  ~State() {
    if (L) lua_close(L);
  }
};

namespace {

constexpr int kHookStep = 1000;

void* bounded_alloc(void* ud, void* ptr, std::size_t old_size, std::size_t new_size) {
  auto* s = static_cast<LuaHost::State*>(ud);
  const std::size_t old = ptr ? old_size : 0;
  if (new_size == 0) {
    std::free(ptr);
    s->used -= old;
    return nullptr;
  }
  if (new_size > old && s->used - old + new_size > s->limit + s->slack) return nullptr;
  void* p = std::realloc(ptr, new_size);
  if (p) s->used = s->used - old + new_size;
  return p;
}

LuaHost::State* state_of(lua_State* L) {
  return *static_cast<LuaHost::State**>(lua_getextraspace(L));
}

// Keeps failing once over the bound, so a pcall inside the policy cannot
// swallow it.
void count_hook(lua_State* L, lua_Debug*) {
  auto* s = state_of(L);
  s->executed += s->executed > s->instruction_limit ? 1 : kHookStep;
  if (s->executed > s->instruction_limit) {
    // From now on every instruction fails: the first one after a pcall
    // that caught the error raises it again.
    lua_sethook(L, count_hook, LUA_MASKCOUNT, 1);
    luaL_error(L, "instruction limit (%d) exceeded", static_cast<int>(s->instruction_limit));
  }
}

int quiet_print(lua_State*) { return 0; }

int locked_global(lua_State* L) {
  return luaL_error(L, "global '%s' cannot be set: globals are locked once the policy has loaded",
                    lua_tostring(L, 2) ? lua_tostring(L, 2) : "?");
}

int traceback(lua_State* L) {
  const char* msg = lua_tostring(L, 1);
  lua_pushstring(L, msg ? msg : "(error object is not a string)");
  return 1;
}

void lock_globals(lua_State* L) {
  lua_pushglobaltable(L);
  lua_newtable(L);
  lua_pushcfunction(L, locked_global);
  lua_setfield(L, -2, "__newindex");
  lua_pushliteral(L, "locked");
  lua_setfield(L, -2, "__metatable");
  lua_setmetatable(L, -2);
  lua_pop(L, 1);
}

std::optional<std::string> read_text(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return path + ": cannot be read";
  std::ostringstream text;
  text << in.rdbuf();
  out = text.str();
  return std::nullopt;
}

}  // namespace

LuaHost::LuaHost(std::string path, std::vector<std::string> required, LuaHostOptions options)
    : path_(std::move(path)), required_(std::move(required)), options_(options) {}

LuaHost::~LuaHost() = default;

std::optional<std::string> LuaHost::fail(std::string message) {
  ++failures_;
  last_error_ = message;
  return message;
}

std::optional<std::string> LuaHost::load() {
  std::string text;
  if (auto error = read_text(path_, text)) return fail(*error);
  seen_text_ = text;

  auto fresh = std::make_unique<State>();
  fresh->limit = options_.memory_limit;
  fresh->instruction_limit = options_.instruction_limit;
  lua_State* L = lua_newstate(bounded_alloc, fresh.get());
  if (!L) return fail(path_ + ": no memory for a Lua state");
  fresh->L = L;
  *static_cast<State**>(lua_getextraspace(L)) = fresh.get();
  open_lua_sandbox(L, quiet_print, 1);  // math.random: deterministic, seed 1

  const std::string file = std::filesystem::path(path_).filename().string();
  lua_pushcfunction(L, traceback);
  if (luaL_loadbufferx(L, text.data(), text.size(), ("@" + file).c_str(), "t") != LUA_OK) {
    return fail(std::string(lua_tostring(L, -1)));
  }
  fresh->executed = 0;
  lua_sethook(L, count_hook, LUA_MASKCOUNT, kHookStep);
  const int status = lua_pcall(L, 0, 1, 1);
  lua_sethook(L, nullptr, 0, 0);
  if (status != LUA_OK) return fail(std::string(lua_tostring(L, -1)));
  if (!lua_istable(L, -1)) return fail(file + ": the policy file must return a table");
  for (const std::string& function : required_) {
    lua_pushstring(L, function.c_str());
    lua_rawget(L, -2);  // raw: no metamethod runs outside a protected call
    const bool ok = lua_isfunction(L, -1);
    lua_pop(L, 1);
    if (!ok) return fail(file + ": the policy table has no function '" + function + "'");
  }
  lua_pushliteral(L, "name");
  lua_rawget(L, -2);
  std::string name = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : file;
  lua_pop(L, 1);
  fresh->ref_policy = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_settop(L, 0);
  lock_globals(L);

  if (state_) ++reloads_;
  state_ = std::move(fresh);
  L_ = L;
  name_ = std::move(name);
  last_error_.reset();
  return std::nullopt;
}

bool LuaHost::reload_if_changed() {
  std::string text;
  if (read_text(path_, text)) return false;  // gone for a moment: keep what runs
  if (text == seen_text_) return false;
  return !load().has_value();
}

namespace {

// What the protected trampoline needs: the arguments are pushed inside the
// protected call too, so that running out of the state's memory while
// building them is an error of the call, not a panic.
struct CallFrame {
  const std::function<int(lua_State*)>* push_args;
  int nresults;
};

// Arguments: the frame and the policy function.
int call_trampoline(lua_State* L) {
  auto* frame = static_cast<CallFrame*>(lua_touserdata(L, 1));
  const int nargs = (*frame->push_args)(L);
  lua_call(L, nargs, frame->nresults);
  return frame->nresults;
}

}  // namespace

std::optional<std::string> LuaHost::call(const std::string& function, int nresults,
                                         const std::function<int(lua_State*)>& push_args,
                                         const std::function<void(lua_State*, int)>& read) {
  if (!L_) return fail(path_ + ": no version of the policy has loaded");
  lua_State* L = L_;
  lua_settop(L, 0);
  lua_pushcfunction(L, traceback);        // 1
  lua_pushcfunction(L, call_trampoline);  // 2
  CallFrame frame{&push_args, nresults};
  lua_pushlightuserdata(L, &frame);  // 3
  lua_rawgeti(L, LUA_REGISTRYINDEX, state_->ref_policy);
  lua_pushstring(L, function.c_str());
  lua_rawget(L, -2);
  lua_remove(L, -2);  // 4: the function
  if (!lua_isfunction(L, -1)) {
    lua_settop(L, 0);
    return fail(name_ + ": no function '" + function + "'");
  }
  state_->executed = 0;
  lua_sethook(L, count_hook, LUA_MASKCOUNT, kHookStep);
  const int status = lua_pcall(L, 2, nresults, 1);
  lua_sethook(L, nullptr, 0, 0);
  std::optional<std::string> error;
  if (status != LUA_OK) {
    error = name_ + "." + function + ": " +
            (lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : std::string("error"));
  } else {
    state_->slack = 1u << 20;
    try {
      read(L, 2);  // the results are at 2 .. 1 + nresults
    } catch (const std::exception& e) {
      error = name_ + "." + function + " returned " + e.what();
    }
    state_->slack = 0;
  }
  lua_settop(L, 0);
  if (error) return fail(*error);
  return std::nullopt;
}

}  // namespace sched::invasive
