// The job tables a pass shows the policy, kept cheap (issue 15): one plain
// Lua table per job, made once with the few fields a pass over the queue
// reads, taking the others as the policy first reads them (__index), and
// refreshed in place when the job changes (the engine's touched log says
// which), only in the fields it took; and ctx.running, a fresh plain table
// of the running jobs' tables per pass. ctx.pending is in
// lua_pending_list.cpp.
//
// Plain tables cost a policy nothing to read (a proxy with a metatable cost
// it several times more per field). Their price: assigning an existing
// field of a job table, or a position of ctx.pending, is not caught (new
// fields, appending, table.sort/insert/remove/move on ctx.pending are).
#include <algorithm>
#include <bit>
#include <stdexcept>
#include <string>

#include "lua_runtime.hpp"
#include "sched/cluster.hpp"
#include "sched/core_map.hpp"
#include "sched/pass_context.hpp"

namespace sched {

// ---------------------------------------------------------------- job tables

namespace {

// The field names of a job table, interned once in a registry array
// (LuaRuntime::ref_job_keys_) at these 1-based positions (a field's code):
// writing a field then costs no string hashing. pairs(job) lists the first
// k_leader of them; the others (an invasive partition's) are read by name.
constexpr const char* kJobFields[] = {"id",
                                      "name",
                                      "user",
                                      "kind",
                                      "nodes",
                                      "min_nodes",
                                      "max_nodes",
                                      "node_constraint",
                                      "tasks_per_node",
                                      "walltime",
                                      "power_min_w",
                                      "power_max_w",
                                      "urgent",
                                      "submit_time",
                                      "account",
                                      "qos",
                                      "nice",
                                      "state",
                                      "size",
                                      "priority",
                                      "start_time",
                                      "est_end",
                                      "adapting",
                                      "resize_held_until",
                                      "mtct",
                                      "power_w",
                                      "expected_start",
                                      "expansions",
                                      "shrinks",
                                      "gain",
                                      "elapsed",
                                      "request",
                                      "allocation",
                                      "leader",
                                      "cores",
                                      "min_cores",
                                      "max_cores",
                                      "core_count",
                                      "core_set"};

enum JobField : int {
  k_id = 1,
  k_name,
  k_user,
  k_kind,
  k_nodes,
  k_min_nodes,
  k_max_nodes,
  k_node_constraint,
  k_tasks_per_node,
  k_walltime,
  k_power_min_w,
  k_power_max_w,
  k_urgent,
  k_submit_time,
  k_account,
  k_qos,
  k_nice,
  k_state,
  k_size,
  k_priority,
  k_start_time,
  k_est_end,
  k_adapting,
  k_resize_held_until,
  k_mtct,
  k_power_w,
  k_expected_start,
  k_expansions,
  k_shrinks,
  k_gain,
  k_elapsed,
  k_request,
  k_allocation,
  k_leader,
  k_cores,
  k_min_cores,
  k_max_cores,
  k_core_count,
  k_core_set
};
static_assert(std::size(kJobFields) == k_core_set, "one name per JobField, in order");

constexpr std::uint64_t bit(int code) { return std::uint64_t{1} << code; }

// What a read through __index keeps in the table (issue 15: a table is made
// with the fields of a pass over the queue only, and takes the others as
// the policy reads them). Fixed fields never change once submitted; kept
// ones are rewritten when the job changes (JobSync::cached says which).
// The rest are looked up on every read (rare reads, or values a cached
// copy would hide from a refresh that does not know them).
constexpr std::uint64_t kFixedFields = bit(k_min_nodes) | bit(k_max_nodes) | bit(k_node_constraint);
constexpr std::uint64_t kKeptFields = bit(k_state) | bit(k_size) | bit(k_priority) |
                                      bit(k_adapting) | bit(k_start_time) | bit(k_est_end) |
                                      bit(k_elapsed) | bit(k_mtct) | bit(k_power_w) |
                                      bit(k_expected_start) | bit(k_request) | bit(k_allocation);

// Makes a job table from the fields a pass over the queue reads (the size
// test of lib/moldable.lua, a backfill's walltime, lib/urgent.lua's urgent,
// the id every ctx method reads), in one table constructor: the table comes
// sized for them (8 slots) and filled by the VM, several times cheaper than
// as many lua_rawset calls. Every other field is read through __index
// (job_cold_field), and the ones it keeps land in the 3 free slots, or in a
// table grown once. The names are kJobFields'.
constexpr const char* kJobMaker = R"lua(
return function(id, kind, nodes, walltime, urgent)
  return { id = id, kind = kind, nodes = nodes, walltime = walltime, urgent = urgent }
end
)lua";

}  // namespace

