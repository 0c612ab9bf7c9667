// The sandboxed Lua state of one policy and the calls into it.
#include "lua_runtime.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "sched/engine.hpp"
#include "sched/lua_sandbox.hpp"
#include "sched/pass_context.hpp"

namespace sched {
namespace {

// The count hook, once a call has run long enough to be watched
// (lua_watchdog.hpp), fires every kHookStep VM instructions.
constexpr int kHookStep = 1000;

void* bounded_alloc(void* ud, void* ptr, std::size_t osize, std::size_t nsize) {
  auto* budget = static_cast<MemoryBudget*>(ud);
  const std::size_t old = ptr ? osize : 0;
  if (nsize == 0) {
    std::free(ptr);
    budget->used -= old;
    return nullptr;
  }
  if (nsize > old && budget->used - old + nsize > budget->limit) {
    budget->exceeded = true;
    return nullptr;
  }
  void* block = std::realloc(ptr, nsize);
  if (block) budget->used = budget->used - old + nsize;
  return block;
}

// Checks the instruction and time bounds. Once one is hit, the hook fires
// at every instruction and raises again, so a pcall in the policy cannot go
// on. No C++ object with a destructor lives here: luaL_error longjmps.
void count_hook(lua_State* L, lua_Debug* /*ar*/) {
  LuaRuntime& rt = LuaRuntime::of(L);
  rt.note_instructions(rt.bound_exceeded() ? 1 : kHookStep);
  if (rt.bound_exceeded()) {
    lua_sethook(L, count_hook, LUA_MASKCOUNT, 1);
    lua_Debug where;
    if (lua_getstack(L, 0, &where) && lua_getinfo(L, "Sl", &where) && where.currentline > 0) {
      luaL_error(L, "%s:%d: %s", where.short_src, where.currentline, rt.bound_message().c_str());
    }
    luaL_error(L, "%s", rt.bound_message().c_str());
  }
}

// CallWatch's arm: runs in a signal handler on the thread of the call.
void arm_count_hook(lua_State* L) { lua_sethook(L, count_hook, LUA_MASKCOUNT, kHookStep); }

int message_handler(lua_State* L) {
  if (lua_type(L, 1) == LUA_TSTRING) return 1;
  if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) return 1;
  lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  return 1;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    PolicyFailure failure;
    failure.code = PolicyFailureCode::Io;
    failure.message = "cannot read policy file " + path + ": " + std::strerror(errno);
    failure.file = path;
    throw PolicyLoadError(std::move(failure));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

int sandbox_print(lua_State* L) {
  const int n = lua_gettop(L);
  std::string line;
  for (int i = 1; i <= n; ++i) {
    if (i > 1) line += '\t';
    line += luaL_tolstring(L, i, nullptr);
    lua_pop(L, 1);
  }
  spdlog::info("[policy] {}", line);
  return 0;
}

int undefined_global_read(lua_State* L) {
  return luaL_error(L, "undefined global '%s'", luaL_tolstring(L, 2, nullptr));
}

int undefined_global_write(lua_State* L) {
  return luaL_error(L, "assignment to undeclared global '%s' (use local)",
                    luaL_tolstring(L, 2, nullptr));
}

// A job table is the engine's view: a new field is an error (an existing
// one cannot be guarded without a proxy; see lua_job_tables.cpp).
int readonly_write(lua_State* L) {
  return luaL_error(L, "job tables are read-only (field '%s')", luaL_tolstring(L, 2, nullptr));
}

int job_tostring(lua_State* L) {
  lua_getfield(L, 1, "id");
  lua_pushfstring(L, "job %s", luaL_tolstring(L, -1, nullptr));
  return 1;
}

void push_params(lua_State* L, const PolicyParams& params);

// 0.5 → "0.5", 2 → "2": the bound as configured, without trailing zeros.
std::string format_seconds(double s) {
  std::string text = std::to_string(s);
  while (text.size() > 1 && text.back() == '0') text.pop_back();
  if (text.back() == '.') text.pop_back();
  return text;
}

// A protected trampoline: everything that allocates in Lua during a pass
// runs inside lua_pcall, so an allocation failure is a Lua error, never a
// panic. Upvalue 1: the runtime; stack: the function to call and its args.
struct TrampolineArgs {
  LuaRuntime* rt;
  PassContext* ctx;
};

}  // namespace

LuaRuntime& LuaRuntime::of(lua_State* L) {
  return **static_cast<LuaRuntime**>(lua_getextraspace(L));
}

LuaRuntime::LuaRuntime(const std::string& policy_path, const LuaPolicyOptions& options)
    : path_(policy_path),
      instruction_limit_(options.instruction_limit),
      time_limit_s_(options.clock ? options.time_limit_s : 0),
      clock_(options.clock),
      seed_(options.seed),
      params_(options.params) {
  namespace fs = std::filesystem;
  display_name_ = fs::path(policy_path).filename().string();
  lib_dir_ = options.lib_dir.empty() ? (fs::path(policy_path).parent_path() / "lib").string()
                                     : options.lib_dir;
  memory_.limit = options.memory_limit;
  L_ = lua_newstate(bounded_alloc, &memory_);
  if (!L_) {
    throw PolicyLoadError(PolicyFailure{
        PolicyFailureCode::Memory, "cannot create a Lua state (memory limit too low?)", "", 0});
  }
  *static_cast<LuaRuntime**>(lua_getextraspace(L_)) = this;
  watch_ = std::make_unique<CallWatch>(L_, arm_count_hook);
  open_sandbox();
}

LuaRuntime::~LuaRuntime() {
  watch_.reset();
  if (L_) lua_close(L_);
}

void LuaRuntime::note_instructions(int count) {
  executed_ += static_cast<std::uint64_t>(count);
  if (bound_exceeded()) return;
  if (executed_ > instruction_limit_) {
    bound_exceeded_ = true;
    bound_message_ = "instruction limit (" + std::to_string(instruction_limit_) + ") exceeded";
  } else if (time_limit_s_ > 0 && clock_->monotonic() > deadline_) {
    // Every kHookStep instructions (a few microseconds): a looping policy
    // holds the daemon's loop at most this little past its bound.
    bound_exceeded_ = true;
    bound_message_ = "time limit (" + format_seconds(time_limit_s_) + " s) exceeded";
  }
}

void LuaRuntime::open_sandbox() {
  open_lua_sandbox(L_, sandbox_print, static_cast<lua_Integer>(seed_));
  open_sched_modules(L_);

  // Every job table shares one metatable. Its __index finds the field's
  // code in the map it holds as upvalue 1: one table read, no string compares.
  push_job_codes();
  ref_job_codes_ = luaL_ref(L_, LUA_REGISTRYINDEX);
  lua_createtable(L_, 0, 5);
  lua_rawgeti(L_, LUA_REGISTRYINDEX, ref_job_codes_);
  lua_pushcclosure(L_, job_cold_field, 1);
  lua_setfield(L_, -2, "__index");
  lua_pushcfunction(L_, job_pairs);
  lua_setfield(L_, -2, "__pairs");
  lua_pushcfunction(L_, readonly_write);
  lua_setfield(L_, -2, "__newindex");
  lua_pushcfunction(L_, job_tostring);
  lua_setfield(L_, -2, "__tostring");
  lua_pushliteral(L_, "sched.job");
  lua_setfield(L_, -2, "__metatable");  // getmetatable/setmetatable cannot tamper
  ref_job_mt_ = luaL_ref(L_, LUA_REGISTRYINDEX);
  lua_newtable(L_);
  ref_jobs_ = luaL_ref(L_, LUA_REGISTRYINDEX);
  push_job_keys();
  ref_job_keys_ = luaL_ref(L_, LUA_REGISTRYINDEX);
  push_job_maker();
  ref_job_maker_ = luaL_ref(L_, LUA_REGISTRYINDEX);

  // Refusals print as their message.
  lua_newtable(L_);
  lua_pushcfunction(L_, [](lua_State* L) -> int {
    lua_getfield(L, 1, "message");
    return 1;
  });
  lua_setfield(L_, -2, "__tostring");
  ref_refusal_mt_ = luaL_ref(L_, LUA_REGISTRYINDEX);

  // ctx: the methods are its own fields; others are set per pass; the lazy
  // lists come from __index.
  lua_createtable(L_, 0, 32);
  add_ctx_methods(L_);
  lua_newtable(L_);
  push_ctx_index(L_);
  lua_setfield(L_, -2, "__index");
  lua_setmetatable(L_, -2);
  ref_ctx_ = luaL_ref(L_, LUA_REGISTRYINDEX);

  // ctx.pending: one plain sequence for the life of the state (lua_pending_list.cpp).
  lua_newtable(L_);
  push_pending_metatable(L_);
  lua_setmetatable(L_, -2);
  ref_pending_list_ = luaL_ref(L_, LUA_REGISTRYINDEX);
  guard_table_library(L_);

  // ctx.params: the same table every pass (the parameters do not change
  // while a policy state lives).
  push_params(L_, params_);
  ref_params_ = luaL_ref(L_, LUA_REGISTRYINDEX);
}

void LuaRuntime::lock_globals() {
  lua_pushglobaltable(L_);
  lua_newtable(L_);
  lua_pushcfunction(L_, undefined_global_read);
  lua_setfield(L_, -2, "__index");
  lua_pushcfunction(L_, undefined_global_write);
  lua_setfield(L_, -2, "__newindex");
  lua_setmetatable(L_, -2);
  lua_pop(L_, 1);
}

std::optional<PolicyFailure> LuaRuntime::call_bounded(int nargs, int nresults) {
  executed_ = 0;
  bound_exceeded_ = false;
  if (time_limit_s_ > 0) deadline_ = clock_->monotonic() + time_limit_s_;
  memory_.exceeded = false;
  // No hook until the call has run for a while: the watch sets it then.
  lua_sethook(L_, nullptr, 0, 0);
  const int base = lua_gettop(L_) - nargs;
  lua_pushcfunction(L_, message_handler);
  lua_insert(L_, base);
  watch_->begin();
  const int status = lua_pcall(L_, nargs, nresults, base);
  watch_->end();
  lua_sethook(L_, nullptr, 0, 0);
  lua_remove(L_, base);
  std::optional<PolicyFailure> error;
  if (status != LUA_OK) {
    const char* msg = lua_tostring(L_, -1);
    error = PolicyFailure::from_lua(
        bound_exceeded() ? PolicyFailureCode::Timeout : PolicyFailureCode::Runtime,
        msg ? msg : "unknown Lua error");
    lua_pop(L_, 1);
  }
  // A policy that caught the bound's error with pcall still failed.
  if (bound_exceeded() && !error) {
    error = PolicyFailure{PolicyFailureCode::Timeout, bound_message_, "", 0};
  }
  if (memory_.exceeded) {
    if (!error || status == LUA_ERRMEM) {
      error = PolicyFailure{PolicyFailureCode::Memory,
                            "memory limit (" + std::to_string(memory_.limit) + " bytes) exceeded",
                            "", 0};
    }
    if (status == LUA_OK) {
      lua_pop(L_, nresults == LUA_MULTRET ? 0 : nresults);
      if (nresults != LUA_MULTRET) {
        for (int i = 0; i < nresults; ++i) lua_pushnil(L_);
      }
    }
  }
  if (error) lua_gc(L_, LUA_GCCOLLECT);
  return error;
}

void LuaRuntime::load_policy() {
  const std::string source = read_file(path_);
  note_source({path_, display_name_, source});
  const std::string chunkname = "@" + display_name_;
  const int loaded = luaL_loadbufferx(L_, source.data(), source.size(), chunkname.c_str(), "t");
  if (loaded != LUA_OK) {
    std::string msg = lua_tostring(L_, -1);
    lua_pop(L_, 1);
    throw PolicyLoadError(PolicyFailure::from_lua(
        loaded == LUA_ERRMEM ? PolicyFailureCode::Memory : PolicyFailureCode::Syntax, msg));
  }
  if (auto error = call_bounded(0, 1)) throw PolicyLoadError(error->prefixed(display_name_ + ": "));
  // Breaches of the policy API: the file is fine Lua, the table it returns is not a policy.
  const auto api_error = [this](const std::string& why) {
    return PolicyLoadError(
        PolicyFailure{PolicyFailureCode::Api, display_name_ + ": " + why, display_name_, 0});
  };
  if (!lua_istable(L_, -1)) {
    lua_pop(L_, 1);
    throw api_error("the file must return a table (local P = {...}; return P)");
  }
  lua_getfield(L_, -1, "api");
  if (!lua_isinteger(L_, -1) || lua_tointeger(L_, -1) != 1) {
    lua_pop(L_, 2);
    throw api_error("the policy must declare api = 1");
  }
  lua_pop(L_, 1);
  lua_getfield(L_, -1, "schedule");
  if (!lua_isfunction(L_, -1)) {
    lua_pop(L_, 2);
    throw api_error("the policy has no schedule(ctx) function");
  }
  lua_pop(L_, 1);
  lua_getfield(L_, -1, "name");
  name_ = lua_type(L_, -1) == LUA_TSTRING ? lua_tostring(L_, -1)
                                          : std::filesystem::path(path_).stem().string();
  lua_pop(L_, 1);
  lua_getfield(L_, -1, "time_dependent");
  if (!lua_isnil(L_, -1) && !lua_isboolean(L_, -1)) {
    lua_pop(L_, 2);
    throw api_error("time_dependent must be a boolean");
  }
  time_dependent_ = lua_isnil(L_, -1) || lua_toboolean(L_, -1);
  lua_pop(L_, 1);
  lua_getfield(L_, -1, "idle_nodes_only");
  if (!lua_isnil(L_, -1) && !lua_isboolean(L_, -1)) {
    lua_pop(L_, 2);
    throw api_error("idle_nodes_only must be a boolean");
  }
  idle_nodes_only_ = lua_toboolean(L_, -1);
  lua_pop(L_, 1);
  for (const char* optional : {"on_event", "save", "restore"}) {
    lua_getfield(L_, -1, optional);
    const bool bad = !lua_isnil(L_, -1) && !lua_isfunction(L_, -1);
    if (std::string_view(optional) == "on_event") has_on_event_ = lua_isfunction(L_, -1);
    lua_pop(L_, 1);
    if (bad) {
      lua_pop(L_, 1);
      throw api_error(std::string(optional) + " must be a function");
    }
  }
  ref_policy_ = luaL_ref(L_, LUA_REGISTRYINDEX);
  lock_globals();
  lua_gc(L_, LUA_GCCOLLECT);
}

// ---------------------------------------------------------------- passes

namespace {

void push_params(lua_State* L, const PolicyParams& params) {
  lua_createtable(L, 0, static_cast<int>(params.size()));
  for (const auto& [key, value] : params) {
    std::visit(
        [L](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, bool>) {
            lua_pushboolean(L, v);
          } else if constexpr (std::is_same_v<T, long long>) {
            lua_pushinteger(L, static_cast<lua_Integer>(v));
          } else if constexpr (std::is_same_v<T, double>) {
            lua_pushnumber(L, v);
          } else {
            lua_pushlstring(L, v.data(), v.size());
          }
        },
        value);
    lua_setfield(L, -2, key.c_str());
  }
}

// The fields of ctx its __index sets on first read in a pass, in the order
// of LuaRuntime::CtxLazyField.
constexpr const char* kCtxLazyFields[] = {"power", "pending", "running", "suspended"};

int schedule_trampoline(lua_State* L) {
  auto* args = static_cast<TrampolineArgs*>(lua_touserdata(L, 1));
  lua_settop(L, 0);
  args->rt->run_schedule_inner(*args->ctx);
  return 0;
}

}  // namespace

