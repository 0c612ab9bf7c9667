// The job processes of one node: launches batch scripts and step commands,
// reports how they ended, and kills whole process trees. Nothing here blocks
// the agent's loop: the loop polls poll_fds() (output and exit), waits at most
// until next_deadline(), then calls read_output(), reap() and poll_timers().
//
// Every launch is a *task*: one process that leads its own session and process
// group; what it starts belongs to the task too. When a task's process ends,
// what it left behind is killed (as Slurm does when a step ends), unless a
// kill() with a grace period is under way, which then runs its course.
// The table reaps its own children: the daemon must neither ignore SIGCHLD
// nor wait() for any child. One loop owns a table (it is not thread-safe).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "sched/agent/run_as.hpp"
#include "sched/agent/types.hpp"

namespace sched::agent {

using SteadyTime = std::chrono::steady_clock::time_point;

// Who a task runs as, and where it is contained; the same for batch scripts
// and steps.
struct TaskIdentity {
  // Set: the task runs as this user (login_environment(user) instead of the
  // agent's variables; USER, LOGNAME and HOME are the user's whatever `env`
  // says), switching to their ids when the agent is root. A non-root agent
  // can only run its own user: another is a LaunchError. Unset: as the agent.
  std::optional<UserIdentity> user;
  // cgroup.procs files the process joins before it execs (Cgroups::procs_files).
  std::vector<std::string> cgroup_procs;
};

struct BatchLaunch : TaskIdentity {
  JobId job = 0;
  std::string script;       // the script's text; run by its #! interpreter, else /bin/sh
  std::string workdir;      // must exist (and be enterable by the user)
  EnvPairs env;             // added to the agent's PATH, HOME, USER, LANG, SHELL; these win
  std::string output_path;  // stdout and stderr, truncated; relative paths are from workdir;
                            // opened as the user
  // Issue 18 item 3: stderr's own file when set (opened as output_path is),
  // and the script's arguments ($1, $2, ...).
  std::string error_path;
  std::vector<std::string> args;
  // A job of an invasive partition (issue 20 item 2): the OS CPUs the
  // script is pinned to (sched_setaffinity) before it execs; empty: any.
  std::vector<int> cpus;
  // Gets the script as job-<id>.sh (mode 0700, the user's); created if missing
  // (then owned by the user too: they must be able to read the script).
  std::string spool_dir;
};

struct StepLaunch : TaskIdentity {
  JobId job = 0;
  std::vector<std::string> argv;  // argv[0] is looked up in the job's PATH unless it has a '/'
  std::string workdir;            // must exist
  EnvPairs env;                   // as for BatchLaunch
  // --cpu-bind (issue 16 item 1): the OS CPU numbers the process is pinned
  // to before it execs; empty: wherever the agent may run.
  std::vector<int> cpus;
  // --mpi (issue 16 item 2): the task's end of its PMI connection, which it
  // gets as descriptor 3 (PMI_FD=3); the caller keeps and closes it. -1: none.
  int pmi_fd = -1;
};

enum class Stream { Out, Err };

struct OutputChunk {
  Stream stream = Stream::Out;
  std::string bytes;
};

struct TaskExit {
  TaskId task = 0;
  JobId job = 0;
  int status = 0;       // exit code (>= 0), or the killing signal as -signal
  bool killed = false;  // kill() was called for the task
  // Why the process could not start (status 127), or that its status was lost.
  std::string error;
  std::vector<OutputChunk> output;  // a step's output not read before it ended
};

// Readable file descriptors of running tasks, for the agent's poll.
enum class FdEvent { Stdout, Stderr, Exited };
struct TaskFd {
  TaskId task = 0;
  int fd = -1;
  FdEvent event = FdEvent::Stdout;  // Stdout/Stderr: call read_output(); Exited: reap()
};

// A launch that failed before the process existed: missing working directory,
// unknown command or interpreter, unwritable spool, invalid environment.
class LaunchError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ProcessTable {
 public:
  using Clock = std::function<SteadyTime()>;

  // `clock` is the only source of time (kill deadlines); tests inject theirs.
  // The inherited environment is read from the agent's own here, once.
  explicit ProcessTable(Clock clock = [] { return std::chrono::steady_clock::now(); });
  // Kills every remaining task's tree with SIGKILL and reaps the processes.
  ~ProcessTable();
  ProcessTable(const ProcessTable&) = delete;
  ProcessTable& operator=(const ProcessTable&) = delete;

  // Both throw LaunchError; otherwise the process runs (a failure after the
  // fork, such as an unopenable output file, arrives as TaskExit::error).
  TaskId launch_batch(const BatchLaunch& launch);
  TaskId launch_step(const StepLaunch& launch);

  // Reads what a step task has written so far, without blocking (a bounded
  // amount per call; poll again if the fd stays readable). Batch tasks and
  // unknown tasks have none.
  std::vector<OutputChunk> read_output(TaskId task);

  // Finished tasks, each reported once, with their remaining output. Also
  // runs poll_timers(). Never blocks.
  std::vector<TaskExit> reap();

  // SIGTERM to the task's process group and every descendant (including
  // those that left the group); SIGKILL to all of them once `grace` has
  // passed (at a later poll_timers() or reap()), or at once when grace <= 0.
  // A second call can shorten the grace, never lengthen it. Returns false
  // for an unknown (or already reaped) task.
  bool kill(TaskId task, std::chrono::duration<double> grace);

  // Sends `signal` to the task's process group and every descendant (SIGSTOP
  // and SIGCONT: a suspension without a freezer). False for an unknown task.
  bool signal(TaskId task, int signal);

  // Sets the CPU affinity of every thread of the task's processes (its
  // group and descendants) to `cpus`, OS CPU numbers (issue 20 item 2: a
  // job resized by cores). Returns how many threads took it; a thread that
  // ends meanwhile is skipped. 0 for an unknown task or an empty set.
  int set_affinity(TaskId task, const std::vector<int>& cpus);

  // Sends the SIGKILLs whose grace has run out.
  void poll_timers();
  // When poll_timers() next has something to do, if ever.
  std::optional<SteadyTime> next_deadline() const;

  std::vector<TaskFd> poll_fds() const;
  // The task's process has not ended (false once it has, even before reap()).
  bool alive(TaskId task) const;
  std::optional<int> pid(TaskId task) const;
  std::vector<TaskId> tasks_of(JobId job) const;
  std::size_t size() const { return tasks_.size(); }  // tasks not yet reaped

 private:
  struct Task;
  struct Leftover;

  TaskId add(std::unique_ptr<Task> task);
  TaskExit finish(TaskId id, Task& task, int status);

  Clock clock_;
  EnvPairs inherited_env_;
  TaskId next_id_ = 1;
  std::map<TaskId, std::unique_ptr<Task>> tasks_;
  // Descendants of reaped tasks still inside a kill's grace period.
  std::vector<std::unique_ptr<Leftover>> leftovers_;
};

}  // namespace sched::agent
