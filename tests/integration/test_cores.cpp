// An invasive partition (issue 20 item 2) on a local cluster: a rigid
// partition of whole nodes beside a partition of kind "cores". Two jobs of
// one core each share the cores node, each pinned to its own core (read
// back from /proc/self/status by the job itself); a third that does not fit
// waits until one ends; the rigid partition runs as before.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "cluster.hpp"

namespace sched::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// Generous: the machine running the tests may be loaded.
constexpr std::chrono::milliseconds kLong = 60s;

std::string describe(const CliRun& run) {
  return "status " + std::to_string(run.status) + "\nstdout:\n" + run.out + "stderr:\n" + run.err;
}

ClusterOptions two_kinds() {
  ClusterOptions options;
  options.policy = "fcfs";
  options.extra_config = R"(
[partitions.rigid]
nodes = "n1"
default = true

[partitions.shared]
nodes = "c1"
kind = "cores"
)";
  return options;
}

std::string slurp(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Waits (generously: the machine is loaded) until the file has a whole line.
bool wait_line(const fs::path& path, std::chrono::seconds limit = 60s) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    const std::string text = slurp(path);
    if (!text.empty() && text.back() == '\n') return true;
    std::this_thread::sleep_for(50ms);
  }
  return false;
}

class InvasivePartition : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_.start_agent("n1");
    // A virtual node of 2 cores: its core k is this host's core k (the host
    // has 2; with fewer, both map onto one and the pinning check says so).
    cluster_.start_agent("c1", 2);
    ASSERT_TRUE(cluster_.wait_nodes_up(2)) << cluster_.logs();
    work_ = cluster_.work_dir();
    fs::create_directories(work_);
  }

  std::int64_t submitted(const std::vector<std::string>& args) {
    std::vector<std::string> all = {"submit",       "--parsable", "-D",
                                    work_.string(), "-o",         "out-%j.txt"};
    all.insert(all.end(), args.begin(), args.end());
    const CliRun run = run_sched(cluster_, all);
    EXPECT_EQ(run.status, 0) << describe(run);
    std::int64_t id = 0;
    std::istringstream(run.out) >> id;
    return id;
  }

  LocalCluster cluster_{two_kinds()};
  fs::path work_;
};

TEST_F(InvasivePartition, TwoJobsShareANodeByCoresEachPinnedAndAThirdWaits) {
  // Each job writes the CPUs it may run on, then waits for `release`.
  const auto job = [&](const std::string& tag) {
    return submitted({"-p", "shared", "--cores=1", "--wrap",
                      "grep Cpus_allowed_list /proc/self/status > " + tag +
                          ".cpus; while [ ! -e release ]; do sleep 0.1; done"});
  };
  const std::int64_t a = job("a");
  const std::int64_t b = job("b");
  ASSERT_TRUE(cluster_.wait_state(a, "RUNNING", kLong)) << cluster_.logs();
  ASSERT_TRUE(cluster_.wait_state(b, "RUNNING", kLong)) << cluster_.logs();
  const std::int64_t c = job("c");
  const std::int64_t r = submitted({"-N", "1", "--wrap", "true"});
  EXPECT_TRUE(cluster_.wait_state(r, "COMPLETED", kLong)) << "the rigid partition runs on\n"
                                                          << cluster_.logs();

  // Both on c1, each on its own core.
  const auto a_info = cluster_.job(a);
  const auto b_info = cluster_.job(b);
  EXPECT_EQ(a_info.nodelist, std::vector<std::string>{"c1"});
  EXPECT_EQ(b_info.nodelist, std::vector<std::string>{"c1"});
  ASSERT_TRUE(a_info.core_ids && b_info.core_ids);
  const std::vector<int> a_cores = a_info.core_ids->at("c1");
  const std::vector<int> b_cores = b_info.core_ids->at("c1");
  ASSERT_EQ(a_cores.size(), 1u);
  ASSERT_EQ(b_cores.size(), 1u);
  EXPECT_NE(a_cores[0], b_cores[0]);

  // Pinned: each job's own view of its CPUs is its core (host core k).
  ASSERT_TRUE(wait_line(work_ / "a.cpus")) << cluster_.logs();
  ASSERT_TRUE(wait_line(work_ / "b.cpus")) << cluster_.logs();
  EXPECT_EQ(slurp(work_ / "a.cpus"), "Cpus_allowed_list:\t" + std::to_string(a_cores[0]) + "\n");
  EXPECT_EQ(slurp(work_ / "b.cpus"), "Cpus_allowed_list:\t" + std::to_string(b_cores[0]) + "\n");

  // The third does not fit: it waits, and the node shows both cores busy.
  EXPECT_EQ(cluster_.job(c).state, "PENDING");
  EXPECT_FALSE(fs::exists(work_ / "c.cpus"));
  const CliRun nodes = run_sched(cluster_, {"nodes", "-N", "-n", "c1"});
  EXPECT_EQ(nodes.status, 0) << describe(nodes);
  EXPECT_NE(nodes.out.find("2/2"), std::string::npos) << nodes.out;
  EXPECT_NE(nodes.out.find(std::to_string(a) + "," + std::to_string(b)), std::string::npos)
      << nodes.out;
  const CliRun shown = run_sched(cluster_, {"show", std::to_string(a)});
  EXPECT_NE(shown.out.find("NumCores=1 Cores=c1:" + std::to_string(a_cores[0])), std::string::npos)
      << shown.out;

  // Released: a and b end, c gets a core and ends too.
  std::ofstream(work_ / "release") << "go\n";
  for (std::int64_t id : {a, b, c}) {
    EXPECT_TRUE(cluster_.wait_state(id, "COMPLETED", kLong)) << id << "\n" << cluster_.logs();
  }
  ASSERT_TRUE(wait_line(work_ / "c.cpus"));
  const auto c_info = cluster_.job(c);
  EXPECT_EQ(c_info.nodelist, std::vector<std::string>{"c1"});
}

TEST_F(InvasivePartition, MoreCoresThanThePartitionHasIsRefusedAtSubmit) {
  const CliRun run = run_sched(
      cluster_, {"submit", "-p", "shared", "--cores=3", "-D", work_.string(), "--wrap", "true"});
  EXPECT_NE(run.status, 0);
  EXPECT_NE(run.err.find("job needs 3 cores; partition shared has 2"), std::string::npos)
      << describe(run);
}

}  // namespace
}  // namespace sched::testing
