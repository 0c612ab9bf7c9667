// client ↔ schedd (docs/protocol.md §4, §6): what the sched CLI and
// monitoring tools ask on the client socket, and what schedd tells the
// client that runs a job step. Every body lists its fields once
// (proto/fields.hpp); docs/protocol.md names the same fields. Times are UNIX
// epoch seconds, sizes are nodes, power is watts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sched/proto/event_messages.hpp"
#include "sched/proto/process_messages.hpp"
#include "sched/proto/step_messages.hpp"

namespace sched::proto {

// Requests, each answered once with a reply of the same type.
namespace type {
inline constexpr std::string_view kSubmit = "submit";
inline constexpr std::string_view kCancel = "cancel";
inline constexpr std::string_view kJobsQuery = "jobs.query";
inline constexpr std::string_view kJobShow = "job.show";
inline constexpr std::string_view kNodesQuery = "nodes.query";
inline constexpr std::string_view kNodeUpdate = "node.update";
inline constexpr std::string_view kPolicyInfo = "policy.info";
inline constexpr std::string_view kPolicyReload = "policy.reload";
inline constexpr std::string_view kCorridorSet = "corridor.set";
inline constexpr std::string_view kCorridorShow = "corridor.show";
inline constexpr std::string_view kStats = "stats";
inline constexpr std::string_view kAcct = "acct";
inline constexpr std::string_view kStepRun = "step.run";
inline constexpr std::string_view kStepAttach = "step.attach";
// scontrol's hold, release and requeue of one job (body JobRef, reply Empty).
inline constexpr std::string_view kJobHold = "job.hold";
inline constexpr std::string_view kJobRelease = "job.release";
inline constexpr std::string_view kJobRequeue = "job.requeue";
// Issue 17 item 1: `sched resize` (the owner or an admin asks for an
// evolving job), answered with a ResizeAnswer (process_messages.hpp).
inline constexpr std::string_view kJobResize = "job.resize";
// ---- issue 22: the administrator's policy workflow (check, set, history, rollback)
inline constexpr std::string_view kPolicyCheck = "policy.check";
inline constexpr std::string_view kPolicySet = "policy.set";
inline constexpr std::string_view kPolicyHistory = "policy.history";
inline constexpr std::string_view kPolicyRollback = "policy.rollback";
// The live state a twin simulation starts from (sched policy try; admins).
inline constexpr std::string_view kPolicySnapshot = "policy.snapshot";
// schedd → the client that ran a step (no reply); step.output and
// step.exited too (step_messages.hpp).
inline constexpr std::string_view kStepResized = "step.resized";
inline constexpr std::string_view kStepDone = "step.done";
// ---- issue 19: the journal's events after a sequence number (replay).
inline constexpr std::string_view kEventsReplay = "events.replay";
// ---- issue 20 item 1: the partitions (body Empty, reply PartitionList) and
// an admin's change of one's state (body PartitionUpdate, reply Empty).
inline constexpr std::string_view kPartitionList = "partition.list";
inline constexpr std::string_view kPartitionUpdate = "partition.update";
}  // namespace type

// ------------------------------------------------------------------ jobs

// What a user asks for (docs/design.md §3). Names as in job scripts: kind rigid |
// moldable | malleable | evolving; node_constraint none | pof2 | even | odd |
// ncube. Zero min/max nodes mean "same as nodes".
struct JobSpecMsg {
  std::string name;
  std::string user;
  std::string kind = "rigid";
  int nodes = 1;
  int min_nodes = 0;
  int max_nodes = 0;
  std::string node_constraint = "none";
  int tasks_per_node = 1;
  double walltime = 0;  // seconds; 0 = none
  double power_min_w = 0;
  double power_max_w = 0;
  bool urgent = false;
  std::string script;  // the batch script's text
  std::string workdir;
  std::map<std::string, std::string> env;
  std::optional<std::string> output;      // default: <workdir>/sched-<id>.out
  std::optional<std::int64_t> mem_bytes;  // --mem, per node; absent or 0: no limit
  // ---- when it may start (issue 18: --dependency, --begin, --hold)
  std::optional<std::string> dependency;  // sbatch's syntax; absent or empty: none
  std::optional<double> begin_time;       // epoch seconds; absent or 0: at once
  std::optional<bool> hold;               // submitted held
  // Output and arguments (issue 18 item 3). output and error may hold
  // sbatch's filename patterns (%j %x %N %u %A %a %%), expanded at launch.
  std::optional<std::string> error;              // -e: stderr's file; absent: with stdout
  std::optional<std::vector<std::string>> args;  // the script's $1, $2, ...
  // ---- priority (issue 18 item 5)
  std::optional<std::string> account;  // -A
  std::optional<std::string> qos;      // --qos; absent: normal
  std::optional<std::int64_t> nice;    // --nice; negative only for an admin

