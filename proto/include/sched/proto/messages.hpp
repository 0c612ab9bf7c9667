// The messages of the wire protocol (docs/design.md §5) and their bodies. Every
// body lists its fields once (proto/fields.hpp); docs/protocol.md is the
// reference for people and names the same fields. Times are UNIX epoch
// seconds, sizes are nodes, power is watts.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sched::proto {

// Message types: client → engine (replied), agent ↔ engine.
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

inline constexpr std::string_view kAgentRegister = "agent.register";
inline constexpr std::string_view kAgentHeartbeat = "agent.heartbeat";
inline constexpr std::string_view kJobLaunch = "job.launch";
inline constexpr std::string_view kJobKill = "job.kill";
inline constexpr std::string_view kTaskStarted = "task.started";
inline constexpr std::string_view kTaskExited = "task.exited";
inline constexpr std::string_view kStepLaunch = "step.launch";
inline constexpr std::string_view kStepOutput = "step.output";
inline constexpr std::string_view kStepExited = "step.exited";
inline constexpr std::string_view kStepResized = "step.resized";
inline constexpr std::string_view kStepDone = "step.done";
inline constexpr std::string_view kStepAttach = "step.attach";
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

// A job's processes ↔ their node's agent (the malleable library, over the
// agent's local endpoint $SCHED_AGENT_ENDPOINT).
inline constexpr std::string_view kProcInit = "proc.init";
inline constexpr std::string_view kProcPhase = "proc.phase";
inline constexpr std::string_view kProcFinalize = "proc.finalize";
inline constexpr std::string_view kProcAdaptBegin = "proc.adapt_begin";
inline constexpr std::string_view kProcAdaptCommit = "proc.adapt_commit";
// agent → process notices (no reply): an adaptation waits; it was withdrawn.
inline constexpr std::string_view kProcAdaptPending = "proc.adapt_pending";
inline constexpr std::string_view kProcAdaptAbort = "proc.adapt_abort";
}  // namespace type

