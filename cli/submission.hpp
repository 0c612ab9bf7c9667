// What `sched submit` and `sched alloc` share: sbatch's options on the
// command line (the table of cli/lib/submit_options.hpp), the job they make
// with a script's directives, and sending it to schedd.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sched/job.hpp"

namespace sched::cli {

// Every option of the submit table, by long name, as given.
struct SubmissionArgs {
  std::map<std::string, std::vector<std::string>> values;
  std::map<std::string, bool> flags;
};

void add_submission_options(CLI::App& command, SubmissionArgs& args);

// The job of `script` (its #SCHED/#SBATCH directives) with the command
// line's options over them: warnings printed, relative folders made the
// submitter's (as sbatch has them). The user is left empty (schedd takes
// the one the request's credential proves), and the name when no -J gave
// one. Throws std::runtime_error with what is wrong.
JobSpec submission_spec(const std::string& script, const SubmissionArgs& args);

// Submits `spec`; the job's id. A transport failure is retried `retries`
// times with the same request id, so that a retry never makes a second job.
std::int64_t send_submission(const JobSpec& spec, int retries);

}  // namespace sched::cli
