// MPI expansions under sched (issue 16, docs/malleable.md "MPI
// adaptations"): Open MPI's heat solver run by `sched run --mpi=pmix
// --mall-spawn=mpi` grows by spawning its new processes itself, through the
// agents' PMIx servers and schedd's checks, on the nodes the adaptation adds;
// perf_aware grows it 2→4 on idle nodes and shrinks it 4→2 for a rigid job,
// and its grid equals a fixed-size run's. A rank that dies during an
// expansion fails the step with its reason; a cancel during one kills every
// rank on every node.
#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>

#include "cluster.hpp"
#include "test_paths.hpp"

namespace sched::testing {
namespace {

constexpr const char* kHoldPolicy = R"(
local P = { name = "hold", api = 1 }
function P.schedule(ctx)
  for _, job in ipairs(ctx.pending) do
    if job.nodes > ctx.nodes_idle or not ctx:start(job) then break end
  end
end
return P
)";

// Grows every malleable job to 4 (the failure tests: one expansion, no
// shrink).
constexpr const char* kGrowPolicy = R"(
local P = { name = "grow", api = 1 }
function P.schedule(ctx)
  for _, job in ipairs(ctx.running) do
    if job.kind == "malleable" and job.state == "RUNNING" and job.size < 4 then
      ctx:expand(job, 4)
    end
  end
end
return P
)";

constexpr const char* kMallSpawn = "--mpi=pmix --mall-spawn=mpi";

void write_file(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".new";
  std::ofstream(temporary) << text;
  std::filesystem::rename(temporary, path);  // the daemon never reads half a file
}

std::string read_proc(pid_t pid, const char* what) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/" + what, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The running ranks of the solver writing `grid` (its path is in their
// arguments, spawned ones included), with their SCHED_PROCID.
std::map<pid_t, int> ranks_of(const std::string& grid) {
  std::map<pid_t, int> ranks;
  DIR* proc = ::opendir("/proc");
  if (!proc) return ranks;
  while (const dirent* entry = ::readdir(proc)) {
    const pid_t pid = static_cast<pid_t>(std::atoi(entry->d_name));
    if (pid <= 0) continue;
    const std::string cmdline = read_proc(pid, "cmdline");
    if (cmdline.find("heat_mpi_malleable_openmpi") != 0 &&
        cmdline.find("/heat_mpi_malleable_openmpi") == std::string::npos) {
      continue;
    }
    if (cmdline.find(grid) == std::string::npos) continue;
    const std::string program = cmdline.substr(0, cmdline.find('\0'));
    if (program.find("heat_mpi_malleable_openmpi") == std::string::npos) continue;  // sched run
    const std::string stat = read_proc(pid, "stat");
    if (stat.find(") Z") != std::string::npos) continue;  // ended, not reaped yet
    const std::string env = read_proc(pid, "environ");
    const std::string key = std::string("\0SCHED_PROCID=", 14);
    const auto at = env.find(key);
    ranks[pid] = at == std::string::npos ? -1 : std::atoi(env.c_str() + at + key.size());
  }
  ::closedir(proc);
  return ranks;
}