void LuaRuntime::set_pass_fields(PassContext& ctx) {
  // ctx is read-only to the policy: a field keeps its value from the last
  // pass unless it changed. now and nodes_idle change nearly every pass.
  CtxShadow& last = ctx_shadow_;
  lua_rawgeti(L_, LUA_REGISTRYINDEX, ref_ctx_);
  lua_pushnumber(L_, ctx.now());
  lua_setfield(L_, -2, "now");
  lua_pushinteger(L_, ctx.nodes_idle());
  lua_setfield(L_, -2, "nodes_idle");
  if (!last.valid || last.reason != static_cast<int>(ctx.reason())) {
    const std::string_view reason = to_string(ctx.reason());
    lua_pushlstring(L_, reason.data(), reason.size());
    lua_setfield(L_, -2, "reason");
  }
  if (!last.valid || last.nodes_total != ctx.nodes_total()) {
    lua_pushinteger(L_, ctx.nodes_total());
    lua_setfield(L_, -2, "nodes_total");
  }
  if (!last.valid || last.dry != ctx.dry()) {
    lua_pushboolean(L_, ctx.dry());
    lua_setfield(L_, -2, "dry");
  }
  // The partition whose pass this is (issue 20 item 1); nil without partitions.
  if (!last.valid || last.partition != ctx.partition()) {
    if (ctx.partition() >= 0) {
      lua_pushlstring(L_, ctx.partition_name().data(), ctx.partition_name().size());
    } else {
      lua_pushnil(L_);
    }
    lua_setfield(L_, -2, "partition");
  }
  const auto first = ctx.appended();
  if (!last.valid || first || last.appended) {
    if (first) {
      lua_pushinteger(L_, static_cast<lua_Integer>(*first) + 1);
    } else {
      lua_pushnil(L_);
    }
    lua_setfield(L_, -2, "appended");
  }
  // #ctx.suspended without building the list: a policy that resumes jobs
  // looks at it every pass, and there is seldom one.
  const std::size_t suspended = ctx.suspended().size();
  if (!last.valid || last.suspended != suspended) {
    lua_pushinteger(L_, static_cast<lua_Integer>(suspended));
    lua_setfield(L_, -2, "suspended_count");
  }
  if (!last.valid) {
    lua_rawgeti(L_, LUA_REGISTRYINDEX, ref_params_);
    lua_setfield(L_, -2, "params");
  }
  // The lists and ctx.power are built when the policy first reads them
  // (ctx's __index); those of the last pass are cleared. But ctx.pending,
  // one table for the life of the state, stays when the last pass read it
  // (a policy that reads it reads it every pass): it is brought up to date
  // now, which spares the pass a call of __index (issue 15).
  const bool keep_pending = last.valid && (ctx_lazy_set_ & (1u << kCtxPending)) != 0;
  for (std::size_t i = 0; i < std::size(kCtxLazyFields); ++i) {
    if (last.valid && (ctx_lazy_set_ & (1u << i)) == 0) continue;
    if (i == kCtxPending && keep_pending) continue;
    lua_pushnil(L_);
    lua_setfield(L_, -2, kCtxLazyFields[i]);
  }
  ctx_lazy_set_ = 0;
  if (keep_pending) {
    push_pending_list(ctx);
    lua_pop(L_, 1);
    note_ctx_lazy_field(kCtxPending);
  }
  last = CtxShadow{true,
                   static_cast<int>(ctx.reason()),
                   ctx.nodes_total(),
                   ctx.dry(),
                   ctx.partition(),
                   first.has_value(),
                   suspended};
}

