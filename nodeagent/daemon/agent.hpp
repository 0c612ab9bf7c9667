// The nodeagent daemon's loop (docs/design.md §2, §5): one DEALER connection to the
// engine's agent endpoint; registers the node, heartbeats, runs what the
// engine asks (job.launch, job.kill, step.launch) through the ProcessTable,
// and reports how tasks started and ended (docs/protocol.md §5).
//
// Across a break with the engine: a task.exited report is kept until the
// engine acknowledges it as recorded, and sent again after each
// registration (which lists the jobs still running here; step.running the
// steps). The jobs run on while the engine is silent, for at most the
// down_after_s its register reply gave: the engine then takes the node for
// lost, and the agent kills them itself.
//
// Fencing: the running tasks are recorded in <spool>/tasks (task_records.hpp).
// Before each registration the agent kills what an earlier agent's table
// still names, and registers clean only when none of it is left.
//
// A ROUTER socket per job, ipc://<spool>/job-<id>/agent.ipc, serves that
// job's processes (the malleable library): measurements, and this node's
// part of adaptations (agent_adapt.cpp, docs/protocol.md §8). Only the job's
// user can open it (docs/security.md §5), and what comes in on it speaks
// for that job alone.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>
#include <zmq.hpp>

#include "agent_pmix.hpp"
#include "sched/agent/cgroup.hpp"
#include "sched/agent/processes.hpp"
#include "sched/agent/run_as.hpp"
#include "sched/agent/task_records.hpp"
#include "sched/agent/topology.hpp"
#include "sched/plugins/power_meter.hpp"
#include "sched/pmi/server.hpp"
#include "sched/proto/agent_messages.hpp"
#include "sched/proto/curve.hpp"
#include "sched/proto/envelope.hpp"
#include "sched/proto/pmi_messages.hpp"
#include "sched/proto/pmix_messages.hpp"
#include "sched/proto/process_messages.hpp"
#include "sched/proto/transport.hpp"

namespace sched::agent {

struct AgentOptions {
  std::string engine_endpoint = "tcp://127.0.0.1:7101";
  std::string node_name;  // default: the host name
  int cores = 0;          // > 0: a virtual node of that many cores
  // >= 0: the node's GPUs as declared (like Slurm's gres.conf), for GPUs
  // hwloc does not see or a virtual node's share; -1: hwloc's count.
  int gpus = -1;
  // Where batch scripts are written, and the process table (tasks) kept.
  std::string spool_dir;
  double register_retry_s = 1;
  // The power meter plugin: "auto" (RAPL when its counters can be read, else
  // the model), a name (libsched_power_<name>.so) or a path.
  std::string power_meter = "auto";
  std::string power_options;  // the plugin's own options ("root=DIR" for rapl)
  double idle_w = 71;
  // Given to job processes as SCHED_MALL_BIND: where peers on other nodes
  // reach them (the malleable library's data sockets).
  std::string data_address;
  // The link to schedd is CURVE (docs/security.md §3): this agent's
  // secret key, and schedd's public key.
  std::string secret_key_file;
  std::string server_public_key_file;
  // A root agent runs jobs of root only when allowed (docs/admin.md).
  bool allow_root_jobs = false;
  // Job containment: auto (cgroup2, else cgroup1, else none), or one of them.
  std::string containment = "auto";
  std::string cgroup_root = "/sys/fs/cgroup";
};

class Agent {
 public:
  explicit Agent(AgentOptions options);
  void run(const std::atomic<bool>& stop);

 private:
  using Clock = std::chrono::steady_clock;

  void send_register();
  void send_heartbeat();
  template <class Body>
  std::uint64_t send(std::string_view type, const Body& body);
  static void log_unsent(std::string_view type);
  void on_message(const proto::Envelope& message);
  void on_launch(const proto::JobLaunch& launch);
  void on_kill(const proto::JobKill& kill);
  // job.suspend / job.resume: freeze or thaw the job's processes here.
  void on_suspend(JobId job, bool suspend);
  // job.cores: the job's cores here change (cpuset and affinity follow).
  void on_job_cores(const proto::JobCores& cores);
  void on_step(const proto::StepLaunch& launch);
  // Starts the launch's ranks here; an error message per rank that could
  // not start. `joined`: part of the step at once (not an expansion's new
  // process, which joins at its commit).
  // The OS CPUs of the task `local` of a step here under --cpu-bind=cores
  // (tasks::task_cores over this node's cores; a virtual node's core k is
  // the host's core k modulo the host's cores); empty: not pinned.
  std::vector<int> bound_cpus(const proto::StepLaunch& launch, int local) const;
  std::vector<std::pair<int, std::string>> launch_ranks(const proto::StepLaunch& launch,
                                                        bool joined);
  void send_output(TaskId task, const std::vector<OutputChunk>& chunks);
  void drain_local();
  // `peer` is "<job>:<routing id>" (job_peer); the message came in on the
  // socket of `job`.
  void on_local(JobId job, const std::string& peer, const proto::Envelope& message);
  // Answers a job process on its job's socket; dropped once the job is gone.
  void send_local(const std::string& peer, std::string_view payload);
  void report_perf(JobId job);