class MallMpiExpand : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const auto& program :
         {examples_ + "/heat_mpi_openmpi", examples_ + "/heat_mpi_malleable_openmpi"}) {
      ASSERT_TRUE(std::filesystem::exists(program))
          << program << " was not built: Open MPI missing at configure time? (install-deps.sh)";
    }
  }

  void start(ClusterOptions options) {
    // perf_aware requires the shipped libraries (lib/*.lua).
    std::filesystem::create_directory_symlink(std::string(SCHED_SOURCE_POLICY_DIR) + "/lib",
                                              dir_.str() + "/lib");
    write_file(policy_, kHoldPolicy);
    options.policy = policy_;
    cluster_ = std::make_unique<LocalCluster>(options);
    for (const char* node : {"n1", "n2", "n3", "n4"}) cluster_->start_agent(node, 1);
    ASSERT_TRUE(cluster_->wait_nodes_up(4)) << cluster_->logs();
    std::filesystem::create_directories(cluster_->work_dir());
  }

  // The solver on `nodes` nodes (one rank each), writing `grid`.
  std::int64_t heat_job(const std::string& kind, int nodes, const std::string& args,
                        const std::string& grid, const std::string& run_options) {
    const std::string app =
        examples_ + (kind == "malleable" ? "/heat_mpi_malleable_openmpi" : "/heat_mpi_openmpi");
    proto::SubmitRequest request;
    request.job.name = "heat-mpi";
    request.job.kind = kind;
    request.job.nodes = nodes;
    request.job.min_nodes = kind == "malleable" ? 1 : nodes;
    request.job.max_nodes = kind == "malleable" ? 4 : nodes;
    request.job.workdir = cluster_->work_dir();
    request.job.env["SCHED"] = SCHED_CLI_BIN;
    request.job.env["APP"] = app;
    // probe_all talks through the library's own transport: the first set
    // finds its peers here (the spawned ones learn theirs over MPI).
    request.job.env["SCHED_MALL_RENDEZVOUS_DIR"] = cluster_->work_dir() + "/rendezvous-" + grid;
    // Open MPI's shared-memory transport is per host: the virtual nodes share one.
    request.job.env["OMPI_MCA_btl"] = "self,tcp";
    request.job.script = "#!/bin/sh\n$SCHED run " + run_options + " -n " + std::to_string(nodes) +
                         " $APP " + args + " --out " + grid_path(grid) +
                         "\necho \"step status $?\"\n";
    return cluster_->client().call<proto::SubmitReply>(proto::type::kSubmit, request).id;
  }

  std::string grid_path(const std::string& grid) { return cluster_->work_dir() + "/" + grid; }
  std::string output(std::int64_t id) { return read_file(cluster_->job(id).output); }

  // A malleable solver of 2 ranks held at iteration 20 until one
  // adaptation is done, spending `window_ms` in its window; then grown to 4.
  // Returns once it is ADAPTING with its 4 processes running.
  std::int64_t grow_and_catch_window(const std::string& grid) {
    const auto id = heat_job("malleable", 2, args_ + probing_ + " --hold 20:1 --window-ms 30000",
                             grid, kMallSpawn);
    EXPECT_TRUE(
        eventually([&] { return cluster_->job(id).mtct.has_value(); }, std::chrono::seconds(60)))
        << output(id) << cluster_->logs();
    write_file(policy_, kGrowPolicy);
    EXPECT_TRUE(eventually(
        [&] { return cluster_->job(id).state == "ADAPTING" && ranks_of(grid).size() == 4; },
        std::chrono::seconds(60)))
        << output(id) << cluster_->logs();
    return id;
  }

  const std::string examples_ = std::filesystem::path(SCHED_HEAT_BIN).parent_path().string();
  TempDir dir_{"sched-mall-mpi-expand-test"};
  std::string policy_ = dir_.str() + "/policy.lua";
  std::unique_ptr<LocalCluster> cluster_;
  const std::string args_ = "--nx 24 --ny 37 --iters 60 --sleep-ms 10";
  const std::string probing_ = " --probe-every 5";
};

