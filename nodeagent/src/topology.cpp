#include "sched/agent/topology.hpp"

#include <hwloc.h>
#include <unistd.h>

#include <climits>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>

namespace sched::agent {
namespace {

using TopologyPtr = std::unique_ptr<hwloc_topology, decltype(&hwloc_topology_destroy)>;

[[noreturn]] void fail(const std::string& step) {
  throw std::runtime_error("hwloc: cannot discover the node topology: " + step + " failed");
}

int count_of(hwloc_topology_t topo, hwloc_obj_type_t type) {
  // hwloc returns -1 when the type lives at several depths; that does not
  // happen for packages, cores or PUs, but count it as "none" rather than lie.
  const int n = hwloc_get_nbobjs_by_type(topo, type);
  return n < 0 ? 0 : n;
}

// A GPU shows up as several OS devices (DRM card and render nodes, CUDA,
// NVML, OpenCL...), all children of the same PCI device: count the devices.
int count_gpus(hwloc_topology_t topo) {
  std::set<hwloc_obj_t> devices;
  for (hwloc_obj_t os = hwloc_get_next_osdev(topo, nullptr); os != nullptr;
       os = hwloc_get_next_osdev(topo, os)) {
    const auto kind = os->attr->osdev.type;
    if (kind != HWLOC_OBJ_OSDEV_GPU && kind != HWLOC_OBJ_OSDEV_COPROC) continue;
    const bool on_pci = os->parent != nullptr && os->parent->type == HWLOC_OBJ_PCI_DEVICE;
    devices.insert(on_pci ? os->parent : os);
  }
  return static_cast<int>(devices.size());
}

std::string host_name(hwloc_topology_t topo) {
  char buf[HOST_NAME_MAX + 1] = {};
  if (gethostname(buf, sizeof buf - 1) == 0 && buf[0] != '\0') return buf;
  const char* from_hwloc = hwloc_obj_get_info_by_name(hwloc_get_root_obj(topo), "HostName");
  return from_hwloc != nullptr ? from_hwloc : "";
}

}  // namespace

NodeTopology discover_topology() {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) fail("hwloc_topology_init");
  TopologyPtr topo(raw, &hwloc_topology_destroy);
  if (hwloc_topology_set_io_types_filter(raw, HWLOC_TYPE_FILTER_KEEP_IMPORTANT) != 0) {
    fail("enabling I/O discovery");
  }
  if (hwloc_topology_load(raw) != 0) fail("hwloc_topology_load");

  NodeTopology t;
  t.hostname = host_name(raw);
  t.sockets = count_of(raw, HWLOC_OBJ_PACKAGE);
  t.cores = count_of(raw, HWLOC_OBJ_CORE);
  t.pus = count_of(raw, HWLOC_OBJ_PU);
  t.memory_bytes = hwloc_get_root_obj(raw)->total_memory;
  t.gpus = count_gpus(raw);
  // Some virtual machines and containers hide packages or cores; a node
  // always has at least one of each around its PUs.
  if (t.pus < 1) fail("finding any processing unit");
  if (t.cores < 1) t.cores = t.pus;
  if (t.sockets < 1) t.sockets = 1;
  return t;
}

std::vector<std::vector<int>> core_cpus() {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) fail("hwloc_topology_init");
  TopologyPtr topo(raw, &hwloc_topology_destroy);
  if (hwloc_topology_load(raw) != 0) fail("hwloc_topology_load");
  const hwloc_obj_type_t type = count_of(raw, HWLOC_OBJ_CORE) > 0 ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
  std::vector<std::vector<int>> out;
  for (hwloc_obj_t core = hwloc_get_next_obj_by_type(raw, type, nullptr); core != nullptr;
       core = hwloc_get_next_obj_by_type(raw, type, core)) {
    std::vector<int> cpus;
    unsigned cpu = 0;
    hwloc_bitmap_foreach_begin(cpu, core->cpuset) { cpus.push_back(static_cast<int>(cpu)); }
    hwloc_bitmap_foreach_end();
    if (!cpus.empty()) out.push_back(std::move(cpus));
  }
  if (out.empty()) fail("finding the CPUs of any core");
  return out;
}

NodeTopology virtual_topology(const NodeTopology& host, int cores) {
  if (cores < 1) throw std::invalid_argument("a virtual node needs at least one core");
  if (host.cores < 1) throw std::invalid_argument("the host topology has no cores");
  NodeTopology v;
  v.hostname = host.hostname;
  v.sockets = 1;
  v.cores = cores;
  v.pus = cores;
  v.gpus = 0;
  const auto share = static_cast<unsigned>(cores);
  const auto whole = static_cast<unsigned>(host.cores);
  if (share >= whole) {
    v.memory_bytes = host.memory_bytes;  // oversubscribed: cannot have more than the host
  } else {
    // Split the division so that memory * cores cannot overflow.
    v.memory_bytes = host.memory_bytes / whole * share + host.memory_bytes % whole * share / whole;
  }
  return v;
}

}  // namespace sched::agent
