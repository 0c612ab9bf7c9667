#include "policy_tests.hpp"

#include <algorithm>
#include <fstream>
#include <lua.hpp>
#include <memory>
#include <sstream>

#include "sched/engine.hpp"

namespace sched::cli {
namespace {

// Nothing happens to a dry pass's actions: the enactor is never called.
class NoEnactor : public Enactor {
 public:
  void start(const Job& /*job*/) override {}
  void resize(const Job& /*job*/, const Resize& /*resize*/) override {}
  void stop(const Job& /*job*/, StopReason /*reason*/) override {}
  void request_perf(const Job& /*job*/) override {}
  void suspend(const Job& /*job*/) override {}
  void resume(const Job& /*job*/) override {}
};

// One test's world: a cluster, a queue and running jobs on an engine of its own.
struct Fixture {
  explicit Fixture(PolicyParams p) : engine(clock, enactor), params(std::move(p)) {}
  ManualClock clock;
  NoEnactor enactor;
  Engine engine;
  PolicyParams params;
  const std::string* policy_path = nullptr;
  JobId next_id = 1;
  int nodes = 0;
};

Fixture& fixture(lua_State* L) {
  return *static_cast<Fixture*>(lua_touserdata(L, lua_upvalueindex(1)));
}

// The fields of a t:job{...} table. They raise no Lua error (a longjmp
// would skip the destructors of the C++ objects around them): a bad field
// is noted in `error` and its default taken.
struct JobTable {
  lua_State* L;
  int index;
  std::string error;

