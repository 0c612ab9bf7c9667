// The job model of docs/design.md §3: what a job asks for (JobSpec) and what the
// engine knows about it while it lives (Job).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sched/boxed.hpp"
#include "sched/priority.hpp"
#include "sched/tasks/task_layout.hpp"

namespace sched {

using JobId = std::int64_t;
using NodeIndex = std::int32_t;

// A job's cores on one node in an invasive partition (issue 20 item 2;
// sched/core_map.hpp): hwloc logical core ids, ascending.
struct NodeCores {
  NodeIndex node = 0;
  std::vector<int> cores;
  bool operator==(const NodeCores&) const = default;
};
// One entry per node, in the order the nodes were taken (the first is the leader).
using CoreSet = std::vector<NodeCores>;

enum class JobKind : std::uint8_t { Rigid, Moldable, Malleable, Evolving };

// PENDING → STARTING → RUNNING ⇄ ADAPTING → COMPLETING → COMPLETED | FAILED |
// CANCELLED | TIMEOUT; PENDING → CANCELLED; a requeue goes back to PENDING
// through COMPLETING; RUNNING ⇄ SUSPENDED → COMPLETING (issue 17: a policy's
// ctx:suspend and ctx:resume). is_valid_transition() holds the full table.
// SUSPENDED is last so that the names stored before it existed keep their
// places.
enum class JobState : std::uint8_t {
  Pending,
  Starting,
  Running,
  Adapting,
  Completing,
  Completed,
  Failed,
  Cancelled,
  Timeout,
  Suspended,
};

enum class NodeConstraint : std::uint8_t { None, Pof2, Even, Odd, Ncube };

// Names as they appear in job scripts, Lua, CSV and events.
std::string_view to_string(JobKind kind);
std::string_view to_string(JobState state);
std::string_view to_string(NodeConstraint constraint);
std::optional<JobKind> parse_job_kind(std::string_view text);
std::optional<JobState> parse_job_state(std::string_view text);
std::optional<NodeConstraint> parse_node_constraint(std::string_view text);

bool is_terminal(JobState state);
bool is_valid_transition(JobState from, JobState to);
bool is_resizable(JobKind kind);  // malleable and evolving jobs

// The submit options most jobs never give (issue 15: kept out of line in
// JobSpec::extra, allocated only for a job that sets one of them).
struct JobSpecExtra {
  std::string output;  // file for the batch script's stdout (and stderr); empty: sched-<id>.out
  std::vector<std::pair<std::string, std::string>> environment;
  // --mem: the most memory the job's processes may use on each node (its
  // cgroup's limit where the node has one); 0: no limit.
  std::uint64_t mem_bytes = 0;
  // ---- when it may start (issue 18: --dependency, --begin; --hold is JobSpec::hold)
  std::string dependency;  // sbatch's --dependency text (sched/dependency.hpp); empty: none
  double begin_time = 0;   // not before this time on the engine's clock; 0: at once
  // Output and arguments as sbatch has them (issue 18, item 3). `output` and
  // `error` may hold sbatch's filename patterns (%j %x %N %u %A %a %%),
  // expanded when the job is launched (convert::expand_output_pattern).
  std::string error;              // -e: file for stderr; empty: stderr goes to `output`
  std::vector<std::string> args;  // after the script's name: its $1, $2, ...
  // ---- priority (issue 18 item 5)
  std::string account;  // -A: recorded for accounting and fair share; empty: none
  // ---- where it may run (issue 18 item 4: -w, -x, --gres; sched/placement.hpp)
  std::vector<std::string> nodelist;  // -w: nodes it must have; empty: any
  std::vector<std::string> exclude;   // -x: nodes it must not have
  int gpus_per_node = 0;              // --gres=gpu:N: GPUs it needs on each of its nodes
  // ---- job arrays (issue 18 item 1)
  int array_task_id = -1;  // this task's index
  int array_throttle = 0;  // %N: at most N tasks of the array started at once; 0: no limit
  JobId array_job_id = 0;  // the array's id (its first task's id); 0: not an array task
  // sbatch's --array text (sched/job_array.hpp). On a submission: one job per
  // index; every task keeps it (its count, min, max and step go to its
  // environment).
  std::string array;

