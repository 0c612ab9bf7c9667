#include "sched/agent/mpi_hostfile.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>

#include "sched/tasks/nodelist.hpp"
#include "sched/tasks/task_layout.hpp"

namespace sched::agent {
namespace {

std::string lines(const std::vector<std::string>& nodes, const std::vector<int>& slots,
                  const std::string& between) {
  std::string text;
  for (std::size_t i = 0; i < nodes.size() && i < slots.size(); ++i) {
    text += nodes[i] + between + std::to_string(slots[i]) + "\n";
  }
  return text;
}

void write_text(const std::filesystem::path& path, const std::string& text,
                const std::optional<UserIdentity>& user) {
  {
    std::ofstream out(path, std::ios::trunc);
    out << text;
    if (!out.flush()) throw std::runtime_error("cannot write " + path.string());
  }
  // The job's user reads it (mpirun runs as them).
  if (user && ::geteuid() == 0 && ::chown(path.c_str(), user->uid, user->gid) < 0) {
    throw std::runtime_error("cannot give " + path.string() + " to '" + user->name +
                             "': " + std::strerror(errno));
  }
}

}  // namespace

std::vector<int> job_slots(const proto::JobLaunch& launch) {
  const int nodes = static_cast<int>(launch.nodes.size());
  const int ntasks = launch.ntasks.value_or(0);
  if (ntasks < nodes) return std::vector<int>(launch.nodes.size(), launch.tasks_per_node);
  const auto distribution = tasks::parse_distribution(launch.distribution.value_or("block"))
                                .value_or(tasks::Distribution::Block);
  std::vector<int> slots;
  for (const auto& ids :
       tasks::tasks_by_node(tasks::place_tasks(ntasks, nodes, distribution), nodes)) {
    slots.push_back(static_cast<int>(ids.size()));
  }
  return slots;
}

std::string open_mpi_hostfile(const std::vector<std::string>& nodes,
                              const std::vector<int>& slots) {
  return lines(nodes, slots, " slots=");
}

std::string mpich_hostfile(const std::vector<std::string>& nodes, const std::vector<int>& slots) {
  return lines(nodes, slots, ":");
}

EnvPairs mpi_launcher_environment(const std::string& hostfile, const std::string& mpich_hostfile) {
  const std::string agent = "sched-mpi-agent";
  return {
      {"SCHED_HOSTFILE", hostfile},
      {"SCHED_HOSTFILE_MPICH", mpich_hostfile},
      {"OMPI_MCA_orte_default_hostfile", hostfile},
      {"OMPI_MCA_plm", "rsh"},
      {"OMPI_MCA_plm_rsh_agent", agent},
      // Open MPI 4.1's orted maps its shared topology into the largest hole
      // of its address space, which can lie just under the stack: the stack
      // then cannot grow and orted crashes at random (ASLR) inside
      // hwloc_shmem_topology_write. Ranks read the topology themselves instead.
      {"OMPI_MCA_rtc_hwloc_vmhole", "none"},
      {"HYDRA_HOST_FILE", mpich_hostfile},
      {"HYDRA_LAUNCHER", "ssh"},
      {"HYDRA_LAUNCHER_EXEC", agent},
  };
}

void add_mpi_hostfiles(const std::string& dir, const proto::JobLaunch& launch,
                       const std::optional<UserIdentity>& user, EnvPairs& env) {
  const std::filesystem::path base = std::filesystem::absolute(dir);
  // Sorted as Slurm's node lists are: Open MPI 4.1 maps ranks over its
  // daemons in the order of its sorted node names whatever the hostfile's
  // order, hydra in the hostfile's; so both place rank 0 on the first line.
  std::map<std::string, int> slots_of;
  const std::vector<int> slots = job_slots(launch);
  for (std::size_t i = 0; i < launch.nodes.size() && i < slots.size(); ++i) {
    slots_of[launch.nodes[i]] = slots[i];
  }
  std::vector<std::string> nodes = launch.nodes;
  tasks::sort_nodelist(nodes);
  std::vector<int> sorted_slots;
  for (const std::string& node : nodes) sorted_slots.push_back(slots_of[node]);
  write_text(base / "hostfile", open_mpi_hostfile(nodes, sorted_slots), user);
  write_text(base / "hostfile.mpich", mpich_hostfile(nodes, sorted_slots), user);
  for (auto& [name, value] :
       mpi_launcher_environment((base / "hostfile").string(), (base / "hostfile.mpich").string())) {
    // SCHED_ names are ours; for the MPI's own, what the job set wins.
    const bool ours = name.starts_with("SCHED_");
    const auto it =
        std::find_if(env.begin(), env.end(), [&](const auto& pair) { return pair.first == name; });
    if (it == env.end()) {
      env.emplace_back(name, value);
    } else if (ours) {
      it->second = value;
    }
  }
}

}  // namespace sched::agent
