// sched-mpi-agent: the remote shell that mpirun calls instead of ssh inside a
// job (issue 16; docs/user-guide.md "MPI"). `sched-mpi-agent [-x] HOST
// COMMAND...` runs COMMAND on the job's node HOST as a step of one task
// through sched's agents (as Slurm's srun runs orted), by becoming
// `sched run -w HOST -N 1 -n 1 ...`: its output comes back as the step's, and
// its exit status is the step's.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "mpi_agent_args.hpp"

namespace {

constexpr const char* kUsage =
    "Usage: sched-mpi-agent [SSH-OPTIONS] HOST COMMAND...\n"
    "Run COMMAND on HOST, a node of the current job, as a step of one task\n"
    "through sched's node agents: the remote shell that mpirun (Open MPI's\n"
    "plm_rsh_agent) and mpiexec.hydra (HYDRA_LAUNCHER_EXEC) call instead of ssh\n"
    "inside a batch job. It becomes `sched run -w HOST -N 1 -n 1 --mpi=none\n"
    "--cpu-bind=none sh -c COMMAND`; its output and exit status are the step's.\n"
    "\n"
    "The ssh options the launchers pass (-x, -q, -T, -t, -n, and -l, -p, -o\n"
    "with their value) are accepted and mean nothing here.\n"
    "\n"
    "Options:\n"
    "  --help     print this help and exit\n"
    "  --version  print the version and exit\n"
    "\n"
    "Exit status: the command's, or 255 when it cannot be run (as ssh).\n";

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "--help") == 0) {
    std::cout << kUsage;
    return 0;
  }
  if (argc == 2 && std::strcmp(argv[1], "--version") == 0) {
    std::cout << "sched-mpi-agent 0.1.0\n";
    return 0;
  }
  sched::cli::MpiAgentCall call;
  try {
    call = sched::cli::parse_mpi_agent_args(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const std::invalid_argument& e) {
    std::cerr << "sched-mpi-agent: " << e.what() << "\n";
    return 255;  // what ssh returns when it cannot run the command
  }
  // The `sched` installed (or built) beside this program, else the PATH's.
  std::error_code error;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", error);
  std::string sched = "sched";
  if (!error && ::access((self.parent_path() / "sched").c_str(), X_OK) == 0) {
    sched = (self.parent_path() / "sched").string();
  }
  std::vector<std::string> words = sched::cli::mpi_agent_run_args(call);
  words.insert(words.begin(), sched);
  std::vector<char*> args;
  for (std::string& word : words) args.push_back(word.data());
  args.push_back(nullptr);
  ::execvp(sched.c_str(), args.data());
  std::cerr << "sched-mpi-agent: cannot run " << sched << ": " << std::strerror(errno) << "\n";
  return 255;
}
