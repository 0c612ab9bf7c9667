// A task's processes as /proc shows them: its process group and session and
// everything descended from them, including what left both (setsid, setpgid).
#pragma once

#include <sys/types.h>

#include <optional>
#include <vector>

namespace sched::agent::detail {

// One process, recognisable after its pid has been reused: a new process
// with the same pid has a different start time.
struct ProcRef {
  pid_t pid = 0;
  unsigned long long start_time = 0;  // clock ticks after boot, from /proc/<pid>/stat
  bool operator==(const ProcRef&) const = default;
};

struct ProcStat {
  ProcRef ref;
  pid_t ppid = 0;
  pid_t pgrp = 0;
  pid_t session = 0;
  char state = '?';  // 'Z' for a zombie
};

std::optional<ProcStat> read_proc_stat(pid_t pid);
std::vector<ProcStat> scan_processes();

// The living processes of a task: the members of the process group and the
// session led by `leader` (0 for none: once the leader is reaped its pid may
// name someone else's group), those of `known` that still exist, and all
// their descendants. Never the agent itself.
std::vector<ProcRef> collect_tree(pid_t leader, const std::vector<ProcRef>& known);

// Sends `sig` to the process if its pid still names it.
void signal_process(const ProcRef& ref, int sig);

}  // namespace sched::agent::detail