void LuaRuntime::push_job_maker() {
  if (luaL_loadbuffer(L_, kJobMaker, std::char_traits<char>::length(kJobMaker), "=job_maker") !=
      LUA_OK) {
    throw std::logic_error(lua_tostring(L_, -1));  // a bug in kJobMaker
  }
  lua_call(L_, 0, 1);
}

namespace {

void push_view(lua_State* L, std::string_view text) {
  lua_pushlstring(L, text.data(), text.size());
}

}  // namespace

LuaRuntime::JobSync& LuaRuntime::job_sync(JobId id) {
  // Job ids are dense and increasing: a vector from the lowest seen.
  if (synced_.empty()) synced_base_ = id;
  if (id < synced_base_) {
    synced_.insert(synced_.begin(), static_cast<std::size_t>(synced_base_ - id), JobSync{});
    synced_base_ = id;
  }
  const auto index = static_cast<std::size_t>(id - synced_base_);
  if (index >= synced_.size()) synced_.resize(index + 1);
  return synced_[index];
}

LuaRuntime::JobSync* LuaRuntime::live_sync(JobId id) {
  if (id < synced_base_ || id - synced_base_ >= static_cast<JobId>(synced_.size())) return nullptr;
  JobSync& sync = synced_[static_cast<std::size_t>(id - synced_base_)];
  return sync.version == 0 ? nullptr : &sync;
}

void LuaRuntime::push_job_keys() {
  lua_createtable(L_, static_cast<int>(std::size(kJobFields)), 0);
  for (std::size_t i = 0; i < std::size(kJobFields); ++i) {
    lua_pushstring(L_, kJobFields[i]);
    lua_rawseti(L_, -2, static_cast<lua_Integer>(i + 1));
  }
}

void LuaRuntime::push_job_codes() {
  lua_createtable(L_, 0, static_cast<int>(std::size(kJobFields)));
  for (std::size_t i = 0; i < std::size(kJobFields); ++i) {
    lua_pushinteger(L_, static_cast<lua_Integer>(i + 1));
    lua_setfield(L_, -2, kJobFields[i]);
  }
}

void LuaRuntime::refresh_cached(int table, const Job& job, JobSync& sync) {
  table = lua_absindex(L_, table);
  lua_rawgeti(L_, LUA_REGISTRYINDEX, ref_job_keys_);
  const int keys = lua_gettop(L_);
  // t[key] = the new value, past the job metatable's __newindex (which
  // refuses the policy's new fields, not the engine's); a field that now
  // has none is cleared, and read through __index again.
  for (std::uint64_t left = sync.cached; left != 0; left &= left - 1) {
    const int code = std::countr_zero(left);
    lua_rawgeti(L_, keys, code);
    if (!push_field(job, code)) {
      lua_pushnil(L_);
      sync.cached &= ~bit(code);
    }
    lua_rawset(L_, table);
  }
  lua_pop(L_, 1);  // keys
}

