// The job tables a pass shows the policy, kept cheap (issue 15): one plain
// Lua table per job, made once and refreshed in place when the job changes
// (the engine's touched log says which), and ctx.running, a fresh plain
// table of the running jobs' tables per pass. ctx.pending is in
// lua_pending_list.cpp.
//
// Plain tables cost a policy nothing to read (a proxy with a metatable cost
// it several times more per field). Their price: assigning an existing
// field of a job table, or a position of ctx.pending, is not caught (new
// fields, appending, table.sort/insert/remove/move on ctx.pending are).
#include <algorithm>
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
// (LuaRuntime::ref_job_keys_) at these 1-based positions: writing a field
// then costs no string hashing.
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
                                      "leader"};

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
  k_leader
};
static_assert(std::size(kJobFields) == k_leader, "one name per JobField, in order");

// Makes a job table from the fields every job has, in one table
// constructor: the table comes sized for them (16 slots) and filled by the
// VM, several times cheaper than as many lua_rawset calls (issue 15: making
// the tables was a tenth of a lublin_256 replay). The names are kJobFields'.
// Its 12 fields leave room for the 3 a start adds (start_time, est_end,
// elapsed), so that a job's table is not rehashed when it starts (that was
// half the cost of refreshing it); submit_time, power_min_w and power_max_w,
// which no policy reads in a loop over the queue, are looked up on read.
constexpr const char* kJobMaker = R"lua(
return function(id, kind, nodes, min_nodes, max_nodes, node_constraint, walltime, urgent, state,
                size, priority, adapting)
  return { id = id, kind = kind, nodes = nodes, min_nodes = min_nodes, max_nodes = max_nodes,
           node_constraint = node_constraint, walltime = walltime, urgent = urgent, state = state,
           size = size, priority = priority, adapting = adapting }
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

std::uint64_t& LuaRuntime::synced_version(JobId id) {
  // Job ids are dense and increasing: a vector from the lowest seen.
  if (synced_.empty()) synced_base_ = id;
  if (id < synced_base_) {
    synced_.insert(synced_.begin(), static_cast<std::size_t>(synced_base_ - id), 0);
    synced_base_ = id;
  }
  const auto index = static_cast<std::size_t>(id - synced_base_);
  if (index >= synced_.size()) synced_.resize(index + 1, 0);
  return synced_[index];
}

void LuaRuntime::push_job_keys() {
  lua_createtable(L_, static_cast<int>(std::size(kJobFields)), 0);
  for (std::size_t i = 0; i < std::size(kJobFields); ++i) {
    lua_pushstring(L_, kJobFields[i]);
    lua_rawseti(L_, -2, static_cast<lua_Integer>(i + 1));
  }
}

void LuaRuntime::fill_job(int table, const Job& job, bool created) {
  table = lua_absindex(L_, table);
  lua_rawgeti(L_, LUA_REGISTRYINDEX, ref_job_keys_);
  const int keys = lua_gettop(L_);
  // t[key] = a value, past the job metatable's __newindex (which refuses
  // the policy's new fields, not the engine's): the key is pushed first, so
  // that no lua_insert moves the value under it.
  const auto key_of = [&](JobField key) { lua_rawgeti(L_, keys, key); };
  const auto set = [&] { lua_rawset(L_, table); };
  const auto set_nil_or_num = [&](JobField key, double v, bool present) {
    key_of(key);
    if (present) {
      lua_pushnumber(L_, v);
    } else {
      lua_pushnil(L_);
    }
    set();
  };
  // A new table (push_job's maker) has the fields every job has, and
  // lacks the optional ones: only those present are written.
  const auto set_opt = [&](JobField key, double v, bool present) {
    if (created && !present) return;
    set_nil_or_num(key, v, present);
  };
  if (!created) {
    key_of(k_state);
    push_view(L_, to_string(job.state));
    set();
    key_of(k_size);
    lua_pushinteger(L_, job.size());
    set();
    key_of(k_priority);
    lua_pushinteger(L_, job.priority);
    set();
    key_of(k_adapting);
    lua_pushboolean(L_, job.state == JobState::Adapting);
    set();
  }
  set_opt(k_start_time, job.start_time, job.start_time >= 0);
  const double est_end = job.est_end();
  set_opt(k_est_end, est_end, est_end >= 0);
  set_opt(k_mtct, job.mtct.value_or(0), job.mtct.has_value());
  set_opt(k_power_w, job.power_w.value_or(0), job.power_w.has_value());
  set_opt(k_expected_start, job.expected_start.value_or(0), job.expected_start.has_value());
  // elapsed moves with the clock: set here and on every push into ctx.running.
  set_opt(k_elapsed, pass_ ? pass_->now() - job.start_time : 0, job.start_time >= 0 && pass_);
  if (created && !job.request) {
    lua_pop(L_, 1);  // keys
    return;
  }
  key_of(k_request);
  if (job.request) {
    lua_createtable(L_, 0, 2);
    lua_pushstring(L_, job.request->op == ResizeRequest::Op::Expand ? "expand" : "shrink");
    lua_setfield(L_, -2, "op");
    lua_pushinteger(L_, job.request->nodes);
    lua_setfield(L_, -2, "nodes");
  } else {
    lua_pushnil(L_);
  }
  set();
  if (!created) {
    // A kept allocation is made again on its next read.
    key_of(k_allocation);
    lua_pushnil(L_);
    set();
  }
  lua_pop(L_, 1);  // keys
}

