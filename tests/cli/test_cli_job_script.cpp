// #SCHED / #SBATCH directives in job scripts, read as sbatch reads them.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "job_script.hpp"

namespace sched::cli {
namespace {

using Strings = std::vector<std::string>;

SubmitOptions directives(std::string_view script) {
  ScriptOptions result = parse_job_script(script);
  EXPECT_FALSE(result.error) << result.error.value_or("");
  return result.options;
}

std::string error_of(std::string_view script) {
  return parse_job_script(script).error.value_or("(no error)");
}

TEST(CliJobScript, ReadsBothPrefixes) {
  const SubmitOptions options = directives(
      "#!/bin/bash\n"
      "#SCHED --job-name=sim\n"
      "#SBATCH --time=10\n"
      "srun ./sim\n");
  EXPECT_EQ(options.job_name, "sim");
  EXPECT_EQ(options.walltime, 600);
  EXPECT_TRUE(options.warnings.empty());
}

TEST(CliJobScript, AccountQosAndNiceDirectives) {
  const SubmitOptions options = directives(
      "#!/bin/bash\n"
      "#SBATCH -A physics\n"
      "#SBATCH --qos=high\n"
      "#SBATCH --nice\n"
      "srun ./sim\n");
  EXPECT_EQ(options.account, "physics");
  EXPECT_EQ(options.qos, "high");
  EXPECT_EQ(options.nice, 100);
  EXPECT_TRUE(options.warnings.empty()) << "honoured, not ignored";
  EXPECT_EQ(directives("#SCHED --nice=-3\n").nice, -3);
}

TEST(CliJobScript, BothOptionForms) {
  EXPECT_EQ(directives("#SCHED --nodes=4\n").nodes->max, 4);
  EXPECT_EQ(directives("#SCHED --nodes 4\n").nodes->max, 4);
  EXPECT_EQ(directives("#SCHED -N 4\n").nodes->max, 4);
  EXPECT_EQ(directives("#SCHED -N4\n").nodes->max, 4);
  EXPECT_EQ(directives("#SBATCH\t-N\t4\n").nodes->max, 4) << "tabs separate too";
}

TEST(CliJobScript, SeveralOptionsOnOneLine) {
  const SubmitOptions options =
      directives("#SCHED -N 2-8 --kind=malleable -t 1:00:00 --urgent --env A=1 # note\n");
  EXPECT_EQ(options.nodes->min, 2);
  EXPECT_EQ(options.nodes->max, 8);
  EXPECT_EQ(options.kind, JobKind::Malleable);
  EXPECT_EQ(options.walltime, 3600);
  EXPECT_EQ(options.urgent, true);
  EXPECT_EQ(options.environment.size(), 1u);
}

TEST(CliJobScript, QuotedValues) {
  EXPECT_EQ(directives("#SCHED --job-name=\"my job\"\n").job_name, "my job");
  EXPECT_EQ(directives("#SCHED -J 'my job'\n").job_name, "my job");
  EXPECT_EQ(directives("#SCHED -D \"/data/with space\" -J x\n").workdir, "/data/with space");
  EXPECT_EQ(directives("#SCHED --env 'MSG=a, b \"c\"'\n").environment.at(0).second, "a, b \"c\"");
  EXPECT_EQ(error_of("#!/bin/sh\n#SCHED -J 'oops\n"), "line 2: unterminated '...'");
}

TEST(CliJobScript, StopsAtTheFirstCommand) {
  const SubmitOptions options = directives(
      "#!/bin/bash\n"
      "\n"
      "# a plain comment\n"
      "   # an indented comment\n"
      "#SCHED -N 2\n"
      "module load mpi\n"
      "#SCHED -N 64\n"
      "#SBATCH --frobnicate\n"
      "srun ./app\n");
  EXPECT_EQ(options.nodes->max, 2);
  EXPECT_EQ(options.warnings, (Strings{"line 7: #SCHED after the first command is ignored",
                                       "line 8: #SBATCH after the first command is ignored"}));
}

TEST(CliJobScript, OnlyExactPrefixesAreDirectives) {
  const SubmitOptions options = directives(
      "#SCHEDULE -N 9\n"
      "#SBATCH--nodes=9\n"
      "# SBATCH -N 9\n"
      "##SBATCH -N 9\n"
      " #SCHED -N 9\n"
      "#sbatch -N 9\n"
      "#SCHED\n"
      "#SBATCH\n");
  EXPECT_FALSE(options.nodes);
}

TEST(CliJobScript, DosLineEndings) {
  const SubmitOptions options =
      directives("#!/bin/sh\r\n#SCHED -J x\r\n#SCHED -N 3\r\nhostname\r\n");
  EXPECT_EQ(options.job_name, "x");
  EXPECT_EQ(options.nodes->max, 3);
}

TEST(CliJobScript, UnknownOptionNamesLineAndOption) {
  EXPECT_EQ(error_of("#!/bin/sh\n#SCHED -N 2\n#SCHED --frobnicate=3\n"),
            "line 3: unknown option --frobnicate");
  // (--array, then --ntasks were this example of a Slurm option not taken;
  // issue 18 takes both.)
  EXPECT_EQ(error_of("#!/bin/sh\n#SBATCH --time-min=10\n"), "line 2: unknown option --time-min");
  EXPECT_EQ(error_of("#SCHED -N 2 four\n"), "line 1: 'four' is not an option");
}

TEST(CliJobScript, BadValuesNameLineOptionAndValue) {
  EXPECT_EQ(error_of("#!/bin/sh\n#SCHED -J x\n#SCHED --nodes=four\n"),
            "line 3: --nodes: 'four' is not a number");
  EXPECT_EQ(error_of("#SBATCH -t 1:99\n"),
            "line 1: -t: '1:99' is not a time (M, M:S, H:M:S, D-H, D-H:M, D-H:M:S or UNLIMITED)");
  EXPECT_EQ(error_of("\n\n#SCHED --kind\n"), "line 3: --kind needs a value");
}

TEST(CliJobScript, IgnoredSlurmOptionsWarnWithLineNumbers) {
  const SubmitOptions options = directives(
      "#!/bin/bash\n"
      "#SBATCH -p debug --mem=4G\n"
      "#SBATCH --mail-type=END\n"
      "#SBATCH -N 2\n");
  EXPECT_EQ(options.nodes->max, 2);
  EXPECT_EQ(options.mem_bytes, std::uint64_t{4} << 30);  // --mem is ours since issue 14
  EXPECT_EQ(options.partition, "debug");                 // -p is ours since issue 20 (partitions)
  EXPECT_EQ(options.warnings,
            (Strings{"line 3: --mail-type=END ignored (a Slurm option with no meaning in sched)"}));
  EXPECT_EQ(error_of("#!/bin/bash\n#SCHED --mail-type=END\n"),
            "line 2: --mail-type is a Slurm option that sched ignores; it is accepted only in "
            "#SBATCH lines");
}

// Issue 20 item 1: -p/--partition in #SBATCH and #SCHED lines, the command
// line winning, and into the job's spec.
TEST(CliJobScript, PartitionFromDirectivesAndCommandLine) {
  EXPECT_EQ(directives("#!/bin/bash\n#SBATCH --partition=gpu\n").partition, "gpu");
  EXPECT_EQ(directives("#!/bin/bash\n#SCHED -p batch\n").partition, "batch");
  EXPECT_FALSE(directives("#!/bin/bash\n#SBATCH -N 2\n").partition.has_value());
  EXPECT_EQ(error_of("#!/bin/bash\n#SBATCH -p\n"), "line 2: -p needs a value");
  SubmitOptions command_line;
  ASSERT_FALSE(apply_arguments(command_line, {"-p", "short"}));
  const SubmitOptions merged = merge(directives("#!/bin/bash\n#SBATCH -p long\n"), command_line);
  EXPECT_EQ(merged.partition, "short");
}

TEST(CliJobScript, SubmissionTakesScriptAndCommandLine) {
  const std::string script =
      "#!/bin/bash\n"
      "#SBATCH -J sbatch-name -p batch\n"
      "#SCHED --min-nodes=2 --max-nodes=16 --node-constraints=pof2\n"
      "#SCHED -t 30 --env MODE=fast\n"
      "srun ./app\n";
  SubmitOptions command_line;
  ASSERT_FALSE(apply_arguments(command_line, {"-N", "4", "--env", "MODE=slow", "-t", "1:00:00"}));
  const Submission s = submission_from_script(script, command_line);
  ASSERT_FALSE(s.error) << *s.error;
  EXPECT_EQ(s.spec.command, script);
  EXPECT_EQ(s.spec.name, "sbatch-name");
  EXPECT_EQ(s.spec.kind, JobKind::Malleable);
  EXPECT_EQ(s.spec.nodes, 4);
  EXPECT_EQ(s.spec.min_nodes, 2);
  EXPECT_EQ(s.spec.max_nodes, 16);
  EXPECT_EQ(s.spec.constraint, NodeConstraint::Pof2);
  EXPECT_EQ(s.spec.walltime, 3600) << "the command line wins";
  EXPECT_EQ(s.spec.extra->environment,
            (std::vector<std::pair<std::string, std::string>>{{"MODE", "slow"}}));
  EXPECT_EQ(s.spec.partition, "batch") << "-p is ours since issue 20";
  EXPECT_TRUE(s.warnings.empty());
}

TEST(CliJobScript, SubmissionSurfacesErrors) {
  EXPECT_EQ(submission_from_script("#SCHED -N x\n", {}).error, "line 1: -N: 'x' is not a number");
  SubmitOptions command_line;
  ASSERT_FALSE(apply_arguments(command_line, {"--kind=rigid"}));
  EXPECT_EQ(submission_from_script("#SCHED -N 2-4\n", command_line).error,
            "a rigid job has min_nodes = max_nodes = nodes");
  EXPECT_FALSE(submission_from_script("#SCHED -N 2-4\n", {}).error) << "moldable is fine";
}

TEST(CliJobScript, ScriptWithoutDirectives) {
  const ScriptOptions result = parse_job_script("echo hello\n");
  EXPECT_FALSE(result.error);
  EXPECT_FALSE(result.options.nodes);
  EXPECT_TRUE(result.options.warnings.empty());
  EXPECT_FALSE(parse_job_script("").error);
}

// ---- tasks (issue 16 item 1): sbatch's -n and -c mean something now.
TEST(CliJobScript, TaskDirectives) {
  const SubmitOptions options = directives(
      "#!/bin/sh\n"
      "#SBATCH -n 2 -c 1\n"
      "#SBATCH --distribution=cyclic\n"
      "#SCHED --cpu-bind=cores\n"
      "srun hostname\n");
  EXPECT_EQ(options.ntasks, 2);
  EXPECT_EQ(options.cpus_per_task, 1);
  EXPECT_EQ(options.distribution, tasks::Distribution::Cyclic);
  EXPECT_EQ(options.cpu_bind, tasks::CpuBind::Cores);
  EXPECT_TRUE(options.warnings.empty());
  EXPECT_EQ(error_of("#!/bin/sh\n#SBATCH -c 0\n"), "line 2: -c: '0' must be at least 1");
}

// Issue 17 item 7: the paper's Listing 2 (Chadha et al., "Extending SLURM for
// dynamic resource-aware adaptive batch scheduling"), verbatim, comments
// after values included.
constexpr std::string_view kListing2 =
    "#SBATCH --job-name sample_job_script\n"
    "#SBATCH --time=00:15:00\n"
    "#SBATCH --nodes=1\n"
    "#SBATCH --ntasks-per-node=48\n"
    "#SBATCH --min-nodes-invasive=1\n"
    "#SBATCH --max-nodes-invasive=5\n"
    "#SBATCH --min-power=100 #in Watts\n"
    "#SBATCH --max-power=200 #in Watts\n"
    "#SBATCH --node-constraints=\"odd\"\n"
    "#possible values pof2, even, ncube, odd, #none\n"
    "\n"
    "srun test_app #job step 1\n";

TEST(CliJobScript, ThePapersListing2) {
  const SubmitOptions options = directives(kListing2);
  EXPECT_EQ(options.job_name, "sample_job_script");
  EXPECT_EQ(options.walltime, 15 * 60);
  EXPECT_EQ(options.tasks_per_node, 48);
  EXPECT_EQ(options.min_nodes, 1);
  EXPECT_EQ(options.max_nodes, 5);
  EXPECT_EQ(options.power_min_w, 100);
  EXPECT_EQ(options.power_max_w, 200);
  EXPECT_EQ(options.constraint, NodeConstraint::Odd);
  EXPECT_TRUE(options.warnings.empty());
  const Submission submission = submission_from_script(kListing2, {});
  ASSERT_FALSE(submission.error) << *submission.error;
  EXPECT_EQ(submission.spec.kind, JobKind::Malleable) << "the invasive bounds make it malleable";
  EXPECT_EQ(submission.spec.nodes, 1);
  EXPECT_EQ(submission.spec.min_nodes, 1);
  EXPECT_EQ(submission.spec.max_nodes, 5);
  EXPECT_EQ(submission.spec.constraint, NodeConstraint::Odd);
  EXPECT_EQ(submission.spec.power_min_w, 100);
  EXPECT_EQ(submission.spec.power_max_w, 200);
}

TEST(CliJobScript, InvasiveAliasesTakeTheSameValuesAsTheirOptions) {
  EXPECT_EQ(directives("#SCHED --min-nodes-invasive 2 --max-nodes-invasive=4\n").max_nodes, 4);
  EXPECT_EQ(error_of("#SBATCH --max-nodes-invasive=none\n"),
            "line 1: --max-nodes-invasive: 'none' is not a number");
  EXPECT_EQ(error_of("#SCHED --min-nodes-invasive\n"),
            "line 1: --min-nodes-invasive needs a value");
}

}  // namespace
}  // namespace sched::cli