  // ---- where it may run (issue 18 item 4); absent: anywhere
  std::optional<std::vector<std::string>> nodelist;  // -w: nodes it must have
  std::optional<std::vector<std::string>> exclude;   // -x: nodes it must not have
  std::optional<int> gpus_per_node;                  // --gres=gpu:N
  // ---- job arrays (issue 18 item 1)
  // sbatch's --array text: one job per index, consecutive ids; absent: one job.
  std::optional<std::string> array;
  // ---- tasks (issue 16 item 1); absent: nodes × tasks_per_node tasks of
  // one cpu, block distribution, no binding
  std::optional<int> ntasks;                // -n
  std::optional<int> cpus_per_task;         // -c
  std::optional<std::string> distribution;  // -m: block | cyclic
  std::optional<std::string> cpu_bind;      // --cpu-bind: none | cores
  // -n without -N: the engine picks the nodes for the tasks' cpus (nodes is
  // 1 until then)
  std::optional<bool> nodes_from_tasks;
  // ---- partition (issue 20 item 1): -p; absent: the default partition
  std::optional<std::string> partition;
  // --cores (issue 20 item 2): cores in all, for a partition of kind
  // "cores"; absent: ntasks × cpus_per_task there. min_cores/max_cores:
  // a malleable job there is resized by cores within them (--cores MIN-MAX).
  std::optional<int> cores;
  std::optional<int> min_cores;
  std::optional<int> max_cores;

  template <class V>
  void fields(V& v) {
    v("partition", partition);
    v("cores", cores);
    v("min_cores", min_cores);
    v("max_cores", max_cores);
    // ---- tasks (issue 16 item 1)
    v("nodes_from_tasks", nodes_from_tasks);
    v("ntasks", ntasks);
    v("cpus_per_task", cpus_per_task);
    v("distribution", distribution);
    v("cpu_bind", cpu_bind);
    // ---- priority (issue 18 item 5)
    v("account", account);
    v("qos", qos);
    v("nice", nice);
    v("nodelist", nodelist);
    v("exclude", exclude);
    v("gpus_per_node", gpus_per_node);
    v("error", error);
    v("args", args);
    // ---- job arrays (issue 18 item 1)
    v("array", array);
    v("mem_bytes", mem_bytes);
    // ---- issue 18 item 2
    v("dependency", dependency);
    v("begin_time", begin_time);
    v("hold", hold);
    v("name", name);
    v("user", user);
    v("kind", kind);
    v("nodes", nodes);
    v("min_nodes", min_nodes);
    v("max_nodes", max_nodes);
    v("node_constraint", node_constraint);
    v("tasks_per_node", tasks_per_node);
    v("walltime", walltime);
    v("power_min_w", power_min_w);
    v("power_max_w", power_max_w);
    v("urgent", urgent);
    v("script", script);
    v("workdir", workdir);
    v("env", env);
    v("output", output);
  }
};

// request_id: chosen by the client, random, the same on each retry of one
// submission: a retry gets the first answer instead of a new job, for
// kSubmitRequestIdTtlS after it (docs/protocol.md §4). 1 to
// kMaxRequestIdBytes of UTF-8.
inline constexpr double kSubmitRequestIdTtlS = 24 * 3600;
inline constexpr std::size_t kMaxRequestIdBytes = 128;

struct SubmitRequest {
  JobSpecMsg job;
  std::optional<std::string> request_id;
  template <class V>
  void fields(V& v) {
    v("job", job);
    v("request_id", request_id);
  }
};

struct SubmitReply {
  std::int64_t id = 0;
  template <class V>
  void fields(V& v) {
    v("id", id);
  }
};

struct JobRef {  // cancel, job.show, job.hold, job.release, job.requeue
  std::int64_t id = 0;
  template <class V>
  void fields(V& v) {
    v("id", id);
  }
};

// A pending job's weighted priority factors, as sprio shows them (issue 18
// item 5).
struct PriorityFactorsMsg {
  std::int64_t age = 0;
  std::int64_t fairshare = 0;
  std::int64_t jobsize = 0;
  std::int64_t qos = 0;
  template <class V>
  void fields(V& v) {
    v("age", age);
    v("fairshare", fairshare);
    v("jobsize", jobsize);
    v("qos", qos);
  }
};

// ---- job arrays (issue 18 item 1)
// What schedd reads a JobRef as: with array_task_id, `id` is an array's id
// and the job meant is its task of that index ("A_i"). Without it, cancel of
// an array's id cancels the whole array (scancel's rule).
struct JobTaskRef {
  std::int64_t id = 0;
  std::optional<int> array_task_id;
  template <class V>
  void fields(V& v) {
    v("id", id);
    v("array_task_id", array_task_id);
  }
};

// What the engine knows about a job (jobs.query, job.show, acct).
struct JobInfo {
  std::int64_t id = 0;
  std::string name;
  std::string user;
  std::string kind;
  std::string state;  // PENDING, RUNNING, ... (docs/design.md §3)
  int nodes = 0;      // current size (requested size while pending)
  int req_nodes = 0;  // requested size
  int min_nodes = 0;
  int max_nodes = 0;
  std::string node_constraint;
  int tasks_per_node = 1;
  double walltime = 0;
  bool urgent = false;
  double submit_time = 0;
  std::optional<double> start_time;
  std::optional<double> end_time;
  std::optional<double> est_end;         // start + limit (with adaptations)
  std::optional<double> expected_start;  // from the policy's ctx:reserve
  std::vector<std::string> nodelist;     // leader first
  std::optional<int> exit_status;        // >= 0 exit code, < 0 minus the signal
  std::string reason;                    // why pending (or how it ended)
  int expansions = 0;
  int shrinks = 0;
  int requeues = 0;
  std::optional<double> mtct;
  std::optional<double> power_w;
  // --min-power, --max-power as submitted (issue 17 item 7); absent: not given
  std::optional<double> power_min_w;
  std::optional<double> power_max_w;
  std::string workdir;
  std::string output;
  std::optional<std::int64_t> mem_bytes;      // --mem, per node
  std::optional<std::int64_t> max_rss_bytes;  // peak memory its leader node's cgroup saw
  std::optional<double> cpu_s;                // CPU time (user + system) there
  // ---- when it may start (issue 18)
  std::optional<std::string> dependency;  // as submitted (canonical form)
  std::optional<double> begin_time;       // --begin, when set
  // Issue 18 item 3: stderr's file when the job has one of its own
  // (expanded once the job started, as output is).
  std::optional<std::string> error;
  // ---- priority (issue 18 item 5)
  std::optional<std::string> account;
  std::optional<std::string> qos;
  std::optional<std::int64_t> nice;
  std::optional<std::int64_t> priority;       // while pending
  std::optional<PriorityFactorsMsg> factors;  // while pending

