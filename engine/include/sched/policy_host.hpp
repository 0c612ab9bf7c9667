// Keeps the engine's Lua policy and swaps in edits safely (docs/design.md §4 hot
// reload): a changed file is loaded into a fresh state, handed the old
// policy's saved state, and given a dry pass on the current snapshot; it
// replaces the running policy only if all of that works. Otherwise the last
// good policy stays and the reason is published as policy.error. The host
// keeps the last failure, typed and timed, for policy.info. A version that
// passes the dry pass but then fails live passes is given up by the engine
// (EngineConfig::revert_after_failures); current() follows the engine.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "sched/lua_policy.hpp"
#include "sched/policy_failure.hpp"
#include "sched/status.hpp"

namespace sched {

class Engine;

// Resolves `--policy NAME|PATH`: a path to an existing file, or NAME.lua in
// the policy folder. Returns nothing when neither exists.
std::optional<std::string> resolve_policy_path(const std::string& name_or_path,
                                               const std::string& policy_dir);
// The policy folder: $SCHED_POLICY_DIR, else the source tree's scripts/policies.
std::string default_policy_dir();

class PolicyHost {
 public:
  // A time bound (options.time_limit_s) without a clock reads the engine's.
  PolicyHost(Engine& engine, LuaPolicyOptions options);

  // Loads the first policy and installs it in the engine. Invalid (and
  // nothing installed) when it cannot be loaded; last_failure() says why.
  Status load(const std::string& path);
  // Reloads the current file. Invalid when the new file was refused (the old
  // policy keeps running); the refusal is published as policy.error.
  Status reload();
  // Reloads when the file changed since the last (attempted) load.
  bool reload_if_changed();

  // The policy the engine runs (after a revert: the last good one).
  std::shared_ptr<LuaPolicy> current() const;
  const std::string& path() const { return path_; }
  const Engine& engine() const { return engine_; }
  std::uint64_t reloads() const { return reloads_; }
  std::uint64_t failed_reloads() const { return failed_reloads_; }
  // The latest failure: of a load or reload here, or of a pass (the engine's
  // PassStats::last_failure); nothing before the first.
  std::optional<PolicyFailure> last_failure() const;

 private:
  std::optional<PolicyFailure> try_replace();
  void record(PolicyFailure failure);
  std::string fingerprint() const;

  Engine& engine_;
  LuaPolicyOptions options_;
  std::string path_;
  std::string seen_fingerprint_;
  std::uint64_t reloads_ = 0;
  std::uint64_t failed_reloads_ = 0;
  std::optional<PolicyFailure> last_failure_;
};

}  // namespace sched
