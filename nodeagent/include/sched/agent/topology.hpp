// What a node agent tells the engine about its machine when it registers
// (agent.register, docs/design.md §5): counts from hwloc, or a slice of the machine
// when several agents share one host as virtual nodes (`--cores`).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sched::agent {

struct NodeTopology {
  std::string hostname;
  int sockets = 0;
  int cores = 0;
  int pus = 0;  // hardware threads
  std::uint64_t memory_bytes = 0;
  int gpus = 0;  // physical devices, however many OS devices each one shows
};

// Discovers this machine with hwloc. Throws std::runtime_error with the
// failing step when hwloc cannot build or read the topology.
NodeTopology discover_topology();

// One virtual node of `cores` cores on `host`: one socket, one PU per core,
// the host's memory shared in proportion to cores (never more than the host
// has), no GPUs. Throws std::invalid_argument unless cores >= 1 and the host
// has at least one core.
NodeTopology virtual_topology(const NodeTopology& host, int cores);

// The OS CPU numbers (what sched_setaffinity takes) of each core of this
// machine, cores in hwloc's logical order, from their hwloc cpusets: what
// --cpu-bind=cores pins a task to (issue 16 item 1). A machine whose cores
// hwloc cannot see gets one "core" per PU. Throws std::runtime_error as
// discover_topology does.
std::vector<std::vector<int>> core_cpus();

}  // namespace sched::agent
