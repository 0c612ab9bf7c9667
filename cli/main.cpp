// The `sched` command.
#include <malloc.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <string>

#include "admin_commands.hpp"
#include "cluster_command.hpp"
#include "connection.hpp"
#include "job_commands.hpp"
#include "keys_command.hpp"
#include "sim_command.hpp"

int main(int argc, char** argv) {
  // Listings decode page after page of megabytes: keep the freed heap for
  // the next page instead of faulting it in again (bench/queue).
  mallopt(M_TOP_PAD, 64 << 20);
  CLI::App app{"sched: an adaptive batch scheduler for rigid and malleable jobs"};
  app.require_subcommand(1);
  // Root options (--endpoint, --timeout) may also follow the subcommand.
  app.fallthrough();
  app.set_version_flag("--version", std::string("sched 0.1.0"));
  bool verbose = false;
  app.add_flag("-v,--verbose", verbose, "Log more (debug level)");
  spdlog::set_pattern("%^%l%$: %v");
  spdlog::set_level(spdlog::level::warn);
  app.parse_complete_callback([&] {
    if (verbose) spdlog::set_level(spdlog::level::debug);
  });
  sched::cli::add_connection_options(app);
  sched::cli::add_job_commands(app);
  sched::cli::add_admin_commands(app);
  sched::cli::add_cluster_command(app);
  sched::cli::add_keys_command(app);
  sched::cli::add_sim_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);  // --help, --version: printed, status 0
  } catch (const CLI::ParseError& e) {
    // Every usage error the same way (issue 18): status 1 and one line, as
    // run_command does for the commands' own errors; not CLI11's own
    // statuses (105, 106, 109, ...) or its extra "Run with --help" line.
    std::string message = e.what();
    for (char& c : message) {
      if (c == '\n') c = ' ';
    }
    std::cerr << "sched: " << message << " (see sched --help)\n";
    return 1;
  }
  return 0;
}
