#include <gtest/gtest.h>
#include <unistd.h>

#include <set>
#include <stdexcept>

#include "sched/agent/topology.hpp"

namespace sched::agent {
namespace {

TEST(AgentTopology, DiscoversThisMachine) {
  const NodeTopology t = discover_topology();
  EXPECT_FALSE(t.hostname.empty());
  EXPECT_GE(t.sockets, 1);
  EXPECT_GE(t.cores, t.sockets);
  EXPECT_GE(t.pus, t.cores);
  EXPECT_GT(t.memory_bytes, 0u);
  EXPECT_GE(t.gpus, 0);
}

TEST(AgentTopology, VirtualNodeIsASliceOfTheHost) {
  const NodeTopology host{"big", 2, 8, 16, 64ull << 30, 4};
  const NodeTopology v = virtual_topology(host, 2);
  EXPECT_EQ(v.hostname, "big");
  EXPECT_EQ(v.sockets, 1);
  EXPECT_EQ(v.cores, 2);
  EXPECT_EQ(v.pus, 2);
  EXPECT_EQ(v.memory_bytes, 16ull << 30);  // 2 of 8 cores: a quarter
  EXPECT_EQ(v.gpus, 0);
}

TEST(AgentTopology, OversubscribedVirtualNodeGetsAtMostTheHostMemory) {
  const NodeTopology host{"small", 1, 2, 2, 1000, 0};
  EXPECT_EQ(virtual_topology(host, 8).memory_bytes, 1000u);
  EXPECT_EQ(virtual_topology(host, 8).cores, 8);
}

TEST(AgentTopology, VirtualNodeNeedsCores) {
  const NodeTopology host{"h", 1, 4, 4, 1000, 0};
  EXPECT_THROW(virtual_topology(host, 0), std::invalid_argument);
  EXPECT_THROW(virtual_topology(NodeTopology{}, 1), std::invalid_argument);
}

// --cpu-bind's cores (issue 16 item 1): one entry per core hwloc counts,
// each with its CPUs, no CPU twice, all of them CPUs this machine has.
TEST(AgentTopology, CoreCpusCoverTheCoresOnce) {
  const auto cores = core_cpus();
  EXPECT_EQ(static_cast<int>(cores.size()), discover_topology().cores);
  std::set<int> seen;
  const long configured = ::sysconf(_SC_NPROCESSORS_CONF);
  for (const auto& cpus : cores) {
    EXPECT_FALSE(cpus.empty());
    for (int cpu : cpus) {
      EXPECT_TRUE(seen.insert(cpu).second) << "CPU " << cpu << " twice";
      EXPECT_GE(cpu, 0);
      EXPECT_LT(cpu, configured);
    }
  }
}

}  // namespace
}  // namespace sched::agent