  // ---- adaptations (agent_adapt.cpp)
  void on_adapt_begin(const proto::AdaptBegin& begin);
  void on_adapt_go(const proto::AdaptGo& go);
  void on_adapt_abort(const proto::AdaptAbort& abort);
  void on_proc_adapt_begin(const std::string& peer, const proto::Envelope& message);
  void on_proc_adapt_commit(const std::string& peer, const proto::Envelope& message);
  // A process of the job's step ended: an adaptation waiting for it fails.
  void adapt_task_exited(JobId job, std::int64_t step, int rank, int status);
  void adapt_send_ready(JobId job);
  void adapt_finish(JobId job);
  void adapt_drop(JobId job, const std::string& why);
  void adapt_report(std::string_view type, JobId job, std::uint64_t adaptation,
                    const std::string& message = {});
  template <class Body>
  void notify_process(const std::string& peer, std::string_view type, const Body& body);
  void add_job_env(JobId job, EnvPairs& env) const;
  void report_power();
  void report_exits();
  void forward_output();
  void check_cut_off();
  // Kills what an earlier agent on this node left running (its process
  // table in the spool folder); true when nothing of it is left.
  bool fence_clean();
  // (Re)opens the engine link, CURVE with the configured keys (throws
  // without them).
  void open_link();
  void secure_link();
  // A failed handshake (schedd refused the key): a new link after a while.
  void check_link();
  static constexpr std::chrono::seconds kRelinkAfter{2};
  std::optional<Clock::time_point> relink_at_;

  // Whom a task of the job (of `user`) runs as, and in which cgroups (the
  // job's, leaf `leaf`, limited to mem_bytes); throws UserError or
  // CgroupError when it cannot run here.
  TaskIdentity task_identity(JobId job, const std::string& user, const std::string& leaf,
                             std::int64_t mem_bytes);
  // The job's directory in the spool (its script; the user's, mode 0700).
  std::string job_dir(JobId job) const;
  // Jobs with nothing left running here: their cgroups are killed whole
  // and removed, their spool directories go (once no kill grace is pending).
  void release_ended_jobs();
  // At the agent's stop: kills every job here and releases them.
  void stop_jobs();

  // ---- MPI steps (agent_pmi.cpp, issue 16 item 2): a PMI-1 server per
  // step with --mpi=pmi2|pmi1, its ranks connected by socket pairs
  // (PMI_FD=3), or, with --mpi=pmix, the agent's PMIx server
  // (agent_pmix.hpp); the fence across the step's nodes goes through schedd
  // (pmi.fence) either way.
  struct PmiConnection {
    int fd = -1;  // the agent's end, non-blocking; -1 once the rank closed it
    std::string unsent;
    PmiConnection() = default;
    PmiConnection(const PmiConnection&) = delete;
    PmiConnection& operator=(const PmiConnection&) = delete;
    ~PmiConnection();
  };
  struct PmiStep {
    std::optional<pmi::NodeServer> server;     // PMI-1
    std::map<int, PmiConnection> connections;  // by rank (PMI-1)
    bool pmix = false;                         // served by pmix_ instead
    std::int64_t pmix_fences = 0;              // fences its ranks here entered
    std::set<int> pmix_connected, pmix_finalized;
    std::optional<pmi::Failure> pmix_failure;  // a rank here called PMIx_Abort
    bool initialized(int rank) const;
    bool finalized(int rank) const;
    const std::optional<pmi::Failure>& failure() const;
    bool abort_sent = false;  // this node told schedd the step cannot go on
    bool ending = false;      // killed (the job, or the step failed): no abort to send
    std::string failed;       // the step failed elsewhere: why, for its ranks' exits
  };
  std::map<std::pair<JobId, std::int64_t>, PmiStep> pmi_steps_;
  // With --mpi: the rank's PMI connection (the step's server made on its
  // first rank here) and its PMI_* variables in `env`; returns the child's
  // end, which the caller closes once the rank is started. -1: no PMI.
  int pmi_connect(const proto::StepLaunch& launch, int rank, const TaskIdentity& who,
                  EnvPairs& env);
  // --mpi=pmix: the agent's PMIx server, started with the first such step.
  std::unique_ptr<PmixServer> pmix_;
  void pmix_connect(const proto::StepLaunch& launch, int rank, const TaskIdentity& who,
                    EnvPairs& env);
  void serve_pmix();
  void pmix_fence_done(const proto::PmiFenceDone& done);
  // MPI_Comm_spawn (docs/protocol.md §6): the spawn requests sent (our
  // pmix.spawn's seq → libpmix's id), and connects under way (by id).
  std::map<std::uint64_t, std::pair<std::uint64_t, JobId>> pmix_spawns_;
  std::map<std::uint64_t, PmixEvent> pmix_connects_;
  void pmix_request(PmixEvent& event);
  void on_pmix_spawn_reply(const proto::Envelope& reply);
  void on_pmix_connect_done(const proto::PmixConnectDone& done);
  // The agents' ends, for the loop's poll.
  std::vector<int> pmi_fds() const;
  // Reads what ranks wrote, answers them, and sends fences and aborts.
  void serve_pmi();
  void pmi_flush(PmiStep& step);
  void on_pmi_fence_done(const proto::PmiFenceDone& done);
  void on_pmi_step_failed(const proto::PmiStepFailed& failed);
  // A rank of a step here ended (status as in step.exited); in an MPI step
  // one that ended before it finalized fails the step. `message` (its
  // step.exited message) gets the reason when it has none.
  void pmi_task_exited(JobId job, std::int64_t step, int rank, int status, std::string& message);
  // A rank of an MPI step could not start: the step cannot go on.
  void pmi_launch_failed(const proto::StepLaunch& launch, int rank, const std::string& error);
  void pmi_job_killed(JobId job);

