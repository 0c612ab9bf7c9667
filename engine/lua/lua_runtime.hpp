// The inside of a LuaPolicy: one sandboxed lua_State with its bounds, the
// cache of job tables shown to the policy, and the ctx object. Private to
// the engine library.
#pragma once

#include <cstdint>
#include <lua.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "sched/env.hpp"
#include "sched/job.hpp"
#include "sched/lua_policy.hpp"
#include "sched/policy_failure.hpp"

namespace sched {

class PassContext;
class Cluster;
struct Event;

struct MemoryBudget {
  std::size_t used = 0;
  std::size_t limit = 0;
  bool exceeded = false;
};

class LuaRuntime {
 public:
  LuaRuntime(const std::string& policy_path, const LuaPolicyOptions& options);
  ~LuaRuntime();
  LuaRuntime(const LuaRuntime&) = delete;
  LuaRuntime& operator=(const LuaRuntime&) = delete;

  static LuaRuntime& of(lua_State* L);

  // Loads, runs and checks the policy file; keeps the returned table.
  // Throws PolicyLoadError.
  void load_policy();
  const std::string& policy_name() const { return name_; }
  bool time_dependent() const { return time_dependent_; }

  std::optional<PolicyFailure> run_schedule(PassContext& ctx);
  // The body of a pass, run inside the protected trampoline.
  void run_schedule_inner(PassContext& ctx);
  std::optional<PolicyFailure> run_on_event(const Event& event);
  std::optional<PolicyFailure> run_save(std::string* source, bool* present);
  std::optional<PolicyFailure> run_restore(const std::string& source);

  std::size_t memory_used() const { return memory_.used; }
  // Every file loaded: the policy file, then lib modules as required.
  const std::vector<PolicySource>& sources() const { return sources_; }
  void note_source(PolicySource source) { sources_.push_back(std::move(source)); }

  // ---- used by the C functions bound into Lua
  PassContext* pass() const { return pass_; }
  const std::string& lib_dir() const { return lib_dir_; }
  // ctx.power: {lower, upper, current_w, idle_w_per_node}.
  void push_power(PassContext& ctx);
  // ctx.running: a fresh plain table of the running jobs.
  void push_running_list(PassContext& ctx);
  // ctx.pending: a read-only sequence filled on demand (see lua_ctx.cpp).
  void push_pending_list(PassContext& ctx);
  // ctx.pending stays an empty table so that every write to it reaches
  // __newindex and fails; the jobs it shows live in a separate store, kept
  // across passes. fill_pending fills the store up to at least position
  // `index` (1-based).
  void fill_pending(lua_Integer index);
  void push_pending_store();
  bool is_current_pending_list(int list);
  void push_refusal(const struct Refusal& refusal);
  // Calls the function at the top of the stack (with nargs below it... as
  // lua_pcall) under the instruction, time and memory bounds.
  std::optional<PolicyFailure> call_bounded(int nargs, int nresults);
  // Counts instructions run and checks the instruction and time bounds.
  void note_instructions(int count);
  bool bound_exceeded() const { return bound_exceeded_; }
  // Which bound was hit: "instruction limit (N) exceeded", "time limit (0.5 s) exceeded".
  const std::string& bound_message() const { return bound_message_; }

 private:
  void open_sandbox();
  void lock_globals();
  void set_pass_fields(PassContext& ctx);
  // The named fields of an event's topic, into the table at the top of the stack.
  void push_event_fields(const Event& event);
  void sweep_job_cache(PassContext& ctx);
  // After a pass: its ctx.pending fails from now on, the store is emptied.
  void retire_pending_list();
  void fill_job(int data_index, const Job& job);
  // Pushes the (cached, refreshed) read-only table of a job; `proxies` and
  // `data` are the stack indices of the two registry tables of the cache.
  void push_job_at(const Job& job, double now, int proxies, int data);

  lua_State* L_ = nullptr;
  MemoryBudget memory_;
  std::string path_;
  std::string display_name_;
  std::string lib_dir_;
  std::string name_;
  bool time_dependent_ = true;
  std::uint64_t instruction_limit_;
  std::uint64_t executed_ = 0;
  double time_limit_s_ = 0;  // 0: no time bound
  const Clock* clock_ = nullptr;
  double deadline_ = 0;  // clock_->monotonic() by which the current call must end
  // The instruction or the time bound was hit in the current call;
  // bound_message_ says which.
  bool bound_exceeded_ = false;
  std::string bound_message_;
  std::uint64_t seed_;
  PolicyParams params_;
  PassContext* pass_ = nullptr;
  const Cluster* cluster_ = nullptr;

  int ref_policy_ = LUA_NOREF;   // the table the file returned
  int ref_ctx_ = LUA_NOREF;      // the ctx table, reused across passes
  int ref_proxies_ = LUA_NOREF;  // id → read-only job table
  int ref_data_ = LUA_NOREF;     // id → the data behind it
  int ref_refusal_mt_ = LUA_NOREF;
  int ref_job_mt_fns_ = LUA_NOREF;        // {__newindex, __pairs, __tostring} shared functions
  int ref_pending_mt_ = LUA_NOREF;        // metatable of ctx.pending
  int ref_params_ = LUA_NOREF;            // ctx.params
  int ref_pending_list_ = LUA_NOREF;      // this pass's ctx.pending
  int ref_pending_store_ = LUA_NOREF;     // the jobs behind it
  int ref_stale_pending_mt_ = LUA_NOREF;  // metatable of an earlier pass's ctx.pending
  const void* pending_list_ = nullptr;    // identity of this pass's ctx.pending
  lua_Integer pending_filled_ = 0;
  std::unordered_map<JobId, std::uint64_t> cached_versions_;
  std::vector<PolicySource> sources_;
};

// Registers sched.constraints and sched.log as loadable modules.
void open_sched_modules(lua_State* L);
// ctx methods: start, expand, shrink, request_perf, preempt, reserve.
void push_ctx_methods(lua_State* L);
// The metatable of ctx.pending, which reads from the store at `store`; the
// store's own metatable (fills on demand); the metatable an earlier pass's
// ctx.pending gets (every use fails).
void push_pending_metatable(lua_State* L, int store);
void push_pending_store_metatable(lua_State* L);
void push_stale_pending_metatable(lua_State* L);
// Serializes the value at `index` as a Lua constructor expression (plain
// data only). Returns an error message on functions, cycles, ...
std::optional<std::string> serialize_lua_value(lua_State* L, int index, std::string& out);

}  // namespace sched