  bool operator==(const JobSpecExtra&) const = default;
};

// How a job's tasks and cores are laid out (issues 16 and 20), out of line in
// JobSpec::layout: most jobs keep every default.
struct JobLayout {
  // ---- tasks (issue 16 item 1; sched/tasks/task_layout.hpp)
  int ntasks = 0;         // -n: tasks in all; 0: nodes × tasks_per_node
  int cpus_per_task = 1;  // -c: cores of each task
  tasks::Distribution distribution = tasks::Distribution::Block;  // -m
  tasks::CpuBind cpu_bind = tasks::CpuBind::None;                 // --cpu-bind
  // -n without -N: Engine::submit replaces `nodes` (1 until then) with enough
  // nodes for ntasks × cpus_per_task (tasks::nodes_for_tasks) and clears it.
  bool nodes_from_tasks = false;
  // --cores (issue 20 item 2): the cores a job of an invasive partition
  // (kind = "cores") needs in all. 0 at submit: ntasks (or nodes ×
  // tasks_per_node) × cpus_per_task, which Engine::submit fills in. Not
  // used in a partition of whole nodes.
  int cores = 0;
  // A malleable job there grows and shrinks by cores within [min_cores,
  // max_cores] (--cores MIN-MAX; 0: same as cores), `cores` its start size.
  int min_cores = 0;
  int max_cores = 0;

  bool operator==(const JobLayout&) const = default;
};

// What the user asks for. Sizes are in nodes. What most jobs never set is in
// `extra` and `layout` (read: `spec.extra->output`; write: `spec.extra.edit().output`).
struct JobSpec {
  std::string name;
  std::string user;
  std::string command;  // the batch script or command line
  std::string workdir;
  std::string qos;  // --qos: a name from the config's QOS table; empty at submit: "normal"
  // ---- partition (issue 20 item 1; sched/partition.hpp): -p; empty at
  // submit: the default partition, whose name Engine::submit fills in.
  std::string partition;
  double walltime = 0;     // hard limit in seconds; 0 = none
  double power_min_w = 0;  // per-node estimates, watts
  double power_max_w = 0;
  std::int64_t nice = 0;  // --nice: subtracted from the priority; negative only for an admin
  int nodes = 1;          // requested size; the start size of a malleable job
  int min_nodes = 0;      // 0: same as nodes
  int max_nodes = 0;      // 0: same as nodes
  int tasks_per_node = 1;
  JobKind kind = JobKind::Rigid;
  NodeConstraint constraint = NodeConstraint::None;
  bool urgent = false;
  bool hold = false;  // submitted held (--hold): waits for a release
  Boxed<JobSpecExtra> extra;
  Boxed<JobLayout> layout;
};

// Checks a spec and fills in defaults (min/max for rigid jobs, ...).
// Returns an error message for people, or nothing when the spec is valid.
std::optional<std::string> normalize_spec(JobSpec& spec);

// What a node reports with a job's end besides its exit status.
struct JobEndReport {
  std::string reason;  // Job::end_reason
  std::optional<std::uint64_t> max_rss_bytes;
  std::optional<double> cpu_s;
};

// An evolving job's own request to grow or shrink.
struct ResizeRequest {
  enum class Op { Expand, Shrink } op = Op::Expand;
  int nodes = 0;  // the size the job asks for
  bool operator==(const ResizeRequest&) const = default;
};

// Who holds a pending job back (scontrol hold): a user's hold is released
// by its owner or an admin, an admin's only by an admin.
enum class HoldKind : std::uint8_t { None, User, Admin };

// What a pending job's dependency says so far.
enum class DependencyState : std::uint8_t { None, Waiting, Satisfied, Never };

// What a job gathers once it runs (issue 15: out of line in Job::run,
// allocated by the first write; a job that never started has none): its end
// report, its adaptations and suspensions, what it and its policy reported.
struct JobRun {
  // Why it ended, when its node said more than the exit status ("out of
  // memory", a launch failure's reason); empty otherwise.
  std::string end_reason;
  // What its leader node's cgroup measured: peak memory and CPU time (user
  // + system) of all its processes there. Unset: not measured.
  std::optional<std::uint64_t> max_rss_bytes;
  std::optional<double> cpu_s;

