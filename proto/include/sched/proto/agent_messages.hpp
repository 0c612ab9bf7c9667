// node agent ↔ schedd (docs/protocol.md §5-§8), on the agent socket:
// registration and heartbeats, the commands schedd gives (launch, kill,
// steps, adaptations) and what the agents report back. Every body lists its
// fields once (proto/fields.hpp). Times are UNIX epoch seconds, power watts.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sched/proto/process_messages.hpp"
#include "sched/proto/step_messages.hpp"

namespace sched::proto {

namespace type {
inline constexpr std::string_view kAgentRegister = "agent.register";
inline constexpr std::string_view kAgentHeartbeat = "agent.heartbeat";
inline constexpr std::string_view kJobLaunch = "job.launch";
inline constexpr std::string_view kJobKill = "job.kill";
// Freeze and thaw a suspended job's processes (issue 17 item 3).
inline constexpr std::string_view kJobSuspend = "job.suspend";
inline constexpr std::string_view kJobResume = "job.resume";
// A job of an invasive partition resized by cores: its cores now (issue 20 item 2).
inline constexpr std::string_view kJobCores = "job.cores";
inline constexpr std::string_view kTaskStarted = "task.started";
inline constexpr std::string_view kTaskExited = "task.exited";
inline constexpr std::string_view kStepLaunch = "step.launch";
inline constexpr std::string_view kStepRunning = "step.running";
inline constexpr std::string_view kPerfRequest = "perf.request";
inline constexpr std::string_view kPerfReport = "perf.report";
inline constexpr std::string_view kPowerReport = "power.report";
// The six-step adaptation (docs/design.md §6, docs/protocol.md §8).
inline constexpr std::string_view kAdaptBegin = "adapt.begin";
inline constexpr std::string_view kAdaptReady = "adapt.ready";
inline constexpr std::string_view kAdaptGo = "adapt.go";
inline constexpr std::string_view kAdaptComplete = "adapt.complete";
inline constexpr std::string_view kAdaptFailed = "adapt.failed";
inline constexpr std::string_view kAdaptAbort = "adapt.abort";
// Issue 17 item 1: an evolving job's request, relayed by the agent of a
// node it runs on (answered with a ResizeAnswer, process_messages.hpp), and
// schedd's later answer to that agent (resize.answer, a ResizeAnswer).
inline constexpr std::string_view kResizeRequest = "resize.request";
inline constexpr std::string_view kResizeAnswer = "resize.answer";
}  // namespace type

// --------------------------------------------------------- registration

struct AgentRegister {
  std::string node;  // the name the node has in the cluster
  std::string hostname;
  int sockets = 0;
  int cores = 0;
  int pus = 0;
  std::int64_t memory_bytes = 0;
  int gpus = 0;
  std::vector<std::int64_t> jobs;  // jobs whose processes run here (re-adoption)
  // Jobs that ended here and whose task.exited reports follow this message
  // (not yet acknowledged as recorded): the engine waits for those, and
  // settles at once the jobs it thought ran here that are in neither list.
  std::vector<std::int64_t> exits;
  // No process of an earlier agent on this node is left (the agent killed
  // what its predecessor's process table listed): the node may take work.
  bool clean = true;
  // How job processes are contained here: "cgroup2", "cgroup1" or "none"
  // (absent: an older agent, none).
  std::optional<std::string> containment;
  // An unprivileged agent: the one user it runs jobs as (it fails the
  // launch of anyone else's). Absent: a root agent, each job as its user.
  std::optional<std::string> run_as;
  template <class V>
  void fields(V& v) {
    v("containment", containment);
    v("run_as", run_as);
    v("node", node);
    v("hostname", hostname);
    v("sockets", sockets);
    v("cores", cores);
    v("pus", pus);
    v("memory_bytes", memory_bytes);
    v("gpus", gpus);
    v("jobs", jobs);
    v("exits", exits);
    v("clean", clean);
  }
};

struct RegisterReply {
  double heartbeat_s = 0;       // how often the engine expects a heartbeat
  std::string client_endpoint;  // where job processes reach the engine (sched run)
  // An agent that hears nothing from the engine this long kills its jobs
  // (the engine has taken its node for lost).
  double down_after_s = 0;
  template <class V>
  void fields(V& v) {
    v("heartbeat_s", heartbeat_s);
    v("client_endpoint", client_endpoint);
    v("down_after_s", down_after_s);
  }
};

struct AgentHeartbeat {
  std::string node;
  double load = 0;  // 1-minute load average
  std::optional<double> power_w;
  std::vector<std::int64_t> jobs;
  template <class V>
  void fields(V& v) {
    v("node", node);
    v("load", load);
    v("power_w", power_w);
    v("jobs", jobs);
  }
};

// ------------------------------------------------------------------ jobs

// ---- job arrays (issue 18 item 1): what an array task's environment says
// of its array (SLURM_ARRAY_*).
struct ArrayTaskMsg {
  std::int64_t job_id = 0;  // the array's id
  int task_id = 0;          // this task's index
  int count = 0;
  int min = 0;
  int max = 0;
  int step = 0;  // 0: the indices are a list (no SLURM_ARRAY_TASK_STEP)
  template <class V>
  void fields(V& v) {
    v("job_id", job_id);
    v("task_id", task_id);
    v("count", count);
    v("min", min);
    v("max", max);
    v("step", step);
  }
};

// engine → the agent of the job's leader node: run the batch script.
struct JobLaunch {
  std::int64_t job = 0;
  std::string name;
  std::string user;
  std::string script;
  std::string workdir;
  std::string output;
  std::map<std::string, std::string> env;  // the user's; the agent adds SCHED_*
  std::vector<std::string> nodes;          // the allocation, leader first
  int tasks_per_node = 1;
  double power_w = 0;  // per-node power estimate (for the model power meter); 0: none
  std::optional<std::int64_t> mem_bytes;  // --mem: the job's cgroup limit here; absent: none
  // Issue 18 item 3; output and error come with their patterns expanded.
  std::optional<std::string> error;              // stderr's file; absent: stderr to output
  std::optional<std::vector<std::string>> args;  // the script's arguments
  // --gres=gpu:N (issue 18 item 4): GPUs 0..N-1 of each node are the job's
  // (CUDA_VISIBLE_DEVICES); absent: none asked for.
  std::optional<int> gpus;
  // ---- job arrays (issue 18 item 1)
  std::optional<ArrayTaskMsg> array;  // set for an array's task
  // ---- tasks (issue 16 item 1): the batch script's SLURM_NTASKS,
  // SLURM_CPUS_PER_TASK, SLURM_TASKS_PER_NODE; absent as in job.submit
  std::optional<int> ntasks;
  std::optional<int> cpus_per_task;
  std::optional<std::string> distribution;
  // ---- invasive partitions (issue 20 item 2): the job's cores on each of
  // its nodes (hwloc logical core ids of that node's reported topology), by
  // node name; the agent confines the job to them (cpuset and affinity).
  // Absent: whole nodes.
  std::optional<std::map<std::string, std::vector<int>>> core_ids;
  template <class V>
  void fields(V& v) {
    v("core_ids", core_ids);
    v("ntasks", ntasks);
    v("cpus_per_task", cpus_per_task);
    v("distribution", distribution);
    v("gpus", gpus);
    v("error", error);
    v("args", args);
    // ---- job arrays (issue 18 item 1)
    v("array", array);
    v("power_w", power_w);
    v("mem_bytes", mem_bytes);
    v("job", job);
    v("name", name);
    v("user", user);
    v("script", script);
    v("workdir", workdir);
    v("output", output);
    v("env", env);
    v("nodes", nodes);
    v("tasks_per_node", tasks_per_node);
  }
};

// engine → every agent of the job: end its processes there.
struct JobKill {
  std::int64_t job = 0;
  double grace_s = 0;  // SIGTERM, then SIGKILL after this
  std::string reason;
  template <class V>
  void fields(V& v) {
    v("job", job);
    v("grace_s", grace_s);
    v("reason", reason);
  }
};

// engine → every agent of the job: freeze (job.suspend) or thaw
// (job.resume) its processes there. No answer.
struct JobSuspend {
  std::int64_t job = 0;
  template <class V>
  void fields(V& v) {
    v("job", job);
  }
};

// engine → agents of a job of an invasive partition whose cores change
// (issue 20 item 2): its cores on each node, hwloc logical ids as in
// job.launch's core_ids. The agent sets the job's cpuset there and the
// affinity of its processes to them. Sent before adapt.begin when the job
// grows (its processes continue on the wider set), once the adaptation is
// done when it shrinks (after the processes committed), and back to the old
// cores when an expansion is rolled back. No answer.
struct JobCores {
  std::int64_t job = 0;
  std::map<std::string, std::vector<int>> core_ids;
  template <class V>
  void fields(V& v) {
    v("job", job);
    v("core_ids", core_ids);
  }
};

struct TaskStarted {  // agent → engine
  std::string node;
  std::int64_t job = 0;
  std::int64_t pid = 0;
  template <class V>
  void fields(V& v) {
    v("node", node);
    v("job", job);
    v("pid", pid);
  }
};

struct TaskExited {  // agent → engine
  std::string node;
  std::int64_t job = 0;
  int status = 0;       // exit code >= 0, or minus the signal number
  std::string message;  // a launch failure's reason, "out of memory ...", else empty
  // What the job's cgroup here measured (absent: no cgroup): its peak
  // memory and CPU time (user + system) over all its processes here.
  std::optional<std::int64_t> max_rss_bytes;
  std::optional<double> cpu_s;
  template <class V>
  void fields(V& v) {
    v("node", node);
    v("job", job);
    v("status", status);
    v("message", message);
    v("max_rss_bytes", max_rss_bytes);
    v("cpu_s", cpu_s);
  }
};

// engine → agent, the reply to task.exited: `recorded` says the job's end is
// in the journal (or the report needs none: the job is over or not led from
// there). Only then may the agent forget the report; an error reply is no ack.
struct TaskExitedReply {
  bool recorded = false;
  template <class V>
  void fields(V& v) {
    v("recorded", recorded);
  }
};

// -------------------------------------------------------------- job steps

// engine → the agent of each node of the step: start its tasks.
struct StepLaunch {
  std::int64_t job = 0;
  std::int64_t step = 0;
  std::vector<std::string> argv;
  std::string workdir;
  std::map<std::string, std::string> env;
  std::vector<std::string> job_nodes;  // the job's allocation (for SCHED_JOB_NODELIST)
  std::vector<std::string> nodes;      // the step's nodes
  std::vector<int> ranks;              // the tasks this node runs (SCHED_PROCID)
  int tasks = 0;                       // in all (SCHED_NTASKS)
  std::string job_name;
  int tasks_per_node = 1;
  double power_w = 0;                     // as in job.launch
  std::optional<std::string> user;        // the job's user, whom the tasks run as
  std::optional<std::int64_t> mem_bytes;  // as in job.launch
  std::optional<int> gpus;                // as in job.launch
  std::optional<ArrayTaskMsg> array;      // as in job.launch: an array task's steps see it too
  // ---- tasks (issue 16 item 1). The step's layout is
  // tasks::place_tasks(tasks, nodes.size(), distribution) (an adaptation's
  // ranks aside); each task here is bound to tasks::task_cores(its local
  // id, cpus_per_task, the node's cores) when cpu_bind is "cores".
  std::optional<int> cpus_per_task;         // absent: 1
  std::optional<std::string> distribution;  // absent: block
  std::optional<std::string> cpu_bind;      // absent: none
  // ---- MPI (issue 16 item 2): "pmi2" or "pmi1": the agent serves the
  // step's ranks PMI (PMI_FD; pmi_messages.hpp); absent or "none": no PMI.
  std::optional<std::string> mpi;
  // A step started by MPI_Comm_spawn (pmix_messages.hpp): its spawner,
  // "<namespace>:<rank>" (PMIX_PARENT_ID).
  std::optional<std::string> pmix_parent;
  // ---- invasive partitions (issue 20 item 2): as in job.launch, the job's
  // cores by node name; each agent confines the tasks to its own.
  std::optional<std::map<std::string, std::vector<int>>> core_ids;
  // ---- MPI expansion (issue 16, docs/malleable.md "MPI adaptations"):
  // "mpi" when the application spawns an expansion's processes itself
  // (`sched run --mall-spawn=mpi`); absent: the agents start them.
  std::optional<std::string> mall_spawn;
  // The children of such a spawn: for the malleable library they are ranks
  // `mall_ranks` (parallel to `ranks`, which are their MPI ranks) of step
  // `mall_step`, then `mall_size` processes large.
  std::optional<std::int64_t> mall_step;
  std::optional<std::vector<int>> mall_ranks;
  std::optional<int> mall_size;
  template <class V>
  void fields(V& v) {
    v("core_ids", core_ids);
    v("mall_spawn", mall_spawn);
    v("mall_step", mall_step);
    v("mall_ranks", mall_ranks);
    v("mall_size", mall_size);
    v("mpi", mpi);
    v("pmix_parent", pmix_parent);
    v("cpus_per_task", cpus_per_task);
    v("distribution", distribution);
    v("cpu_bind", cpu_bind);
    v("gpus", gpus);
    v("array", array);
    v("power_w", power_w);
    v("user", user);
    v("mem_bytes", mem_bytes);
    v("job", job);
    v("step", step);
    v("argv", argv);
    v("workdir", workdir);
    v("env", env);
    v("job_nodes", job_nodes);
    v("nodes", nodes);
    v("ranks", ranks);
    v("tasks", tasks);
    v("job_name", job_name);
    v("tasks_per_node", tasks_per_node);
  }
};

// agent → engine, after each registration: a step with processes here (so
// that a restarted engine knows its steps again). `launch` is the step as
// this node runs it now: its ranks here, tasks = the step's size.
struct StepRunning {
  std::string node;
  StepLaunch launch;
  template <class V>
  void fields(V& v) {
    v("node", node);
    v("launch", launch);
  }
};

// ----------------------------------------------------------- measurements

// engine → the agents of a job: send fresh MTCT data.
struct PerfRequest {
  std::int64_t job = 0;
  template <class V>
  void fields(V& v) {
    v("job", job);
  }
};

// agent → engine: a job's phases on this node since the last report (or
// since the job's last adaptation), summed over its processes here.
struct PerfReport {
  std::string node;
  std::int64_t job = 0;
  double comm_s = 0;
  double compute_s = 0;
  std::uint64_t phases = 0;  // how many report_phase calls the sums hold
  template <class V>
  void fields(V& v) {
    v("node", node);
    v("job", job);
    v("comm_s", comm_s);
    v("compute_s", compute_s);
    v("phases", phases);
  }
};

// agent → engine: measured power of this node and of the jobs on it.
struct PowerReport {
  std::string node;
  double node_w = 0;
  std::string source;                    // the meter: "rapl", "model", ...
  std::map<std::string, double> jobs_w;  // job id (as text) → watts on this node
  template <class V>
  void fields(V& v) {
    v("node", node);
    v("node_w", node_w);
    v("source", source);
    v("jobs_w", jobs_w);
  }
};

// ------------------------------------------------------------ adaptations

// engine → every agent of an adapting job's step, and of the nodes an
// expansion adds: the process sets before and after. Ranks are listed by
// window rank (the larger set's numbering): old_ranks[w] is -1 for a process
// an expansion starts, new_ranks[w] is -1 for a process that leaves.
struct AdaptBegin {
  std::int64_t job = 0;
  std::uint64_t adaptation = 0;  // the engine's id; names the data epochs
  std::int64_t step = 0;
  std::string op;  // "expand" or "shrink"
  int old_size = 0;
  int new_size = 0;
  std::vector<int> old_ranks;
  std::vector<int> new_ranks;
  std::vector<std::string> job_nodes;  // the job's nodes after the adaptation
  // Added nodes only: the processes to start here (the step's command, with
  // ranks = their new ranks and tasks = new_size).
  std::optional<StepLaunch> launch;
  // A job of an invasive partition (issue 20 item 2): its cores by node
  // after the adaptation, and its core counts before and after.
  std::optional<std::map<std::string, std::vector<int>>> core_ids;
  std::optional<int> old_cores;
  std::optional<int> new_cores;
  // "mpi" (a step run with --mall-spawn=mpi, expand only): no launch; the
  // application spawns the new processes on `hosts`, the node of each
  // window rank (new ones included), and the agents of added nodes take
  // the spawn's children as them.
  std::optional<std::string> mall_spawn;
  std::optional<std::vector<std::string>> hosts;
  template <class V>
  void fields(V& v) {
    v("job", job);
    v("adaptation", adaptation);
    v("step", step);
    v("op", op);
    v("old_size", old_size);
    v("new_size", new_size);
    v("old_ranks", old_ranks);
    v("new_ranks", new_ranks);
    v("job_nodes", job_nodes);
    v("launch", launch);
    v("core_ids", core_ids);
    v("old_cores", old_cores);
    v("new_cores", new_cores);
    v("mall_spawn", mall_spawn);
    v("hosts", hosts);
  }
};

// agent → engine: every process of the adaptation on this node is in its
// window; where each receives data (parallel lists, by window rank).
struct AdaptReady {
  std::string node;
  std::int64_t job = 0;
  std::uint64_t adaptation = 0;
  std::vector<int> ranks;
  std::vector<std::string> endpoints;
  template <class V>
  void fields(V& v) {
    v("node", node);
    v("job", job);
    v("adaptation", adaptation);
    v("ranks", ranks);
    v("endpoints", endpoints);
  }
};

// engine → the agents: all are ready; the window opens. endpoints[w] is
// where window rank w receives data.
struct AdaptGo {
  std::int64_t job = 0;
  std::uint64_t adaptation = 0;
  std::vector<std::string> endpoints;
  template <class V>
  void fields(V& v) {
    v("job", job);
    v("adaptation", adaptation);
    v("endpoints", endpoints);
  }
};

// agent → engine: every process here committed (adapt.complete), or the
// adaptation cannot go on here (adapt.failed: a process that does not use the
// library, one that could not start or died in the window).
struct AdaptReport {
  std::string node;
  std::int64_t job = 0;
  std::uint64_t adaptation = 0;
  std::string message;  // adapt.failed: why
  template <class V>
  void fields(V& v) {
    v("node", node);
    v("job", job);
    v("adaptation", adaptation);
    v("message", message);
  }
};

// engine → the agents: the adaptation is withdrawn (rolled back, or the job
// ends); processes started for it are killed, waiting ones told.
struct AdaptAbort {
  std::int64_t job = 0;
  std::uint64_t adaptation = 0;
  std::string reason;
  template <class V>
  void fields(V& v) {
    v("job", job);
    v("adaptation", adaptation);
    v("reason", reason);
  }
};

// ---- issue 17 item 1: agent → schedd, a process's proc.resize from `node`.
struct ResizeRequestMsg {
  std::string node;
  ProcResize request;
  template <class V>
  void fields(V& v) {
    v("node", node);
    v("request", request);
  }
};

}  // namespace sched::proto
