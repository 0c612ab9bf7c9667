// Turns a launch request into a SpawnSpec, checking in the agent what can be
// checked before forking (working directory, command, interpreter, output
// directory, environment) so that those mistakes are a LaunchError at once.
#pragma once

#include "sched/agent/processes.hpp"
#include "spawn.hpp"

namespace sched::agent::detail {

// PATH, HOME, USER, LANG and SHELL as the agent has them, for every job
// (PATH gets the usual default when the agent has none).
EnvPairs inherited_environment();

// Writes the script into the spool and plans running it: with the
// interpreter of its #! line (Linux rules: one optional argument), else
// /bin/sh. Returns the plan and the script's path.
SpawnSpec plan_batch(const BatchLaunch& launch, const EnvPairs& inherited,
                     std::string* script_path);

// Output redirection (stdout_fd, stderr_fd) is the caller's.
SpawnSpec plan_step(const StepLaunch& launch, const EnvPairs& inherited);

}  // namespace sched::agent::detail
