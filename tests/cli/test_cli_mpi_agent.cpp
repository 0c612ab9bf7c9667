// sched-mpi-agent's arguments (cli/lib/mpi_agent_args.hpp): what Open MPI's
// and hydra's launchers pass their remote shell becomes one shell command
// on one node, run by `sched run`.
#include <gtest/gtest.h>

#include "mpi_agent_args.hpp"

namespace sched::cli {
namespace {

using Args = std::vector<std::string>;

TEST(MpiAgentArgs, HydraCallDropsSshOptionsAndKeepsTheQuotedCommand) {
  // As mpiexec.hydra (MPICH 4.0) calls its ssh launcher.
  const auto call = parse_mpi_agent_args(Args{"-x", "n2", "\"/usr/bin/hydra_pmi_proxy\"",
                                              "--control-port", "vm:42689", "--proxy-id", "1"});
  EXPECT_EQ(call.host, "n2");
  EXPECT_EQ(call.command, "\"/usr/bin/hydra_pmi_proxy\" --control-port vm:42689 --proxy-id 1");
}

TEST(MpiAgentArgs, OpenMpiCallJoinsWordsAsSshDoes) {
  // Open MPI 4.1's plm_rsh: an empty word after the host, and a URI quoted
  // for the remote shell.
  const auto call = parse_mpi_agent_args(
      Args{"n4", "", "orted", "-mca", "orte_hnp_uri", "\"1.0;tcp://192.0.2.2:5\""});
  EXPECT_EQ(call.host, "n4");
  EXPECT_EQ(call.command, " orted -mca orte_hnp_uri \"1.0;tcp://192.0.2.2:5\"");
}

TEST(MpiAgentArgs, OptionsWithValuesAreSkipped) {
  const auto call = parse_mpi_agent_args(Args{"-q", "-l", "alice", "-p", "22", "n1", "hostname"});
  EXPECT_EQ(call.host, "n1");
  EXPECT_EQ(call.command, "hostname");
}

TEST(MpiAgentArgs, BadCallsAreRefused) {
  EXPECT_THROW(parse_mpi_agent_args(Args{}), std::invalid_argument);
  EXPECT_THROW(parse_mpi_agent_args(Args{"-x"}), std::invalid_argument);
  EXPECT_THROW(parse_mpi_agent_args(Args{"n1"}), std::invalid_argument);
  EXPECT_THROW(parse_mpi_agent_args(Args{"n1", "", " "}), std::invalid_argument);
  EXPECT_THROW(parse_mpi_agent_args(Args{"-Y", "n1", "true"}), std::invalid_argument);
  EXPECT_THROW(parse_mpi_agent_args(Args{"-l"}), std::invalid_argument);
}

TEST(MpiAgentArgs, RunsOneTaskOnTheHostWithoutPmiOrBinding) {
  const auto args = mpi_agent_run_args(MpiAgentCall{"n3", "orted -x \"a b\""});
  EXPECT_EQ(args, (Args{"run", "-w", "n3", "-N", "1", "-n", "1", "--mpi=none", "--cpu-bind=none",
                        "/bin/sh", "-c", "orted -x \"a b\""}));
}

}  // namespace
}  // namespace sched::cli
