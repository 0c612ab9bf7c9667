// Job scripts with #SCHED directives (#SBATCH accepted as an alias), read as
// sbatch reads them.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "submit_options.hpp"

namespace sched::cli {

struct ScriptOptions {
  SubmitOptions options;
  std::optional<std::string> error;  // "line 3: --nodes: 'four' is not a number"
};

// Reads the directives of a job script: lines that begin (in column 1) with
// "#SCHED" or "#SBATCH" followed by a blank, among the comment and blank lines
// at the top of the script; the first other line ends them. A directive line
// holds one or more options in split_shell_words' quoting ("#SCHED -N 4
// --job-name='my job'"), applied with apply_arguments: Dialect::Slurm for
// #SBATCH lines, Dialect::Sched for #SCHED lines. Errors and warnings start
// with "line N: ". Directives after the first command are ignored with a
// warning, since a user who wrote them meant something.
ScriptOptions parse_job_script(std::string_view text);

// What `sched submit` does with a script: its directives, then the command
// line over them (merge), then build_submission with the script text as the
// command and `submitting` as the environment --export takes from. An error
// in the directives comes back as Submission::error. `now`: epoch seconds,
// what --begin counts from.
Submission submission_from_script(std::string_view script, const SubmitOptions& command_line,
                                  const EnvList& submitting = {}, double now = 0);

}  // namespace sched::cli
