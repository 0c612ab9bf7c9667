// The user's commands: submit (like sbatch), queue (squeue), show (scontrol
// show job), cancel (scancel) and, inside a job, run (srun).
#pragma once

#include <CLI/CLI.hpp>

namespace sched::cli {

void add_job_commands(CLI::App& app);
// `sched prio` (prio_command.cpp; issue 18 item 5).
void add_prio_command(CLI::App& app);

}  // namespace sched::cli