  // ---- where it may run (issue 18 item 4), when the job said
  std::optional<std::vector<std::string>> req_nodelist;  // -w
  std::optional<std::vector<std::string>> exc_nodelist;  // -x
  std::optional<int> gpus_per_node;                      // --gres=gpu:N
  // ---- job arrays (issue 18 item 1): set for an array's tasks.
  std::optional<std::int64_t> array_job_id;  // the array's id (%A)
  std::optional<int> array_task_id;          // this task's index (%a)
  std::optional<std::string> array;          // the array's --array text (with its %throttle)
  // ---- tasks (issue 16 item 1); absent: nodes × tasks_per_node tasks of
  // one cpu, block distribution, no binding
  std::optional<int> ntasks;                // -n
  std::optional<int> cpus_per_task;         // -c
  std::optional<std::string> distribution;  // -m: block | cyclic
  std::optional<std::string> cpu_bind;      // --cpu-bind: none | cores
  // ---- partition (issue 20 item 1); absent from a schedd before it
  std::optional<std::string> partition;
  // ---- invasive partitions (issue 20 item 2); absent for a job of whole
  // nodes: the cores it asks for, and those it holds by node name (hwloc
  // logical core ids) while it runs.
  std::optional<int> cores;
  std::optional<std::map<std::string, std::vector<int>>> core_ids;
  std::optional<int> min_cores;  // a malleable job there: its bounds in cores
  std::optional<int> max_cores;

