// Who a job's processes run as on a node (docs/security.md §5): the job's
// user as this node's user database knows them. An agent running as root
// switches each job process to that user's uid, gid and supplementary groups
// before exec; an unprivileged agent can run jobs only as itself.
#pragma once

#include <sys/types.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "sched/agent/types.hpp"

namespace sched::agent {

struct UserIdentity {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // supplementary groups, the primary one included
  std::string home;
  std::string shell;
  bool operator==(const UserIdentity&) const = default;
};

// The user is not known on this node, or cannot be run as.
class UserError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Resolves `name` with getpwnam_r and getgrouplist. Throws UserError naming
// the user when it does not exist (or the lookup fails).
UserIdentity lookup_user(const std::string& name);
// The agent's own effective user.
UserIdentity current_user();

// The environment a login gives: USER, LOGNAME, HOME, SHELL (the user's, or
// /bin/sh), the agent's PATH (else a default), and LANG and
// SCHED_MUNGE_SOCKET when it has them. Nothing else of the agent's own
// environment reaches a job.
EnvPairs login_environment(const UserIdentity& user);

// Whom to run a job of `job_user` as, for an agent running as `agent`
// (current_user()): that user when the agent is root (root itself only if
// `allow_root`), the agent itself when it is that user. A job that names no
// user is the agent's user's (a root job for a root agent). Throws UserError
// with the reason otherwise: an unknown user, a root job where they are
// refused, or a job of another user on an unprivileged agent.
UserIdentity job_identity(const std::string& job_user, const UserIdentity& agent, bool allow_root);

}  // namespace sched::agent
