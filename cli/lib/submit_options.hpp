// The options of a submission (sbatch's, where they mean something here),
// shared by job script directives and the `sched submit` command line so that
// both follow the same rules and the command line can override the script
// option by option.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sched/job.hpp"

namespace sched::cli {

// -N 4 is {4, 4}; -N 2-8 is {2, 8}.
struct NodeRange {
  int min = 1;
  int max = 1;
};

using EnvList = std::vector<std::pair<std::string, std::string>>;

// --export (issue 18 item 3): which of the submitting environment the job
// gets. ALL (sbatch's default): all of it; NONE: none; a list: the NAMEs
// listed. NAME=VALUE items are SubmitOptions::environment's either way.
struct ExportChoice {
  enum class Mode { All, None, List } mode = Mode::All;
  std::vector<std::string> names;  // Mode::List: taken from the submitting environment
};

// What the options said, one field per option; unset fields were not given.
// Kinds and sizes are worked out only by build_submission, after merging, so
// that a command-line --kind also governs a node range from the script.
struct SubmitOptions {
  std::optional<std::string> job_name;       // -J, --job-name
  std::optional<NodeRange> nodes;            // -N, --nodes
  std::optional<int> min_nodes;              // --min-nodes
  std::optional<int> max_nodes;              // --max-nodes
  std::optional<JobKind> kind;               // --kind
  std::optional<NodeConstraint> constraint;  // --node-constraints
  std::optional<int> tasks_per_node;         // --ntasks-per-node
  std::optional<double> walltime;            // -t, --time; seconds, 0 = none
  std::optional<double> power_min_w;         // --min-power, watts per node
  std::optional<double> power_max_w;         // --max-power
  std::optional<bool> urgent;                // --urgent
  std::optional<std::uint64_t> mem_bytes;    // --mem, per node
  std::optional<std::string> workdir;        // -D, --chdir
  // -o, --output: the job's stdout, and its stderr without -e (the daemon's
  // default is sched-<id>.out).
  std::optional<std::string> output;
  // --export's and --env's NAME=VALUEs, in order given; a later NAME replaces
  // an earlier one.
  std::vector<std::pair<std::string, std::string>> environment;
  // Issue 18 item 3: -e/--error (stderr's own file) and --export's mode.
  std::optional<std::string> error;
  std::optional<ExportChoice> export_choice;
  std::vector<std::string> warnings;  // for people, e.g. ignored Slurm options
  // ---- when it may start (issue 18 item 2)
  std::optional<std::string> dependency;  // -d, --dependency (checked: sched/dependency.hpp)
  std::optional<std::string> begin;       // -b, --begin (checked; resolved by build_submission)
  std::optional<bool> hold;               // -H, --hold
  // ---- Slurm habits (issue 18 item 7)
  std::optional<int> ntasks;  // -n, --ntasks: tasks in all (tasks_per_node wins)
  // ---- tasks (issue 16 item 1)
  std::optional<int> cpus_per_task;                 // -c, --cpus-per-task
  std::optional<NodeRange> cores;                   // --cores N or MIN-MAX (issue 20 item 2)
  std::optional<tasks::Distribution> distribution;  // -m, --distribution
  std::optional<tasks::CpuBind> cpu_bind;           // --cpu-bind
  // ---- priority (issue 18 item 5)
  std::optional<std::string> account;  // -A, --account
  std::optional<std::string> qos;      // -q, --qos (checked by schedd against its config)
  std::optional<std::int64_t> nice;    // --nice[=N]; alone: 100
  // ---- where it may run (issue 18 item 4)
  std::optional<std::vector<std::string>> nodelist;  // -w, --nodelist: sorted, expanded
  std::optional<std::vector<std::string>> exclude;   // -x, --exclude
  std::optional<int> gpus;                           // --gres=gpu:N, per node
  // ---- job arrays (issue 18 item 1)
  std::optional<std::string> array;  // -a, --array (syntax checked: sched/job_array.hpp)
  // ---- partitions (issue 20 item 1)
  std::optional<std::string> partition;  // -p, --partition (checked by schedd)
};

// Where options come from: #SBATCH lines speak Slurm and may carry Slurm
// options that mean nothing here (accepted with a warning); #SCHED lines and
// the command line may not.
enum class Dialect { Sched, Slurm };

enum class ValueKind { None, Required, Optional /* only as --name=value */ };

struct OptionInfo {
  std::string_view name;  // long name, without dashes
  char short_name = 0;    // 0: none
  ValueKind value = ValueKind::Required;
  bool slurm_only = false;  // accepted and ignored in #SBATCH lines only
  std::string_view help;    // Slurm-only options: why they are ignored
};

// Every option apply_option knows, for help texts and for registering them
// with a command-line parser.
std::span<const OptionInfo> submit_option_table();

// Applies one option, named with or without dashes ("--nodes", "nodes",
// "-N", "N"). Returns an error for people that names the option as written:
// "--nodes: 'four' is not a number", "unknown option --frobnicate",
// "-N needs a value". A later option of the same name replaces an earlier
// one (environment variables accumulate).
std::optional<std::string> apply_option(SubmitOptions& options, std::string_view name,
                                        std::optional<std::string_view> value,
                                        Dialect dialect = Dialect::Sched);

// Applies argv-style words: "--nodes=4", "--nodes 4", "-N 4", "-N4", flags
// without values. Stops at the first error.
std::optional<std::string> apply_arguments(SubmitOptions& options,
                                           const std::vector<std::string>& words,
                                           Dialect dialect = Dialect::Sched);

// `over` wins per option (typically: script directives, then the command
// line); environment variables are combined, `over` winning per NAME;
// warnings are kept from both.
SubmitOptions merge(const SubmitOptions& base, const SubmitOptions& over);

// The kind a submission asks for: --kind when given; else malleable when
// --min-nodes or --max-nodes is given (docs/design.md §3); else moldable when -N is a
// range; else rigid.
JobKind infer_kind(const SubmitOptions& options);

struct Submission {
  JobSpec spec;
  std::vector<std::string> warnings;
  std::optional<std::string> error;  // set: the submission is invalid
};

// Builds and normalizes the JobSpec (normalize_spec's error is surfaced as
// Submission::error); `command` becomes spec.command. Sizes: -N N-M gives
// min_nodes N, max_nodes M and nodes (the requested or start size) M;
// --min-nodes/--max-nodes override the ends of such a range; -N N alone gives
// nodes N (a moldable job then ranges over 1..N, a malleable one keeps N..N
// unless min/max say more, as normalize_spec fills them in); without -N the
// job asks for max_nodes, else min_nodes, else 1 node. The user and, when no
// -J was given, the name are left for the caller to fill in.
// `submitting` is the environment `sched submit` runs in: --export takes
// from it (export_environment). `now` (epoch seconds) is what --begin's
// relative forms count from.
Submission build_submission(const SubmitOptions& options, std::string command,
                            const EnvList& submitting = {}, double now = 0);

// The job's environment: what --export takes from `submitting` (ALL when
// not given: all of it but the SLURM_* and SCHED_* variables the job gets
// afresh on its node, except SCHED_MALL_*; a list: the names listed that are
// set, as they are), then options.environment over it, NAME by NAME.
EnvList export_environment(const SubmitOptions& options, const EnvList& submitting);

}  // namespace sched::cli