bool LuaRuntime::push_field(const Job& job, int code) {
  const JobSpec& spec = job.spec;
  const auto str = [&](std::string_view v) { lua_pushlstring(L_, v.data(), v.size()); };
  const auto opt = [&](const std::optional<double>& v) {
    if (!v) return false;
    lua_pushnumber(L_, *v);
    return true;
  };
  switch (code) {
    case k_id:
      lua_pushinteger(L_, job.id);
      return true;
    case k_name:
      str(spec.name);
      return true;
    case k_user:
      str(spec.user);
      return true;
    case k_kind:
      str(to_string(spec.kind));
      return true;
    case k_nodes:
      lua_pushinteger(L_, spec.nodes);
      return true;
    case k_min_nodes:
      lua_pushinteger(L_, spec.min_nodes);
      return true;
    case k_max_nodes:
      lua_pushinteger(L_, spec.max_nodes);
      return true;
    case k_node_constraint:
      str(to_string(spec.constraint));
      return true;
    case k_tasks_per_node:
      lua_pushinteger(L_, spec.tasks_per_node);
      return true;
    case k_walltime:
      lua_pushnumber(L_, spec.walltime);
      return true;
    case k_power_min_w:
      lua_pushnumber(L_, spec.power_min_w);
      return true;
    case k_power_max_w:
      lua_pushnumber(L_, spec.power_max_w);
      return true;
    case k_urgent:
      lua_pushboolean(L_, spec.urgent);
      return true;
    case k_submit_time:
      lua_pushnumber(L_, job.submit_time);
      return true;
    case k_account:
      str(spec.extra->account);
      return true;
    case k_qos:
      str(spec.qos);
      return true;
    case k_nice:
      lua_pushinteger(L_, spec.nice);
      return true;
    case k_state:
      str(to_string(job.state));
      return true;
    case k_size:
      lua_pushinteger(L_, job.size());
      return true;
    case k_priority:
      lua_pushinteger(L_, job.priority);
      return true;
    case k_start_time:
      if (job.start_time < 0) return false;
      lua_pushnumber(L_, job.start_time);
      return true;
    case k_est_end: {
      const double est_end = job.est_end();
      if (est_end < 0) return false;
      lua_pushnumber(L_, est_end);
      return true;
    }
    case k_adapting:
      lua_pushboolean(L_, job.state == JobState::Adapting);
      return true;
    case k_resize_held_until:
      if (job.run->resize_held_until < 0) return false;
      lua_pushnumber(L_, job.run->resize_held_until);
      return true;
    case k_mtct:
      return opt(job.run->mtct);
    case k_power_w:
      return opt(job.run->power_w);
    case k_expected_start:
      return opt(job.run->expected_start);
    case k_expansions:
      lua_pushinteger(L_, job.run->expansions);
      return true;
    case k_shrinks:
      lua_pushinteger(L_, job.run->shrinks);
      return true;
    case k_gain:
      lua_pushinteger(L_, job.run->gain);
      return true;
    case k_elapsed:
      // Moves with the clock: rewritten on every push into ctx.running too.
      if (job.start_time < 0 || !pass_) return false;
      lua_pushnumber(L_, pass_->now() - job.start_time);
      return true;
    case k_request:
      // An evolving job's own request.
      if (!job.run->request) return false;
      lua_createtable(L_, 0, 2);
      lua_pushstring(L_, job.run->request->op == ResizeRequest::Op::Expand ? "expand" : "shrink");
      lua_setfield(L_, -2, "op");
      lua_pushinteger(L_, job.run->request->nodes);
      lua_setfield(L_, -2, "nodes");
      return true;
    case k_allocation:
      if (!cluster_) return false;
      lua_createtable(L_, static_cast<int>(job.allocation.size()), 0);
      for (std::size_t i = 0; i < job.allocation.size(); ++i) {
        str(cluster_->node(job.allocation[i]).name);
        lua_rawseti(L_, -2, static_cast<lua_Integer>(i + 1));
      }
      return true;
    case k_leader:
      if (!cluster_ || job.allocation.empty()) return false;
      str(cluster_->node(job.allocation.front()).name);
      return true;
    case k_cores:
      // Invasive partitions (issue 20 item 2): the cores it asks for; nil
      // for a job of whole nodes.
      if (spec.layout->cores <= 0) return false;
      lua_pushinteger(L_, spec.layout->cores);
      return true;
    case k_min_cores:
    case k_max_cores:
      // A malleable job there is resized by cores within these bounds.
      if (spec.layout->cores <= 0) return false;
      lua_pushinteger(L_, code == k_min_cores ? spec.layout->min_cores : spec.layout->max_cores);
      return true;
    case k_core_count:
      // How many cores it holds (a suspended job: the ones it resumes on).
      if (job.run->cores.empty()) return false;
      lua_pushinteger(L_, core_count(job.run->cores));
      return true;
    case k_core_set:
      // The cores it holds: {node name = {core ids}}; nil when none.
      if (job.run->cores.empty() || !cluster_) return false;
      lua_createtable(L_, 0, static_cast<int>(job.run->cores.size()));
      for (const NodeCores& nc : job.run->cores) {
        lua_createtable(L_, static_cast<int>(nc.cores.size()), 0);
        for (std::size_t i = 0; i < nc.cores.size(); ++i) {
          lua_pushinteger(L_, nc.cores[i]);
          lua_rawseti(L_, -2, static_cast<lua_Integer>(i + 1));
        }
        lua_setfield(L_, -2, cluster_->node(nc.node).name.c_str());
      }
      return true;
    default:
      return false;
  }
}