void LuaRuntime::run_schedule_inner(PassContext& ctx) {
  refresh_touched_jobs(ctx);
  set_pass_fields(ctx);  // leaves ctx on the stack
  lua_rawgeti(L_, LUA_REGISTRYINDEX, ref_policy_);
  lua_getfield(L_, -1, "schedule");
  lua_remove(L_, -2);
  lua_insert(L_, -2);  // schedule, ctx
  lua_call(L_, 1, 0);
}

std::optional<PolicyFailure> LuaRuntime::run_schedule(PassContext& ctx) {
  pass_ = &ctx;
  cluster_ = &ctx.cluster();
  TrampolineArgs args{this, &ctx};
  lua_pushcfunction(L_, schedule_trampoline);
  lua_pushlightuserdata(L_, &args);
  auto error = call_bounded(1, 0);
  pass_ = nullptr;
  sweep_job_tables(ctx);
  return error;
}

void LuaRuntime::push_power(PassContext& ctx) {
  const PowerView power = ctx.power();
  lua_createtable(L_, 0, 4);
  lua_pushnumber(L_, power.lower_w);
  lua_setfield(L_, -2, "lower");
  lua_pushnumber(L_, power.upper_w);
  lua_setfield(L_, -2, "upper");
  lua_pushnumber(L_, power.current_w);
  lua_setfield(L_, -2, "current_w");
  lua_pushnumber(L_, power.idle_w_per_node);
  lua_setfield(L_, -2, "idle_w_per_node");
}

