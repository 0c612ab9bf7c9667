// `sched alloc [OPTIONS] [COMMAND [ARGS...]]` (like salloc): gets an
// allocation, runs COMMAND (default: the user's shell) here with the job's
// variables set, so that `sched run`/srun inside it start steps on the job's
// nodes, and gives the allocation back when COMMAND ends. The allocation is
// a job whose batch script only waits; giving it back cancels that job, so
// `sched acct` shows it CANCELLED.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <thread>

#include "connection.hpp"
#include "program_name.hpp"
#include "sched/proto/client_messages.hpp"
#include "submission.hpp"

extern char** environ;

namespace sched::cli {
namespace {

// Holds the nodes until the job is cancelled; SIGTERM from the cancel ends
// it without an error.
constexpr std::string_view kHolderScript =
    "#!/bin/sh\n"
    "# sched alloc: holds the allocation while the command runs where it was given\n"
    "trap 'exit 0' TERM\n"
    "while :; do sleep 3600 & wait $!; done\n";

std::atomic<bool> interrupted{false};

void note_interrupt(int) { interrupted = true; }

struct AllocArgs {
  int retries = 2;
  SubmissionArgs options;
};

proto::JobInfo job_info(std::int64_t id) {
  return client().call<proto::JobReply>(proto::type::kJobShow, proto::JobRef{id}).job;
}

void relinquish(std::int64_t id) {
  std::cerr << program_name() << ": Relinquishing job allocation " << id << "\n";
  try {
    client().call<proto::Empty>(proto::type::kCancel, proto::JobRef{id});
  } catch (const proto::ProtoError&) {
    // Already ended (its time limit, an admin): nothing left to give back.
  }
}

// Waits until the job runs; its info then, or nothing when it ended first or
// the user gave up (Ctrl-C), the job then cancelled.
std::optional<proto::JobInfo> wait_until_running(std::int64_t id) {
  bool said_queued = false;
  const auto since = std::chrono::steady_clock::now();
  for (int poll = 0;; ++poll) {
    if (interrupted) {
      std::cerr << program_name() << ": Job allocation " << id << " has been revoked.\n";
      relinquish(id);
      return std::nullopt;
    }
    proto::JobInfo info = job_info(id);
    if (info.state == "RUNNING" || info.state == "ADAPTING") return info;
    if (info.state != "PENDING" && info.state != "STARTING") {
      std::cerr << program_name() << ": job " << id << " ended " << info.state
                << " before it was granted" << (info.reason.empty() ? "" : ": " + info.reason)
                << "\n";
      return std::nullopt;
    }
    if (!said_queued && std::chrono::steady_clock::now() - since > std::chrono::seconds(1)) {
      std::cerr << program_name() << ": job " << id << " queued and waiting for resources\n";
      said_queued = true;
    }
    // Quick at first (an idle cluster starts it at once), then gentler.
    std::this_thread::sleep_for(std::chrono::milliseconds(poll < 20 ? 100 : 500));
  }
}

// The command's environment: this one, with the job's variables as a batch
// script would have them and the way back to the same schedd.
std::vector<std::string> allocation_environment(const proto::JobInfo& info) {
  std::map<std::string, std::string> env;
  for (char** entry = environ; *entry; ++entry) {
    const std::string text(*entry);
    const auto eq = text.find('=');
    if (eq != std::string::npos) env[text.substr(0, eq)] = text.substr(eq + 1);
  }
  const std::string id = std::to_string(info.id);
  // The comma list, as the agents give it to the job's own processes.
  std::string nodelist;
  for (const std::string& node : info.nodelist) nodelist += (nodelist.empty() ? "" : ",") + node;
  const std::string nodes = std::to_string(info.nodelist.size());
  env["SCHED_JOB_ID"] = env["SLURM_JOB_ID"] = env["SLURM_JOBID"] = id;
  env["SCHED_JOB_NODELIST"] = env["SLURM_JOB_NODELIST"] = env["SLURM_NODELIST"] = nodelist;
  env["SCHED_JOB_NUM_NODES"] = env["SLURM_JOB_NUM_NODES"] = env["SLURM_NNODES"] = nodes;
  env["SCHED_ENDPOINT"] = client_endpoint();
  if (const std::string socket = munge_socket(); !socket.empty()) {
    env["SCHED_MUNGE_SOCKET"] = socket;
  }
  std::vector<std::string> out;
  for (const auto& [name, value] : env) out.push_back(name + "=" + value);
  return out;
}

// Runs the command and waits for it; gives up on it (SIGTERM, then SIGKILL)
// when the job ends under it. Its status as a shell reports one.
int run_in_allocation(std::int64_t id, std::vector<std::string> command,
                      const proto::JobInfo& info) {
  if (command.empty()) {
    const char* shell = std::getenv("SHELL");
    command.push_back(shell && *shell ? shell : "/bin/sh");
  }
  std::vector<std::string> env = allocation_environment(info);
  std::vector<char*> argv, envp;
  for (auto& word : command) argv.push_back(word.data());
  argv.push_back(nullptr);
  for (auto& entry : env) envp.push_back(entry.data());
  envp.push_back(nullptr);
  const pid_t child = ::fork();
  if (child < 0) throw std::runtime_error("cannot start " + command.front());
  if (child == 0) {
    ::signal(SIGINT, SIG_DFL);
    ::execvpe(argv[0], argv.data(), envp.data());
    std::cerr << program_name() << ": " << command.front() << ": " << std::strerror(errno) << "\n";
    std::_Exit(127);
  }
  // Ctrl-C is the command's (it shares the terminal), not ours.
  ::signal(SIGINT, SIG_IGN);
  auto checked = std::chrono::steady_clock::now();
  int killed_with = 0;
  auto revoked_at = std::chrono::steady_clock::time_point{};
  for (;;) {
    int status = 0;
    const pid_t done = ::waitpid(child, &status, WNOHANG);
    if (done == child) {
      if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
      return WEXITSTATUS(status);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const auto now = std::chrono::steady_clock::now();
    if (killed_with == 0 && interrupted) {  // we were told to stop: the command too
      ::kill(child, SIGTERM);
      killed_with = SIGTERM;
      revoked_at = now;
    } else if (killed_with == 0 && now - checked > std::chrono::seconds(2)) {
      checked = now;
      const std::string state = job_info(id).state;
      if (state != "RUNNING" && state != "ADAPTING") {
        std::cerr << program_name() << ": Job allocation " << id << " has been revoked (" << state
                  << ").\n";
        ::kill(child, SIGTERM);
        killed_with = SIGTERM;
        revoked_at = now;
      }
    } else if (killed_with == SIGTERM && now - revoked_at > std::chrono::seconds(5)) {
      ::kill(child, SIGKILL);
      killed_with = SIGKILL;
    }
  }
}

}  // namespace

void add_alloc_command(CLI::App& app) {
  auto args = std::make_shared<AllocArgs>();
  CLI::App* cmd = app.add_subcommand(
      "alloc",
      "Get an allocation and run COMMAND (default: your shell) here inside it (like salloc): "
      "sched alloc [OPTIONS] [COMMAND [ARGS...]]; `sched run` in it starts steps on the "
      "job's nodes; the allocation is given back when COMMAND ends");
  cmd->prefix_command();
  cmd->fallthrough(false);
  add_connection_options(*cmd);
  cmd->add_option("--retries", args->retries,
                  "Times to send the request again when schedd does not answer in time")
      ->check(non_negative_number())
      ->capture_default_str();
  add_submission_options(*cmd, args->options);
  cmd->callback([args, cmd] {
    run_command([&] {
      const std::vector<std::string> command = cmd->remaining();
      JobSpec spec = submission_spec(std::string(kHolderScript), args->options);
      // The holder writes nothing: no sched-<id>.out left behind, as salloc leaves none.
      if (spec.extra->output.empty()) spec.extra.edit().output = "/dev/null";
      if (spec.name.empty()) {
        spec.name = command.empty() ? "interactive"
                                    : std::filesystem::path(command.front()).filename().string();
      }
      ::signal(SIGINT, note_interrupt);
      ::signal(SIGTERM, note_interrupt);
      const std::int64_t id = send_submission(spec, args->retries);
      std::cerr << program_name() << ": Pending job allocation " << id << "\n";
      const auto info = wait_until_running(id);
      if (!info) std::exit(1);
      std::cerr << program_name() << ": Granted job allocation " << id << "\n";
      const int status = run_in_allocation(id, command, *info);
      relinquish(id);
      std::cout.flush();
      std::exit(status);
    });
  });
}

}  // namespace sched::cli
