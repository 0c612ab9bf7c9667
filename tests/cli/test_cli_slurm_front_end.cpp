// Slurm's command names (issue 18 item 7): what each front end turns its
// arguments into, what it refuses, and the built links themselves.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "slurm_front_end.hpp"
#include "test_paths.hpp"

namespace sched::cli {
namespace {

using Words = std::vector<std::string>;

FrontEndContext outside() {
  FrontEndContext context;
  context.user = "alice";
  context.self = "/opt/sched/bin/sched";
  return context;
}

FrontEndContext inside() {
  FrontEndContext context = outside();
  context.inside_job = true;
  return context;
}

Words sched_args(SlurmCommand command, const Words& args,
                 const FrontEndContext& context = outside()) {
  return translate(command, args, context).args;
}

std::string refusal(SlurmCommand command, const Words& args,
                    const FrontEndContext& context = outside()) {
  try {
    translate(command, args, context);
  } catch (const FrontEndError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(SlurmFrontEnd, NamesTheCommandsByProgramName) {
  EXPECT_EQ(slurm_command("sbatch"), SlurmCommand::Sbatch);
  EXPECT_EQ(slurm_command("/usr/local/bin/squeue"), SlurmCommand::Squeue);
  EXPECT_EQ(slurm_command("build/slurm/scontrol"), SlurmCommand::Scontrol);
  EXPECT_FALSE(slurm_command("sched"));
  EXPECT_FALSE(slurm_command("/usr/bin/sbatch2"));
  EXPECT_FALSE(slurm_command(""));
  EXPECT_EQ(slurm_commands().size(), 9u);
  for (SlurmCommand command : slurm_commands()) {
    EXPECT_EQ(slurm_command(name_of(command)), command);
  }
}

TEST(SlurmFrontEnd, SbatchIsSubmitWithTheScriptAndItsArgumentsUntouched) {
  EXPECT_EQ(sched_args(SlurmCommand::Sbatch, {"-N", "2", "--time=10", "job.sh", "-N", "x"}),
            (Words{"submit", "--nodes=2", "--time=10", "job.sh", "-N", "x"}));
  EXPECT_EQ(sched_args(SlurmCommand::Sbatch, {"-N2", "-Jname", "--parsable", "--wrap", "hostname"}),
            (Words{"submit", "--nodes=2", "--job-name=name", "--parsable", "--wrap=hostname"}));
  EXPECT_EQ(sched_args(SlurmCommand::Sbatch, {"-n", "8", "-Hd", "afterok:4", "job.sh"}),
            (Words{"submit", "--ntasks=8", "--hold", "--dependency=afterok:4", "job.sh"}));
  // From standard input: no script word at all.
  EXPECT_EQ(sched_args(SlurmCommand::Sbatch, {"-o", "out-%j.txt"}),
            (Words{"submit", "--output=out-%j.txt"}));
}

// Issue 17 item 7: the paper's option names pass as sched's own.
TEST(SlurmFrontEnd, SbatchAndSrunTakeThePapersOptionNames) {
  EXPECT_EQ(sched_args(SlurmCommand::Sbatch,
                       {"--min-nodes-invasive=1", "--max-nodes-invasive", "5", "--min-power=100",
                        "--max-power", "200", "--node-constraints=odd", "job.sh"}),
            (Words{"submit", "--min-nodes-invasive=1", "--max-nodes-invasive=5", "--min-power=100",
                   "--max-power=200", "--node-constraints=odd", "job.sh"}));
  const Words outside_job =
      sched_args(SlurmCommand::Srun, {"--max-nodes-invasive=3", "hostname"}, outside());
  ASSERT_GE(outside_job.size(), 2u);
  EXPECT_EQ(outside_job[0], "alloc");
  EXPECT_EQ(outside_job[1], "--max-nodes-invasive=3");
}

TEST(SlurmFrontEnd, SbatchDropsSlurmOnlyOptionsWithTheDirectivesWarning) {
  const Translation t = translate(
      SlurmCommand::Sbatch, {"-p", "batch", "--mail-type=END", "-N", "1", "job.sh"}, outside());
  // -p is sched's own since issue 20 (partitions).
  EXPECT_EQ(t.args, (Words{"submit", "--partition=batch", "--nodes=1", "job.sh"}));
  ASSERT_EQ(t.warnings.size(), 1u);
  EXPECT_NE(t.warnings[0].find("--mail-type=END ignored"), std::string::npos) << t.warnings[0];
}

TEST(SlurmFrontEnd, UnknownOptionsAreRefusedByName) {
  EXPECT_NE(refusal(SlurmCommand::Sbatch, {"--frobnicate", "job.sh"}).find("option --frobnicate"),
            std::string::npos);
  EXPECT_NE(refusal(SlurmCommand::Squeue, {"-i", "5"})
                .find("option -i is not supported by this "
                      "squeue"),
            std::string::npos);
  EXPECT_NE(refusal(SlurmCommand::Sbatch, {"-N"}).find("-N needs a value"), std::string::npos);
  EXPECT_NE(refusal(SlurmCommand::Sacct, {"--allocations=1"}).find("takes no value"),
            std::string::npos);
  EXPECT_NE(refusal(SlurmCommand::Squeue, {"123"}).find("operand '123'"), std::string::npos);
}

TEST(SlurmFrontEnd, HelpAndVersionAreTheSchedCommandsOwn) {
  EXPECT_EQ(sched_args(SlurmCommand::Sbatch, {"--help"}), (Words{"submit", "--help"}));
  EXPECT_EQ(sched_args(SlurmCommand::Sinfo, {"-N", "--help"}), (Words{"nodes", "--help"}));
  EXPECT_EQ(sched_args(SlurmCommand::Scontrol, {"--version"}), (Words{"--version"}));
  // After the script, --help is the script's.
  EXPECT_EQ(sched_args(SlurmCommand::Sbatch, {"job.sh", "--help"}),
            (Words{"submit", "job.sh", "--help"}));
}

TEST(SlurmFrontEnd, SqueueIsQueue) {
  EXPECT_EQ(sched_args(SlurmCommand::Squeue, {"-u", "bob", "-t", "PD,R", "-h", "-o", "%i %t"}),
            (Words{"queue", "--user=bob", "--states=PD,R", "--noheader", "--format=%i %t"}));
  EXPECT_EQ(sched_args(SlurmCommand::Squeue, {"--me", "-a"}), (Words{"queue", "--user=alice"}));
  EXPECT_EQ(sched_args(SlurmCommand::Squeue, {"-r"}), (Words{"queue", "--array"}));
  EXPECT_EQ(sched_args(SlurmCommand::Squeue, {"-hj", "7"}),
            (Words{"queue", "--noheader", "--jobs=7"}));
  // Issue 20: squeue -p lists one partition's jobs.
  const Translation t = translate(SlurmCommand::Squeue, {"-p", "gpu"}, outside());
  EXPECT_EQ(t.args, (Words{"queue", "--partition=gpu"}));
  EXPECT_TRUE(t.warnings.empty());
}

TEST(SlurmFrontEnd, ScancelTakesIdsAndFilters) {
  EXPECT_EQ(sched_args(SlurmCommand::Scancel, {"12", "13"}), (Words{"cancel", "12", "13"}));
  EXPECT_EQ(sched_args(SlurmCommand::Scancel, {"--me", "-t", "PENDING", "--jobname=x"}),
            (Words{"cancel", "--user=alice", "--state=PENDING", "--name=x"}));
  EXPECT_NE(refusal(SlurmCommand::Scancel, {}).find("no job id"), std::string::npos);
  EXPECT_NE(refusal(SlurmCommand::Scancel, {"-s", "USR1", "12"}).find("option -s"),
            std::string::npos);
}

TEST(SlurmFrontEnd, SinfoAndSacct) {
  EXPECT_EQ(sched_args(SlurmCommand::Sinfo, {"-N", "-t", "idle", "-n", "n[1-2]"}),
            (Words{"nodes", "--long", "--states=idle", "--nodes=n[1-2]"}));
  EXPECT_EQ(sched_args(SlurmCommand::Sacct, {"-X", "-j", "4,5", "-S", "now-1hour", "-l"}),
            (Words{"acct", "--jobs=4,5", "--starttime=now-1hour", "--long"}));
  EXPECT_NE(refusal(SlurmCommand::Sacct, {"-o", "JobID"}).find("option -o"), std::string::npos);
}

TEST(SlurmFrontEnd, ScontrolVerbs) {
  EXPECT_EQ(sched_args(SlurmCommand::Scontrol, {"show", "job", "42"}), (Words{"show", "42"}));
  EXPECT_EQ(sched_args(SlurmCommand::Scontrol, {"show", "node", "n3"}),
            (Words{"nodes", "--long", "--nodes", "n3"}));
  EXPECT_EQ(sched_args(SlurmCommand::Scontrol, {"show", "nodes"}), (Words{"nodes", "--long"}));
  EXPECT_EQ(sched_args(SlurmCommand::Scontrol, {"uhold", "4", "5"}), (Words{"hold", "4", "5"}));
  EXPECT_EQ(sched_args(SlurmCommand::Scontrol, {"release", "4"}), (Words{"release", "4"}));
  EXPECT_EQ(sched_args(SlurmCommand::Scontrol, {"requeue", "4"}), (Words{"requeue", "4"}));
  EXPECT_EQ(sched_args(SlurmCommand::Scontrol,
                       {"update", "nodename=n2", "State=DRAIN", "Reason=disk gone"}),
            (Words{"nodes", "drain", "n2", "--reason", "disk gone"}));
  EXPECT_EQ(sched_args(SlurmCommand::Scontrol, {"update", "NodeName=n2", "State=RESUME"}),
            (Words{"nodes", "resume", "n2"}));
  EXPECT_NE(refusal(SlurmCommand::Scontrol, {"update", "JobId=4", "TimeLimit=5"}).find("update"),
            std::string::npos);
  EXPECT_EQ(sched_args(SlurmCommand::Scontrol, {"show", "partition"}), (Words{"partition"}));
  EXPECT_EQ(sched_args(SlurmCommand::Scontrol, {"show", "partition", "gpu"}),
            (Words{"partition", "--partition=gpu"}));
  EXPECT_EQ(sched_args(SlurmCommand::Scontrol,
                       {"update", "PartitionName=gpu", "State=DRAIN", "Reason=upgrade"}),
            (Words{"partition", "set", "gpu", "drain", "--reason", "upgrade"}));
  EXPECT_NE(refusal(SlurmCommand::Scontrol, {"update", "PartitionName=gpu", "State=INACTIVE"})
                .find("State=INACTIVE"),
            std::string::npos);
  EXPECT_NE(refusal(SlurmCommand::Scontrol, {"show", "config"}).find("show config"),
            std::string::npos);
  EXPECT_NE(refusal(SlurmCommand::Scontrol, {"show", "job"}).find("one job id"), std::string::npos);
  EXPECT_NE(refusal(SlurmCommand::Scontrol, {"reboot"}).find("'reboot'"), std::string::npos);
  EXPECT_NE(refusal(SlurmCommand::Scontrol, {}).find("no command"), std::string::npos);
}

TEST(SlurmFrontEnd, SrunInsideAJobIsAStep) {
  EXPECT_EQ(sched_args(SlurmCommand::Srun, {"-N", "2", "-n4", "hostname", "-s"}, inside()),
            (Words{"run", "--nodes=2", "--ntasks=4", "hostname", "-s"}));
  // --jobid names an allocation from outside it.
  EXPECT_EQ(sched_args(SlurmCommand::Srun, {"--jobid=9", "true"}),
            (Words{"run", "--jobid=9", "true"}));
  // --mpi starts the tasks' MPI wire-up; Slurm names its PMIx plugin by version.
  EXPECT_EQ(sched_args(SlurmCommand::Srun, {"--mpi=pmix_v4", "-w", "n[1-2]", "./a.out"}, inside()),
            (Words{"run", "--mpi=pmix", "--nodelist=n[1-2]", "./a.out"}));
  EXPECT_EQ(sched_args(SlurmCommand::Srun, {"--mpi", "pmi2", "./a.out"}, inside()),
            (Words{"run", "--mpi=pmi2", "./a.out"}));
  EXPECT_NE(refusal(SlurmCommand::Srun, {"--mpi=cray_shasta", "./a.out"}, inside())
                .find("--mpi=cray_shasta is not supported"),
            std::string::npos);
  const Translation t = translate(SlurmCommand::Srun, {"-l", "./a.out"}, inside());
  EXPECT_EQ(t.args, (Words{"run", "./a.out"}));
  EXPECT_EQ(t.warnings.size(), 1u);
  EXPECT_NE(refusal(SlurmCommand::Srun, {"-N", "2"}, inside()).find("no command"),
            std::string::npos);
}

TEST(SlurmFrontEnd, SrunOutsideAJobAllocatesForTheCommand) {
  EXPECT_EQ(sched_args(SlurmCommand::Srun, {"-N", "2", "-n", "4", "-t", "5", "/bin/hostname"}),
            (Words{"alloc", "--nodes=2", "--ntasks=4", "--time=5", "--job-name=hostname",
                   "/opt/sched/bin/sched", "run", "--ntasks=4", "/bin/hostname"}));
  EXPECT_EQ(sched_args(SlurmCommand::Srun, {"-J", "probe", "env"}),
            (Words{"alloc", "--job-name=probe", "/opt/sched/bin/sched", "run", "env"}));
  // The allocation takes -w, the step --mpi.
  EXPECT_EQ(sched_args(SlurmCommand::Srun, {"--mpi=pmix", "-w", "n2", "-n", "2", "./a.out"}),
            (Words{"alloc", "--nodelist=n2", "--ntasks=2", "--job-name=a.out",
                   "/opt/sched/bin/sched", "run", "--ntasks=2", "--mpi=pmix", "./a.out"}));
}

TEST(SlurmFrontEnd, SallocIsAlloc) {
  EXPECT_EQ(sched_args(SlurmCommand::Salloc, {"-N", "3", "bash", "-c", "srun hostname"}),
            (Words{"alloc", "--nodes=3", "bash", "-c", "srun hostname"}));
  EXPECT_EQ(sched_args(SlurmCommand::Salloc, {"--time=1:00"}), (Words{"alloc", "--time=1:00"}));
}

TEST(SlurmFrontEnd, SprioIsPrio) {
  EXPECT_EQ(sched_args(SlurmCommand::Sprio, {"-w"}), (Words{"prio", "--weights"}));
  EXPECT_EQ(sched_args(SlurmCommand::Sprio, {"--me", "-j", "4,5"}),
            (Words{"prio", "--user=alice", "--jobs=4,5"}));
  EXPECT_NE(refusal(SlurmCommand::Sprio, {"-n"}).find("option -n"), std::string::npos);
}

// The build makes a link per front end to the built `sched`.
TEST(SlurmFrontEnd, TheBuildLinksEveryNameToSched) {
  for (SlurmCommand command : slurm_commands()) {
    const std::filesystem::path link =
        std::filesystem::path(SCHED_SLURM_DIR) / std::string(name_of(command));
    ASSERT_TRUE(std::filesystem::is_symlink(link)) << link;
    EXPECT_TRUE(std::filesystem::equivalent(link, SCHED_CLI_BIN)) << link;
  }
}

// Run under a Slurm name, errors read as Slurm's: the program's name and
// "error:", status 1, before any daemon is asked.
TEST(SlurmFrontEnd, ALinkSpeaksUnderItsOwnName) {
  const std::string link = std::string(SCHED_SLURM_DIR) + "/squeue";
  FILE* pipe = ::popen((link + " --frobnicate 2>&1").c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string out;
  char buffer[512];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) out.append(buffer, n);
  const int status = ::pclose(pipe);
  EXPECT_EQ(WEXITSTATUS(status), 1);
  EXPECT_EQ(out.rfind("squeue: error: option --frobnicate is not supported", 0), 0u) << out;
}

}  // namespace
}  // namespace sched::cli
