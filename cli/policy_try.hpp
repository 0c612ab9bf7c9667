// `sched policy try FILE|NAME` (issue 22 item 3, docs/admin.md): runs the
// candidate and the running policy side by side on twins of the live system
// (sim/twin.hpp), from schedd's policy.snapshot, in this process.
#pragma once

#include <CLI/CLI.hpp>

namespace sched::cli {

// Adds `try` under `sched policy`.
void add_policy_try_command(CLI::App& policy);

}  // namespace sched::cli
