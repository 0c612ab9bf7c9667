#include "sched/agent/run_as.hpp"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace sched::agent {
namespace {

UserIdentity from_passwd(const passwd& pw) {
  UserIdentity user;
  user.name = pw.pw_name;
  user.uid = pw.pw_uid;
  user.gid = pw.pw_gid;
  user.home = pw.pw_dir ? pw.pw_dir : "/";
  user.shell = pw.pw_shell && *pw.pw_shell ? pw.pw_shell : "/bin/sh";
  // getgrouplist says how many there are when the first guess is short.
  int count = 16;
  std::vector<gid_t> groups(static_cast<std::size_t>(count));
  while (::getgrouplist(pw.pw_name, pw.pw_gid, groups.data(), &count) < 0) {
    groups.resize(static_cast<std::size_t>(count) + 16);
    count = static_cast<int>(groups.size());
  }
  groups.resize(static_cast<std::size_t>(count));
  user.groups = std::move(groups);
  return user;
}

}  // namespace

UserIdentity lookup_user(const std::string& name) {
  if (name.empty()) throw UserError("the job names no user");
  passwd pw{};
  passwd* found = nullptr;
  std::vector<char> buf(16384);
  int error = 0;
  while ((error = ::getpwnam_r(name.c_str(), &pw, buf.data(), buf.size(), &found)) == ERANGE) {
    buf.resize(buf.size() * 2);
  }
  if (error != 0) {
    throw UserError("cannot look up user '" + name + "': " + std::strerror(error));
  }
  if (found == nullptr) throw UserError("unknown user '" + name + "' on this node");
  return from_passwd(pw);
}

UserIdentity current_user() {
  passwd pw{};
  passwd* found = nullptr;
  std::vector<char> buf(16384);
  int error = 0;
  while ((error = ::getpwuid_r(::geteuid(), &pw, buf.data(), buf.size(), &found)) == ERANGE) {
    buf.resize(buf.size() * 2);
  }
  if (error == 0 && found != nullptr) return from_passwd(pw);
  // A uid without a name (a container's): the agent still runs as it.
  UserIdentity user;
  user.name = std::to_string(::geteuid());
  user.uid = ::geteuid();
  user.gid = ::getegid();
  user.groups = {user.gid};
  user.home = "/";
  user.shell = "/bin/sh";
  return user;
}

EnvPairs login_environment(const UserIdentity& user) {
  // The agent's PATH: where the site's programs are (`sched` for `sched
  // run`); it is no secret, and jobs can set their own.
  const char* path = std::getenv("PATH");
  EnvPairs env = {{"HOME", user.home},
                  {"LOGNAME", user.name},
                  {"PATH", path && *path ? path : "/usr/local/bin:/usr/bin:/bin"},
                  {"SHELL", user.shell},
                  {"USER", user.name}};
  if (const char* lang = std::getenv("LANG")) env.emplace_back("LANG", lang);
  // The munged of a cluster that runs its own (docs/security.md §2), for
  // the job's `sched` commands: its socket is open to every user.
  if (const char* munge = std::getenv("SCHED_MUNGE_SOCKET")) {
    env.emplace_back("SCHED_MUNGE_SOCKET", munge);
  }
  return env;
}

UserIdentity job_identity(const std::string& job_user, const UserIdentity& agent, bool allow_root) {
  // A job that names no user (a raw submission without one) is the agent's
  // user's: for a root agent, a root job.
  if (job_user.empty()) return job_identity(agent.name, agent, allow_root);
  if (agent.uid != 0) {
    if (job_user != agent.name) {
      throw UserError("this node's agent runs unprivileged as '" + agent.name +
                      "' and runs only that user's jobs (this job's user is '" + job_user + "')");
    }
    return agent;
  }
  UserIdentity user = lookup_user(job_user);
  if (user.uid == 0 && !allow_root) {
    throw UserError("jobs of root are not allowed on this node (allow_root_jobs)");
  }
  return user;
}

}  // namespace sched::agent
