// `sched sim`: replay a workload under one or more policies.
#pragma once

#include <CLI/CLI.hpp>

namespace sched::cli {

void add_sim_command(CLI::App& app);

}  // namespace sched::cli