void LuaRuntime::push_refusal(const Refusal& refusal) {
  lua_createtable(L_, 0, 6);
  const std::string_view code = to_string(refusal.code);
  lua_pushlstring(L_, code.data(), code.size());
  lua_setfield(L_, -2, "code");
  lua_pushinteger(L_, refusal.job);
  lua_setfield(L_, -2, "job");
  lua_pushinteger(L_, refusal.want);
  lua_setfield(L_, -2, "want");
  lua_pushinteger(L_, refusal.have);
  lua_setfield(L_, -2, "have");
  lua_pushlstring(L_, refusal.detail.data(), refusal.detail.size());
  lua_setfield(L_, -2, "detail");
  const std::string message = refusal.message();
  lua_pushlstring(L_, message.data(), message.size());
  lua_setfield(L_, -2, "message");
  lua_rawgeti(L_, LUA_REGISTRYINDEX, ref_refusal_mt_);
  lua_setmetatable(L_, -2);
}

// ---------------------------------------------------------------- other calls

std::optional<PolicyFailure> LuaRuntime::run_on_event(const Event& event) {
  // Most policies have none: no look-up per event (a replay has several per job).
  if (!has_on_event_) return std::nullopt;
  lua_rawgeti(L_, LUA_REGISTRYINDEX, ref_policy_);
  lua_getfield(L_, -1, "on_event");
  lua_remove(L_, -2);
  if (lua_isnil(L_, -1)) {
    lua_pop(L_, 1);
    return std::nullopt;
  }
  lua_rawgeti(L_, LUA_REGISTRYINDEX, ref_ctx_);
  lua_pushnumber(L_, event.time);
  lua_setfield(L_, -2, "now");
  lua_createtable(L_, 0, 10);
  const std::string_view t = topic(event.type);
  lua_pushlstring(L_, t.data(), t.size());
  lua_setfield(L_, -2, "topic");
  lua_pushnumber(L_, event.time);
  lua_setfield(L_, -2, "time");
  if (event.job != 0) {
    lua_pushinteger(L_, event.job);
    lua_setfield(L_, -2, "job");
    const std::string_view from = to_string(event.from);
    const std::string_view to = to_string(event.to);
    lua_pushlstring(L_, from.data(), from.size());
    lua_setfield(L_, -2, "from");
    lua_pushlstring(L_, to.data(), to.size());
    lua_setfield(L_, -2, "to");
  }
  lua_pushinteger(L_, event.nodes);
  lua_setfield(L_, -2, "nodes");
  lua_pushinteger(L_, event.prev_nodes);
  lua_setfield(L_, -2, "prev_nodes");
  push_event_fields(event);
  if (!event.node.empty()) {
    lua_pushlstring(L_, event.node.data(), event.node.size());
    lua_setfield(L_, -2, "node");
  }
  if (!event.message.empty()) {
    lua_pushlstring(L_, event.message.data(), event.message.size());
    lua_setfield(L_, -2, "message");
  }
  return call_bounded(2, 0);
}

