// Submission options: values, errors, Slurm's ignored options, merging and
// how kinds and sizes follow from the options given.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "shell_words.hpp"
#include "submit_options.hpp"

namespace sched::cli {
namespace {

using Env = std::vector<std::pair<std::string, std::string>>;

SubmitOptions from(const std::vector<std::string>& words, Dialect dialect = Dialect::Sched) {
  SubmitOptions options;
  const auto error = apply_arguments(options, words, dialect);
  EXPECT_FALSE(error) << error.value_or("");
  return options;
}

// Words split as in a directive line, to keep long option lists readable.
SubmitOptions from_line(std::string_view line, Dialect dialect = Dialect::Sched) {
  return from(split_shell_words(line).words, dialect);
}

std::string error_of(const std::vector<std::string>& words, Dialect dialect = Dialect::Sched) {
  SubmitOptions options;
  return apply_arguments(options, words, dialect).value_or("(no error)");
}

JobSpec spec_of(const std::vector<std::string>& words) {
  const Submission submission = build_submission(from(words), "true");
  EXPECT_FALSE(submission.error) << submission.error.value_or("");
  return submission.spec;
}

TEST(CliSubmitOptions, NamesWithAndWithoutDashes) {
  SubmitOptions options;
  EXPECT_FALSE(apply_option(options, "--nodes", "4"));
  EXPECT_EQ(options.nodes->max, 4);
  EXPECT_FALSE(apply_option(options, "nodes", "5"));
  EXPECT_EQ(options.nodes->max, 5);
  EXPECT_FALSE(apply_option(options, "-N", "6"));
  EXPECT_EQ(options.nodes->max, 6);
  EXPECT_FALSE(apply_option(options, "N", "7"));
  EXPECT_EQ(options.nodes->max, 7);
  EXPECT_FALSE(apply_option(options, "urgent", std::nullopt));
  EXPECT_EQ(options.urgent, true);
  EXPECT_FALSE(apply_option(options, "job-name", std::string("from a std::string")));
  EXPECT_EQ(options.job_name, "from a std::string");
}

TEST(CliSubmitOptions, ArgumentForms) {
  for (const auto& words : std::vector<std::vector<std::string>>{
           {"--nodes=4"}, {"--nodes", "4"}, {"-N", "4"}, {"-N4"}}) {
    const SubmitOptions options = from(words);
    ASSERT_TRUE(options.nodes) << words[0];
    EXPECT_EQ(options.nodes->min, 4);
    EXPECT_EQ(options.nodes->max, 4);
  }
  const SubmitOptions options = from({"--urgent", "-J", "-dash-name", "--time=1:00:00"});
  EXPECT_EQ(options.urgent, true);
  EXPECT_EQ(options.job_name, "-dash-name") << "a required value is the next word, as in getopt";
  EXPECT_EQ(options.walltime, 3600);
  EXPECT_EQ(from({"--exclusive", "-N", "2"}, Dialect::Slurm).nodes->max, 2)
      << "--exclusive takes no value: -N is the next option";
}

TEST(CliSubmitOptions, EveryOptionReachesTheSpec) {
  const Submission s = build_submission(
      from_line("-J sim -N 4 --ntasks-per-node=8 -t 2-00 --min-power 90.5 --max-power=200 "
                "--urgent -D /scratch/x --export=A=1,B=x=y --env C= -o out.txt "
                "--node-constraints=EVEN --kind Rigid"),
      "#!/bin/sh\nhostname\n");
  ASSERT_FALSE(s.error) << *s.error;
  EXPECT_EQ(s.spec.name, "sim");
  EXPECT_EQ(s.spec.kind, JobKind::Rigid);
  EXPECT_EQ(s.spec.nodes, 4);
  EXPECT_EQ(s.spec.min_nodes, 4);
  EXPECT_EQ(s.spec.max_nodes, 4);
  EXPECT_EQ(s.spec.constraint, NodeConstraint::Even);
  EXPECT_EQ(s.spec.tasks_per_node, 8);
  EXPECT_EQ(s.spec.walltime, 2 * 86400);
  EXPECT_EQ(s.spec.power_min_w, 90.5);
  EXPECT_EQ(s.spec.power_max_w, 200);
  EXPECT_TRUE(s.spec.urgent);
  EXPECT_EQ(s.spec.workdir, "/scratch/x");
  EXPECT_EQ(s.spec.extra->environment, (Env{{"A", "1"}, {"B", "x=y"}, {"C", ""}}));
  EXPECT_EQ(s.spec.command, "#!/bin/sh\nhostname\n");
  EXPECT_EQ(s.spec.extra->output, "out.txt");
  EXPECT_TRUE(s.warnings.empty());
}

TEST(CliSubmitOptions, DefaultsWithoutOptions) {
  const JobSpec spec = spec_of({});
  EXPECT_EQ(spec.kind, JobKind::Rigid);
  EXPECT_EQ(spec.nodes, 1);
  EXPECT_EQ(spec.min_nodes, 1);
  EXPECT_EQ(spec.max_nodes, 1);
  EXPECT_EQ(spec.walltime, 0);
  EXPECT_EQ(spec.name, "");
  EXPECT_FALSE(spec.urgent);
  EXPECT_EQ(spec.extra->output, "") << "the daemon's default, sched-<id>.out";
}

struct KindCase {
  std::vector<std::string> words;
  JobKind kind;
  int nodes, min_nodes, max_nodes;
};

TEST(CliSubmitOptions, KindAndSizesFollowTheOptions) {
  using K = JobKind;
  const std::vector<KindCase> cases = {
      {{"-N", "4"}, K::Rigid, 4, 4, 4},
      {{"-N", "2-8"}, K::Moldable, 8, 2, 8},  // a range: moldable, asking for the most
      {{"-N", "2-8", "--kind", "malleable"}, K::Malleable, 8, 2, 8},  // starts at the max
      {{"-N", "2-8", "--kind", "evolving"}, K::Evolving, 8, 2, 8},
      {{"--min-nodes", "2", "--max-nodes", "8"}, K::Malleable, 8, 2, 8},  // docs/design.md §3
      {{"--max-nodes", "8"}, K::Malleable, 8, 8, 8},
      {{"-N", "4", "--min-nodes", "2", "--max-nodes", "8"}, K::Malleable, 4, 2, 8},
      {{"-N", "4", "--max-nodes", "8"}, K::Malleable, 4, 4, 8},    // grows only
      {{"-N", "4", "--min-nodes", "2"}, K::Malleable, 4, 2, 4},    // shrinks only
      {{"-N", "2-8", "--max-nodes", "6"}, K::Malleable, 6, 2, 6},  // max overrides the range
      {{"--min-nodes", "2", "--max-nodes", "8", "--kind", "moldable"}, K::Moldable, 8, 2, 8},
      {{"--min-nodes", "2", "--max-nodes", "8", "--kind", "evolving"}, K::Evolving, 8, 2, 8},
      {{"-N", "8", "--kind", "moldable"}, K::Moldable, 8, 1, 8},  // normalize_spec: 1..N
      {{"-N", "4", "--kind", "malleable"}, K::Malleable, 4, 4, 4},
      {{"-N", "3-3"}, K::Rigid, 3, 3, 3},  // not really a range
  };
  for (const auto& c : cases) {
    std::string text;
    for (const auto& word : c.words) text += word + " ";
    const JobSpec spec = spec_of(c.words);
    EXPECT_EQ(infer_kind(from(c.words)), c.kind) << text;
    EXPECT_EQ(spec.kind, c.kind) << text;
    EXPECT_EQ(spec.nodes, c.nodes) << text;
    EXPECT_EQ(spec.min_nodes, c.min_nodes) << text;
    EXPECT_EQ(spec.max_nodes, c.max_nodes) << text;
  }
}

TEST(CliSubmitOptions, InvalidSpecsSurfaceNormalizeErrors) {
  EXPECT_EQ(build_submission(from({"-N", "2-4", "--kind", "rigid"}), "").error,
            "a rigid job has min_nodes = max_nodes = nodes");
  EXPECT_EQ(
      build_submission(from({"-N", "3", "--max-nodes", "8", "--node-constraints", "pof2"}), "")
          .error,
      "nodes (3) breaks node constraint pof2");
  EXPECT_EQ(build_submission(from({"--min-power", "300", "--max-power", "200"}), "").error,
            "power_min_w must not exceed power_max_w");
  EXPECT_EQ(build_submission(from({"-N", "1", "--max-nodes", "8", "--min-nodes", "4"}), "").error,
            "nodes must lie within [min_nodes, max_nodes]");
}

TEST(CliSubmitOptions, BadValuesNameOptionAndValue) {
  EXPECT_EQ(error_of({"--nodes", "four"}), "--nodes: 'four' is not a number");
  EXPECT_EQ(error_of({"-N", "0"}), "-N: '0' must be at least 1");
  EXPECT_EQ(error_of({"-N", "4-2"}), "-N: '4-2' has its minimum above its maximum");
  EXPECT_EQ(error_of({"-N", "2-"}), "-N: '2-' is not N or MIN-MAX");
  EXPECT_EQ(error_of({"-N", "0-4"}), "-N: '0-4': '0' must be at least 1");
  EXPECT_EQ(error_of({"-N", "99999999999"}), "-N: '99999999999' is too large");
  EXPECT_EQ(error_of({"--min-nodes=x"}), "--min-nodes: 'x' is not a number");
  EXPECT_EQ(error_of({"--ntasks-per-node=-1"}), "--ntasks-per-node: '-1' is not a number");
  EXPECT_EQ(error_of({"--time=1:75:00"}),
            "--time: '1:75:00' is not a time (M, M:S, H:M:S, D-H, D-H:M, D-H:M:S or UNLIMITED)");
  EXPECT_EQ(error_of({"-t", "soon"}),
            "-t: 'soon' is not a time (M, M:S, H:M:S, D-H, D-H:M, D-H:M:S or UNLIMITED)");
  EXPECT_EQ(error_of({"--kind=big"}),
            "--kind: 'big' is not a job kind (rigid, moldable, malleable, evolving)");
  EXPECT_EQ(error_of({"--node-constraints=prime"}),
            "--node-constraints: 'prime' is not a node constraint (none, pof2, even, odd, ncube)");
  EXPECT_EQ(error_of({"--min-power=-5"}), "--min-power: '-5' must not be negative");
  EXPECT_EQ(error_of({"--max-power=lots"}), "--max-power: 'lots' is not a number");
  EXPECT_EQ(error_of({"--max-power=inf"}), "--max-power: 'inf' is not a number");
  EXPECT_EQ(error_of({"--env", "1X=2"}), "--env: '1X=2' is not NAME=VALUE");
  EXPECT_EQ(error_of({"--env", "NOVALUE"}), "--env: 'NOVALUE' is not NAME=VALUE");
  // A bare NAME is a list item since issue 18 (taken from the submitting
  // environment); what is neither is refused.
  EXPECT_EQ(error_of({"--export=A=1,1X"}), "--export: '1X' is not ALL, NONE, NAME or NAME=VALUE");
  EXPECT_EQ(error_of({"--export=A=1,NONE"}), "--export: NONE must come first");
}

TEST(CliSubmitOptions, MissingAndUnwantedValues) {
  EXPECT_EQ(error_of({"-N"}), "-N needs a value");
  EXPECT_EQ(error_of({"--nodes="}), "--nodes needs a value");
  EXPECT_EQ(error_of({"--urgent=yes"}), "--urgent takes no value");
  SubmitOptions options;
  EXPECT_EQ(apply_option(options, "job-name", std::nullopt), "--job-name needs a value");
}

TEST(CliSubmitOptions, UnknownOptionsAndStrayWords) {
  EXPECT_EQ(error_of({"--frobnicate=1"}), "unknown option --frobnicate");
  EXPECT_EQ(error_of({"-Z"}), "unknown option -Z");
  EXPECT_EQ(error_of({"-N", "4", "extra"}), "'extra' is not an option");
  EXPECT_EQ(error_of({"--"}), "'--' is not an option");
  SubmitOptions options;
  EXPECT_EQ(apply_option(options, "frobnicate", "1"), "unknown option --frobnicate");
  EXPECT_EQ(apply_option(options, "--", "1"), "unknown option --");
}

TEST(CliSubmitOptions, MemTakesSlurmUnitsAndRefusesNonsense) {
  EXPECT_EQ(from_line("--mem 512").mem_bytes, std::uint64_t{512} << 20);  // megabytes
  EXPECT_EQ(from_line("--mem=64K").mem_bytes, std::uint64_t{64} << 10);
  EXPECT_EQ(from_line("--mem=2g").mem_bytes, std::uint64_t{2} << 30);
  EXPECT_EQ(from_line("--mem=1T").mem_bytes, std::uint64_t{1} << 40);
  EXPECT_EQ(error_of({"--mem=4X"}), "--mem: '4X' is not a memory size (N[K|M|G|T])");
  EXPECT_EQ(error_of({"--mem=0"}), "--mem: '0' must be more than 0");
  EXPECT_EQ(error_of({"--mem=G"}), "--mem: 'G' is not a memory size");
  const auto built = build_submission(from_line("--mem=3M"), "true");
  EXPECT_EQ(built.spec.extra->mem_bytes, std::uint64_t{3} << 20);
}

TEST(CliSubmitOptions, SlurmOnlyOptionsWarnInSlurmDialectOnly) {
  const SubmitOptions options = from_line(
      "-p debug --account=proj --mem=4G --mem-per-cpu 1G -q high --mail-type=END "
      "--mail-user=a@b --exclusive -c 4 --gres=gpu:2 -C haswell -e err.txt -N 2",
      Dialect::Slurm);
  EXPECT_EQ(options.nodes->max, 2);
  // --mem means something since issue 14 (the job's cgroup limit).
  EXPECT_EQ(options.mem_bytes, std::uint64_t{4} << 30);
  // -p means something since issue 20 (partitions).
  EXPECT_EQ(options.partition, "debug");
  const std::vector<std::string> expected = {
      "--mem-per-cpu=1G ignored (a Slurm option with no meaning in sched)",
      "--mail-type=END ignored (a Slurm option with no meaning in sched)",
      "--mail-user=a@b ignored (a Slurm option with no meaning in sched)",
      "-C haswell ignored (a Slurm option with no meaning in sched)",
  };
  // -e means something since issue 18 (stderr's own file), -A and -q since
  // its item 5 (recorded; the QOS weighs in the priority), and --gres and
  // --exclusive since item 4 (GPUs; nodes are never shared).
  EXPECT_EQ(options.error, "err.txt");
  EXPECT_EQ(options.account, "proj");
  EXPECT_EQ(options.qos, "high");
  EXPECT_EQ(options.gpus, 2);
  // -c since issue 16 item 1 (cores per task).
  EXPECT_EQ(options.cpus_per_task, 4);
  EXPECT_EQ(options.warnings, expected);
  EXPECT_EQ(from({"--partition=debug"}).partition, "debug");  // ours since issue 20
  EXPECT_EQ(from({"-p", "gpu"}).partition, "gpu");
  EXPECT_EQ(error_of({"-p"}), "-p needs a value");
  EXPECT_EQ(error_of({"--mail-type=END"}),
            "--mail-type is a Slurm option that sched ignores; it is accepted only in #SBATCH "
            "lines");
  EXPECT_EQ(from({"-e", "err-%j.txt"}).error, "err-%j.txt");
}

TEST(CliSubmitOptions, AccountQosAndNiceAsSbatchHasThem) {
  const SubmitOptions options = from_line("-A physics --qos=high --nice=50");
  EXPECT_EQ(options.account, "physics");
  EXPECT_EQ(options.qos, "high");
  EXPECT_EQ(options.nice, 50);
  EXPECT_TRUE(options.warnings.empty());
  EXPECT_EQ(from_line("--account proj -q low").qos, "low");
  EXPECT_EQ(from_line("--nice").nice, 100) << "sbatch's default adjustment";
  EXPECT_EQ(from_line("--nice=-5").nice, -5) << "parsed; schedd decides who may";
  EXPECT_EQ(error_of({"--nice=abc"}), "--nice: 'abc' is not a number");
  EXPECT_EQ(error_of({"--nice=2147483646"}),
            "--nice: '2147483646' is out of range (-2147483645 to 2147483645)");
  EXPECT_EQ(error_of({"--qos"}), "--qos needs a value");
  const auto built = build_submission(from_line("-A physics -q high --nice=7"), "true");
  EXPECT_EQ(built.spec.extra->account, "physics");
  EXPECT_EQ(built.spec.qos, "high");
  EXPECT_EQ(built.spec.nice, 7);
  const auto plain = build_submission(from_line("-N 1"), "true");
  EXPECT_EQ(plain.spec.qos, "") << "schedd's engine makes it normal";
  EXPECT_EQ(plain.spec.nice, 0);
}

TEST(CliSubmitOptions, EnvironmentAccumulatesLaterNamesWin) {
  const SubmitOptions options =
      from({"--env", "A=1", "--export=ALL,B=2,A=3", "--env", "C=4", "--export", "NONE"});
  EXPECT_EQ(options.environment, (Env{{"A", "3"}, {"B", "2"}, {"C", "4"}}));
  // Since issue 18 NONE means none of the submitting environment (the last
  // --export's mode wins); the NAME=VALUEs are the job's all the same.
  ASSERT_TRUE(options.export_choice);
  EXPECT_EQ(options.export_choice->mode, ExportChoice::Mode::None);
  EXPECT_TRUE(options.warnings.empty());
}

TEST(CliSubmitOptions, LaterOptionReplacesEarlier) {
  const SubmitOptions options = from({"-N", "2", "--nodes=3", "-J", "a", "--job-name", "b"});
  EXPECT_EQ(options.nodes->max, 3);
  EXPECT_EQ(options.job_name, "b");
}

TEST(CliSubmitOptions, CommandLineWinsPerOption) {
  SubmitOptions script = from({"-N", "2-8", "-t", "10", "-J", "script", "--env", "A=1",
                               "--export=B=2", "-o", "script.out"});
  script.warnings.push_back("from the script");
  SubmitOptions command_line = from({"-N", "4", "--env", "B=3", "--env", "D=4", "--urgent"});
  command_line.warnings.push_back("from the command line");
  const SubmitOptions merged = merge(script, command_line);
  EXPECT_EQ(merged.nodes->min, 4);
  EXPECT_EQ(merged.nodes->max, 4);
  EXPECT_EQ(merged.walltime, 600);
  EXPECT_EQ(merged.job_name, "script");
  EXPECT_EQ(merged.urgent, true);
  EXPECT_EQ(merged.output, "script.out");
  EXPECT_EQ(merged.environment, (Env{{"A", "1"}, {"B", "3"}, {"D", "4"}}));
  EXPECT_EQ(merged.warnings,
            (std::vector<std::string>{"from the script", "from the command line"}));
  EXPECT_EQ(infer_kind(merged), JobKind::Rigid) << "the command line's -N 4 replaced the range";
}

TEST(CliSubmitOptions, KindIsInferredAfterMerging) {
  const SubmitOptions script = from({"--min-nodes", "2", "--max-nodes", "8"});
  EXPECT_EQ(infer_kind(merge(script, from({"--kind", "moldable"}))), JobKind::Moldable);
  EXPECT_EQ(infer_kind(merge(script, from({}))), JobKind::Malleable);
  EXPECT_EQ(infer_kind(merge(from({"--kind=rigid"}), from({"-N", "2-4"}))), JobKind::Rigid)
      << "the script's --kind governs a range from the command line";
}

TEST(CliSubmitOptions, OptionTableIsConsistent) {
  std::set<std::string_view> names;
  std::set<char> shorts;
  for (const OptionInfo& option : submit_option_table()) {
    EXPECT_TRUE(names.insert(option.name).second) << option.name;
    if (option.short_name != 0) {
      EXPECT_TRUE(shorts.insert(option.short_name).second) << option.short_name;
    }
    EXPECT_FALSE(option.help.empty()) << option.name;
    if (option.value == ValueKind::None) {  // the flags, all of them
      EXPECT_TRUE(option.name == "urgent" || option.name == "hold" || option.name == "exclusive")
          << option.name;
    }
  }
  EXPECT_TRUE(names.count("nodes") && names.count("partition"));
}

TEST(CliSubmitOptions, ExportTakesFromTheSubmittingEnvironment) {
  const Env submitting = {{"FOO", "1"},          {"BAR", "b"},          {"PATH", "/mine"},
                          {"SLURM_JOB_ID", "7"}, {"SCHED_JOB_ID", "7"}, {"SCHED_MALL_X", "m"}};
  // ALL, sbatch's default: everything but the job ids of a job submitting
  // from inside another.
  EXPECT_EQ(export_environment(from({"--env", "BAR=2"}), submitting),
            (Env{{"FOO", "1"}, {"BAR", "2"}, {"PATH", "/mine"}, {"SCHED_MALL_X", "m"}}));
  EXPECT_EQ(export_environment(from({"--export=ALL,BAR=2"}), submitting),
            export_environment(from({"--env", "BAR=2"}), submitting));
  EXPECT_EQ(export_environment(from({"--export=NONE"}), submitting), Env{});
  EXPECT_EQ(export_environment(from({"--export=NONE,X=1"}), submitting), (Env{{"X", "1"}}));
  // A list: the names given (an unset one is skipped), NAME=VALUE over them.
  EXPECT_EQ(export_environment(from({"--export=FOO,BAR=2,UNSET"}), submitting),
            (Env{{"FOO", "1"}, {"BAR", "2"}}));
  EXPECT_EQ(export_environment(from({"--export", "SLURM_JOB_ID"}), submitting),
            (Env{{"SLURM_JOB_ID", "7"}}))
      << "listed by name, it is taken";
  const Submission built = build_submission(from({"--export=FOO"}), "true", submitting);
  EXPECT_EQ(built.spec.extra->environment, (Env{{"FOO", "1"}}));
}

TEST(CliSubmitOptions, ErrorFileGoesToTheSpec) {
  const Submission built =
      build_submission(from({"-o", "out-%j.txt", "--error=err-%j.txt"}), "true");
  EXPECT_EQ(built.spec.extra->output, "out-%j.txt");
  EXPECT_EQ(built.spec.extra->error, "err-%j.txt");
  EXPECT_EQ(build_submission(from({"-o", "o"}), "true").spec.extra->error, "")
      << "without -e stderr goes with stdout";
}

TEST(CliSubmitOptions, NodelistExcludeAndGres) {
  const JobSpec named = spec_of({"-w", "n[3-4],n1"});
  EXPECT_EQ(named.extra->nodelist, (std::vector<std::string>{"n1", "n3", "n4"}))
      << "expanded, sorted";
  EXPECT_EQ(named.nodes, 3) << "without -N: as many nodes as -w names";
  EXPECT_EQ(spec_of({"-N", "4", "-w", "n1"}).nodes, 4);
  EXPECT_EQ(spec_of({"-x", "n[1-2]", "--exclude=n2"}).extra->exclude,
            (std::vector<std::string>{"n2"}))
      << "a later option replaces an earlier one";
  EXPECT_EQ(spec_of({"--gres=gpu:2"}).extra->gpus_per_node, 2);
  EXPECT_EQ(spec_of({"--gres", "gpu"}).extra->gpus_per_node, 1);
  EXPECT_EQ(spec_of({"--gres=gpu:a100:4"}).extra->gpus_per_node, 4) << "the type is not told apart";
  EXPECT_EQ(spec_of({"--exclusive"}).extra->gpus_per_node, 0) << "accepted: nodes are never shared";
  EXPECT_NE(error_of({"--gres=mps:1"}).find("not gpu[:N]"), std::string::npos);
  EXPECT_NE(error_of({"--gres=gpu:x"}).find("'x' is not a number"), std::string::npos);
  EXPECT_NE(error_of({"-w", "n[2-1]"}).find("not a host list"), std::string::npos);
  EXPECT_NE(error_of({"--exclusive=user"}).find("takes no value"), std::string::npos);
  // In a script's directives as on the command line.
  SubmitOptions directive;
  EXPECT_FALSE(apply_arguments(directive, {"--gres=gpu:1", "-x", "n5"}, Dialect::Slurm));
  EXPECT_EQ(directive.gpus, 1);
  EXPECT_TRUE(directive.warnings.empty());
}

TEST(CliSubmitOptions, NtasksSpreadsOverTheNodesRoundingUp) {
  const auto tasks = [](const std::vector<std::string>& words) {
    const Submission built = build_submission(from(words), "true");
    EXPECT_FALSE(built.error) << built.error.value_or("");
    return std::pair(built.spec.nodes, built.spec.tasks_per_node);
  };
  EXPECT_EQ(tasks({"-N", "2", "-n", "3"}), std::pair(2, 2));
  EXPECT_EQ(tasks({"-N", "4", "--ntasks=8"}), std::pair(4, 2));
  EXPECT_EQ(tasks({"-n", "4"}), std::pair(1, 4)) << "without -N: one node";
  EXPECT_EQ(tasks({"-N", "2", "-n", "8", "--ntasks-per-node=1"}), std::pair(2, 1))
      << "--ntasks-per-node wins";
  EXPECT_NE(error_of({"-n", "0"}).find("-n"), std::string::npos);
}

}  // namespace
}  // namespace sched::cli

