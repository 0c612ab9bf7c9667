// The user's commands: submit (like sbatch), run (srun), alloc (salloc),
// resize, hold, release and requeue (scontrol), prio (sprio), queue
// (squeue), show (scontrol show job) and cancel (scancel). Each adds its
// subcommand to the `sched` command (cli/commands.cpp lists them all).
#pragma once

#include <CLI/CLI.hpp>

namespace sched::cli {

void add_submit_command(CLI::App& app);  // submit_command.cpp
void add_run_command(CLI::App& app);     // run_command.cpp
void add_alloc_command(CLI::App& app);   // alloc_command.cpp
void add_job_control_commands(
    CLI::App& app);                    // job_control_commands.cpp: resize, hold, release, requeue
void add_prio_command(CLI::App& app);  // prio_command.cpp (issue 18 item 5)
void add_queue_command(CLI::App& app);
void add_show_command(CLI::App& app);
void add_cancel_command(CLI::App& app);

}  // namespace sched::cli