void LuaRuntime::push_event_fields(const Event& event) {
  // The table is at the top of the stack. docs/policy-api.md §5 lists what
  // each topic carries.
  const auto set_num = [this](const char* key, double v) {
    lua_pushnumber(L_, v);
    lua_setfield(L_, -2, key);
  };
  const auto set_str = [this](const char* key, std::string_view v) {
    lua_pushlstring(L_, v.data(), v.size());
    lua_setfield(L_, -2, key);
  };
  // API version 1 had one number per event; it stays for policies written
  // against it: the expected start, the corridor's lower bound, else 0.
  double value = 0;
  switch (event.type) {
    case EventType::JobReserved:
      set_num("expected_start", event.expected_start);
      value = event.expected_start;
      break;
    case EventType::PowerCorridor:
      set_num("lower_w", event.lower_w);
      set_num("upper_w", event.upper_w);
      value = event.lower_w;
      break;
    case EventType::PowerViolation:
      set_num("power_w", event.power_w);
      set_num("lower_w", event.lower_w);
      set_num("upper_w", event.upper_w);
      set_str("reason", event.reason);
      break;
    case EventType::PolicyError:
    case EventType::PolicyReverted:
      if (!event.code.empty()) set_str("code", event.code);
      if (!event.file.empty()) set_str("file", event.file);
      if (event.line > 0) {
        lua_pushinteger(L_, event.line);
        lua_setfield(L_, -2, "line");
      }
      break;
    default:
      break;
  }
  set_num("value", value);
}

