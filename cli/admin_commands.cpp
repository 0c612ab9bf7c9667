#include "admin_commands.hpp"

namespace sched::cli {

void add_admin_commands(CLI::App& app) {
  add_nodes_command(app);
  add_policy_command(app);
  add_corridor_command(app);
  add_events_command(app);
  add_stats_command(app);
  add_acct_command(app);
  add_partition_command(app);
  add_negotiation_command(app);
}

}  // namespace sched::cli
