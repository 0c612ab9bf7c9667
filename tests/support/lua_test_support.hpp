// Shared pieces of the Lua policy host tests: temporary policy files, a fake
// enactor, an event log, a small engine harness, and a reader for the data a
// policy hands out through P.save().
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <lua.hpp>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "sched/engine.hpp"
#include "sched/lua_policy.hpp"
#include "sched/pass_context.hpp"

namespace sched::luatest {

// A fresh folder under the system's temporary directory, removed with
// everything in it when the object goes.
class TempDir {
 public:
  TempDir() {
    namespace fs = std::filesystem;
    static std::atomic<unsigned> counter{0};
    std::random_device random;
    for (;;) {
      path_ =
          fs::temp_directory_path() / ("sched-test-" + std::to_string(::getpid()) + "-" +
                                       std::to_string(counter++) + "-" + std::to_string(random()));
      if (fs::create_directories(path_)) break;
    }
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

  // Writes `text` to `relative` (creating folders); returns the full path.
  std::string write(const std::string& relative, const std::string& text) const {
    const std::filesystem::path file = path_ / relative;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) throw std::runtime_error("cannot write " + file.string());
    return file.string();
  }

 private:
  std::filesystem::path path_;
};

// Records what the engine asks for, as short strings ("start 3 on 2",
// "expand 1 2->4", "shrink 1 4->2", "stop 5", "perf 2", "suspend 3",
// "resume 3"). Answers nothing by
// itself: tests confirm starts and adaptations through the engine.
class FakeEnactor : public Enactor {
 public:
  std::vector<std::string> calls;

  void start(const Job& job) override {
    calls.push_back("start " + std::to_string(job.id) + " on " + std::to_string(job.size()));
  }
  void resize(const Job& job, const Resize& resize) override {
    calls.push_back(std::string(resize.op == Resize::Op::Expand ? "expand " : "shrink ") +
                    std::to_string(job.id) + " " + std::to_string(resize.from) + "->" +
                    std::to_string(resize.to));
  }
  void stop(const Job& job, StopReason /*reason*/) override {
    calls.push_back("stop " + std::to_string(job.id));
  }
  void request_perf(const Job& job) override { calls.push_back("perf " + std::to_string(job.id)); }
  void suspend(const Job& job) override { calls.push_back("suspend " + std::to_string(job.id)); }
  void resume(const Job& job) override { calls.push_back("resume " + std::to_string(job.id)); }
};

class EventLog : public EventSink {
 public:
  std::vector<Event> events;
  void on_event(const Event& event) override { events.push_back(event); }

  std::vector<Event> of_type(EventType type) const {
    std::vector<Event> out;
    for (const Event& e : events) {
      if (e.type == type) out.push_back(e);
    }
    return out;
  }
  std::vector<std::string> messages(EventType type) const {
    std::vector<std::string> out;
    for (const Event& e : of_type(type)) out.push_back(e.message);
    return out;
  }
  std::size_t count(EventType type) const { return of_type(type).size(); }
};

// Starts every pending job that fits, in priority order: sets up running
// jobs without depending on the Lua host under test.
class StartAllPolicy : public Policy {
 public:
  std::string name() const override { return "start_all"; }
  std::optional<PolicyFailure> schedule(PassContext& ctx) override {
    for (const Job* job : ctx.pending()) {
      if (job->spec.nodes <= ctx.nodes_idle()) ctx.start(job->id);
    }
    return std::nullopt;
  }
};

inline JobSpec rigid(int nodes, double walltime = 0) {
  JobSpec spec;
  spec.kind = JobKind::Rigid;
  spec.nodes = nodes;
  spec.walltime = walltime;
  return spec;
}

inline JobSpec malleable(int nodes, int min_nodes, int max_nodes,
                         NodeConstraint constraint = NodeConstraint::None) {
  JobSpec spec;
  spec.kind = JobKind::Malleable;
  spec.nodes = nodes;
  spec.min_nodes = min_nodes;
  spec.max_nodes = max_nodes;
  spec.constraint = constraint;
  return spec;
}

// Options that keep a runaway test policy cheap.
inline LuaPolicyOptions quick_options() {
  LuaPolicyOptions options;
  options.instruction_limit = 2'000'000;
  options.memory_limit = 16u << 20;
  return options;
}

// An engine with `nodes` nodes named c01, c02, ... on a manual clock.
class Harness {
 public:
  explicit Harness(int nodes, EngineConfig config = {}) : engine(clock, enactor, config) {
    for (int i = 1; i <= nodes; ++i) engine.add_node((i < 10 ? "c0" : "c") + std::to_string(i));
    engine.add_sink(&log);
  }

  ManualClock clock;
  FakeEnactor enactor;
  Engine engine;
  EventLog log;
  std::shared_ptr<LuaPolicy> policy;

  JobId submit(JobSpec spec) {
    auto outcome = engine.submit(std::move(spec));
    EXPECT_TRUE(outcome.ok()) << outcome.status();
    return outcome.ok() ? *outcome : 0;
  }

  // Loads a policy file and installs it. Fails the test on a load error.
  LuaPolicy& use(const std::string& path, const LuaPolicyOptions& options = quick_options()) {
    try {
      policy = std::shared_ptr<LuaPolicy>(LuaPolicy::load(path, options));
    } catch (const PolicyLoadError& e) {
      ADD_FAILURE() << "cannot load " << path << ": " << e.what();
      throw;
    }
    engine.set_policy(policy);
    return *policy;
  }

