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

int main(int argc, char** argv) {
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
