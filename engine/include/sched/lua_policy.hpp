// A scheduling policy written in Lua 5.4 (docs/design.md §4, policy API version 1).
//
// Each policy lives in its own sandboxed lua_State: only the base, string,
// table, math and utf8 libraries; no io, os, package or C modules; `load`
// takes text only; globals are locked once the file has loaded; math.random
// is seeded from the run so simulations replay identically. A pass runs
// under an instruction bound (a count hook that re-arms, so pcall cannot
// swallow it), a memory bound (a capped allocator) and, when configured, a
// time bound read from the injected clock by the same hook. docs/policy-api.md is
// the reference for what a policy sees and may do.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "sched/env.hpp"
#include "sched/policy.hpp"
#include "sched/policy_failure.hpp"

namespace sched {

// A policy parameter (ctx.params): from the config or `--param key=value`.
using ParamValue = std::variant<bool, long long, double, std::string>;
using PolicyParams = std::map<std::string, ParamValue>;

// "key=value" → (key, value typed as boolean, integer, number or string).
// Returns nothing when the text has no '=' or an empty key.
std::optional<std::pair<std::string, ParamValue>> parse_param(const std::string& text);
// The value as text, as parse_param reads it back ("true", "3", "0.500000").
std::string param_text(const ParamValue& value);

struct LuaPolicyOptions {
  // Folder of shared helpers: require("lib.name") loads <lib_dir>/name.lua.
  // Empty: the folder "lib" beside the policy file.
  std::string lib_dir;
  // VM instructions one pass (or one on_event call) may run.
  std::uint64_t instruction_limit = 200'000'000;
  // Bytes the policy's Lua state may hold in all.
  std::size_t memory_limit = 256u << 20;
  // Seconds (of clock->monotonic()) one pass (or one on_event, save, restore
  // call, or the file's own top level) may run; 0 or no clock: no time bound.
  // The simulator leaves it off, so that its runs do not depend on how fast
  // the machine is.
  double time_limit_s = 0;
  const Clock* clock = nullptr;
  // Seed of math.random.
  std::uint64_t seed = 1;
  PolicyParams params;
};

// A file a policy loaded: the policy file itself or a lib module it
// required. The policy host watches all of them for edits, and a deployed
// version is journaled with all of them.
struct PolicySource {
  std::string path;  // as opened
  std::string name;  // as Lua names it: "fcfs.lua", "lib/easy.lua"
  std::string text;  // the content loaded
};

// A policy that cannot be loaded: what() says file, line and why; failure()
// is the same, typed. sources() are the files read before it failed.
class PolicyLoadError : public std::runtime_error {
 public:
  explicit PolicyLoadError(PolicyFailure failure)
      : std::runtime_error(failure.message), failure_(std::move(failure)) {}
  const PolicyFailure& failure() const { return failure_; }
  const std::vector<PolicySource>& sources() const { return sources_; }
  void set_sources(std::vector<PolicySource> sources) { sources_ = std::move(sources); }

 private:
  PolicyFailure failure_;
  std::vector<PolicySource> sources_;
};

// Plain data a policy hands over across a reload (P.save → P.restore),
// kept as a Lua table constructor.
struct SavedPolicyState {
  std::string lua_source;
};

class LuaRuntime;

class LuaPolicy : public Policy {
 public:
  // Loads and checks a policy file. Throws PolicyLoadError.
  static std::unique_ptr<LuaPolicy> load(const std::string& path, const LuaPolicyOptions& options);
  ~LuaPolicy() override;

  std::string name() const override;
  const std::string& path() const { return path_; }
  std::optional<PolicyFailure> schedule(PassContext& ctx) override;
  bool time_dependent() const override { return time_dependent_; }
  bool idle_nodes_only() const override { return idle_nodes_only_; }
  void on_event(const Event& event) override;

  // P.save() as data; nothing when P.save is absent or failed (then
  // *failure says why).
  std::optional<SavedPolicyState> save(std::optional<PolicyFailure>* failure);
  // Hands saved state to P.restore (when present). Returns why it failed.
  std::optional<PolicyFailure> restore(const SavedPolicyState& state);

  // The files it loaded so far: the policy file first, then each lib module
  // in the order required (a require inside schedule adds one later).
  const std::vector<PolicySource>& sources() const;

  // Bytes the Lua state holds now.
  std::size_t memory_used() const;
  // Errors raised by on_event since load (they cannot drop a pass).
  std::uint64_t event_errors() const { return event_errors_; }

 private:
  LuaPolicy(std::string path, std::unique_ptr<LuaRuntime> runtime);

  std::string path_;
  std::unique_ptr<LuaRuntime> rt_;
  bool time_dependent_ = true;
  bool idle_nodes_only_ = false;
  std::uint64_t event_errors_ = 0;
};

}  // namespace sched
