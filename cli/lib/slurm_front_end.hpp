// Slurm's command names as thin front ends of `sched` (issue 18 item 7):
// the `sched` program run under the name sbatch, srun, squeue, scancel,
// sinfo, sacct, scontrol, salloc or sprio (a link to it) turns its arguments into
// the `sched` command that does the same, so users' habits and site scripts
// work. What has no equivalent is a usage error that says so, never silently
// something else.
#pragma once

#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace sched::cli {

enum class SlurmCommand { Sbatch, Srun, Squeue, Scancel, Sinfo, Sacct, Scontrol, Salloc, Sprio };

// Every front end, for installing the links.
std::span<const SlurmCommand> slurm_commands();
std::string_view name_of(SlurmCommand command);
// The front end a program name (argv[0], with or without a folder) names.
std::optional<SlurmCommand> slurm_command(std::string_view program);

// What the translation needs to know of where it runs.
struct FrontEndContext {
  bool inside_job = false;  // $SCHED_JOB_ID or $SLURM_JOB_ID is set (srun runs a step)
  std::string user;         // the caller's name (squeue --me, scancel --me)
  std::string self;         // this program's path (srun outside a job runs `self run`)
};

struct Translation {
  std::vector<std::string> args;      // for `sched`, without the program name
  std::vector<std::string> warnings;  // options accepted and ignored, for people
};

// A command line with no equivalent here; the message names the option.
struct FrontEndError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The `sched` arguments that do what `command args...` does under Slurm.
// Throws FrontEndError.
Translation translate(SlurmCommand command, const std::vector<std::string>& args,
                      const FrontEndContext& context);

}  // namespace sched::cli
