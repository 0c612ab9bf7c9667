// The administrative commands: nodes (sinfo, scontrol update node), policy,
// corridor, events, stats (sdiag) and acct (sacct). One file per command;
// add_admin_commands adds them all.
#pragma once

#include <CLI/CLI.hpp>

namespace sched::cli {

void add_admin_commands(CLI::App& app);

void add_nodes_command(CLI::App& app);
void add_policy_command(CLI::App& app);
void add_corridor_command(CLI::App& app);
void add_events_command(CLI::App& app);
void add_stats_command(CLI::App& app);
void add_acct_command(CLI::App& app);

}  // namespace sched::cli
