// Slurm users' batch scripts end to end (issue 18 items 3 and 6): -o/-e
// patterns and a separate stderr, --export, script arguments, a script from
// standard input, and the reason of a job that could not start, through the
// real `sched` command against a local cluster.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "cluster.hpp"
#include "test_paths.hpp"

namespace sched::testing {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void write(const fs::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

std::string describe(const CliRun& run) {
  return "status " + std::to_string(run.status) + "\nstdout:\n" + run.out + "stderr:\n" + run.err;
}

// Runs `command` with sh, "$SCHED" being the CLI aimed at the cluster: for
// what run_sched cannot give, a submitting environment of the test's
// choosing and a script on standard input.
CliRun run_shell(LocalCluster& cluster, const std::string& command) {
  TempDir dir("sched-sh");
  const std::string err_path = dir.str() + "/stderr";
  Process process({"/bin/sh", "-c", "SCHED=\"$1 --endpoint $2\"; " + command, "sh", SCHED_CLI_BIN,
                   cluster.client_endpoint()},
                  err_path);
  CliRun run;
  while (auto line = process.read_line(std::chrono::seconds(8))) run.out += *line + "\n";
  if (const auto status = process.wait(std::chrono::seconds(8)); status && WIFEXITED(*status)) {
    run.status = WEXITSTATUS(*status);
  }
  run.err = slurp(err_path);
  return run;
}

std::int64_t id_of(const CliRun& run) {
  std::int64_t id = 0;
  std::istringstream(run.out) >> id;
  return id;
}

class SlurmScripts : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_.start_agent("n1");
    ASSERT_TRUE(cluster_.wait_nodes_up(1)) << cluster_.logs();
    work_ = cluster_.work_dir();
    fs::create_directories(work_);
  }
  // Submits and waits for the end state; the job's id.
  std::int64_t submit_and_wait(const std::vector<std::string>& args, const std::string& state) {
    std::vector<std::string> all = {"submit", "--parsable", "-D", work_.string()};
    all.insert(all.end(), args.begin(), args.end());
    const CliRun run = run_sched(cluster_, all);
    EXPECT_EQ(run.status, 0) << describe(run);
    const std::int64_t id = id_of(run);
    EXPECT_GT(id, 0) << describe(run);
    EXPECT_TRUE(cluster_.wait_state(id, state)) << cluster_.logs();
    return id;
  }

  LocalCluster cluster_;
  fs::path work_;
};

TEST_F(SlurmScripts, OutputAndErrorPatternsWriteTwoExpandedFiles) {
  write(work_ / "job.sh",
        "#!/bin/sh\n"
        "#SBATCH -J pat\n"
        "#SBATCH -o out-%j-%x.txt\n"
        "#SBATCH -e err-%j.txt\n"
        "echo to-stdout\n"
        "echo to-stderr >&2\n");
  const auto id = submit_and_wait({(work_ / "job.sh").string()}, "COMPLETED");
  const std::string n = std::to_string(id);
  EXPECT_EQ(slurp(work_ / ("out-" + n + "-pat.txt")), "to-stdout\n");
  EXPECT_EQ(slurp(work_ / ("err-" + n + ".txt")), "to-stderr\n");
  EXPECT_FALSE(fs::exists(work_ / "out-%j-%x.txt")) << "the pattern is no file name";

  const CliRun show = run_sched(cluster_, {"show", n});
  ASSERT_EQ(show.status, 0) << describe(show);
  EXPECT_NE(show.out.find("StdOut=" + (work_ / ("out-" + n + "-pat.txt")).string()),
            std::string::npos)
      << show.out;
  EXPECT_NE(show.out.find("StdErr=" + (work_ / ("err-" + n + ".txt")).string()), std::string::npos)
      << show.out;
}