namespace {

JobId id_of_table(lua_State* L, int table) {
  lua_pushliteral(L, "id");
  lua_rawget(L, table);
  const JobId id = lua_tointeger(L, -1);
  lua_pop(L, 1);
  return id;
}

}  // namespace

// The job metatable's __index: the fields a job table does not hold, read
// during passes (nil outside them). Upvalue 1: name → field code. A fixed
// field is kept in the table once read, a kept one until the job changes
// (then rewritten).
int LuaRuntime::job_cold_field(lua_State* L) {
  lua_pushvalue(L, 2);
  if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNUMBER) return 0;
  const auto code = static_cast<int>(lua_tointeger(L, -1));
  lua_pop(L, 1);
  LuaRuntime& rt = of(L);
  if (!rt.pass()) return 0;
  const JobId id = id_of_table(L, 1);
  const Job* job = rt.pass()->job(id);
  if (!job || !rt.push_field(*job, code)) return 0;
  if ((bit(code) & (kFixedFields | kKeptFields)) == 0) return 1;
  // Only in the table the engine keeps for the job: a table it has
  // forgotten (the job ended) is refreshed no more.
  JobSync* sync = rt.live_sync(id);
  if (!sync) return 1;
  lua_pushvalue(L, 2);
  lua_pushvalue(L, -2);
  lua_rawset(L, 1);
  sync->cached |= bit(code) & kKeptFields;
  return 1;
}

// __pairs: every field, the ones read through __index included (a copy,
// for dumps and tests).
int LuaRuntime::job_pairs(lua_State* L) {
  LuaRuntime& rt = of(L);
  lua_createtable(L, 0, static_cast<int>(std::size(kJobFields)));
  const int all = lua_gettop(L);
  lua_pushnil(L);
  while (lua_next(L, 1) != 0) {
    lua_pushvalue(L, -2);
    lua_insert(L, -2);
    lua_rawset(L, all);
  }
  const Job* job = rt.pass() ? rt.pass()->job(id_of_table(L, 1)) : nullptr;
  if (job) {
    for (int code = 1; code <= k_leader; ++code) {
      lua_getfield(L, all, kJobFields[code - 1]);
      const bool present = !lua_isnil(L, -1);
      lua_pop(L, 1);
      if (present || !rt.push_field(*job, code)) continue;
      lua_setfield(L, all, kJobFields[code - 1]);
    }
  }
  lua_getglobal(L, "next");
  lua_pushvalue(L, all);
  lua_pushnil(L);
  return 3;
}

void LuaRuntime::push_job(const Job& job, int jobs) {
  JobSync& sync = job_sync(job.id);
  if (sync.version == 0) {
    const JobSpec& spec = job.spec;
    lua_rawgeti(L_, LUA_REGISTRYINDEX, ref_job_maker_);
    lua_pushinteger(L_, job.id);
    push_view(L_, to_string(spec.kind));
    lua_pushinteger(L_, spec.nodes);
    lua_pushnumber(L_, spec.walltime);
    lua_pushboolean(L_, spec.urgent);
    lua_call(L_, 5, 1);
    lua_rawgeti(L_, LUA_REGISTRYINDEX, ref_job_mt_);
    lua_setmetatable(L_, -2);
    int slot = ++job_slots_;
    if (!free_job_slots_.empty()) {
      --job_slots_;
      slot = free_job_slots_.back();
      free_job_slots_.pop_back();
    }
    lua_pushvalue(L_, -1);
    lua_rawseti(L_, jobs, slot);
    sync = JobSync{job.version, 0, slot};
    ++job_tables_;
    return;
  }
  lua_rawgeti(L_, jobs, sync.slot);
  if (sync.version != job.version) {
    refresh_cached(-1, job, sync);
    sync.version = job.version;
  }
}