// ------------------------------------------------------------ client bodies

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
  std::optional<std::string> output;  // default: <workdir>/sched-<id>.out

  template <class V>
  void fields(V& v) {
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

struct SubmitRequest {
  JobSpecMsg job;
  template <class V>
  void fields(V& v) {
    v("job", job);
  }
};

struct SubmitReply {
  std::int64_t id = 0;
  template <class V>
  void fields(V& v) {
    v("id", id);
  }
};

struct JobRef {  // cancel, job.show
  std::int64_t id = 0;
  template <class V>
  void fields(V& v) {
    v("id", id);
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
  std::string workdir;
  std::string output;

  template <class V>
  void fields(V& v) {
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
    v("workdir", workdir);
    v("output", output);
  }
};

struct JobsQuery {
  std::optional<std::vector<std::string>> states;  // default: every non-terminal state
  std::optional<std::string> user;
  std::optional<std::vector<std::int64_t>> ids;
  template <class V>
  void fields(V& v) {
    v("states", states);
    v("user", user);
    v("ids", ids);
  }
};

struct JobList {  // reply of jobs.query and acct
  std::vector<JobInfo> jobs;
  template <class V>
  void fields(V& v) {
    v("jobs", jobs);
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
  std::optional<std::int64_t> limit;
  template <class V>
  void fields(V& v) {
    v("user", user);
    v("states", states);
    v("since", since);
    v("until", until);
    v("ids", ids);
    v("limit", limit);
  }
};

struct NodeInfo {
  std::string name;
  std::string state;  // idle, alloc, down, drain (idle and draining), draining (busy)
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
  template <class V>
  void fields(V& v) {
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

struct NodeList {
  std::vector<NodeInfo> nodes;
  template <class V>
  void fields(V& v) {
    v("nodes", nodes);
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

struct PolicyInfoReply {
  std::string name;
  std::string path;
  std::uint64_t reloads = 0;
  std::uint64_t failed_reloads = 0;
  std::optional<std::string> last_error;  // last_failure's message
  std::optional<PolicyFailureInfo> last_failure;
  std::map<std::string, std::string> params;
  template <class V>
  void fields(V& v) {
    v("name", name);
    v("path", path);
    v("reloads", reloads);
    v("failed_reloads", failed_reloads);
    v("last_error", last_error);
    v("last_failure", last_failure);
    v("params", params);
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
  template <class V>
  void fields(V& v) {
    v("event_endpoint", event_endpoint);
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

// ------------------------------------------------------------- agent bodies

struct AgentRegister {
  std::string node;  // the name the node has in the cluster
  std::string hostname;
  int sockets = 0;
  int cores = 0;
  int pus = 0;
  std::int64_t memory_bytes = 0;
  int gpus = 0;
  std::vector<std::int64_t> jobs;  // jobs whose processes run here (re-adoption)
  template <class V>
  void fields(V& v) {
    v("node", node);
    v("hostname", hostname);
    v("sockets", sockets);
    v("cores", cores);
    v("pus", pus);
    v("memory_bytes", memory_bytes);
    v("gpus", gpus);
    v("jobs", jobs);
  }
};

struct RegisterReply {
  double heartbeat_s = 0;       // how often the engine expects a heartbeat
  std::string client_endpoint;  // where job processes reach the engine (sched run)
  template <class V>
  void fields(V& v) {
    v("heartbeat_s", heartbeat_s);
    v("client_endpoint", client_endpoint);
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
  template <class V>
  void fields(V& v) {
    v("power_w", power_w);
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
  std::string message;  // a launch failure's reason, else empty
  template <class V>
  void fields(V& v) {
    v("node", node);
    v("job", job);
    v("status", status);
    v("message", message);
  }
};

// -------------------------------------------------------------- job steps

// client (inside a job) → engine: run a command across the job's nodes.
struct StepRun {
  std::int64_t job = 0;
  int nodes = 0;  // 0: all of the job's nodes
  int tasks = 0;  // processes in all; 0: nodes × the job's tasks per node
  std::vector<std::string> argv;
  std::string workdir;
  std::map<std::string, std::string> env;
  template <class V>
  void fields(V& v) {
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
  double power_w = 0;  // as in job.launch
  template <class V>
  void fields(V& v) {
    v("power_w", power_w);
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

// agent → engine → the client that ran the step: output as it comes.
struct StepOutput {
  std::int64_t job = 0;
  std::int64_t step = 0;
  std::string node;
  int rank = 0;
  std::string stream;  // "out" or "err"
  std::string data;
  template <class V>
  void fields(V& v) {
    v("job", job);
    v("step", step);
    v("node", node);
    v("rank", rank);
    v("stream", stream);
    v("data", data);
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

// agent → engine → client: one task of the step ended.
struct StepExited {
  std::int64_t job = 0;
  std::int64_t step = 0;
  std::string node;
  int rank = 0;
  int status = 0;  // exit code, or minus the signal
  std::string message;
  template <class V>
  void fields(V& v) {
    v("job", job);
    v("step", step);
    v("node", node);
    v("rank", rank);
    v("status", status);
    v("message", message);
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

// process → its node's agent: "I am rank R of job J's step S" (the library's
// init). The reply says whether the process is one the job started with
// (existing) or one an expansion added (new).
struct ProcInit {
  std::int64_t job = 0;
  std::int64_t step = 0;
  int rank = 0;
  std::int64_t pid = 0;
  std::string endpoint;  // where this process receives data from its peers
  template <class V>
  void fields(V& v) {
    v("job", job);
    v("step", step);
    v("rank", rank);
    v("pid", pid);
    v("endpoint", endpoint);
  }
};

struct ProcInitReply {
  std::string status = "existing";  // "existing" or "new"
  int size = 0;                     // processes of the step
  template <class V>
  void fields(V& v) {
    v("status", status);
    v("size", size);
  }
};

// process → agent: one phase of the application, for MTCT (no reply).
struct ProcPhase {
  std::int64_t job = 0;
  int rank = 0;
  double comm_s = 0;
  double compute_s = 0;
  template <class V>
  void fields(V& v) {
    v("job", job);
    v("rank", rank);
    v("comm_s", comm_s);
    v("compute_s", compute_s);
  }
};

struct ProcFinalize {
  std::int64_t job = 0;
  int rank = 0;
  template <class V>
  void fields(V& v) {
    v("job", job);
    v("rank", rank);
  }
};

// agent → process notices: an adaptation waits (proc.adapt_pending), or was
// withdrawn before its window opened (proc.adapt_abort).
struct ProcAdaptNotice {
  std::int64_t job = 0;
  std::uint64_t adaptation = 0;
  template <class V>
  void fields(V& v) {
    v("job", job);
    v("adaptation", adaptation);
  }
};

// process → agent: this process enters the adaptation window. Answered when
// the window opens (every process of the job has entered), or with the error
// code "aborted" when the adaptation was rolled back.
struct ProcAdaptBegin {
  std::int64_t job = 0;
  std::int64_t step = 0;
  int rank = 0;  // its current rank (a new process: its new rank)
  template <class V>
  void fields(V& v) {
    v("job", job);
    v("step", step);
    v("rank", rank);
  }
};

struct ProcAdaptBeginReply {
  std::uint64_t adaptation = 0;
  int old_size = 0;
  int new_size = 0;
  int window_rank = 0;
  std::vector<int> old_ranks;  // by window rank, as in adapt.begin
  std::vector<int> new_ranks;
  std::vector<std::string> endpoints;  // by window rank
  template <class V>
  void fields(V& v) {
    v("adaptation", adaptation);
    v("old_size", old_size);
    v("new_size", new_size);
    v("window_rank", window_rank);
    v("old_ranks", old_ranks);
    v("new_ranks", new_ranks);
    v("endpoints", endpoints);
  }
};

// process → agent: its data is in place; it leaves the window.
struct ProcAdaptCommit {
  std::int64_t job = 0;
  std::uint64_t adaptation = 0;
  int window_rank = 0;
  template <class V>
  void fields(V& v) {
    v("job", job);
    v("adaptation", adaptation);
    v("window_rank", window_rank);
  }
};

// ------------------------------------------------------------------- events

// The body of an event on the PUB socket; the first frame is the topic
// ("job.started", ...). Fields that do not apply are absent.
struct EventMsg {
  std::uint64_t seq = 0;
  double time = 0;
  std::string topic;
  std::optional<std::int64_t> job;
  std::optional<std::string> from;   // job state before
  std::optional<std::string> state;  // job state after
  std::optional<int> nodes;
  std::optional<int> prev_nodes;           // job.adapting, job.resized, job.request
  std::optional<double> expected_start;    // job.reserved
  std::optional<std::string> node;
  std::optional<double> lower_w;           // power.corridor, power.violation
  std::optional<double> upper_w;
  std::optional<double> power_w;           // power.violation
  std::optional<double> pass_s;            // sched.pass
  std::optional<int> actions;
  std::optional<std::string> reason;
  std::optional<std::string> code;         // policy.error
  std::optional<std::string> file;
  std::optional<int> line;
  std::optional<std::string> message;
  template <class V>
  void fields(V& v) {
    v("seq", seq);
    v("time", time);
    v("topic", topic);
    v("job", job);
    v("from", from);
    v("state", state);
    v("nodes", nodes);
    v("prev_nodes", prev_nodes);
    v("expected_start", expected_start);
    v("node", node);
    v("lower_w", lower_w);
    v("upper_w", upper_w);
    v("power_w", power_w);
    v("pass_s", pass_s);
    v("actions", actions);
    v("reason", reason);
    v("code", code);
    v("file", file);
    v("line", line);
    v("message", message);
  }
};

}  // namespace sched::proto