// ---- tasks (issue 16 item 1)
namespace sched::cli {
namespace {

TEST(CliSubmitTasks, CpusDistributionAndBindingGoToTheSpec) {
  const JobSpec spec =
      spec_of({"-N", "2", "-n", "6", "-c", "2", "-m", "cyclic", "--cpu-bind=cores"});
  EXPECT_EQ(spec.nodes, 2);
  EXPECT_EQ(spec.layout->ntasks, 6);
  EXPECT_EQ(spec.tasks_per_node, 3);
  EXPECT_EQ(spec.layout->cpus_per_task, 2);
  EXPECT_EQ(spec.layout->distribution, tasks::Distribution::Cyclic);
  EXPECT_EQ(spec.layout->cpu_bind, tasks::CpuBind::Cores);
  EXPECT_FALSE(spec.layout->nodes_from_tasks) << "-N given";
  // Slurm's NODE:SOCKET form: the node level counts.
  EXPECT_EQ(spec_of({"--distribution=block:cyclic"}).layout->distribution,
            tasks::Distribution::Block);
  const JobSpec plain = spec_of({"-N", "3"});
  EXPECT_EQ(plain.layout->ntasks, 0);
  EXPECT_EQ(plain.layout->cpus_per_task, 1);
  EXPECT_EQ(plain.layout->distribution, tasks::Distribution::Block);
  EXPECT_EQ(plain.layout->cpu_bind, tasks::CpuBind::None);
}

TEST(CliSubmitCores, ACoreRangeMakesAMalleableJobByCoresStartedAtItsTop) {
  // Issue 20 item 2: --cores N or MIN-MAX, as -N is.
  const JobSpec rigid = spec_of({"-p", "shared", "--cores=4"});
  EXPECT_EQ(rigid.layout->cores, 4);
  EXPECT_EQ(rigid.layout->min_cores, 0);
  EXPECT_EQ(rigid.layout->max_cores, 0);
  EXPECT_EQ(rigid.kind, JobKind::Rigid);
  const JobSpec ranged = spec_of({"-p", "shared", "--cores", "2-8"});
  EXPECT_EQ(ranged.kind, JobKind::Malleable);
  EXPECT_EQ(ranged.layout->cores, 8);
  EXPECT_EQ(ranged.layout->min_cores, 2);
  EXPECT_EQ(ranged.layout->max_cores, 8);
  EXPECT_EQ(error_of({"--cores=8-2"}), "--cores: '8-2' has its minimum above its maximum");
  EXPECT_EQ(error_of({"--cores=x"}), "--cores: 'x' is not a number");
}

TEST(CliSubmitTasks, NtasksAloneLeavesTheNodesToTheEngine) {
  const JobSpec spec = spec_of({"-n", "5", "-c", "2"});
  EXPECT_TRUE(spec.layout->nodes_from_tasks);
  EXPECT_EQ(spec.layout->ntasks, 5);
  EXPECT_FALSE(spec_of({"-n", "2", "-w", "n1"}).layout->nodes_from_tasks) << "-w names the nodes";
  EXPECT_FALSE(spec_of({"-n", "2", "--ntasks-per-node=2"}).layout->nodes_from_tasks);
  EXPECT_FALSE(spec_of({"-c", "2"}).layout->nodes_from_tasks) << "no -n";
}

TEST(CliSubmitTasks, BadValuesAreNamed) {
  EXPECT_EQ(error_of({"-c", "0"}), "-c: '0' must be at least 1");
  EXPECT_EQ(error_of({"--cpus-per-task=two"}), "--cpus-per-task: 'two' is not a number");
  EXPECT_EQ(error_of({"-n", "0"}), "-n: '0' must be at least 1");
  EXPECT_EQ(error_of({"-m", "plane"}), "-m: 'plane' is not block or cyclic");
  EXPECT_EQ(error_of({"--cpu-bind=sockets"}), "--cpu-bind: 'sockets' is not none or cores");
  // Fewer tasks than nodes: every node runs at least one.
  const Submission few = build_submission(from({"-N", "4", "-n", "2"}), "true");
  ASSERT_TRUE(few.error);
  EXPECT_NE(few.error->find("--ntasks=2 is fewer tasks than the job's 4 nodes"), std::string::npos)
      << *few.error;
}

TEST(CliSubmitTasks, CommandLineOverridesTheScriptPerOption) {
  const SubmitOptions script = from({"-n", "4", "-c", "2", "-m", "cyclic"});
  const SubmitOptions line = from({"-c", "1"});
  const SubmitOptions merged = merge(script, line);
  EXPECT_EQ(merged.ntasks, 4);
  EXPECT_EQ(merged.cpus_per_task, 1);
  EXPECT_EQ(merged.distribution, tasks::Distribution::Cyclic);
}

}  // namespace
}  // namespace sched::cli
