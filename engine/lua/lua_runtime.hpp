// The inside of a LuaPolicy: one sandboxed lua_State with its bounds, the
// cache of job tables shown to the policy, and the ctx object. Private to
// the engine library.
#pragma once

#include <cstddef>
#include <cstdint>
#include <lua.hpp>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "lua_watchdog.hpp"
#include "sched/env.hpp"
#include "sched/job.hpp"
#include "sched/lua_policy.hpp"
#include "sched/pending_queue.hpp"
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

// What ctx:next_fit looks for: a job at position `from` or later needing at
// most `nodes` nodes and, when `until` is set, ending by it if started at
// `now` (walltime > 0) or needing at most `spare` nodes.
struct PendingFit {
  lua_Integer from = 1;
  int nodes = 0;
  std::optional<double> until;
  double now = 0;
  int spare = 0;
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
  bool idle_nodes_only() const { return idle_nodes_only_; }

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
  // ctx.running, ctx.suspended: a fresh sequence of the jobs' tables (ctx.running, ctx.suspended).
  void push_job_list(PassContext& ctx, const std::vector<const Job*>& jobs);
  // ctx.pending: the plain sequence kept across passes, brought up to date
  // with the queue (lua_pending_list.cpp).
  void push_pending_list(PassContext& ctx);
  // The registry's ctx.pending, for the guards of table.sort & co.
  int pending_list_ref() const { return ref_pending_list_; }
  // ctx.pending's length, and filling it up to at least position `count`
  // (its metatable's __index and __pairs; only during a pass).
  std::size_t pending_size() const { return pending_mirror_.size(); }
  void fill_pending(std::size_t count);
  // The first position (1-based) of ctx.pending that `fit` accepts
  // (ctx:next_fit).
  std::optional<std::size_t> next_pending_fit(const PendingFit& fit) const;
  // Pushes the table of the job at `position` (1-based) of ctx.pending
  // without filling the list up to it: the same table pending[position]
  // holds once filled.
  void push_pending_job(std::size_t position);
  void push_refusal(const struct Refusal& refusal);
  // Calls the function at the top of the stack (with nargs below it... as
  // lua_pcall) under the instruction, time and memory bounds.
  std::optional<PolicyFailure> call_bounded(int nargs, int nresults);
  // Counts instructions run and checks the instruction and time bounds.
  void note_instructions(int count);
  bool bound_exceeded() const { return bound_exceeded_; }
  // Which bound was hit: "instruction limit (N) exceeded", "time limit (0.5 s) exceeded".
  const std::string& bound_message() const { return bound_message_; }
  // The fields of ctx its __index sets on first read in a pass, by bit.
  enum CtxLazyField : unsigned { kCtxPower, kCtxPending, kCtxRunning, kCtxSuspended };
  // ctx's __index has set the field (a list or ctx.power): the next pass clears it.
  void note_ctx_lazy_field(CtxLazyField field) { ctx_lazy_set_ |= 1u << field; }
  // ctx.pending has been brought up to date in this pass.
  bool pending_list_current() const { return (ctx_lazy_set_ & (1u << kCtxPending)) != 0; }

 private:
  void open_sandbox();
  void lock_globals();
  void set_pass_fields(PassContext& ctx);
  // The named fields of an event's topic, into the table at the top of the stack.
  void push_event_fields(const Event& event);
  // ---- views (lua_job_tables.cpp, lua_pending_list.cpp)
  // A PendingQueue::Key as plain data, in the same order: the mirror's
  // slots are then copied as bytes (a std::tuple is not trivially copyable,
  // and patching copied the tail of the mirror element by element).
  struct SlotKey {
    bool not_urgent;
    std::int64_t neg_priority;
    double submit_time;
    JobId id;
    static SlotKey of(const PendingQueue::Key& key) {
      return {std::get<0>(key), std::get<1>(key), std::get<2>(key), std::get<3>(key)};
    }
    friend bool operator==(const SlotKey&, const SlotKey&) = default;
    friend bool operator<(const SlotKey& a, const SlotKey& b) {
      if (a.not_urgent != b.not_urgent) return a.not_urgent < b.not_urgent;
      if (a.neg_priority != b.neg_priority) return a.neg_priority < b.neg_priority;
      if (a.submit_time != b.submit_time) return a.submit_time < b.submit_time;
      return a.id < b.id;
    }
  };
  struct PendingSlot {
    SlotKey key;
    const Job* job;  // valid while the job is queued
  };
  // What a job's table shows: the Job::version it is in step with (0: it
  // has no table), and which of the fields read through __index it keeps
  // (bits by field code, lua_job_tables.cpp): those are rewritten when the
  // job changes, the others are not in it.
  struct JobSync {
    std::uint64_t version = 0;
    std::uint64_t cached = 0;
    // Its place in the registry's array of job tables (ref_jobs_): a dense
    // sequence, slots reused, so that adding a table costs no rehash of a
    // map keyed by ids.
    int slot = 0;
  };
  JobSync& job_sync(JobId id);
  // The entry of a job whose table is live, else nullptr.
  JobSync* live_sync(JobId id);
  // Rewrites the fields the job's table keeps (JobSync::cached) after the
  // job changed.
  void refresh_cached(int table, const Job& job, JobSync& sync);
  // Pushes the value of the field `code` of a job (a JobField,
  // lua_job_tables.cpp); false when it has none (reads as nil).
  bool push_field(const Job& job, int code);
  static int job_cold_field(lua_State* L);
  static int job_pairs(lua_State* L);
  // Pushes the array of job field names by code, and the map name → code.
  void push_job_keys();
  void push_job_codes();
  // Pushes the Lua function that makes a job table (lua_job_tables.cpp).
  void push_job_maker();
  // Pushes the job's table, made or refreshed as needed; `jobs` is the
  // stack index of the registry's array of job tables (JobSync::slot).
  void push_job(const Job& job, int jobs);
  // Before a pass: the tables of jobs changed since the last one.
  void refresh_touched_jobs(PassContext& ctx);
  void sweep_job_tables(PassContext& ctx);
  // `partition` >= 0: only that partition's jobs are in the list.
  void apply_pending_changes(std::span<const PendingQueue::Change> changes, int list, int jobs,
                             int partition);
  struct Delta;
  void apply_one_change(const Delta& delta, int list, int jobs);

