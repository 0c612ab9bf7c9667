// Starting one task's process: everything is prepared before fork(), so that
// the child makes only async-signal-safe calls (the agent has other threads)
// until it execs. The child leads a new session and process group, works in
// its directory, reads /dev/null and keeps no other descriptor of the agent.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "unique_fd.hpp"

namespace sched::agent::detail {

struct SpawnSpec {
  std::string exec_path;  // absolute, or relative to workdir
  std::vector<std::string> argv;
  std::vector<std::string> envp;  // "NAME=value"
  std::string workdir;
  std::string output_path;  // when set: stdout and stderr go there (created 0644, truncated)
  std::string error_path;   // when set with output_path: stderr goes here instead
  int stdout_fd = -1;       // otherwise these become stdout and stderr
  int stderr_fd = -1;
  // cgroup.procs files the child moves itself into first, while it still
  // has the agent's privileges (before exec: nothing runs outside them).
  std::vector<std::string> cgroup_procs;
  // Set: the child takes these ids (groups, then gid, then uid) before it
  // enters its directory or opens its output, so both are checked and
  // created as the job's user. Needs a root agent.
  struct Ids {
    uid_t uid = 0;
    gid_t gid = 0;
    std::vector<gid_t> groups;
  };
  std::optional<Ids> ids;
  // Set: the child pins itself to these OS CPU numbers (sched_setaffinity)
  // after joining its cgroups; numbers past CPU_SETSIZE are a LaunchError.
  std::vector<int> cpus;
  // Set: this descriptor of the agent becomes the child's descriptor 3
  // (kept across exec): a step rank's PMI connection (PMI_FD=3).
  int pass_fd = -1;
};

class Spawned {
 public:
  pid_t pid() const { return pid_; }
  // Readable once the process has ended; -1 where pidfds are unsupported.
  int exit_fd() const { return pidfd_.get(); }
  // After the process ended: why it could not start, or "" when it did.
  std::string start_failure();

 private:
  friend Spawned spawn(const SpawnSpec& spec);
  pid_t pid_ = -1;
  UniqueFd report_;  // the child writes a failure record, or exec closes it
  UniqueFd pidfd_;
  std::string workdir_, output_path_, error_path_, exec_path_;  // to word a failure
  std::vector<std::string> cgroups_;
  std::vector<int> cpus_;
  uid_t uid_ = 0;
};

// Throws LaunchError when no process could be created.
Spawned spawn(const SpawnSpec& spec);

struct Pipe {
  UniqueFd read;
  UniqueFd write;
};
// A close-on-exec pipe whose ends are neither stdin, stdout nor stderr, so
// that the child's redirections cannot overwrite them. Throws LaunchError.
Pipe make_pipe();

}  // namespace sched::agent::detail