  // Runs one pass; returns the policy.error message it published, if any.
  std::optional<std::string> pass(PassReason reason = PassReason::Manual) {
    const std::size_t before = log.events.size();
    engine.run_pass(reason);
    std::optional<std::string> error;
    for (std::size_t i = before; i < log.events.size(); ++i) {
      if (log.events[i].type == EventType::PolicyError) error = log.events[i].message;
    }
    return error;
  }

  // A pass that must succeed.
  void ok_pass(PassReason reason = PassReason::Manual) {
    auto error = pass(reason);
    EXPECT_FALSE(error) << *error;
  }

  // Confirms the launch of every job the enactor was asked to start.
  void confirm_starts() {
    for (const auto& [id, job] : engine.jobs()) {
      if (job->state == JobState::Starting) engine.job_started(id);
    }
  }

  // Starts every pending job that fits with a C++ policy, confirms the
  // launches, then puts the installed Lua policy back.
  void start_all() {
    engine.set_policy(std::make_shared<StartAllPolicy>());
    engine.run_pass(PassReason::Manual);
    confirm_starts();
    engine.set_policy(policy);
    enactor.calls.clear();
  }

  const Job& job(JobId id) const {
    const Job* job = engine.find_job(id);
    if (!job) throw std::out_of_range("no job " + std::to_string(id));
    return *job;
  }
};

// Loads a policy and returns the PolicyLoadError message, or nothing when it
// loads.
inline std::optional<std::string> load_error(const std::string& path,
                                             const LuaPolicyOptions& options = quick_options()) {
  try {
    LuaPolicy::load(path, options);
  } catch (const PolicyLoadError& e) {
    return std::string(e.what());
  }
  return std::nullopt;
}

// The value a policy saved (P.save → SavedPolicyState, "return <constructor>"),
// evaluated in a plain Lua state of the test's own, read by dotted paths:
// "passes.2.jobs.1.name" (all-digit parts are integer keys).
class LuaData {
 public:
  explicit LuaData(const std::string& source) : L_(luaL_newstate()) {
    if (luaL_loadstring(L_, source.c_str()) != LUA_OK || lua_pcall(L_, 0, 1, 0) != LUA_OK) {
      error_ = lua_tostring(L_, -1);
      lua_settop(L_, 0);
      lua_pushnil(L_);
    }
  }
  // From a policy's P.save(); fails the test when there is nothing saved.
  static LuaData saved_by(LuaPolicy& policy) {
    std::optional<PolicyFailure> error;
    auto state = policy.save(&error);
    EXPECT_FALSE(error) << error->message;
    EXPECT_TRUE(state.has_value()) << "the policy saved nothing";
    return LuaData(state ? state->lua_source : "return nil");
  }
  LuaData(LuaData&& other) noexcept : L_(other.L_), error_(std::move(other.error_)) {
    other.L_ = nullptr;
  }
  LuaData(const LuaData&) = delete;
  LuaData& operator=(const LuaData&) = delete;
  ~LuaData() {
    if (L_) lua_close(L_);
  }

  const std::string& error() const { return error_; }

  // "nil", "number", "string", "boolean", "table", ...
  std::string type(const std::string& path) const {
    push(path);
    std::string name = luaL_typename(L_, -1);
    lua_settop(L_, 1);
    return name;
  }
  bool is_nil(const std::string& path) const { return type(path) == "nil"; }
  bool is_integer(const std::string& path) const {
    push(path);
    const bool integer = lua_isinteger(L_, -1);
    lua_settop(L_, 1);
    return integer;
  }
  double num(const std::string& path) const {
    push(path);
    EXPECT_EQ(lua_type(L_, -1), LUA_TNUMBER) << path << " is " << luaL_typename(L_, -1);
    const double v = lua_tonumber(L_, -1);
    lua_settop(L_, 1);
    return v;
  }
  long long integer(const std::string& path) const {
    push(path);
    EXPECT_TRUE(lua_isinteger(L_, -1))
        << path << " is not an integer but a " << luaL_typename(L_, -1);
    const long long v = lua_tointeger(L_, -1);
    lua_settop(L_, 1);
    return v;
  }
  std::string str(const std::string& path) const {
    push(path);
    EXPECT_EQ(lua_type(L_, -1), LUA_TSTRING) << path << " is " << luaL_typename(L_, -1);
    std::size_t len = 0;
    const char* s = lua_tolstring(L_, -1, &len);
    std::string v = s ? std::string(s, len) : std::string();
    lua_settop(L_, 1);
    return v;
  }
  bool boolean(const std::string& path) const {
    push(path);
    EXPECT_EQ(lua_type(L_, -1), LUA_TBOOLEAN) << path << " is " << luaL_typename(L_, -1);
    const bool v = lua_toboolean(L_, -1);
    lua_settop(L_, 1);
    return v;
  }
  // The length (#) of a table or string.
  long long length(const std::string& path) const {
    push(path);
    const long long n = static_cast<long long>(lua_rawlen(L_, -1));
    lua_settop(L_, 1);
    return n;
  }

 private:
  void push(const std::string& path) const {
    lua_settop(L_, 1);
    lua_pushvalue(L_, 1);
    std::stringstream parts(path);
    std::string part;
    while (!path.empty() && std::getline(parts, part, '.')) {
      if (!lua_istable(L_, -1)) {
        lua_pop(L_, 1);
        lua_pushnil(L_);
        return;
      }
      const bool digits =
          !part.empty() && part.find_first_not_of("0123456789") == std::string::npos;
      if (digits) {
        lua_rawgeti(L_, -1, std::stoll(part));
      } else {
        lua_getfield(L_, -1, part.c_str());
      }
      lua_remove(L_, -2);
    }
  }

  lua_State* L_;
  std::string error_;
};

}  // namespace sched::luatest
