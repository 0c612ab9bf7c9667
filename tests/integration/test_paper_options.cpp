// The paper's job options verbatim (issue 17 item 7): Listing 2 of Chadha et
// al. ("Extending SLURM for dynamic resource-aware adaptive batch
// scheduling") submitted unchanged through sbatch, its `srun test_app`
// resolving to `sched run` inside the job.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cluster.hpp"
#include "test_paths.hpp"

namespace sched::testing {
namespace {

namespace fs = std::filesystem;

constexpr const char* kListing2 =
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

TEST(PaperOptions, Listing2RunsUnchangedThroughSbatch) {
  LocalCluster cluster;
  // 48 tasks on a node need 48 cores: virtual nodes of that size.
  cluster.start_agent("n1", 48);
  cluster.start_agent("n2", 48);
  ASSERT_TRUE(cluster.wait_nodes_up(2)) << cluster.logs();
  const fs::path work = cluster.work_dir();
  fs::create_directories(work / "bin");
  std::ofstream(work / "listing2.sh") << kListing2;
  {
    std::ofstream app(work / "bin" / "test_app");
    app << "#!/bin/sh\necho \"test_app task $SCHED_PROCID of $SCHED_NTASKS\"\n";
  }
  fs::permissions(work / "bin" / "test_app", fs::perms::owner_all | fs::perms::group_read |
                                                 fs::perms::group_exec | fs::perms::others_read |
                                                 fs::perms::others_exec);
  // The job takes the submitting environment (sbatch's --export=ALL): the
  // Slurm links and test_app are on its PATH as on the user's.
  const char* path = std::getenv("PATH");
  const std::string err_path = work.string() + "/sbatch.err";
  Process sbatch(
      {"/usr/bin/env", "-C", work.string(), "-u", "SCHED_JOB_ID", "-u", "SLURM_JOB_ID",
       "PATH=" + std::string(SCHED_SLURM_DIR) + ":" + (work / "bin").string() + ":" +
           (path ? path : "/usr/bin:/bin"),
       "SCHED_ENDPOINT=" + cluster.client_endpoint(), "sbatch", "--parsable", "listing2.sh"},
      err_path);
  std::string out;
  while (auto line = sbatch.read_line(std::chrono::seconds(20))) out += *line + "\n";
  const auto status = sbatch.wait(std::chrono::seconds(20));
  ASSERT_TRUE(status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0)
      << out << read_file(err_path);
  EXPECT_EQ(read_file(err_path), "") << "no option of Listing 2 is ignored or unknown";
  std::int64_t id = 0;
  std::istringstream(out) >> id;
  ASSERT_GT(id, 0) << out;

  const proto::JobInfo job = cluster.job(id);
  EXPECT_EQ(job.name, "sample_job_script");
  EXPECT_EQ(job.kind, "malleable") << "the invasive bounds make the job malleable";
  EXPECT_EQ(job.min_nodes, 1);
  EXPECT_EQ(job.max_nodes, 5);
  EXPECT_EQ(job.node_constraint, "odd");
  EXPECT_EQ(job.tasks_per_node, 48);
  EXPECT_EQ(job.walltime, 15 * 60);
  EXPECT_EQ(job.power_min_w, 100) << "the power bounds are kept and shown";
  EXPECT_EQ(job.power_max_w, 200);
  const CliRun shown = run_sched(cluster, {"show", std::to_string(id)});
  EXPECT_NE(shown.out.find(" MinPowerW=100 MaxPowerW=200"), std::string::npos) << shown.out;
  ASSERT_TRUE(cluster.wait_state(id, "COMPLETED", std::chrono::seconds(40))) << cluster.logs();
  const std::string output = read_file(cluster.job(id).output);
  int tasks = 0;
  for (auto at = output.find("test_app task "); at != std::string::npos;
       at = output.find("test_app task ", at + 1)) {
    ++tasks;
  }
  EXPECT_EQ(tasks, 48) << "srun ran test_app as a step of 48 tasks on the job's node\n" << output;
  EXPECT_NE(output.find("test_app task 47 of 48"), std::string::npos) << output;
}

}  // namespace
}  // namespace sched::testing
