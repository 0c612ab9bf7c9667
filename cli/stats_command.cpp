// `sched stats`: schedd's counters, like sdiag.
#include <cstdio>
#include <iostream>
#include <memory>

#include "admin_commands.hpp"
#include "connection.hpp"
#include "slurm_time.hpp"

namespace sched::cli {
namespace {

std::string milliseconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f ms", seconds * 1000);
  return text;
}

std::string whole_watts(double watts) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0f W", watts);
  return text;
}

void print_stats(const proto::StatsReply& s) {
  std::cout << "Server time:        " << format_timestamp(s.server_time) << " ("
            << static_cast<std::int64_t>(s.server_time) << ")\n"
            << "Uptime:             " << format_elapsed(s.uptime_s) << "\n"
            << "\nScheduler passes\n"
            << "  Passes:           " << s.passes << "\n"
            << "  Failed passes:    " << s.failed_passes << "\n"
            << "  Last pass time:   " << milliseconds(s.last_pass_s) << "\n"
            << "  Mean pass time:   " << milliseconds(s.mean_pass_s) << "\n"
            << "  Max pass time:    " << milliseconds(s.max_pass_s) << "\n"
            << "  Actions:          " << s.actions << "\n"
            << "  Refusals:         " << s.refusals << "\n"
            << "\nJobs\n"
            << "  Submitted:        " << s.jobs_submitted << "\n"
            << "  Pending:          " << s.pending << "\n"
            << "  Running:          " << s.running << "\n"
            << "\nNodes:              " << s.nodes_up << " up of " << s.nodes << "\n"
            << "Power:              " << whole_watts(s.power_w);
  if (s.corridor_lower_w > 0 || s.corridor_upper_w > 0) {
    std::cout << " (corridor " << whole_watts(s.corridor_lower_w) << " to "
              << whole_watts(s.corridor_upper_w) << ")";
  }
  std::cout << "\n"
            << "Messages:           " << s.messages << " (" << s.bad_messages << " bad)\n";
  if (!s.event_endpoint.empty()) std::cout << "Events:             " << s.event_endpoint << "\n";
}

}  // namespace

void add_stats_command(CLI::App& app) {
  auto json = std::make_shared<bool>(false);
  CLI::App* stats = app.add_subcommand("stats", "schedd's counters (like sdiag)");
  stats->add_flag("--json", *json, "Print JSON");
  stats->callback([json] {
    run_command([&] {
      const auto s = client().call<proto::StatsReply>(proto::type::kStats, proto::Empty{});
      if (*json) {
        std::cout << to_json(s).dump(2) << "\n";
      } else {
        print_stats(s);
      }
    });
  });
}

}  // namespace sched::cli