  std::string text(const char* key, const std::string& fallback) {
    lua_getfield(L, index, key);
    std::string value = fallback;
    if (lua_type(L, -1) == LUA_TSTRING) {
      value = lua_tostring(L, -1);
    } else if (!lua_isnil(L, -1)) {
      error = std::string("field '") + key + "' must be a string";
    }
    lua_pop(L, 1);
    return value;
  }
  double number(const char* key, double fallback) {
    lua_getfield(L, index, key);
    double value = fallback;
    if (lua_type(L, -1) == LUA_TNUMBER) {
      value = lua_tonumber(L, -1);
    } else if (!lua_isnil(L, -1)) {
      error = std::string("field '") + key + "' must be a number";
    }
    lua_pop(L, 1);
    return value;
  }
  bool flag(const char* key) {
    lua_getfield(L, index, key);
    const bool value = lua_toboolean(L, -1);
    lua_pop(L, 1);
    return value;
  }
};

// t:nodes(n): n more idle nodes (n1, n2, ...).
int t_nodes(lua_State* L) {
  const auto n = luaL_checkinteger(L, 2);
  luaL_argcheck(L, n > 0, 2, "a positive number of nodes");
  Fixture& f = fixture(L);
  for (lua_Integer i = 0; i < n; ++i) f.engine.add_node("n" + std::to_string(++f.nodes));
  return 0;
}

// t:at(seconds): the clock of the pass (0 unless set).
int t_at(lua_State* L) {
  fixture(L).clock.set(luaL_checknumber(L, 2));
  return 0;
}

// Reads the table at 2 into the fixture's params; false on a key that is
// not a string (raising is the caller's: no C++ object lives there).
bool set_params(lua_State* L, Fixture& f) {
  f.params.clear();
  lua_pushnil(L);
  while (lua_next(L, 2) != 0) {
    if (lua_type(L, -2) != LUA_TSTRING) {
      lua_pop(L, 2);
      return false;
    }
    const std::string key = lua_tostring(L, -2);
    if (lua_isboolean(L, -1)) {
      f.params[key] = ParamValue{static_cast<bool>(lua_toboolean(L, -1))};
    } else if (lua_isinteger(L, -1)) {
      f.params[key] = ParamValue{static_cast<long long>(lua_tointeger(L, -1))};
    } else if (lua_type(L, -1) == LUA_TNUMBER) {
      f.params[key] = ParamValue{lua_tonumber(L, -1)};
    } else {
      const char* text = lua_tostring(L, -1);  // strings; other values as nil → ""
      f.params[key] = ParamValue{std::string(text ? text : "")};
    }
    lua_pop(L, 1);
  }
  return true;
}

// t:params{key = value, ...}: the policy's ctx.params in this test.
int t_params(lua_State* L) {
  luaL_checktype(L, 2, LUA_TTABLE);
  if (!set_params(L, fixture(L))) return luaL_error(L, "t:params: keys must be strings");
  return 0;
}

// The job a t:job{...} or t:running{...} table describes.
std::optional<std::string> read_job(lua_State* L, Fixture& f, Job& job) {
  if (!lua_istable(L, 2)) return "expects a table of the job's fields";
  JobTable t{L, 2, {}};
  job.id = f.next_id++;
  JobSpec& spec = job.spec;
  spec.nodes = static_cast<int>(t.number("nodes", 1));
  spec.min_nodes = static_cast<int>(t.number("min_nodes", 0));
  spec.max_nodes = static_cast<int>(t.number("max_nodes", 0));
  spec.walltime = t.number("walltime", 0);
  spec.user = t.text("user", "user");
  spec.name = t.text("name", "job" + std::to_string(job.id));
  spec.urgent = t.flag("urgent");
  const std::string kind = t.text("kind", "rigid");
  const std::string constraint = t.text("constraint", "none");
  job.submit_time = t.number("submit", f.clock.now());
  job.start_time = t.number("started", f.clock.now());
  if (const double mtct = t.number("mtct", -1); mtct >= 0) job.run.edit().mtct = mtct;
  if (!t.error.empty()) return t.error;
  const auto parsed_kind = parse_job_kind(kind);
  if (!parsed_kind) return "unknown kind '" + kind + "' (rigid, moldable, malleable, evolving)";
  spec.kind = *parsed_kind;
  const auto parsed_constraint = parse_node_constraint(constraint);
  if (!parsed_constraint) return "unknown constraint '" + constraint + "'";
  spec.constraint = *parsed_constraint;
  if (auto error = normalize_spec(spec)) return *error;
  return std::nullopt;
}

// Adds the job (pending, or running on the first idle nodes); pushes its
// id, or the reason it cannot be added and returns false.
bool add_job(lua_State* L, bool running) {
  Fixture& f = fixture(L);
  Job job;
  std::optional<std::string> error = read_job(L, f, job);
  if (!error && running) {
    job.state = JobState::Running;
    job.allocation_since = job.start_time;
    std::vector<std::string> names;
    const Cluster& cluster = f.engine.cluster();
    for (const Node& node : cluster.nodes()) {
      if (static_cast<int>(names.size()) == job.spec.nodes) break;
      if (node.job == 0) names.push_back(node.name);
    }
    if (static_cast<int>(names.size()) < job.spec.nodes) {
      error = "not enough idle nodes for a running job of " + std::to_string(job.spec.nodes) +
              " (t:nodes first)";
    } else if (const Status status = f.engine.restore_job(job, names); !status.ok()) {
      error = status.message();
    }
  } else if (!error) {
    job.state = JobState::Pending;
    job.start_time = -1;
    if (const Status status = f.engine.restore_job(job, {}); !status.ok()) error = status.message();
  }
  if (error) {
    lua_pushstring(L, ((running ? "t:running: " : "t:job: ") + *error).c_str());
    return false;
  }
  lua_pushinteger(L, job.id);
  return true;
}

// t:job{nodes=, min_nodes=, max_nodes=, kind=, walltime=, submit=, user=,
// name=, constraint=, urgent=}: a pending job; its id.
int t_job(lua_State* L) { return add_job(L, false) ? 1 : lua_error(L); }

// t:running{... as t:job, started=, mtct=}: a job running on `nodes` idle
// nodes since `started` (default: now), with its last MTCT report if given;
// its id.
int t_running(lua_State* L) { return add_job(L, true) ? 1 : lua_error(L); }

// t:pass(): loads the policy afresh and runs one dry pass; returns its
// actions ({action=, job=, nodes=, time=, mode=}, in call order) and its
// refusals ({code=, job=, message=}). A policy that fails to load or fails
// the pass fails the test with its message.
bool run_pass(lua_State* L) {
  Fixture& f = fixture(L);
  std::string failure;
  DryPassReport report;
  LuaPolicyOptions options;
  options.params = f.params;
  try {
    const auto policy = LuaPolicy::load(*f.policy_path, options);
    report = f.engine.dry_pass_report(*policy);
    if (report.failure) failure = "the pass failed: " + report.failure->message;
  } catch (const PolicyLoadError& e) {
    failure = std::string("the policy did not load: ") + e.what();
  }
  if (!failure.empty()) {
    lua_pushstring(L, failure.c_str());
    return false;
  }
  lua_createtable(L, static_cast<int>(report.actions.size()), 0);
  for (std::size_t i = 0; i < report.actions.size(); ++i) {
    const Action& a = report.actions[i];
    lua_createtable(L, 0, 4);
    const std::string_view name = to_string(a.type);
    lua_pushlstring(L, name.data(), name.size());
    lua_setfield(L, -2, "action");
    lua_pushinteger(L, a.job);
    lua_setfield(L, -2, "job");
    lua_pushinteger(L, a.nodes);
    lua_setfield(L, -2, "nodes");
    if (a.type == Action::Type::Reserve) {
      lua_pushnumber(L, a.time);
      lua_setfield(L, -2, "time");
    }
    if (a.type == Action::Type::Preempt) {
      lua_pushstring(L, a.mode == PreemptMode::Requeue ? "requeue" : "cancel");
      lua_setfield(L, -2, "mode");
    }
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  lua_createtable(L, static_cast<int>(report.refusals.size()), 0);
  for (std::size_t i = 0; i < report.refusals.size(); ++i) {
    const Refusal& r = report.refusals[i];
    lua_createtable(L, 0, 3);
    lua_pushstring(L, std::string(to_string(r.code)).c_str());
    lua_setfield(L, -2, "code");
    lua_pushinteger(L, r.job);
    lua_setfield(L, -2, "job");
    lua_pushstring(L, r.message().c_str());
    lua_setfield(L, -2, "message");
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  return true;
}

int t_pass(lua_State* L) { return run_pass(L) ? 2 : lua_error(L); }

// The expectations, in Lua: they blame the test's own line (error level 2)
// and say what the pass did instead. They look at the last t:pass(), and
// run one first when the test has not.
const char* kPrelude = R"lua(
local tests = {}
function test(name, fn)
  if type(name) ~= "string" or type(fn) ~= "function" then
    error("test(name, function(t) ... end)", 2)
  end
  tests[#tests + 1] = { name = name, fn = fn }
end

local function describe(actions)
  if #actions == 0 then return "no actions" end
  local parts = {}
  for _, a in ipairs(actions) do
    parts[#parts + 1] = a.action .. " " .. a.job .. (a.nodes > 0 and ("/" .. a.nodes) or "")
  end
  return "actions: " .. table.concat(parts, ", ")
end

local Fixture = {}
Fixture.__index = Fixture

function Fixture:pass()
  self.actions, self.refusals = self._pass()
  return self.actions, self.refusals
end
local function last(self)
  if not self.actions then self:pass() end
  return self.actions
end
local function find(self, kind, job)
  for _, a in ipairs(last(self)) do
    if a.action == kind and a.job == job then return a end
  end
end
local function expect_sized(kind)
  return function(self, job, nodes)
    local a = find(self, kind, job)
    if not a then
      error(("expected %s of job %s; %s"):format(kind, tostring(job), describe(self.actions)), 2)
    end
    if nodes and a.nodes ~= nodes then
      error(("expected %s of job %s on %d node(s), got %d"):format(kind, tostring(job), nodes,
                                                                  a.nodes), 2)
    end
  end
end
Fixture.expect_start = expect_sized("start")
Fixture.expect_expand = expect_sized("expand")
Fixture.expect_shrink = expect_sized("shrink")
Fixture.expect_preempt = expect_sized("preempt")
Fixture.expect_reserve = expect_sized("reserve")
function Fixture:expect_no_start(job)
  for _, a in ipairs(last(self)) do
    if a.action == "start" and (job == nil or a.job == job) then
      error(("expected no start%s; %s"):format(job and (" of job " .. job) or "",
                                              describe(self.actions)), 2)
    end
  end
end
function Fixture:expect_no_action()
  if #last(self) > 0 then error("expected no action; " .. describe(self.actions), 2) end
end
function Fixture:expect_actions(n)
  if #last(self) ~= n then
    error(("expected %d action(s); %s"):format(n, describe(self.actions)), 2)
  end
end
function Fixture:expect_refusal(job, code)
  last(self)
  for _, r in ipairs(self.refusals) do
    if r.job == job and (code == nil or r.code == code) then return end
  end
  error(("expected a refusal%s of job %s"):format(code and (" (" .. code .. ")") or "",
                                                 tostring(job)), 2)
end

return tests, Fixture
)lua";

std::optional<std::string> read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The test's fixture object: the Lua Fixture with the C functions bound to `f`.
void push_fixture(lua_State* L, int fixture_mt, Fixture& f) {
  lua_newtable(L);
  static const luaL_Reg fns[] = {{"nodes", t_nodes}, {"at", t_at},           {"params", t_params},
                                 {"job", t_job},     {"running", t_running}, {nullptr, nullptr}};
  for (const luaL_Reg* fn = fns; fn->name; ++fn) {
    lua_pushlightuserdata(L, &f);
    lua_pushcclosure(L, fn->func, 1);
    lua_setfield(L, -2, fn->name);
  }
  // t._pass() takes no self: it is called as a field.
  lua_pushlightuserdata(L, &f);
  lua_pushcclosure(L, t_pass, 1);
  lua_setfield(L, -2, "_pass");
  lua_pushvalue(L, fixture_mt);
  lua_setmetatable(L, -2);
}

int traceback_handler(lua_State* L) {
  if (lua_type(L, 1) != LUA_TSTRING) lua_pushstring(L, luaL_tolstring(L, 1, nullptr));
  return 1;
}

}  // namespace

int PolicyTestReport::failed() const {
  return static_cast<int>(
      std::count_if(results.begin(), results.end(), [](const auto& r) { return !r.ok; }));
}

PolicyTestReport run_policy_tests(const std::string& policy_path, const std::string& tests_path,
                                  const PolicyParams& params, std::ostream& out) {
  PolicyTestReport report;
  const auto source = read_text(tests_path);
  if (!source) {
    report.error = "cannot read " + tests_path;
    out << "error: " << report.error << "\n";
    return report;
  }
  std::unique_ptr<lua_State, decltype(&lua_close)> state(luaL_newstate(), lua_close);
  lua_State* L = state.get();
  // The tests see plain Lua (no io, os): they describe clusters, not files.
  for (const luaL_Reg& lib : std::initializer_list<luaL_Reg>{{LUA_GNAME, luaopen_base},
                                                             {LUA_STRLIBNAME, luaopen_string},
                                                             {LUA_TABLIBNAME, luaopen_table},
                                                             {LUA_MATHLIBNAME, luaopen_math}}) {
    luaL_requiref(L, lib.name, lib.func, 1);
    lua_pop(L, 1);
  }
  lua_pushcfunction(L, traceback_handler);
  const int handler = lua_gettop(L);
  if (luaL_loadbufferx(L, kPrelude, std::char_traits<char>::length(kPrelude), "=prelude", "t") !=
          LUA_OK ||
      lua_pcall(L, 0, 2, handler) != LUA_OK) {
    report.error = std::string("harness: ") + lua_tostring(L, -1);
    out << "error: " << report.error << "\n";
    return report;
  }
  const int fixture_mt = lua_gettop(L);
  const int tests = fixture_mt - 1;
  const std::string chunkname = "@" + tests_path.substr(tests_path.find_last_of('/') + 1);
  if (luaL_loadbufferx(L, source->data(), source->size(), chunkname.c_str(), "t") != LUA_OK ||
      lua_pcall(L, 0, 0, handler) != LUA_OK) {
    report.error = lua_tostring(L, -1);
    out << "error: " << report.error << "\n";
    return report;
  }
  const auto count = static_cast<lua_Integer>(luaL_len(L, tests));
  if (count == 0) {
    report.error = tests_path + " declares no test (test(name, function(t) ... end))";
    out << "error: " << report.error << "\n";
    return report;
  }
  for (lua_Integer i = 1; i <= count; ++i) {
    lua_rawgeti(L, tests, i);
    lua_getfield(L, -1, "name");
    PolicyTestResult result;
    result.name = lua_tostring(L, -1);
    lua_pop(L, 1);
    Fixture f(params);
    f.policy_path = &policy_path;
    lua_getfield(L, -1, "fn");
    push_fixture(L, fixture_mt, f);
    result.ok = lua_pcall(L, 1, 0, handler) == LUA_OK;
    if (!result.ok) {
      result.message = lua_tostring(L, -1);
      lua_pop(L, 1);
    }
    lua_pop(L, 1);  // the test's table
    out << (result.ok ? "ok    " : "FAIL  ") << result.name
        << (result.ok ? "" : ": " + result.message) << "\n";
    report.results.push_back(std::move(result));
  }
  const int failed = report.failed();
  out << report.results.size() << " test(s), " << report.results.size() - failed << " passed, "
      << failed << " failed\n";
  return report;
}

}  // namespace sched::cli
