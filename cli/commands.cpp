#include "commands.hpp"

#include <array>

#include "admin_commands.hpp"
#include "cluster_command.hpp"
#include "job_commands.hpp"
#include "keys_command.hpp"
#include "sim_command.hpp"

namespace sched::cli {
namespace {

struct Command {
  std::string_view name;
  void (*add)(CLI::App&);  // adds it (next to it in this list: the others it adds)
};

// Every subcommand, in --help's order. sched_cli_tests (CliCommands) checks
// that each one --help lists is here, with the function that adds it.
constexpr std::array kCommands{
    Command{"submit", add_submit_command},
    Command{"run", add_run_command},
    Command{"alloc", add_alloc_command},
    Command{"resize", add_job_control_commands},
    Command{"hold", add_job_control_commands},
    Command{"release", add_job_control_commands},
    Command{"requeue", add_job_control_commands},
    Command{"prio", add_prio_command},
    Command{"queue", add_queue_command},
    Command{"show", add_show_command},
    Command{"cancel", add_cancel_command},
    Command{"nodes", add_nodes_command},
    Command{"policy", add_policy_command},
    Command{"corridor", add_corridor_command},
    Command{"events", add_events_command},
    Command{"stats", add_stats_command},
    Command{"acct", add_acct_command},
    Command{"partition", add_partition_command},
    Command{"negotiation", add_negotiation_command},
    Command{"cluster", add_cluster_command},
    Command{"keys", add_keys_command},
    Command{"sim", add_sim_command},
};

}  // namespace

void add_commands(CLI::App& app, const std::vector<std::string_view>& args) {
  std::array<bool, kCommands.size()> wanted{};
  bool named = false;
  bool help = false;
  for (const std::string_view arg : args) {
    help = help || arg == "-h" || arg == "--help";
    for (std::size_t i = 0; i < kCommands.size(); ++i) {
      if (kCommands[i].name != arg) continue;
      named = true;
      // And every other one its function adds.
      for (std::size_t j = 0; j < kCommands.size(); ++j) {
        if (kCommands[j].add == kCommands[i].add) wanted[j] = true;
      }
    }
  }
  // Only the top level's help lists them all; nothing else says which
  // there are ("sched --version", "A subcommand is required").
  if (!named && !help) return;
  void (*added)(CLI::App&) = nullptr;
  for (std::size_t i = 0; i < kCommands.size(); ++i) {
    if ((named && !wanted[i]) || kCommands[i].add == added) continue;
    added = kCommands[i].add;
    added(app);
  }
}

}  // namespace sched::cli