  AgentOptions options_;
  NodeTopology topology_;
  // The host's cores, each as its OS CPU numbers (core_cpus()): what
  // --cpu-bind=cores pins tasks to; empty when hwloc could not say.
  std::vector<std::vector<int>> core_cpus_;
  UserIdentity self_;  // the agent's own user: root, or the one user it runs jobs as
  std::unique_ptr<Cgroups> cgroups_;
  std::map<JobId, std::int64_t> job_mem_;  // jobs with processes here: their --mem (0: none)
  // Jobs of an invasive partition (issue 20 item 2): their core ids here (of
  // this node's topology, virtual ones for a virtual node), from job.launch
  // or step.launch's core_ids; kept while the job has processes here.
  std::map<JobId, std::vector<int>> job_cores_;
  // The OS CPUs of a job's cores here: a virtual core k is the host's core
  // k modulo its count, as --cpu-bind maps it; empty for a job of whole nodes.
  std::vector<int> job_cpus(JobId job) const;
  // Notes the job's cores here from a launch's core_ids (nothing when absent).
  void note_job_cores(JobId job,
                      const std::optional<std::map<std::string, std::vector<int>>>& core_ids);
  // Suspended jobs here: true when their cgroup is frozen, false when their
  // processes were sent SIGSTOP (no freezer).
  std::map<JobId, bool> suspended_;
  zmq::context_t context_;
  zmq::socket_t socket_;
  std::unique_ptr<proto::curve::HandshakeWatch> handshakes_;  // says when schedd refuses our key
  // Where each job's processes reach this agent (the malleable library),
  // given to them as SCHED_AGENT_ENDPOINT: a socket file in the job's
  // spool directory (0700, the user's), itself the user's with mode 0600.
  struct JobSocket {
    zmq::socket_t socket;
    std::string endpoint;
  };
  std::map<JobId, JobSocket> job_sockets_;
  // Creates the job's directory (the user's, 0700) and its socket, once.
  void open_job_socket(JobId job, const UserIdentity& user);
  ProcessTable tasks_;
  std::uint64_t seq_ = 0;
  bool registered_ = false;
  std::uint64_t register_seq_ = 0;
  Clock::time_point next_register_{};
  Clock::time_point next_heartbeat_{};
  std::chrono::duration<double> heartbeat_{2.0};
  std::string client_endpoint_;
  std::map<JobId, TaskId> batch_;  // the batch script this node runs per job
  struct StepTask {
    JobId job = 0;
    std::int64_t step = 0;
    int rank = 0;
    int tasks = 0;                // of the whole step
    bool joined = true;           // false: an expansion's new process before its commit
    Clock::time_point started{};  // when it was launched
    // A process an MPI expansion spawned (--mall-spawn=mpi): `step` and
    // `rank` are its PMIx namespace's, and for the malleable library (its
    // proc.* messages, the adaptations, its exit) it is rank `mall_rank` of
    // step `mall_step`.
    std::int64_t mall_step = 0;
    int mall_rank = -1;
    std::int64_t lib_step() const { return mall_step != 0 ? mall_step : step; }
    int lib_rank() const { return mall_step != 0 ? mall_rank : rank; }
  };
  std::map<TaskId, StepTask> step_tasks_;
  // How each step with processes here was launched (command, environment),
  // for step.running after a registration.
  std::map<std::pair<JobId, std::int64_t>, proto::StepLaunch> step_launches_;
  void report_steps();
  // Processes that initialised the library, by (job, step, rank).
  struct LibraryProcess {
    std::string peer;      // "<job>:<routing id>" on the job's socket
    std::string endpoint;  // where it receives data from its peers
  };
  std::map<std::tuple<JobId, std::int64_t, int>, LibraryProcess> library_;
  // This node's part of a job's adaptation (one at a time per job).
  struct LocalAdaptation {
    proto::AdaptBegin begin;  // without its launch
    std::set<int> expected;   // window ranks of the processes here
    std::set<int> joining;    // those this adaptation started (in `expected` unless
                              // spawned by the program: MPI expansions)
    std::map<int, std::pair<std::string, std::uint64_t>> waiting;  // rank → proc.adapt_begin
    std::set<int> committed;
    bool ready_sent = false;
    bool open = false;
    std::vector<std::string> endpoints;  // from adapt.go, by window rank
    // Every window rank that takes part here: the old processes and the new.
    std::set<int> members() const {
      std::set<int> all = expected;
      all.insert(joining.begin(), joining.end());
      return all;
    }
  };
  std::map<JobId, LocalAdaptation> adapting_;
  // Answers a process's proc.adapt_begin with the open window's plan.
  void adapt_answer(const LocalAdaptation& here, int rank, const std::string& peer,
                    std::uint64_t seq);
  // A step process that has not initialised the library this long after its
  // start is taken not to use it (an adaptation then fails at once); a
  // younger one is waited for.
  static constexpr std::chrono::seconds kLibraryInitGrace{5};
  // Phases the job's processes here reported since its last adaptation.
  struct Phases {
    double comm_s = 0;
    double compute_s = 0;
    std::uint64_t count = 0;
    bool unreported = false;  // new phases since the last perf.report
  };
  std::map<JobId, Phases> phases_;
  // ---- issue 17 item 1: evolving requests relayed to schedd. The
  // process's proc.resize waiting for schedd's reply (our resize.request's
  // seq → its peer and seq), and who hears later answers (request id → peer).
  struct ResizeRelay {
    std::string peer;
    std::uint64_t seq = 0;
  };
  std::map<std::uint64_t, ResizeRelay> resize_relays_;
  std::map<std::uint64_t, std::string> resize_askers_;
  void on_proc_resize(JobId job, const std::string& peer, const proto::Envelope& message);
  void on_resize_reply(const proto::Envelope& reply);
  void on_resize_answer(const proto::ResizeAnswer& answer);
  std::unique_ptr<plugins::PowerMeter> meter_;
  std::map<JobId, double> power_estimates_;  // per-node watts of the jobs run here
  // task.exited reports not yet acknowledged: seq → the report.
  std::map<std::uint64_t, proto::TaskExited> unacked_exits_;
  // When the engine was last heard from (any message), and how long a
  // silence makes the engine take this node for lost (from its register
  // reply; 0: not known yet).
  Clock::time_point last_heard_ = Clock::now();
  std::chrono::duration<double> down_after_{0};
  bool cut_off_killed_ = false;  // this silence's jobs are killed already
  // The process table file (<spool>/tasks): this agent's running tasks, for
  // its successor to kill should it die.
  std::string task_file_;
  std::vector<TaskRecord> predecessor_;  // left by an earlier agent, not yet gone
  std::map<TaskId, TaskRecord> records_;
  // Adds a task to the table in memory; save_records() writes it (once for
  // all the tasks of a launch, before they are reported started).
  void record_task(JobId job, TaskId task);
  void save_records();
};

template <class Body>
std::uint64_t Agent::send(std::string_view type, const Body& body) {
  const std::uint64_t seq = ++seq_;
  const std::string bytes = proto::encode_request(type, seq, body);
  if (!socket_.send(zmq::buffer(bytes), zmq::send_flags::dontwait)) {
    log_unsent(type);
  }
  return seq;
}

template <class Body>
void Agent::notify_process(const std::string& peer, std::string_view type, const Body& body) {
  send_local(peer, proto::encode_request(type, 0, body));
}

}  // namespace sched::agent
