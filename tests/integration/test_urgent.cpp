// Urgent jobs on a real local cluster (issue 17 item 3): the bundled
// policies start an urgent job by shrinking a malleable job, or else by
// suspending a rigid one, whose processes are really frozen and which
// resumes and completes; and only admins and [urgent] users may submit one.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "cluster.hpp"
#include "process.hpp"
#include "test_paths.hpp"
#include "users.hpp"

namespace sched::testing {
namespace {

using namespace std::chrono_literals;

std::string describe(const CliRun& run) {
  return "exit " + std::to_string(run.status) + "\nstdout:\n" + run.out + "stderr:\n" + run.err;
}

std::int64_t submit_urgent(LocalCluster& cluster, const std::string& script, int nodes) {
  proto::SubmitRequest request;
  request.job.name = "urgent";
  request.job.nodes = nodes;
  request.job.urgent = true;
  request.job.workdir = cluster.work_dir();
  request.job.script = script;
  return cluster.submit(request);
}

std::string text_of(const std::string& path) {
  std::ifstream in(path);
  std::stringstream out;
  out << in.rdbuf();
  return out.str();
}

// Whether every process of `pid` is stopped: its cgroup frozen (v1
// freezer.state, v2 cgroup.events "frozen 1") or the process itself in
// state T (SIGSTOP, when the node has no freezer).
bool frozen(pid_t pid) {
  const std::string status = text_of("/proc/" + std::to_string(pid) + "/status");
  if (status.find("State:\tT") != std::string::npos) return true;
  std::istringstream cgroups(text_of("/proc/" + std::to_string(pid) + "/cgroup"));
  for (std::string line; std::getline(cgroups, line);) {
    const auto first = line.find(':');
    const auto second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const std::string path = line.substr(second + 1);
    if (controllers == "freezer" &&
        text_of("/sys/fs/cgroup/freezer" + path + "/freezer.state").starts_with("FROZEN")) {
      return true;
    }
    if (controllers.empty() &&
        text_of("/sys/fs/cgroup" + path + "/cgroup.events").find("frozen 1") != std::string::npos) {
      return true;
    }
  }
  return false;
}

int counter(const std::string& path) {
  const std::string text = text_of(path);
  return text.empty() ? 0 : std::atoi(text.c_str());
}

// A rigid job that counts to 40 in tenths of a second, its pid and count in
// files of the work folder.
std::string counting_script(const std::string& dir) {
  return "#!/bin/sh\necho $$ > " + dir + "/pid\ni=0\nwhile [ $i -lt 40 ]; do\n  i=$((i+1))\n" +
         "  echo $i > " + dir + "/count\n  sleep 0.1\ndone\necho counted $i\n";
}

TEST(Urgent, ARigidJobIsSuspendedFrozenResumedAndCompletes) {
  ClusterOptions options;
  options.policy = "easy_backfill";
  LocalCluster cluster(options);
  cluster.start_agent("n1");
  ASSERT_TRUE(cluster.wait_nodes_up(1)) << cluster.logs();
  const std::string dir = cluster.work_dir();
  std::filesystem::create_directories(dir);

  const std::int64_t rigid = cluster.submit(counting_script(dir), 1, 60, "rigid");
  ASSERT_TRUE(eventually([&] { return counter(dir + "/count") >= 3; })) << cluster.logs();
  const pid_t pid = std::atoi(text_of(dir + "/pid").c_str());
  ASSERT_GT(pid, 0);

  const std::int64_t urgent = submit_urgent(cluster, "#!/bin/sh\nsleep 1.5\necho urgent\n", 1);
  ASSERT_TRUE(cluster.wait_state(rigid, "SUSPENDED", 5s)) << cluster.logs();
  ASSERT_TRUE(cluster.wait_state(urgent, "RUNNING", 5s)) << cluster.logs();
  // Its processes are really stopped: frozen, and the count stands still.
  ASSERT_TRUE(eventually([&] { return frozen(pid); }, 3s)) << cluster.logs();
  const int before = counter(dir + "/count");
  std::this_thread::sleep_for(600ms);
  EXPECT_EQ(counter(dir + "/count"), before) << "a suspended job makes no progress";
  EXPECT_LT(before, 40);
  // `sched queue` shows it as Slurm does: S.
  const CliRun queue = run_sched(cluster, {"queue"});
  EXPECT_NE(queue.out.find(" S "), std::string::npos) << describe(queue);

  ASSERT_TRUE(cluster.wait_state(urgent, "COMPLETED")) << cluster.logs();
  // Resumed on its node once the urgent job is gone; it counts on to the end.
  ASSERT_TRUE(cluster.wait_state(rigid, "COMPLETED", 20s)) << cluster.logs();
  EXPECT_NE(read_file(cluster.job(rigid).output).find("counted 40"), std::string::npos)
      << read_file(cluster.job(rigid).output);
  EXPECT_EQ(cluster.job(rigid).nodelist, std::vector<std::string>{"n1"});
}

// The malleable test application of test_adaptation.cpp.
TEST(Urgent, AnUrgentJobStartsByShrinkingAMalleableJob) {
  ClusterOptions options;
  options.policy = "perf_aware";
  LocalCluster cluster(options);
  for (const char* node : {"n1", "n2"}) cluster.start_agent(node);
  ASSERT_TRUE(cluster.wait_nodes_up(2)) << cluster.logs();
  const std::string dir = cluster.work_dir();
  std::filesystem::create_directories(dir);
  const std::string pids = dir + "/pids";
  const std::string stop = dir + "/stop";

  proto::SubmitRequest request;
  request.job.name = "mall";
  request.job.kind = "malleable";
  request.job.nodes = 2;
  request.job.min_nodes = 1;
  request.job.max_nodes = 2;
  request.job.workdir = dir;
  request.job.env["SCHED"] = SCHED_CLI_BIN;
  request.job.env["APP"] = SCHED_MALL_PROBE_BIN;
  request.job.env["MALL_PROBE_PIDS"] = pids;
  request.job.env["SCHED_MALL_TIMEOUT_MS"] = "5000";
  request.job.script = "#!/bin/sh\n$SCHED run $APP 2 " + stop + "\necho \"step status $?\"\n";
  const std::int64_t mall = cluster.submit(request);
  ASSERT_TRUE(eventually([&] {
    return read_file(cluster.job(mall).output).find("start on") != std::string::npos;
  })) << cluster.logs();

  const std::int64_t urgent = submit_urgent(cluster, "#!/bin/sh\necho urgent\n", 1);
  ASSERT_TRUE(cluster.wait_state(urgent, "COMPLETED")) << cluster.logs();
  // (perf_aware may grow it back into the node the urgent job left.)
  const proto::JobInfo info = cluster.job(mall);
  EXPECT_NE(info.state, "SUSPENDED") << "shrunk, not suspended";
  EXPECT_EQ(info.shrinks, 1);
  EXPECT_NE(read_file(info.output).find("resized 2->1"), std::string::npos)
      << read_file(info.output);

  std::ofstream(stop) << "stop\n";
  ASSERT_TRUE(cluster.wait_state(mall, "COMPLETED")) << cluster.logs();
  std::ifstream in(pids);
  for (pid_t pid = 0; in >> pid;) ::kill(pid, SIGKILL);
}

TEST(Urgent, OnlyAdminsAndUrgentUsersMaySubmitUrgentJobs) {
  const auto alice = ensure_user("sched_alice");
  const auto bob = ensure_user("sched_bob");
  if (!alice || !bob) GTEST_SKIP() << "needs root, to create test users and run as them";
  ClusterOptions options;
  options.extra_config = "\n[urgent]\nusers = [\"sched_alice\"]\n";
  LocalCluster cluster(options);
  cluster.start_agent("n1");
  ASSERT_TRUE(cluster.wait_nodes_up(1)) << cluster.logs();
  const std::string workdir = shared_workdir(cluster);
  Process events({SCHED_CLI_BIN, "--endpoint", cluster.client_endpoint(), "events", "--topic",
                  "auth.denied", "--count", "1"});
  std::this_thread::sleep_for(300ms);  // the subscription reaches schedd

  const auto submit_as = [&](const TestUser& user) {
    TempDir temp("sched-urgent");
    const std::string err_path = temp.str() + "/stderr";
    Process process(
        command_as(user, {SCHED_CLI_BIN, "--endpoint", cluster.client_endpoint(), "submit",
                          "--parsable", "-D", workdir, "--urgent", "--wrap", "true"}),
        err_path);
    CliRun run;
    while (auto line = process.read_line(10s)) run.out += *line + "\n";
    if (const auto status = process.wait(10s); status && WIFEXITED(*status)) {
      run.status = WEXITSTATUS(*status);
    }
    run.err = read_file(err_path);
    return run;
  };
  const CliRun refused = submit_as(*bob);
  EXPECT_EQ(refused.status, 1) << describe(refused);
  EXPECT_EQ(refused.err,
            "sched: permission denied: urgent priority is for administrators and the users of "
            "[urgent] users (sched_bob is neither)\n")
      << describe(refused);
  const auto line = events.read_line(5s);
  ASSERT_TRUE(line) << cluster.logs();
  EXPECT_NE(line->find("\"user\":\"sched_bob\""), std::string::npos) << *line;
  EXPECT_NE(line->find("\"code\":\"permission_denied\""), std::string::npos) << *line;

  const CliRun allowed = submit_as(*alice);
  ASSERT_EQ(allowed.status, 0) << describe(allowed);
  const std::int64_t id = std::stoll(allowed.out);
  EXPECT_TRUE(cluster.job(id).urgent);
  EXPECT_TRUE(cluster.wait_state(id, "COMPLETED")) << cluster.logs();
}

}  // namespace
}  // namespace sched::testing