std::optional<PolicyFailure> LuaRuntime::run_save(std::string* source, bool* present) {
  lua_rawgeti(L_, LUA_REGISTRYINDEX, ref_policy_);
  lua_getfield(L_, -1, "save");
  lua_remove(L_, -2);
  if (lua_isnil(L_, -1)) {
    lua_pop(L_, 1);
    *present = false;
    return std::nullopt;
  }
  *present = true;
  if (auto error = call_bounded(0, 1)) return error->prefixed("save: ");
  std::string out;
  auto error = serialize_lua_value(L_, -1, out);
  lua_pop(L_, 1);
  // Not plain data (a function, a cycle): the policy API's rule for save.
  if (error) return PolicyFailure{PolicyFailureCode::Api, "save: " + *error, "", 0};
  *source = "return " + out;
  return std::nullopt;
}

std::optional<PolicyFailure> LuaRuntime::run_restore(const std::string& source) {
  lua_rawgeti(L_, LUA_REGISTRYINDEX, ref_policy_);
  lua_getfield(L_, -1, "restore");
  lua_remove(L_, -2);
  if (lua_isnil(L_, -1)) {
    lua_pop(L_, 1);
    return std::nullopt;
  }
  if (luaL_loadbufferx(L_, source.data(), source.size(), "=(saved state)", "t") != LUA_OK) {
    std::string msg = lua_tostring(L_, -1);
    lua_pop(L_, 2);
    return PolicyFailure{PolicyFailureCode::Runtime, "restore: " + msg, "", 0};
  }
  if (auto error = call_bounded(0, 1)) {
    lua_pop(L_, 1);
    return error->prefixed("restore: ");
  }
  if (auto error = call_bounded(1, 0)) return error->prefixed("restore: ");
  return std::nullopt;
}

}  // namespace sched
