// What `sched-mpi-agent` (issue 16: mpirun inside a batch script) makes of
// the arguments an MPI launcher gives its remote shell: Open MPI's orted
// launcher (plm_rsh_agent) and MPICH hydra's ssh launcher (HYDRA_LAUNCHER_EXEC)
// call it as they would call ssh, `agent [ssh options] HOST COMMAND...`.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace sched::cli {

struct MpiAgentCall {
  std::string host;     // the job's node to run on
  std::string command;  // a shell command line, run by /bin/sh -c as ssh would
};

// Parses the launcher's arguments. The ssh options the launchers pass
// (hydra's -x, and -q -T -t -n) are dropped, as are -l/-p/-o with their
// value (a user, port or ssh option means nothing here); the words after
// HOST are joined with spaces, as ssh joins them, because the launchers
// quote them for a remote shell (Open MPI's orte_hnp_uri "..."). Throws
// std::invalid_argument for another option, no host or no command.
MpiAgentCall parse_mpi_agent_args(const std::vector<std::string>& args);

// The `sched run` arguments (after the program) that run the call as a
// step of one task on its host, with no PMI and no CPU binding (the MPI
// launcher's daemon starts and places the ranks itself).
std::vector<std::string> mpi_agent_run_args(const MpiAgentCall& call);

}  // namespace sched::cli