TEST_F(MallMpiExpand, AHeatSolverGrownAndShrunkByPerfAwareSpawnsItsRanksAndEndsWithTheFixedGrid) {
  ClusterOptions options;
  options.adapt_timeout_s = 60;  // spawning under load takes a while
  start(options);
  const auto fixed = heat_job("rigid", 4, args_, "fixed.grid", "--mpi=pmix");
  ASSERT_TRUE(cluster_->wait_state(fixed, "COMPLETED", std::chrono::seconds(90)))
      << output(fixed) << cluster_->logs();
  ASSERT_NE(output(fixed).find("step status 0"), std::string::npos) << output(fixed);
  const std::string expected = read_file(grid_path("fixed.grid"));
  ASSERT_FALSE(expected.empty()) << output(fixed);

  // Held at iteration 20 until both adaptations are done: whatever the
  // machine's pace, the solver is still running when perf_aware decides.
  const auto id =
      heat_job("malleable", 2, args_ + probing_ + " --hold 20:2", "resized.grid", kMallSpawn);
  ASSERT_TRUE(
      eventually([&] { return cluster_->job(id).mtct.has_value(); }, std::chrono::seconds(60)))
      << output(id) << cluster_->logs();
  // perf_aware gives the two idle nodes to the malleable job...
  write_file(policy_, read_file(std::string(SCHED_SOURCE_POLICY_DIR) + "/perf_aware.lua"));
  ASSERT_TRUE(eventually(
      [&] {
        const auto job = cluster_->job(id);
        return job.nodes == 4 && job.state == "RUNNING";
      },
      std::chrono::seconds(90)))
      << output(id) << cluster_->logs();
  ASSERT_TRUE(eventually([&] { return output(id).find("resized 2 -> 4") != std::string::npos; },
                         std::chrono::seconds(30)))
      << output(id) << cluster_->logs();
  // ...whose new ranks the solver spawned there: four ranks run.
  EXPECT_EQ(ranks_of("resized.grid").size(), 4u) << output(id);
  // ...and takes two back to start a rigid job that waits.
  const std::string release = cluster_->work_dir() + "/release";
  const auto rigid =
      cluster_->submit("#!/bin/sh\nwhile [ ! -e " + release + " ]; do sleep 0.1; done\n", 2);
  ASSERT_TRUE(cluster_->wait_state(rigid, "RUNNING", std::chrono::seconds(90)))
      << output(id) << cluster_->logs();
  ASSERT_TRUE(eventually(
      [&] { return output(id).find("2 ranks at the end, 2 adaptations") != std::string::npos; },
      std::chrono::seconds(120)))
      << output(id) << cluster_->logs();
  const std::string out = output(id);
  // The figures as rank 0 measured them, for the record (not asserted).
  for (const char* resize : {"resized 2 -> 4", "resized 4 -> 2"}) {
    const auto at = out.find(resize);
    ASSERT_NE(at, std::string::npos) << out;
    std::cout << out.substr(at, out.find('\n', at) - at) << "\n";
  }
  const auto job = cluster_->job(id);
  EXPECT_EQ(job.expansions, 1);
  EXPECT_EQ(job.shrinks, 1);
  EXPECT_EQ(read_file(grid_path("resized.grid")), expected) << out;
  ASSERT_TRUE(cluster_->wait_state(id, "COMPLETED", std::chrono::seconds(90)))
      << output(id) << cluster_->logs();
  EXPECT_NE(output(id).find("step status 0"), std::string::npos) << output(id);
  EXPECT_TRUE(eventually([&] { return ranks_of("resized.grid").empty(); }));
  std::ofstream(release) << "go\n";
  ASSERT_TRUE(cluster_->wait_state(rigid, "COMPLETED", std::chrono::seconds(30)))
      << cluster_->logs();
}

TEST_F(MallMpiExpand, ARankThatDiesDuringAnExpansionFailsTheStepWithItsReason) {
  ClusterOptions options;
  options.adapt_timeout_s = 120;  // the dead rank, not the timeout, ends it
  start(options);
  const auto id = grow_and_catch_window("died.grid");
  ASSERT_FALSE(HasFailure());
  // A spawned rank (the adaptation's new rank 3) dies in the window.
  pid_t victim = 0;
  for (const auto& [pid, rank] : ranks_of("died.grid")) {
    if (rank == 3) victim = pid;
  }
  ASSERT_NE(victim, 0) << output(id);
  ASSERT_EQ(::kill(victim, SIGKILL), 0);
  ASSERT_TRUE(cluster_->wait_state(id, "FAILED", std::chrono::seconds(60)))
      << output(id) << cluster_->logs();
  const auto job = cluster_->job(id);
  std::cout << "reason: " << job.reason << "\n";  // for the record
  EXPECT_NE(job.reason.find("adaptation failed"), std::string::npos) << job.reason;
  EXPECT_NE(job.reason.find("rank 3 ended"), std::string::npos) << job.reason;
  EXPECT_TRUE(eventually([&] { return ranks_of("died.grid").empty(); }, std::chrono::seconds(30)))
      << cluster_->logs();
}

TEST_F(MallMpiExpand, ACancelDuringAnExpansionKillsEveryRankOnEveryNode) {
  ClusterOptions options;
  options.adapt_timeout_s = 120;
  start(options);
  const auto id = grow_and_catch_window("cancelled.grid");
  ASSERT_FALSE(HasFailure());
  cluster_->client().call<proto::Empty>(proto::type::kCancel, proto::JobRef{id});
  ASSERT_TRUE(cluster_->wait_state(id, "CANCELLED", std::chrono::seconds(60))) << cluster_->logs();
  EXPECT_TRUE(
      eventually([&] { return ranks_of("cancelled.grid").empty(); }, std::chrono::seconds(30)))
      << cluster_->logs();
}