TEST_F(SlurmScripts, WithoutErrorBothStreamsShareTheOutputFileAndNodeIsExpanded) {
  const auto id = submit_and_wait({"-o", "both-%N-%u-%5j.txt", "--wrap", "echo out; echo err >&2"},
                                  "COMPLETED");
  char padded[32];
  std::snprintf(padded, sizeof padded, "%05lld", static_cast<long long>(id));
  const std::string user = cluster_.job(id).user;
  EXPECT_EQ(slurp(work_ / ("both-n1-" + user + "-" + padded + ".txt")), "out\nerr\n");
}

// The script prints what it got; "-" for an unset variable.
const char* kPrintEnv =
    "#!/bin/sh\n"
    "echo \"FOO=${FOO--} BAR=${BAR--} BAZ=${BAZ--} USER=${USER--} HOME=${HOME--}\"\n"
    "echo \"args=$# 1=${1--} 2=${2--} 3=${3--}\"\n";

TEST_F(SlurmScripts, ExportAllIsTheSubmittingEnvironmentAndArgumentsReachTheScript) {
  write(work_ / "env.sh", kPrintEnv);
  const CliRun run = run_shell(cluster_, "cd " + work_.string() +
                                             " && FOO=from-shell BAZ=z $SCHED submit --parsable "
                                             "-o all.txt --export=ALL env.sh a 'b c' -N");
  ASSERT_EQ(run.status, 0) << describe(run);
  const auto id = id_of(run);
  ASSERT_TRUE(cluster_.wait_state(id, "COMPLETED")) << cluster_.logs();
  const std::string out = slurp(work_ / "all.txt");
  EXPECT_NE(out.find("FOO=from-shell BAR=- BAZ=z"), std::string::npos) << out;
  // Everything after the script is the script's, options too.
  EXPECT_NE(out.find("args=3 1=a 2=b c 3=-N"), std::string::npos) << out;
  // Who the job runs as is the user database's, whatever the submitter's
  // environment says.
  EXPECT_EQ(out.find("USER=-"), std::string::npos) << out;
}

TEST_F(SlurmScripts, ExportNoneAndAListPassOnlyWhatTheySay) {
  write(work_ / "env.sh", kPrintEnv);
  const std::string submit =
      "cd " + work_.string() + " && FOO=from-shell BAZ=z $SCHED submit --parsable ";
  const CliRun none = run_shell(cluster_, submit + "-o none.txt --export=NONE env.sh");
  ASSERT_EQ(none.status, 0) << describe(none);
  const CliRun list = run_shell(cluster_, submit + "-o list.txt --export=FOO,BAR=2 env.sh");
  ASSERT_EQ(list.status, 0) << describe(list);
  ASSERT_TRUE(cluster_.wait_state(id_of(none), "COMPLETED")) << cluster_.logs();
  ASSERT_TRUE(cluster_.wait_state(id_of(list), "COMPLETED")) << cluster_.logs();

  const std::string none_out = slurp(work_ / "none.txt");
  EXPECT_NE(none_out.find("FOO=- BAR=- BAZ=-"), std::string::npos) << none_out;
  EXPECT_EQ(none_out.find("USER=-"), std::string::npos) << "the login basics stay: " << none_out;
  EXPECT_EQ(none_out.find("HOME=-"), std::string::npos) << none_out;
  const std::string list_out = slurp(work_ / "list.txt");
  EXPECT_NE(list_out.find("FOO=from-shell BAR=2 BAZ=-"), std::string::npos) << list_out;
}

TEST_F(SlurmScripts, AScriptFromStandardInputRuns) {
  write(work_ / "piped.sh",
        "#!/bin/sh\n#SBATCH -o piped-%j.txt\necho \"from stdin as $SLURM_JOB_NAME\"\n");
  const CliRun run =
      run_shell(cluster_, "cd " + work_.string() + " && $SCHED submit --parsable < piped.sh");
  ASSERT_EQ(run.status, 0) << describe(run);
  const auto id = id_of(run);
  ASSERT_TRUE(cluster_.wait_state(id, "COMPLETED")) << cluster_.logs();
  EXPECT_EQ(slurp(work_ / ("piped-" + std::to_string(id) + ".txt")), "from stdin as stdin\n");

  const CliRun empty = run_shell(cluster_, "$SCHED submit < /dev/null");
  EXPECT_EQ(empty.status, 1) << describe(empty);
  EXPECT_EQ(empty.err, "sched: the script from standard input is empty\n");
}

