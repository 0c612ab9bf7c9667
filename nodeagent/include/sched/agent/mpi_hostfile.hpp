// mpirun inside a batch script (issue 16; docs/user-guide.md "MPI"): the
// job's hostfiles, one line per node with its slots in the format each MPI
// launcher reads, and the variables that make Open MPI's mpirun and MPICH's
// hydra read them and start their daemons through `sched-mpi-agent` (the
// job's agents) rather than ssh. Only the batch script gets them: it runs
// on the leader, where the files are.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sched/agent/run_as.hpp"
#include "sched/agent/types.hpp"
#include "sched/proto/agent_messages.hpp"

namespace sched::agent {

// Slots of each of the job's nodes, in launch.nodes' order: its tasks
// (SLURM_TASKS_PER_NODE's counts) when the job gave -n, else tasks_per_node.
std::vector<int> job_slots(const proto::JobLaunch& launch);

// Open MPI's hostfile ("n1 slots=2" a line) and hydra's ("n1:2" a line).
std::string open_mpi_hostfile(const std::vector<std::string>& nodes, const std::vector<int>& slots);
std::string mpich_hostfile(const std::vector<std::string>& nodes, const std::vector<int>& slots);

// The variables for hostfiles at these paths: SCHED_HOSTFILE (Open MPI's
// format) and SCHED_HOSTFILE_MPICH, Open MPI's OMPI_MCA_orte_default_hostfile,
// OMPI_MCA_plm=rsh (not its Slurm launcher, which SLURM_JOB_ID would pick),
// OMPI_MCA_plm_rsh_agent (its default tree spawn stays: with
// plm_rsh_no_tree_spawn, orted daemonizes and would leave its step at
// once), OMPI_MCA_rtc_hwloc_vmhole=none (see the .cpp), hydra's HYDRA_HOST_FILE,
// HYDRA_LAUNCHER=ssh and HYDRA_LAUNCHER_EXEC. The agent program is named
// `sched-mpi-agent`, found on the job's PATH.
EnvPairs mpi_launcher_environment(const std::string& hostfile, const std::string& mpich_hostfile);

// Writes both hostfiles of the job into dir (which exists) as hostfile and
// hostfile.mpich, its nodes sorted (tasks::sort_nodelist: Open MPI maps in
// that order whatever the file says), readable by `user` when set, and adds the variables to
// env where the job did not set them itself. Throws std::runtime_error when
// a file cannot be written.
void add_mpi_hostfiles(const std::string& dir, const proto::JobLaunch& launch,
                       const std::optional<UserIdentity>& user, EnvPairs& env);

}  // namespace sched::agent