bool LuaRuntime::push_cold_field(const Job& job, std::string_view key) {
  const JobSpec& spec = job.spec;
  const auto str = [&](std::string_view v) { lua_pushlstring(L_, v.data(), v.size()); };
  if (key == "name") {
    str(spec.name);
  } else if (key == "user") {
    str(spec.user);
  } else if (key == "account") {
    str(spec.account);
  } else if (key == "qos") {
    str(spec.qos);
  } else if (key == "submit_time") {
    lua_pushnumber(L_, job.submit_time);
  } else if (key == "power_min_w") {
    lua_pushnumber(L_, spec.power_min_w);
  } else if (key == "power_max_w") {
    lua_pushnumber(L_, spec.power_max_w);
  } else if (key == "nice") {
    lua_pushinteger(L_, spec.nice);
  } else if (key == "tasks_per_node") {
    lua_pushinteger(L_, spec.tasks_per_node);
  } else if (key == "expansions") {
    lua_pushinteger(L_, job.expansions);
  } else if (key == "shrinks") {
    lua_pushinteger(L_, job.shrinks);
  } else if (key == "gain") {
    lua_pushinteger(L_, job.gain);
  } else if (key == "cores") {
    // Invasive partitions (issue 20 item 2): the cores it asks for; nil
    // for a job of whole nodes.
    if (spec.cores <= 0) return false;
    lua_pushinteger(L_, spec.cores);
  } else if (key == "min_cores" || key == "max_cores") {
    // A malleable job there is resized by cores within these bounds.
    if (spec.cores <= 0) return false;
    lua_pushinteger(L_, key == "min_cores" ? spec.min_cores : spec.max_cores);
  } else if (key == "core_count") {
    // How many cores it holds (a suspended job: the ones it resumes on).
    if (job.cores.empty()) return false;
    lua_pushinteger(L_, core_count(job.cores));
  } else if (key == "core_set") {
    // The cores it holds: {node name = {core ids}}; nil when none.
    if (job.cores.empty() || !cluster_) return false;
    lua_createtable(L_, 0, static_cast<int>(job.cores.size()));
    for (const NodeCores& nc : job.cores) {
      lua_createtable(L_, static_cast<int>(nc.cores.size()), 0);
      for (std::size_t i = 0; i < nc.cores.size(); ++i) {
        lua_pushinteger(L_, nc.cores[i]);
        lua_rawseti(L_, -2, static_cast<lua_Integer>(i + 1));
      }
      lua_setfield(L_, -2, cluster_->node(nc.node).name.c_str());
    }
  } else if (key == "resize_held_until") {
    if (job.resize_held_until < 0) return false;
    lua_pushnumber(L_, job.resize_held_until);
  } else if (key == "allocation" || key == "leader") {
    if (!cluster_) return false;
    if (key == "leader") {
      if (job.allocation.empty()) return false;
      const std::string& name = cluster_->node(job.allocation.front()).name;
      str(name);
      return true;
    }
    lua_createtable(L_, static_cast<int>(job.allocation.size()), 0);
    for (std::size_t i = 0; i < job.allocation.size(); ++i) {
      const std::string& name = cluster_->node(job.allocation[i]).name;
      lua_pushlstring(L_, name.data(), name.size());
      lua_rawseti(L_, -2, static_cast<lua_Integer>(i + 1));
    }
  } else {
    return false;
  }
  return true;
}