TEST_F(MallMpiExpand, ASpawnElsewhereThanTheExpansionsNodesIsRefusedWithItsReason) {
  ClusterOptions options;
  options.adapt_timeout_s = 120;  // the refusal, not the timeout, ends it
  start(options);
  // The solver names n1 (one of its own) for its new ranks, not the nodes
  // the scheduler adds.
  const auto id = heat_job("malleable", 2, args_ + probing_ + " --hold 20:1 --host n1",
                           "elsewhere.grid", kMallSpawn);
  ASSERT_TRUE(
      eventually([&] { return cluster_->job(id).mtct.has_value(); }, std::chrono::seconds(60)))
      << output(id) << cluster_->logs();
  write_file(policy_, kGrowPolicy);
  ASSERT_TRUE(cluster_->wait_state(id, "FAILED", std::chrono::seconds(90)))
      << output(id) << cluster_->logs();
  const std::string out = output(id);
  EXPECT_NE(out.find("sched: MPI_Comm_spawn refused: MPI_Comm_spawn on hosts n1,n1 does not "
                     "match the expansion under way"),
            std::string::npos)
      << out;
  EXPECT_NE(cluster_->job(id).reason.find("adaptation failed"), std::string::npos)
      << cluster_->job(id).reason;
  EXPECT_TRUE(eventually([&] { return ranks_of("elsewhere.grid").empty(); })) << cluster_->logs();
  // The engine runs on: the next job gets all four nodes.
  write_file(policy_, kHoldPolicy);
  const auto next = cluster_->submit("#!/bin/sh\necho next\n", 4);
  ASSERT_TRUE(cluster_->wait_state(next, "COMPLETED", std::chrono::seconds(60)))
      << cluster_->logs();
}

TEST_F(MallMpiExpand, AProgramThatNeverSpawnsFailsItsAdaptationByTheTimeout) {
  ClusterOptions options;
  options.adapt_timeout_s = 3;
  start(options);
  // mall_probe follows adaptations with the library alone: it never spawns.
  proto::SubmitRequest request;
  request.job.name = "no-spawn";
  request.job.kind = "malleable";
  request.job.nodes = 2;
  request.job.min_nodes = 1;
  request.job.max_nodes = 4;
  request.job.workdir = cluster_->work_dir();
  request.job.env["SCHED"] = SCHED_CLI_BIN;
  request.job.env["APP"] = SCHED_MALL_PROBE_BIN;
  request.job.script = "#!/bin/sh\n$SCHED run " + std::string(kMallSpawn) + " -n 2 $APP 20 " +
                       cluster_->work_dir() + "/never\necho \"step status $?\"\n";
  const auto id = cluster_->client().call<proto::SubmitReply>(proto::type::kSubmit, request).id;
  ASSERT_TRUE(eventually([&] { return output(id).find("start on 2") != std::string::npos; },
                         std::chrono::seconds(60)))
      << output(id) << cluster_->logs();
  write_file(policy_, kGrowPolicy);
  ASSERT_TRUE(cluster_->wait_state(id, "FAILED", std::chrono::seconds(90)))
      << output(id) << cluster_->logs();
  const auto job = cluster_->job(id);
  std::cout << "reason: " << job.reason << "\n";  // for the record
  EXPECT_NE(job.reason.find("adaptation failed"), std::string::npos) << job.reason;
  // The engine runs on: the next job gets all four nodes.
  write_file(policy_, kHoldPolicy);
  const auto next = cluster_->submit("#!/bin/sh\necho next\n", 4);
  ASSERT_TRUE(cluster_->wait_state(next, "COMPLETED", std::chrono::seconds(60)))
      << cluster_->logs();
}

TEST_F(MallMpiExpand, MallSpawnMpiWithoutPmixIsRefusedWithItsReason) {
  start(ClusterOptions{});
  const auto id = heat_job("malleable", 2, args_, "refused.grid", "--mpi=pmi2 --mall-spawn=mpi");
  ASSERT_TRUE(cluster_->wait_state(id, "COMPLETED", std::chrono::seconds(60))) << cluster_->logs();
  const std::string out = output(id);
  EXPECT_NE(out.find("--mall-spawn=mpi needs --mpi=pmix"), std::string::npos) << out;
  EXPECT_EQ(out.find("step status 0"), std::string::npos) << out;
  EXPECT_FALSE(std::filesystem::exists(grid_path("refused.grid")));
}

}  // namespace
}  // namespace sched::testing