void LuaRuntime::refresh_touched_jobs(PassContext& ctx) {
  // Only jobs that have a table and changed since the last pass; of those,
  // only the ones whose table keeps a field that changes cost a table write.
  lua_rawgeti(L_, LUA_REGISTRYINDEX, ref_jobs_);
  const int jobs = lua_gettop(L_);
  const auto refresh = [&](JobId id) {
    JobSync* sync = live_sync(id);
    if (!sync) return;
    const Job* job = ctx.job(id);
    // A job that has ended is no longer in any list a pass shows.
    if (!job || job->version == sync->version || is_terminal(job->state)) return;
    if (sync->cached == 0) {
      sync->version = job->version;
      return;
    }
    push_job(*job, jobs);
    lua_pop(L_, 1);
  };
  if (const auto touched = ctx.touched_since(touched_seen_)) {
    for (JobId id : *touched) refresh(id);
  } else {
    for (std::size_t i = 0; i < synced_.size(); ++i) refresh(synced_base_ + static_cast<JobId>(i));
  }
  touched_seen_ = ctx.touched_end();
  lua_pop(L_, 1);
}

void LuaRuntime::sweep_job_tables(PassContext& ctx) {
  // Forget the tables of jobs that left the system, once they pile up. Runs
  // outside the protected call: nothing here allocates.
  const std::size_t live = ctx.pending_count() + ctx.running_count();
  if (job_tables_ <= 2 * live + 256) return;
  lua_rawgeti(L_, LUA_REGISTRYINDEX, ref_jobs_);
  for (std::size_t i = 0; i < synced_.size(); ++i) {
    if (synced_[i].version == 0) continue;
    const JobId id = synced_base_ + static_cast<JobId>(i);
    const Job* job = ctx.job(id);
    if (job && !is_terminal(job->state)) continue;
    lua_pushnil(L_);
    lua_rawseti(L_, -2, synced_[i].slot);
    free_job_slots_.push_back(synced_[i].slot);
    synced_[i] = JobSync{};
    --job_tables_;
  }
  lua_pop(L_, 1);
  // Drop the leading run of forgotten ids.
  const auto first =
      std::find_if(synced_.begin(), synced_.end(), [](const JobSync& s) { return s.version != 0; });
  synced_base_ += static_cast<JobId>(first - synced_.begin());
  synced_.erase(synced_.begin(), first);
}

// ---------------------------------------------------------------- ctx.running

void LuaRuntime::push_job_list(PassContext& ctx, const std::vector<const Job*>& running) {
  lua_createtable(L_, static_cast<int>(running.size()), 0);
  lua_rawgeti(L_, LUA_REGISTRYINDEX, ref_jobs_);
  const int jobs = lua_gettop(L_);
  lua_rawgeti(L_, LUA_REGISTRYINDEX, ref_job_keys_);
  const int keys = lua_gettop(L_);
  const double now = ctx.now();
  lua_Integer i = 0;
  for (const Job* job : running) {
    push_job(*job, jobs);
    // elapsed moves with the clock: a table that keeps it has it rewritten
    // (one that does not computes it on read).
    if (synced_[static_cast<std::size_t>(job->id - synced_base_)].cached & bit(k_elapsed)) {
      lua_rawgeti(L_, keys, k_elapsed);
      lua_pushnumber(L_, now - job->start_time);
      lua_rawset(L_, -3);
    }
    lua_rawseti(L_, -4, ++i);
  }
  lua_pop(L_, 2);
}

}  // namespace sched