  template <class V>
  void fields(V& v) {
    v("partition", partition);
    v("cores", cores);
    v("core_ids", core_ids);
    v("min_cores", min_cores);
    v("max_cores", max_cores);
    // ---- tasks (issue 16 item 1)
    v("ntasks", ntasks);
    v("cpus_per_task", cpus_per_task);
    v("distribution", distribution);
    v("cpu_bind", cpu_bind);
    // ---- priority (issue 18 item 5)
    v("account", account);
    v("qos", qos);
    v("nice", nice);
    v("priority", priority);
    v("factors", factors);
    v("req_nodelist", req_nodelist);
    v("exc_nodelist", exc_nodelist);
    v("gpus_per_node", gpus_per_node);
    v("error", error);
    // ---- job arrays (issue 18 item 1)
    v("array_job_id", array_job_id);
    v("array_task_id", array_task_id);
    v("array", array);
    v("mem_bytes", mem_bytes);
    // ---- issue 18 item 2
    v("dependency", dependency);
    v("begin_time", begin_time);
    v("max_rss_bytes", max_rss_bytes);
    v("cpu_s", cpu_s);
    v("id", id);
    v("name", name);
    v("user", user);
    v("kind", kind);
    v("state", state);
    v("nodes", nodes);
    v("req_nodes", req_nodes);
    v("min_nodes", min_nodes);
    v("max_nodes", max_nodes);
    v("node_constraint", node_constraint);
    v("tasks_per_node", tasks_per_node);
    v("walltime", walltime);
    v("urgent", urgent);
    v("submit_time", submit_time);
    v("start_time", start_time);
    v("end_time", end_time);
    v("est_end", est_end);
    v("expected_start", expected_start);
    v("nodelist", nodelist);
    v("exit_status", exit_status);
    v("reason", reason);
    v("expansions", expansions);
    v("shrinks", shrinks);
    v("requeues", requeues);
    v("mtct", mtct);
    v("power_w", power_w);
    v("power_min_w", power_min_w);
    v("power_max_w", power_max_w);
    v("workdir", workdir);
    v("output", output);
  }
};

// One page of the queue: `limit` jobs at most (default 1000, at most the
// server's max_page_items, and 2 MiB at most), from `cursor` (a reply's
// next_cursor) on. acct and nodes.query page the same way.
struct JobsQuery {
  std::optional<std::vector<std::string>> states;  // default: every non-terminal state
  std::optional<std::string> user;
  std::optional<std::vector<std::int64_t>> ids;
  std::optional<std::int64_t> limit;
  std::optional<std::string> cursor;
  template <class V>
  void fields(V& v) {
    v("states", states);
    v("user", user);
    v("ids", ids);
    v("limit", limit);
    v("cursor", cursor);
  }
};

struct JobList {  // reply of jobs.query and acct
  std::vector<JobInfo> jobs;
  std::optional<std::string> next_cursor;  // set when more jobs follow
  // ---- priority (issue 18 item 5): jobs.query's replies carry the
  // configured weights (sched prio -w); acct's do not.
  std::optional<PriorityFactorsMsg> weights;
  template <class V>
  void fields(V& v) {
    v("weights", weights);
    v("jobs", jobs);
    v("next_cursor", next_cursor);
  }
};

struct JobReply {  // reply of job.show
  JobInfo job;
  template <class V>
  void fields(V& v) {
    v("job", job);
  }
};

struct AcctQuery {
  std::optional<std::string> user;
  std::optional<std::vector<std::string>> states;  // default: every terminal state
  std::optional<double> since;                     // end time window
  std::optional<double> until;
  std::optional<std::vector<std::int64_t>> ids;
  std::optional<std::int64_t> limit;  // jobs in this page (default 1000)
  std::optional<std::string> cursor;  // a reply's next_cursor: the page after it
  template <class V>
  void fields(V& v) {
    v("user", user);
    v("states", states);
    v("since", since);
    v("until", until);
    v("ids", ids);
    v("limit", limit);
    v("cursor", cursor);
  }
};

// ----------------------------------------------------------------- nodes

struct NodeInfo {
  std::string name;
  std::string state;  // idle, alloc, mixed (cores), down, drain (idle and draining), draining
  std::string hostname;
  int sockets = 0;
  int cores = 0;
  int pus = 0;
  std::int64_t memory_bytes = 0;
  int gpus = 0;
  std::vector<std::int64_t> jobs;
  std::optional<double> power_w;
  std::optional<double> last_heartbeat;
  std::string reason;  // why down or drained
  // How its agent contains jobs: "cgroup2", "cgroup1" or "none"; and whom
  // it runs jobs as: "" (as root, each job as its user) or its one user.
  std::optional<std::string> containment;
  std::optional<std::string> run_as;
  std::optional<std::string> partition;  // issue 20 item 1: the node's partition
  // Issue 20 item 2: a node of an invasive partition (kind = "cores"): how
  // many of its cores jobs hold (state "mixed" while some are free).
  std::optional<int> cores_alloc;
  template <class V>
  void fields(V& v) {
    v("partition", partition);
    v("cores_alloc", cores_alloc);
    v("containment", containment);
    v("run_as", run_as);
    v("name", name);
    v("state", state);
    v("hostname", hostname);
    v("sockets", sockets);
    v("cores", cores);
    v("pus", pus);
    v("memory_bytes", memory_bytes);
    v("gpus", gpus);
    v("jobs", jobs);
    v("power_w", power_w);
    v("last_heartbeat", last_heartbeat);
    v("reason", reason);
  }
};

// One page of the nodes, in the order they registered, filtered by state
// (NodeInfo::state's names) and name.
struct NodesQuery {
  std::optional<std::vector<std::string>> states;
  std::optional<std::vector<std::string>> names;
  std::optional<std::int64_t> limit;  // nodes in this page (default 1000)
  std::optional<std::string> cursor;  // a reply's next_cursor: the page after it
  template <class V>
  void fields(V& v) {
    v("states", states);
    v("names", names);
    v("limit", limit);
    v("cursor", cursor);
  }
};

struct NodeList {
  std::vector<NodeInfo> nodes;
  std::optional<std::string> next_cursor;  // set when more nodes follow
  template <class V>
  void fields(V& v) {
    v("nodes", nodes);
    v("next_cursor", next_cursor);
  }
};

struct NodeUpdate {
  std::string name;
  std::string state;  // drain | resume
  std::optional<std::string> reason;
  template <class V>
  void fields(V& v) {
    v("name", name);
    v("state", state);
    v("reason", reason);
  }
};

// ------------------------------------------------------ partitions (issue 20 item 1)

// One partition, as `sched partition` (and sinfo's summary) shows it.
struct PartitionInfo {
  std::string name;
  std::string state;  // up | drain | down
  bool is_default = false;
  std::vector<std::string> nodes;  // its nodes that exist now, in registration order
  int nodes_idle = 0;
  std::string policy;  // the policy running its passes (its own, or the engine's)
  bool own_policy = false;
  double max_time_s = 0;  // 0: none
  double default_time_s = 0;
  int max_nodes = 0;                // 0: none
  std::vector<std::string> users;   // AllowUsers; empty (with groups empty): all
  std::vector<std::string> groups;  // AllowGroups
  std::int64_t pending = 0;         // PENDING jobs
  std::int64_t running = 0;         // jobs holding its nodes (not pending, not ended)
  template <class V>
  void fields(V& v) {
    v("name", name);
    v("state", state);
    v("is_default", is_default);
    v("nodes", nodes);
    v("nodes_idle", nodes_idle);
    v("policy", policy);
    v("own_policy", own_policy);
    v("max_time_s", max_time_s);
    v("default_time_s", default_time_s);
    v("max_nodes", max_nodes);
    v("users", users);
    v("groups", groups);
    v("pending", pending);
    v("running", running);
  }
};

struct PartitionList {
  bool configured = false;  // false: the one implicit partition
  std::vector<PartitionInfo> partitions;
  template <class V>
  void fields(V& v) {
    v("configured", configured);
    v("partitions", partitions);
  }
};

// An admin sets a partition's state (sched partition set NAME state=drain).
struct PartitionUpdate {
  std::string name;
  std::string state;  // up | drain | down
  std::optional<std::string> reason;
  template <class V>
  void fields(V& v) {
    v("name", name);
    v("state", state);
    v("reason", reason);
  }
};

// ------------------------------------------------------ policy and cluster

struct PolicyFailureInfo {  // policy.info's last_failure: as a policy.error event's keys
  double time = 0;
  std::string code;  // syntax, runtime, timeout, memory, api, io
  std::string message;
  std::optional<std::string> file;
  std::optional<int> line;
  template <class V>
  void fields(V& v) {
    v("time", time);
    v("code", code);
    v("message", message);
    v("file", file);
    v("line", line);
  }
};

struct PolicyRevertInfo {  // policy.info's last_revert: as the policy.reverted event said
  double time = 0;
  std::string from;  // the policy given up
  std::string to;    // the last good policy, running again
  int failures = 0;  // live passes in a row that failed
  std::string message;
  template <class V>
  void fields(V& v) {
    v("time", time);
    v("from", from);
    v("to", to);
    v("failures", failures);
    v("message", message);
  }
};

struct PolicyInfoReply {
  std::string name;
  std::string path;
  std::uint64_t reloads = 0;
  std::uint64_t failed_reloads = 0;
  std::optional<std::string> last_error;  // last_failure's message
  std::optional<PolicyFailureInfo> last_failure;
  std::map<std::string, std::string> params;
  // Live passes: failed in all, failed in a row by the running policy, the
  // count that reverts (0: never), whether there is a last good policy to
  // go back to, and the reverts so far.
  std::uint64_t failed_passes = 0;
  int consecutive_failures = 0;
  int revert_after_failures = 0;
  bool fallback = false;
  std::uint64_t reverts = 0;
  std::optional<PolicyRevertInfo> last_revert;
  template <class V>
  void fields(V& v) {
    v("name", name);
    v("path", path);
    v("reloads", reloads);
    v("failed_reloads", failed_reloads);
    v("last_error", last_error);
    v("last_failure", last_failure);
    v("params", params);
    v("failed_passes", failed_passes);
    v("consecutive_failures", consecutive_failures);
    v("revert_after_failures", revert_after_failures);
    v("fallback", fallback);
    v("reverts", reverts);
    v("last_revert", last_revert);
  }
};

// ---- issue 22: the administrator's policy workflow

// policy.check and policy.set request: a policy file on schedd's host, or
// the name of one in its policy folder, with its parameters (key=value as
// `--param` reads them).
struct PolicyFileRequest {
  std::string policy;
  std::map<std::string, std::string> params;
  // A partition's own policy (issue 20 item 1); absent: the [scheduler] one.
  std::optional<std::string> partition;
  template <class V>
  void fields(V& v) {
    v("policy", policy);
    v("params", params);
    v("partition", partition);
  }
};

struct PolicyActionInfo {  // one action a dry pass would enact
  std::string action;      // start, expand, shrink, request_perf, preempt, reserve
  std::uint64_t job = 0;
  int nodes = 0;                    // start: size; expand/shrink: target size
  std::optional<int> from_nodes;    // expand/shrink: the size now
  std::optional<double> time;       // reserve: expected start
  std::optional<std::string> mode;  // preempt: requeue, cancel
  template <class V>
  void fields(V& v) {
    v("action", action);
    v("job", job);
    v("nodes", nodes);
    v("from_nodes", from_nodes);
    v("time", time);
    v("mode", mode);
  }
};

struct PolicyRefusalInfo {  // one action the engine refused in a dry pass
  std::string code;         // as in stats' refusals: over_allocation, below_min, ...
  std::uint64_t job = 0;
  std::string message;
  template <class V>
  void fields(V& v) {
    v("code", code);
    v("job", job);
    v("message", message);
  }
};

struct PolicyCheckReply {
  std::string name;  // the policy's name ("" when it did not load)
  std::string path;
  bool ok = false;  // loaded, restored and dry-passed: `policy set` would take it
  std::optional<PolicyFailureInfo> failure;
  std::vector<std::string> files;  // what it loaded: the file, then its lib modules
  std::vector<PolicyActionInfo> actions;
  std::vector<PolicyRefusalInfo> refusals;
  template <class V>
  void fields(V& v) {
    v("name", name);
    v("path", path);
    v("ok", ok);
    v("failure", failure);
    v("files", files);
    v("actions", actions);
    v("refusals", refusals);
  }
};

struct PolicyVersionInfo {  // one deployed version in the journal
  std::uint64_t version = 0;
  double time = 0;
  std::string user;  // who deployed it ("schedd" for the one loaded at start, or a file edit)
  std::string how;   // load, reload, set, rollback to N, revert to N
  std::string name;
  std::string path;
  std::string hash;  // SHA-256 over the file and its lib modules
  std::map<std::string, std::string> params;
  std::vector<std::string> files;
  bool current = false;                  // the one its partition (or [scheduler]) runs
  std::optional<std::string> partition;  // a partition's own policy; absent: [scheduler]'s
  template <class V>
  void fields(V& v) {
    v("version", version);
    v("time", time);
    v("user", user);
    v("how", how);
    v("name", name);
    v("path", path);
    v("hash", hash);
    v("params", params);
    v("files", files);
    v("current", current);
    v("partition", partition);
  }
};

struct PolicyHistoryReply {
  std::vector<PolicyVersionInfo> versions;  // oldest first
  template <class V>
  void fields(V& v) {
    v("versions", versions);
  }
};

struct PolicyRollbackRequest {
  std::optional<std::uint64_t> version;  // none: the one before the current
  // Whose policy: a partition's own (issue 20 item 1); absent: [scheduler]'s,
  // or, with a version, the partition that version belongs to.
  std::optional<std::string> partition;
  template <class V>
  void fields(V& v) {
    v("version", version);
    v("partition", partition);
  }
};

// ---- policy.snapshot (issue 22 item 3): the live state for `sched policy try`

struct PolicySnapshotRequest {
  // Seconds of recent submissions to send as the arrival pattern; absent:
  // 2 hours. At most 7 days.
  std::optional<double> window_s;
  template <class V>
  void fields(V& v) {
    v("window_s", window_s);
  }
};

struct SnapshotNodeMsg {
  std::string name;
  int cores = 1;
  int gpus = 0;
  bool up = true;
  bool draining = false;
  template <class V>
  void fields(V& v) {
    v("name", name);
    v("cores", cores);
    v("gpus", gpus);
    v("up", up);
    v("draining", draining);
  }
};

// A running or pending job. The spec comes without its script, environment
// and arguments (a twin never runs them).
struct SnapshotJobMsg {
  std::int64_t id = 0;
  JobSpecMsg spec;
  double submit_time = 0;
  std::optional<double> start_time;   // running jobs
  double limit_extension = 0;         // seconds added to the limit by adaptations
  std::vector<std::string> nodelist;  // running jobs: their nodes, leader first
  std::optional<double> mtct;
  std::int64_t priority = 0;
  std::optional<std::string> hold;  // pending: "user" or "admin" when held
  template <class V>
  void fields(V& v) {
    v("id", id);
    v("spec", spec);
    v("submit_time", submit_time);
    v("start_time", start_time);
    v("limit_extension", limit_extension);
    v("nodelist", nodelist);
    v("mtct", mtct);
    v("priority", priority);
    v("hold", hold);
  }
};

struct SnapshotArrivalMsg {  // one submission of the window
  std::int64_t id = 0;
  double time = 0;
  JobSpecMsg spec;
  template <class V>
  void fields(V& v) {
    v("id", id);
    v("time", time);
    v("spec", spec);
  }
};

struct PolicyFileMsg {  // one file the running policy loaded
  std::string name;     // as Lua names it: "fcfs.lua", "lib/easy.lua"
  std::string text;
  template <class V>
  void fields(V& v) {
    v("name", name);
    v("text", text);
  }
};

struct PolicySnapshotReply {
  double time = 0;
  std::vector<SnapshotNodeMsg> nodes;
  std::vector<SnapshotJobMsg> running;  // start order
  std::vector<SnapshotJobMsg> pending;  // queue order
  double window_s = 0;
  std::vector<SnapshotArrivalMsg> arrivals;  // by submit time
  double corridor_lower_w = 0;
  double corridor_upper_w = 0;
  std::string policy;       // its name
  std::string policy_path;  // on schedd's host
  std::map<std::string, std::string> params;
  std::vector<PolicyFileMsg> policy_files;  // the policy file first, then its lib modules
  template <class V>
  void fields(V& v) {
    v("time", time);
    v("nodes", nodes);
    v("running", running);
    v("pending", pending);
    v("window_s", window_s);
    v("arrivals", arrivals);
    v("corridor_lower_w", corridor_lower_w);
    v("corridor_upper_w", corridor_upper_w);
    v("policy", policy);
    v("policy_path", policy_path);
    v("params", params);
    v("policy_files", policy_files);
  }
};

struct Corridor {  // corridor.set request, corridor.show reply
  double lower_w = 0;
  double upper_w = 0;
  std::optional<double> current_w;  // replies only
  template <class V>
  void fields(V& v) {
    v("lower_w", lower_w);
    v("upper_w", upper_w);
    v("current_w", current_w);
  }
};

struct StatsReply {
  double server_time = 0;
  double uptime_s = 0;
  std::uint64_t passes = 0;
  std::uint64_t failed_passes = 0;
  std::uint64_t actions = 0;
  std::uint64_t refusals = 0;
  double last_pass_s = 0;
  double mean_pass_s = 0;
  double max_pass_s = 0;
  std::uint64_t pending = 0;
  std::uint64_t running = 0;
  std::uint64_t jobs_submitted = 0;
  std::uint64_t nodes = 0;
  std::uint64_t nodes_up = 0;
  std::uint64_t messages = 0;
  std::uint64_t bad_messages = 0;
  std::string event_endpoint;  // where to subscribe to events
  // The cluster's power draw now (as corridor.show's current_w) and the
  // corridor (0, 0: none), watts.
  double power_w = 0;
  double corridor_lower_w = 0;
  double corridor_upper_w = 0;
  template <class V>
  void fields(V& v) {
    v("event_endpoint", event_endpoint);
    v("power_w", power_w);
    v("corridor_lower_w", corridor_lower_w);
    v("corridor_upper_w", corridor_upper_w);
    v("server_time", server_time);
    v("uptime_s", uptime_s);
    v("passes", passes);
    v("failed_passes", failed_passes);
    v("actions", actions);
    v("refusals", refusals);
    v("last_pass_s", last_pass_s);
    v("mean_pass_s", mean_pass_s);
    v("max_pass_s", max_pass_s);
    v("pending", pending);
    v("running", running);
    v("jobs_submitted", jobs_submitted);
    v("nodes", nodes);
    v("nodes_up", nodes_up);
    v("messages", messages);
    v("bad_messages", bad_messages);
  }
};

// -------------------------------------------------------------- job steps

// client (inside a job) → engine: run a command across the job's nodes.
struct StepRun {
  std::int64_t job = 0;
  int nodes = 0;  // 0: all of the job's nodes
  int tasks = 0;  // processes in all; 0: the job's -n, else nodes × its tasks per node
  std::vector<std::string> argv;
  std::string workdir;
  std::map<std::string, std::string> env;
  // ---- tasks (issue 16 item 1); absent: the job's
  std::optional<int> tasks_per_node;        // --ntasks-per-node (when tasks is 0)
  std::optional<int> cpus_per_task;         // -c
  std::optional<std::string> distribution;  // -m: block | cyclic
  std::optional<std::string> cpu_bind;      // --cpu-bind: none | cores
  // ---- MPI (issue 16 item 2): --mpi, pmi2 | pmi1 | none; absent: schedd's
  // default (mpi_default).
  std::optional<std::string> mpi;
  // -w (issue 16, mpirun's launcher agent): these of the job's nodes, in
  // this order; absent: the job's first `nodes`.
  std::optional<std::vector<std::string>> nodelist;
  // --mall-spawn: "mpi" (with mpi "pmix") when the program spawns an
  // expansion's processes itself (MPI_Comm_spawn); absent or "sched": the
  // agents start them.
  std::optional<std::string> mall_spawn;
  template <class V>
  void fields(V& v) {
    v("mpi", mpi);
    v("mall_spawn", mall_spawn);
    v("nodelist", nodelist);
    v("tasks_per_node", tasks_per_node);
    v("cpus_per_task", cpus_per_task);
    v("distribution", distribution);
    v("cpu_bind", cpu_bind);
    v("job", job);
    v("nodes", nodes);
    v("tasks", tasks);
    v("argv", argv);
    v("workdir", workdir);
    v("env", env);
  }
};

struct StepStarted {  // reply to step.run
  std::int64_t step = 0;
  std::vector<std::string> nodes;
  int tasks = 0;
  template <class V>
  void fields(V& v) {
    v("step", step);
    v("nodes", nodes);
    v("tasks", tasks);
  }
};

// client → engine: "I am the `sched run` of this step" (after the engine
// restarted, its output and exits go to the new connection). Reply {}, or
// not_found when the engine knows no such running step.
// engine → client, step.done: every task of the step has ended.
struct StepRef {
  std::int64_t job = 0;
  std::int64_t step = 0;
  template <class V>
  void fields(V& v) {
    v("job", job);
    v("step", step);
  }
};

// engine → the client that ran a step: an adaptation changed the step's
// processes; `joined` of them are new (their exits will come too).
struct StepResized {
  std::int64_t job = 0;
  std::int64_t step = 0;
  int tasks = 0;
  int joined = 0;
  template <class V>
  void fields(V& v) {
    v("job", job);
    v("step", step);
    v("tasks", tasks);
    v("joined", joined);
  }
};

// ---- issue 19
// events.replay: the journal's events with seq > `since`, oldest first, at
// most `limit` (and at most kMaxReplayEvents) a reply, each as published
// (docs/protocol.md §9). `last_seq` is the journal's newest: a reader has
// caught up when it has seen it.
inline constexpr std::uint64_t kMaxReplayEvents = 1000;
struct EventsReplayRequest {
  std::uint64_t since = 0;
  std::uint64_t limit = kMaxReplayEvents;
  template <class V>
  void fields(V& v) {
    v("since", since);
    v("limit", limit);
  }
};
struct EventsReplayReply {
  std::vector<EventMsg> events;
  std::uint64_t last_seq = 0;
  template <class V>
  void fields(V& v) {
    v("events", events);
    v("last_seq", last_seq);
  }
};

// ---- issue 17 item 1: job.resize, `sched resize JOB --nodes N`
struct JobResize {
  std::int64_t id = 0;
  int nodes = 0;
  std::string reason;
  double timeout_s = 0;  // 0: schedd's default
  template <class V>
  void fields(V& v) {
    v("id", id);
    v("nodes", nodes);
    v("reason", reason);
    v("timeout_s", timeout_s);
  }
};

}  // namespace sched::proto
