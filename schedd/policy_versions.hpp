// The journal of deployed policy versions (issue 22 item 4; docs/admin.md
// "The policy workflow"): each policy that comes to run — at start, after a
// file edit, by `sched policy set` or `sched policy rollback` — is recorded
// in the store with who, when, how, its parameters and the text of every file
// it loaded. After a restart the last version runs again, and a rollback can
// go back to any version even if its files were edited or removed since: a
// version whose files are no longer as stored is written out again under
// <state_dir>/policy-versions/<version>/ and loaded from there.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sched/lua_policy.hpp"
#include "sched/policy_host.hpp"
#include "state_store.hpp"

namespace sched::daemon {

// SHA-256 (hex) over each file's name and text, in load order.
std::string policy_hash(const std::vector<PolicySource>& sources);

class PolicyVersions {
 public:
  PolicyVersions(StateStore& store, std::string versions_dir);

  // Journals what `host` runs now, unless it is the last version already
  // (same files, same text, same parameters), as a version of the host's
  // partition ("" for the [scheduler] policy). Returns that partition's
  // current version (0 when no policy runs).
  std::uint64_t note(const PolicyHost& host, const std::string& user, const std::string& how,
                     double now);
  // After the engine went back to the last good policy (policy.reverted):
  // journals the version it runs again ("revert to N", as journaled when it
  // was installed), so that a restart runs it and not the one given up.
  std::uint64_t note_revert(const PolicyHost& host, double now);
  std::vector<PolicyVersionRecord> history() const { return store_.policy_versions(); }
  std::optional<PolicyVersionRecord> version(std::uint64_t number) const {
    return store_.policy_version(number);
  }
  // The current version of the [scheduler] policy ("") or of a partition's
  // own: the last one journaled for it (0: none).
  std::uint64_t current(const std::string& partition = {}) const;
  // The partition's version before its current one, if any.
  std::optional<PolicyVersionRecord> before_current(const std::string& partition) const;

  // The file to load `version` from: its own path when every file it loaded
  // is still there as stored, else a copy written under the versions folder.
  // Throws std::runtime_error when the copy cannot be written.
  std::string materialize(const PolicyVersionRecord& version) const;

 private:
  StateStore& store_;
  std::string versions_dir_;
  std::map<std::string, std::uint64_t> current_;  // by partition ("": [scheduler])
  // The version each installed policy was journaled as (the engine keeps the
  // last good one alive, so its entry is valid when a revert asks).
  std::map<const LuaPolicy*, std::uint64_t> version_of_;
};

// A version's parameters as the policy reads them.
PolicyParams version_params(const PolicyVersionRecord& version);

}  // namespace sched::daemon