  lua_State* L_ = nullptr;
  std::unique_ptr<CallWatch> watch_;  // arms the count hook of a long call
  MemoryBudget memory_;
  std::string path_;
  std::string display_name_;
  std::string lib_dir_;
  std::string name_;
  bool time_dependent_ = true;
  bool idle_nodes_only_ = false;  // P.idle_nodes_only
  bool has_on_event_ = false;     // P.on_event was a function when loaded
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

  int ref_policy_ = LUA_NOREF;     // the table the file returned
  int ref_ctx_ = LUA_NOREF;        // the ctx table, reused across passes
  int ref_jobs_ = LUA_NOREF;       // slot → a job's plain table, kept across passes
  int ref_job_mt_ = LUA_NOREF;     // shared by job tables: new fields fail, prints "job N"
  int ref_job_keys_ = LUA_NOREF;   // the field names, interned once (push_job_keys)
  int ref_job_codes_ = LUA_NOREF;  // name → field code (push_job_codes)
  int ref_job_maker_ = LUA_NOREF;  // makes a job table (push_job_maker)
  int ref_refusal_mt_ = LUA_NOREF;
  int ref_params_ = LUA_NOREF;        // ctx.params
  int ref_pending_list_ = LUA_NOREF;  // ctx.pending, kept across passes
  // What set_pass_fields last wrote into ctx: it writes only what changed
  // (issue 15: a dozen lua_setfield calls were a tenth of a short pass).
  struct CtxShadow {
    bool valid = false;
    int reason = 0;  // a PassReason
    int nodes_total = 0;
    bool dry = false;
    int partition = -1;
    bool appended = false;
    std::size_t suspended = 0;  // ctx.suspended_count
  };
  CtxShadow ctx_shadow_;
  unsigned ctx_lazy_set_ = 0;    // bits of kCtxLazyFields set (note_ctx_lazy_field)
  std::vector<JobSync> synced_;  // synced_[id - synced_base_]: see job_sync
  JobId synced_base_ = 0;
  std::size_t job_tables_ = 0;
  int job_slots_ = 0;                        // slots of ref_jobs_ ever used
  std::vector<int> free_job_slots_;          // of tables forgotten (sweep_job_tables)
  std::uint64_t touched_seen_ = 0;           // the engine's touched log, read up to here
  std::vector<PendingSlot> pending_mirror_;  // what ctx.pending holds, in order
  std::uint64_t pending_seen_ = 0;           // the queue's change log, read up to here
  std::size_t pending_filled_ = 0;           // positions 1..this of the Lua list are set
  bool pending_built_ = false;
  int pending_partition_ = -1;  // the partition the list is of (-1: the whole queue)
  // Reused by apply_pending_changes, so that patching allocates nothing.
  struct Delta {
    SlotKey key;
    const Job* job;     // inserted; nullptr: removed
    std::size_t order;  // its place in the change log (a sort by key keeps it)
  };
  std::vector<Delta> scratch_deltas_, scratch_net_;
  std::vector<PendingSlot> scratch_tail_;
  std::vector<std::ptrdiff_t> scratch_src_;
  std::vector<PolicySource> sources_;
};

// Registers sched.constraints and sched.log as loadable modules.
void open_sched_modules(lua_State* L);
// ctx methods (start, expand, shrink, request_perf, preempt, reserve, ...),
// set as fields of the ctx table at the top of the stack: a method call is
// then a plain field read, not a call of __index (issue 15).
void add_ctx_methods(lua_State* L);
// ctx's __index: the lists (pending, running, suspended) and power, built on first read.
void push_ctx_index(lua_State* L);
// ctx.pending's metatable: appending fails.
void push_pending_metatable(lua_State* L);
// table.sort, insert, remove and move refuse ctx.pending (the global table
// library must be open).
void guard_table_library(lua_State* L);
// Serializes the value at `index` as a Lua constructor expression (plain
// data only). Returns an error message on functions, cycles, ...
std::optional<std::string> serialize_lua_value(lua_State* L, int index, std::string& out);

}  // namespace sched
