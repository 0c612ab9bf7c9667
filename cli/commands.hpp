// The `sched` command's subcommands, in the order its --help lists them.
#pragma once

#include <CLI/CLI.hpp>
#include <string_view>
#include <vector>

namespace sched::cli {

// Adds to `app` the subcommands the command line `args` (without the
// program's name) can reach: building them all costs about as much as the
// rest of a short command's start-up (issue 15). Those whose name is one of
// the arguments, anywhere (an option's value too: that only adds one the
// parse does not use); with none named, all of them for a help flag (the
// top level's help lists them), else none (--version, a missing or unknown
// subcommand: no message names them). CLI11 looks a word up as a subcommand
// only among those added, so it parses `args` as with all of them added.
void add_commands(CLI::App& app, const std::vector<std::string_view>& args);

}  // namespace sched::cli
