// What a node agent tells the engine about its machine when it registers
// (agent.register, docs/design.md §5): counts from hwloc, or a slice of the machine
// when several agents share one host as virtual nodes (`--cores`).
#pragma once

#include <cstdint>
#include <string>

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

}  // namespace sched::agent