  std::optional<double> mtct;     // latest communication/computation ratio
  std::optional<double> power_w;  // latest measured power per node
  std::optional<ResizeRequest> request;
  std::optional<double> expected_start;  // from a policy's ctx:reserve

  // Seconds added to the walltime limit by adaptations: time spent adapting
  // does not count, and a shrink stretches what is left of the limit by
  // old/new size (the job runs slower on fewer nodes through no fault of its
  // own; linear speedup is the most a shrink can slow it). Likewise a
  // resizable job started below its requested size begins with its limit
  // stretched by requested/started size.
  double limit_extension = 0;
  double adapting_since = -1;  // when the enactor began the current adaptation
  // After a rolled-back adaptation, no resize before this time (-1: none).
  double resize_held_until = -1;
  // When the current suspension began (-1: not suspended). Its length is
  // added to limit_extension on resume: the limit does not run while suspended.
  double suspended_since = -1;

  int expansions = 0;
  int shrinks = 0;
  int gain = 0;  // nodes added minus nodes removed by adaptations
  int requeues = 0;
  int suspensions = 0;

  // ---- invasive partitions (issue 20 item 2): the cores it holds, one
  // entry per node of `allocation`, in the same order; empty for a job of
  // whole nodes.
  CoreSet cores;

  bool operator==(const JobRun&) const = default;
};

struct Job {
  JobId id = 0;
  JobSpec spec;

  double submit_time = 0;
  double start_time = -1;  // -1: not started
  double end_time = -1;    // -1: not ended

  // Node indices; the first one is the leader and never leaves the job.
  // A SUSPENDED job keeps its list (its processes are there, frozen, and it
  // resumes on the same nodes) while the cluster holds none of them.
  std::vector<NodeIndex> allocation;

  // Σ nodes × seconds over the job's allocation intervals so far.
  double node_seconds = 0;
  double allocation_since = 0;  // when the allocation last changed

  // Bumped whenever anything a policy can see changes; lets the policy
  // host refresh only the jobs that changed since the last pass.
  std::uint64_t version = 1;

  // ---- priority (issue 18 item 5): set at submit, recomputed at each
  // priority calc period while PENDING (sched/priority.hpp).
  std::int64_t priority = 0;
  WeightedFactors weighted;  // as sprio shows them

  // Exit code (>= 0) or minus the signal number; meaningful once ended.
  int exit_status = 0;
  // ---- partition (issue 20 item 1): the index of spec.partition among the
  // engine's partitions (0 without any), set at submit and restore.
  int partition = 0;

  JobState state = JobState::Pending;
  // The state a COMPLETING job goes to once its processes are gone.
  JobState outcome = JobState::Completed;
  // ---- why a PENDING job is not offered to the policy (issue 18)
  HoldKind hold = HoldKind::None;
  DependencyState dependency = DependencyState::None;
  bool before_begin = false;  // its --begin time is still ahead
  // ---- job arrays (issue 18 item 1)
  bool array_throttled = false;  // its array has its %N tasks started: JobArrayTaskLimit

  // Rarely set, out of line (read: `job.run->mtct`; write: `job.run.edit().mtct`).
  Boxed<JobRun> run;

  int size() const { return static_cast<int>(allocation.size()); }
  int min_nodes() const { return spec.min_nodes; }
  int max_nodes() const { return spec.max_nodes; }
  double runtime() const { return end_time >= 0 && start_time >= 0 ? end_time - start_time : 0; }
  // start + walltime + limit_extension, or -1 when the job has no walltime or
  // has not started.
  double est_end() const;
};

// Slurm's reason why a PENDING job is not offered to the policy:
// "JobHeldAdmin", "JobHeldUser", "DependencyNeverSatisfied", "Dependency",
// "BeginTime", "JobArrayTaskLimit"; empty when it is (or is not pending).
std::string_view waiting_reason(const Job& job);

}  // namespace sched
