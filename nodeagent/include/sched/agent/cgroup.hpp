// Containment of jobs with cgroups (docs/security.md §5): one cgroup per
// job on this node, with one leaf per task group ("batch", "step_<n>"),
// under a subtree the agent owns: <root>/sched/<node>/job_<id>/<leaf>.
// The job's cgroup carries its --mem limit (swap off where the kernel lets
// us), is killed whole at the job's end, and tells its peak memory, CPU
// time and whether the OOM killer struck. Three implementations:
//   cgroup2: the unified hierarchy, where it has the memory controller and
//            the agent can write the subtree (a delegated one);
//   cgroup1: the v1 memory, freezer, cpuacct (and pids, cpuset) hierarchies;
//   none:    nothing to use; jobs are contained by process tree only.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "sched/agent/types.hpp"

namespace sched::agent {

class CgroupError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct CgroupUsage {
  std::optional<std::uint64_t> max_rss_bytes;  // peak memory of the job's processes
  std::optional<double> cpu_s;                 // CPU time, user + system
  bool oom_killed = false;                     // the OOM killer killed one of them
};

class Cgroups {
 public:
  virtual ~Cgroups() = default;
  // "cgroup2", "cgroup1" or "none" (agent.register's containment).
  virtual std::string_view kind() const = 0;
  // Creates the job's cgroup and the leaf (idempotent) and returns the
  // cgroup.procs files a process of that leaf writes itself into before
  // exec (SpawnSpec::cgroup_procs). mem_bytes > 0 limits the whole job on
  // this node. Throws CgroupError naming the file that could not be written.
  virtual std::vector<std::string> prepare(JobId job, const std::string& leaf,
                                           std::uint64_t mem_bytes) = 0;
  // Confines the job's processes on this node to `cpus` (OS CPU numbers;
  // issue 20 item 2, a job of an invasive partition): a cpuset cgroup for the
  // job and the leaf, as Slurm's task/cgroup does (v1's cpuset hierarchy;
  // v2's cpuset controller where the unified hierarchy offers it). Returns
  // the leaf's cgroup.procs files to join besides prepare()'s; empty when
  // there is no cpuset here (the caller's sched_setaffinity still pins
  // them). Call after prepare(). Throws CgroupError naming the file.
  virtual std::vector<std::string> confine_cpus(JobId job, const std::string& leaf,
                                                const std::vector<int>& cpus) = 0;
  // Changes the cpuset of a job already confined (a resize by cores): v2
  // writes the job's cgroup (its leaves follow); v1 widens the job's set
  // before its leaves', narrows the leaves' before the job's (a child's set
  // must lie within its parent's). False when the job has no cpuset here.
  virtual bool set_cpus(JobId job, const std::vector<int>& cpus) = 0;
  // What the job's cgroup has measured so far (nothing for `none`).
  virtual CgroupUsage usage(JobId job) const = 0;
  // SIGKILLs every process in the job's cgroup (cgroup.kill, or freeze,
  // kill, thaw), again until none is left or a bound passes; true when empty.
  virtual bool kill_all(JobId job) = 0;
  // Freezes (frozen) or thaws the job's processes: cgroup.freeze (v2) or
  // freezer.state (v1). False when there is no freezer to use here (none,
  // or v1 without the freezer controller): the caller stops them by signal.
  virtual bool freeze(JobId job, bool frozen) = 0;
  // Removes the job's cgroup (after kill_all); false when it is still busy.
  virtual bool remove(JobId job) = 0;
  // The jobs whose cgroups an earlier agent left here: their processes are
  // killed and their cgroups removed (fencing at start). Returns those jobs.
  virtual std::vector<JobId> clean_stale() = 0;
};

struct CgroupOptions {
  std::string node;                     // names the agent's subtree
  std::string mode = "auto";            // auto, cgroup2, cgroup1 or none
  std::string root = "/sys/fs/cgroup";  // where the hierarchies are mounted
};

// auto: cgroup2 if usable, else cgroup1 if usable, else none; a named mode
// that cannot be used throws CgroupError with the reason. `why` says which
// was chosen and why the better ones were not.
std::unique_ptr<Cgroups> open_cgroups(const CgroupOptions& options, std::string* why);

}  // namespace sched::agent