namespace {

const Job* job_of_table(lua_State* L, const LuaRuntime& rt, int table) {
  lua_pushliteral(L, "id");
  lua_rawget(L, table);
  const JobId id = lua_tointeger(L, -1);
  lua_pop(L, 1);
  return rt.pass() ? rt.pass()->job(id) : nullptr;
}

}  // namespace

// The job metatable's __index: the fields a job table does not store, read
// during passes. The allocation, a list of names, is kept in the table once
// made, until the job changes.
int LuaRuntime::job_cold_field(lua_State* L) {
  const char* key = lua_tostring(L, 2);
  if (!key) return 0;
  LuaRuntime& rt = of(L);
  const Job* job = job_of_table(L, rt, 1);
  if (!job || !rt.push_cold_field(*job, key)) return 0;
  if (std::string_view(key) == "allocation") {
    lua_pushvalue(L, 2);
    lua_pushvalue(L, -2);
    lua_rawset(L, 1);
  }
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
  if (const Job* job = job_of_table(L, rt, 1)) {
    for (const char* key : kJobFields) {
      lua_getfield(L, all, key);
      const bool present = !lua_isnil(L, -1);
      lua_pop(L, 1);
      if (present || !rt.push_cold_field(*job, key)) continue;
      lua_setfield(L, all, key);
    }
  }
  lua_getglobal(L, "next");
  lua_pushvalue(L, all);
  lua_pushnil(L);
  return 3;
}

void LuaRuntime::push_job(const Job& job, int jobs) {
  std::uint64_t& synced = synced_version(job.id);
  if (synced == 0) {
    const JobSpec& spec = job.spec;
    lua_rawgeti(L_, LUA_REGISTRYINDEX, ref_job_maker_);
    lua_pushinteger(L_, job.id);
    push_view(L_, to_string(spec.kind));
    lua_pushinteger(L_, spec.nodes);
    lua_pushinteger(L_, spec.min_nodes);
    lua_pushinteger(L_, spec.max_nodes);
    push_view(L_, to_string(spec.constraint));
    lua_pushnumber(L_, spec.walltime);
    lua_pushboolean(L_, spec.urgent);
    push_view(L_, to_string(job.state));
    lua_pushinteger(L_, job.size());
    lua_pushinteger(L_, job.priority);
    lua_pushboolean(L_, job.state == JobState::Adapting);
    lua_call(L_, 12, 1);
    fill_job(-1, job, /*created=*/true);
    lua_rawgeti(L_, LUA_REGISTRYINDEX, ref_job_mt_);
    lua_setmetatable(L_, -2);
    lua_pushvalue(L_, -1);
    lua_rawseti(L_, jobs, job.id);
    synced = job.version;
    ++job_tables_;
    return;
  }
  lua_rawgeti(L_, jobs, job.id);
  if (synced != job.version) {
    fill_job(-1, job, /*created=*/false);
    synced = job.version;
  }
}

void LuaRuntime::refresh_touched_jobs(PassContext& ctx) {
  // Only jobs that have a table and changed since the last pass.
  lua_rawgeti(L_, LUA_REGISTRYINDEX, ref_jobs_);
  const int jobs = lua_gettop(L_);
  const auto refresh = [&](JobId id) {
    if (id < synced_base_ || id - synced_base_ >= static_cast<JobId>(synced_.size())) return;
    const std::uint64_t synced = synced_[static_cast<std::size_t>(id - synced_base_)];
    if (synced == 0) return;
    const Job* job = ctx.job(id);
    // A job that has ended is no longer in any list a pass shows.
    if (!job || job->version == synced || is_terminal(job->state)) return;
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
    if (synced_[i] == 0) continue;
    const JobId id = synced_base_ + static_cast<JobId>(i);
    const Job* job = ctx.job(id);
    if (job && !is_terminal(job->state)) continue;
    lua_pushnil(L_);
    lua_rawseti(L_, -2, id);
    synced_[i] = 0;
    --job_tables_;
  }
  lua_pop(L_, 1);
  // Drop the leading run of forgotten ids.
  const auto first = std::find_if(synced_.begin(), synced_.end(), [](auto v) { return v != 0; });
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
    lua_rawgeti(L_, keys, k_elapsed);
    lua_pushnumber(L_, now - job->start_time);
    lua_rawset(L_, -3);
    lua_rawseti(L_, -4, ++i);
  }
  lua_pop(L_, 2);
}

}  // namespace sched
