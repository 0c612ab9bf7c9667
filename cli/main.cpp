// The `sched` command, and Slurm's command names when run under one of them
// (cli/lib/slurm_front_end.hpp).
#include <malloc.h>
#include <pwd.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "commands.hpp"
#include "connection.hpp"
#include "program_name.hpp"
#include "slurm_front_end.hpp"

namespace {

std::string caller_name() {
  if (const passwd* entry = ::getpwuid(::getuid())) return entry->pw_name;
  return std::to_string(::getuid());
}

// Under a Slurm name: the `sched` arguments that do the same, or exit 1
// with what has no equivalent here.
std::vector<std::string> front_end_arguments(sched::cli::SlurmCommand command, int argc,
                                             char** argv) {
  using namespace sched::cli;
  set_program_name(std::string(name_of(command)));
  FrontEndContext context;
  context.inside_job = std::getenv("SCHED_JOB_ID") || std::getenv("SLURM_JOB_ID");
  context.user = caller_name();
  std::error_code error;
  context.self = std::filesystem::read_symlink("/proc/self/exe", error).string();
  if (error) context.self = argv[0];
  try {
    Translation translation =
        translate(command, std::vector<std::string>(argv + 1, argv + argc), context);
    for (const std::string& warning : translation.warnings) {
      std::cerr << program_name() << ": warning: " << warning << "\n";
    }
    return translation.args;
  } catch (const FrontEndError& e) {
    std::cerr << program_name() << ": error: " << e.what() << "\n";
    std::exit(1);
  }
}

}  // namespace

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
  try {
    if (auto command = sched::cli::slurm_command(argc > 0 ? argv[0] : "")) {
      std::vector<std::string> args = front_end_arguments(*command, argc, argv);
      sched::cli::add_commands(app, std::vector<std::string_view>(args.begin(), args.end()));
      std::reverse(args.begin(), args.end());  // CLI11 takes them last first
      app.parse(args);
    } else {
      sched::cli::add_commands(
          app, std::vector<std::string_view>(argv + std::min(argc, 1), argv + argc));
      app.parse(argc, argv);
    }
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
    const std::string& program = sched::cli::program_name();
    std::cerr << program << ": " << message << " (see " << program << " --help)\n";
    return 1;
  }
  return 0;
}