TEST_F(SlurmScripts, AMissingWorkingOrOutputDirectoryIsTheReasonInShowAndAcct) {
  const std::string missing = (work_ / "no-such-dir").string();
  const CliRun run = run_sched(cluster_, {"submit", "--parsable", "-D", missing, "--wrap", "true"});
  ASSERT_EQ(run.status, 0) << describe(run);
  const auto no_workdir = id_of(run);
  const auto no_outdir =
      submit_and_wait({"-o", (work_ / "gone" / "out.txt").string(), "--wrap", "true"}, "FAILED");
  ASSERT_TRUE(cluster_.wait_state(no_workdir, "FAILED")) << cluster_.logs();

  const CliRun show = run_sched(cluster_, {"show", std::to_string(no_workdir)});
  ASSERT_EQ(show.status, 0) << describe(show);
  const std::string workdir_reason =
      "working directory '" + missing + "' does not exist or is not a directory";
  EXPECT_NE(show.out.find("Reason=" + workdir_reason), std::string::npos) << show.out;

  const CliRun acct = run_sched(cluster_, {"acct", "-l"});
  ASSERT_EQ(acct.status, 0) << describe(acct);
  EXPECT_TRUE(std::regex_search(
      acct.out, std::regex(std::to_string(no_workdir) + R"( .*FAILED .*working directory ')")))
      << acct.out;
  EXPECT_TRUE(std::regex_search(
      acct.out, std::regex(std::to_string(no_outdir) + R"( .*FAILED .*directory of output file)")))
      << acct.out;
  const CliRun json = run_sched(cluster_, {"acct", "--json", "-j", std::to_string(no_workdir)});
  ASSERT_EQ(json.status, 0) << describe(json);
  EXPECT_EQ(nlohmann::json::parse(json.out)["jobs"][0]["reason"], workdir_reason);
}

TEST_F(SlurmScripts, QueueFormatPrintsSqueuesLetters) {
  const CliRun run = run_sched(
      cluster_, {"submit", "--parsable", "-D", work_.string(), "-J", "fmt", "--wrap", "sleep 30"});
  ASSERT_EQ(run.status, 0) << describe(run);
  const auto id = id_of(run);
  ASSERT_TRUE(cluster_.wait_state(id, "RUNNING")) << cluster_.logs();
  const CliRun queue =
      run_sched(cluster_, {"queue", "-o", "%.8i|%-5j|%t|%T|%P|%N|%D", "-j", std::to_string(id)});
  ASSERT_EQ(queue.status, 0) << describe(queue);
  char expected[128];
  std::snprintf(
      expected, sizeof expected,
      "   JOBID|NAME |ST|STATE|PARTITION|NODELIST|NODES\n%8lld|fmt  |R|RUNNING|batch|n1|1\n",
      static_cast<long long>(id));
  EXPECT_EQ(queue.out, expected);
  const CliRun bare = run_sched(cluster_, {"queue", "-h", "-o", "%i", "-j", std::to_string(id)});
  EXPECT_EQ(bare.out, std::to_string(id) + "\n");
  EXPECT_EQ(run_sched(cluster_, {"cancel", std::to_string(id)}).status, 0);
}

TEST_F(SlurmScripts, ATimeLimitIsTheReason) {
  const auto id = submit_and_wait({"-t", "0:01", "--wrap", "sleep 30"}, "TIMEOUT");
  const CliRun show = run_sched(cluster_, {"show", std::to_string(id)});
  EXPECT_NE(show.out.find("Reason=time limit reached"), std::string::npos) << show.out;
}

}  // namespace
}  // namespace sched::testing
