// Keeps the engine's Lua policy and swaps in edits safely (docs/design.md §4 hot
// reload): a changed file (the policy file or any lib module it loaded) is
// loaded into a fresh state, handed the old policy's saved state, and given
// a dry pass on the current snapshot; it replaces the running policy only if
// all of that works. Otherwise the last
// good policy stays and the reason is published as policy.error. The host
// keeps the last failure, typed and timed, for policy.info. A version that
// passes the dry pass but then fails live passes is given up by the engine
// (EngineConfig::revert_after_failures); current() follows the engine.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "sched/engine.hpp"
#include "sched/lua_policy.hpp"
#include "sched/policy_failure.hpp"
#include "sched/status.hpp"

namespace sched {

// Resolves `--policy NAME|PATH`: a path to an existing file, or NAME.lua in
// the policy folder (NAME may name a subfolder: "negotiation/socket_pack").
// Returns nothing when neither exists.
std::optional<std::string> resolve_policy_path(const std::string& name_or_path,
                                               const std::string& policy_dir);
// The policy folder: $SCHED_POLICY_DIR, else the source tree's scripts/policies.
std::string default_policy_dir();

// A policy loaded and given a dry pass, not installed: what `sched policy
// check` shows, and what a reload or deploy installs when it did not fail.
struct PolicyCandidate {
  std::shared_ptr<LuaPolicy> policy;     // null when the file did not load
  std::vector<PolicySource> sources;     // the files read (also when it failed)
  std::optional<PolicyFailure> failure;  // why it may not run: load, restore or dry pass
  DryPassReport dry;                     // the dry pass's actions and refusals
};

class PolicyHost {
 public:
  // A time bound (options.time_limit_s) without a clock reads the engine's.
  // `partition`: the host of that partition's own policy (issue 20 item 1):
  // it installs into the partition, and its dry passes are the partition's;
  // "": the engine's policy.
  PolicyHost(Engine& engine, LuaPolicyOptions options, std::string partition = {});

  // Loads the first policy and installs it in the engine. Invalid (and
  // nothing installed) when it cannot be loaded; last_failure() says why.
  Status load(const std::string& path);
  // Reloads the current file. Invalid when the new file was refused (the old
  // policy keeps running); the refusal is published as policy.error.
  Status reload();
  // Reloads when the policy file or one of the lib modules it loaded
  // changed since the last (attempted) load.
  bool reload_if_changed();

  // Loads `path` with `params` into a fresh state, hands it the running
  // policy's saved state (P.save → P.restore, as a reload does) and gives it
  // a dry pass on the engine's state now. Changes nothing: the running
  // policy, its state and the engine stay as they are.
  PolicyCandidate check(const std::string& path, const PolicyParams& params);
  // The same, then installs it in place of the running policy, and watches
  // its files from now on (sched policy set). Invalid, and nothing changed,
  // when the check failed; the refusal is published as policy.error.
  Status deploy(const std::string& path, const PolicyParams& params);

  // The policy the engine runs (after a revert: the last good one).
  std::shared_ptr<LuaPolicy> current() const;
  const std::string& path() const { return path_; }
  const std::string& partition() const { return partition_; }
  const PolicyParams& params() const { return options_.params; }
  const Engine& engine() const { return engine_; }
  std::uint64_t reloads() const { return reloads_; }
  std::uint64_t failed_reloads() const { return failed_reloads_; }
  // The latest failure: of a load or reload here, or of a pass (the engine's
  // PassStats::last_failure); nothing before the first.
  std::optional<PolicyFailure> last_failure() const;

 private:
  PolicyCandidate prepare(const std::string& path, const LuaPolicyOptions& options);
  void set_engine_policy(std::shared_ptr<LuaPolicy> policy);
  // Installs a candidate that passed; publishes policy.reloaded with `how`.
  void install(PolicyCandidate candidate, const std::string& how);
  // Publishes a refused candidate as policy.error; Invalid.
  Status refuse(const PolicyFailure& failure, const std::string& what);
  void record(PolicyFailure failure);
  // Watches `sources` as read; the files watched before, as they are now.
  void watch(const std::vector<PolicySource>& sources, bool keep_old);
  bool changed() const;

  Engine& engine_;
  LuaPolicyOptions options_;
  std::string partition_;
  std::string path_;
  // Each file the policy (or the last attempt) loaded → its content as last
  // seen: an edit within the same second (same mtime) still counts.
  std::map<std::string, std::string> watched_;
  std::uint64_t reloads_ = 0;
  std::uint64_t failed_reloads_ = 0;
  std::optional<PolicyFailure> last_failure_;
};

}  // namespace sched
