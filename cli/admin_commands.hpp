// The administrative commands: nodes (sinfo, scontrol update node), policy,
// corridor, events, stats (sdiag), acct (sacct), partition and negotiation.
// One file per command; cli/commands.cpp lists them all.
#pragma once

#include <CLI/CLI.hpp>

namespace sched::cli {

void add_nodes_command(CLI::App& app);
void add_policy_command(CLI::App& app);
void add_corridor_command(CLI::App& app);
void add_events_command(CLI::App& app);
void add_stats_command(CLI::App& app);
void add_acct_command(CLI::App& app);
// ---- issue 20 item 1 (partition_command.cpp)
void add_partition_command(CLI::App& app);
// Whether schedd has partitions configured (the listings' PARTITION columns).
bool partitions_configured();
// ---- issue 20 items 3, 5 (negotiation_command.cpp)
void add_negotiation_command(CLI::App& app);

}  // namespace sched::cli
