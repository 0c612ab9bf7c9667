// Job containment against the machine's real cgroup hierarchy: what
// open_cgroups chooses here, and for cgroup2/cgroup1 the whole life of a
// job's cgroup (create with a limit, a forked child placed in it before
// exec, stats, an OOM kill, kill everything, remove, stale cleanup). Where
// nothing is writable the tests say so and check the `none` fallback.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "sched/agent/cgroup.hpp"
#include "sched/agent/processes.hpp"

namespace sched::agent {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::string slurp(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A node name of its own per test run: runs never meet each other's cgroups.
std::string test_node() { return "cgtest-" + std::to_string(::getpid()); }

std::optional<TaskExit> wait_exit(ProcessTable& table, TaskId task,
                                  std::chrono::seconds limit = 10s) {
  const auto give_up = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < give_up) {
    for (auto& exit : table.reap()) {
      if (exit.task == task) return exit;
    }
    std::this_thread::sleep_for(5ms);
  }
  return std::nullopt;
}

class CgroupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cgroups_ = open_cgroups(CgroupOptions{test_node()}, &why_);
    std::cout << "[ hierarchy ] " << why_ << "\n";
    std::string name = (fs::temp_directory_path() / "sched-cg-XXXXXX").string();
    if (::mkdtemp(name.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = name;
  }
  void TearDown() override {
    if (cgroups_) cgroups_->clean_stale();
    std::error_code ec;
    fs::remove_all(dir_, ec);
    // The test's node subtree goes too (the agent keeps its own).
    for (const char* base : {"/sys/fs/cgroup/memory", "/sys/fs/cgroup/freezer",
                             "/sys/fs/cgroup/cpuacct", "/sys/fs/cgroup/pids",
                             "/sys/fs/cgroup/cpuset", "/sys/fs/cgroup/unified", "/sys/fs/cgroup"}) {
      ::rmdir((fs::path(base) / "sched" / test_node()).c_str());
    }
  }
  bool contained() const { return cgroups_->kind() != "none"; }
  // The cgroup (v2) or memory cgroup (v1) a process is in.
  static std::string cgroup_of(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/cgroup");
    std::string line, found;
    while (std::getline(in, line)) {
      if (line.find(":memory:") != std::string::npos) return line.substr(line.rfind(':') + 1);
      if (line.rfind("0::", 0) == 0) found = line.substr(3);
    }
    return found;
  }
  BatchLaunch batch(JobId job, const std::string& script,
                    const std::vector<std::string>& procs) const {
    BatchLaunch b;
    b.job = job;
    b.script = script;
    b.workdir = dir_.string();
    b.output_path = (dir_ / ("out-" + std::to_string(job))).string();
    b.spool_dir = (dir_ / "spool").string();
    b.cgroup_procs = procs;
    return b;
  }

  std::unique_ptr<Cgroups> cgroups_;
  std::string why_;
  fs::path dir_;
  ProcessTable table_;
};

TEST_F(CgroupTest, ChoosesAHierarchyAndSaysWhy) {
  const std::string kind(cgroups_->kind());
  EXPECT_TRUE(kind == "cgroup2" || kind == "cgroup1" || kind == "none") << kind;
  EXPECT_NE(why_.find("containment " + kind), std::string::npos) << why_;
  // `none` on request, whatever the machine has; nonsense is refused.
  std::string why;
  EXPECT_EQ(open_cgroups(CgroupOptions{test_node(), "none"}, &why)->kind(), "none");
  EXPECT_THROW(open_cgroups(CgroupOptions{test_node(), "cgroup3"}, &why), CgroupError);
  EXPECT_THROW(open_cgroups(CgroupOptions{"../escape"}, &why), CgroupError);
  // A hierarchy that is not there cannot be asked for.
  EXPECT_THROW(open_cgroups(CgroupOptions{test_node(), "cgroup1", dir_.string()}, &why),
               CgroupError);
  EXPECT_EQ(open_cgroups(CgroupOptions{test_node(), "auto", dir_.string()}, &why)->kind(), "none");
}

TEST_F(CgroupTest, AJobLivesInItsCgroupIsMeasuredKilledWholeAndRemoved) {
  if (!contained()) {
    // The fallback: nothing to prepare, nothing measured, the process
    // tree is what kills (ProcessTable's tests).
    EXPECT_TRUE(cgroups_->prepare(7, "batch", 64 << 20).empty());
    EXPECT_FALSE(cgroups_->usage(7).max_rss_bytes);
    GTEST_SKIP() << "no writable cgroup hierarchy here: " << why_;
  }
  const auto procs = cgroups_->prepare(7, "batch", std::uint64_t{256} << 20);
  ASSERT_FALSE(procs.empty());
  // A process that leaves its session and group: only the cgroup still has it.
  const TaskId id =
      table_.launch_batch(batch(7,
                                "setsid sh -c 'echo $$ > escaped.pid; exec sleep 60' &\n"
                                "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done\n"
                                "echo done\n",
                                procs));
  const auto pid = table_.pid(id);
  ASSERT_TRUE(pid);
  const auto exit = wait_exit(table_, id);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->error, "");
  EXPECT_EQ(exit->status, 0);
  const pid_t escaped = std::stoi(slurp(dir_ / "escaped.pid"));
  EXPECT_NE(cgroup_of(escaped).find("/sched/" + test_node() + "/job_7/batch"), std::string::npos)
      << cgroup_of(escaped);
  EXPECT_EQ(::kill(escaped, 0), 0) << "the escaped process should still run";

  const CgroupUsage usage = cgroups_->usage(7);
  ASSERT_TRUE(usage.max_rss_bytes);
  EXPECT_GT(*usage.max_rss_bytes, 0u);
  ASSERT_TRUE(usage.cpu_s);
  EXPECT_GT(*usage.cpu_s, 0.0);
  EXPECT_FALSE(usage.oom_killed);

  EXPECT_TRUE(cgroups_->kill_all(7));
  for (int i = 0; i < 200 && ::kill(escaped, 0) == 0; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_NE(::kill(escaped, 0), 0) << "kill_all left the escaped process alive";
  EXPECT_TRUE(cgroups_->remove(7));
  EXPECT_TRUE(cgroups_->clean_stale().empty());
}

TEST_F(CgroupTest, AJobOverItsMemoryIsOomKilledAndItIsSeen) {
  if (!contained()) GTEST_SKIP() << "no writable cgroup hierarchy here: " << why_;
  const auto procs = cgroups_->prepare(8, "batch", std::uint64_t{32} << 20);
  // 200 MiB, touched, in a job limited to 32 MiB.
  const TaskId id = table_.launch_batch(
      batch(8, "perl -e '$x = \"x\" x (200 * 1024 * 1024); print length($x), \"\\n\"'\n", procs));
  const auto exit = wait_exit(table_, id, 30s);
  ASSERT_TRUE(exit);
  EXPECT_NE(exit->status, 0);
  const CgroupUsage usage = cgroups_->usage(8);
  EXPECT_TRUE(usage.oom_killed);
  ASSERT_TRUE(usage.max_rss_bytes);
  EXPECT_LE(*usage.max_rss_bytes, std::uint64_t{33} << 20);
  EXPECT_TRUE(cgroups_->kill_all(8));
  EXPECT_TRUE(cgroups_->remove(8));
}

TEST_F(CgroupTest, StaleCgroupsOfAnEarlierAgentAreKilledAndRemoved) {
  if (!contained()) GTEST_SKIP() << "no writable cgroup hierarchy here: " << why_;
  const auto procs = cgroups_->prepare(9, "step_0", 0);
  const TaskId id = table_.launch_batch(batch(9, "exec sleep 60\n", procs));
  const auto pid = table_.pid(id);
  ASSERT_TRUE(pid);
  // Until the job runs `sleep`: it has joined its cgroup (before exec). A
  // child cleaned up before it joins fails to join, and exits 127 instead.
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  std::string comm;
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream in("/proc/" + std::to_string(*pid) + "/comm");
    if (std::getline(in, comm) && comm == "sleep") break;
    std::this_thread::sleep_for(5ms);
  }
  ASSERT_EQ(comm, "sleep");
  // A new agent on the same node (the old one crashed): its start cleans up.
  std::string why;
  auto successor = open_cgroups(CgroupOptions{test_node()}, &why);
  EXPECT_EQ(successor->clean_stale(), std::vector<JobId>{9});
  const auto exit = wait_exit(table_, id);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->status, -SIGKILL);
  EXPECT_TRUE(successor->clean_stale().empty());
}

// A suspended job's processes (issue 17 item 3): frozen by the cgroup (v2
// cgroup.freeze, v1 freezer.state), they make no progress until thawed; a
// node without a freezer says so, and the agent stops them by signal.
TEST_F(CgroupTest, AJobIsFrozenAndThawed) {
  if (!contained()) {
    EXPECT_FALSE(cgroups_->freeze(9, true)) << "no freezer: the caller must use signals";
    GTEST_SKIP() << "no writable cgroup hierarchy here: " << why_;
  }
  const auto procs = cgroups_->prepare(9, "batch", 0);
  const TaskId id = table_.launch_batch(
      batch(9, "i=0; while true; do i=$((i+1)); echo $i > count; sleep 0.02; done\n", procs));
  const auto count = [&] { return std::atoi(slurp(dir_ / "count").c_str()); };
  const auto give_up = std::chrono::steady_clock::now() + 5s;
  while (count() < 3 && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(10ms);
  ASSERT_GE(count(), 3);
  if (!cgroups_->freeze(9, true)) {
    GTEST_SKIP() << "this " << cgroups_->kind() << " hierarchy has no freezer";
  }
  std::this_thread::sleep_for(200ms);  // a write under way ends
  const int frozen_at = count();
  std::this_thread::sleep_for(400ms);
  EXPECT_EQ(count(), frozen_at) << "a frozen job makes no progress";
  EXPECT_TRUE(table_.alive(id));
  ASSERT_TRUE(cgroups_->freeze(9, false));
  const auto resumed_by = std::chrono::steady_clock::now() + 5s;
  while (count() <= frozen_at && std::chrono::steady_clock::now() < resumed_by) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_GT(count(), frozen_at) << "thawed, it goes on";
  // Frozen again, it is still killed whole (kill_all thaws what it kills).
  ASSERT_TRUE(cgroups_->freeze(9, true));
  EXPECT_TRUE(cgroups_->kill_all(9));
  EXPECT_TRUE(wait_exit(table_, id));
}

TEST_F(CgroupTest, WithoutAFreezerSigstopAndSigcontStopAndContinueATask) {
  const TaskId id = table_.launch_batch(
      batch(10, "i=0; while true; do i=$((i+1)); echo $i > count; sleep 0.02; done\n", {}));
  const auto count = [&] { return std::atoi(slurp(dir_ / "count").c_str()); };
  const auto give_up = std::chrono::steady_clock::now() + 5s;
  while (count() < 3 && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(10ms);
  ASSERT_GE(count(), 3);
  ASSERT_TRUE(table_.signal(id, SIGSTOP));
  const pid_t pid = *table_.pid(id);
  const auto stopped_by = std::chrono::steady_clock::now() + 5s;
  while (slurp("/proc/" + std::to_string(pid) + "/status").find("State:\tT") == std::string::npos &&
         std::chrono::steady_clock::now() < stopped_by) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_NE(slurp("/proc/" + std::to_string(pid) + "/status").find("State:\tT"), std::string::npos);
  std::this_thread::sleep_for(200ms);
  const int stopped_at = count();
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(count(), stopped_at);
  ASSERT_TRUE(table_.signal(id, SIGCONT));
  const auto resumed_by = std::chrono::steady_clock::now() + 5s;
  while (count() <= stopped_at && std::chrono::steady_clock::now() < resumed_by) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_GT(count(), stopped_at);
  EXPECT_FALSE(table_.signal(12345, SIGCONT)) << "an unknown task";
  table_.kill(id, 0s);
  EXPECT_TRUE(wait_exit(table_, id));
}

// "Cpus_allowed_list:\t1" of /proc/PID/status: the CPUs the process may run on.
std::string cpus_allowed(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("Cpus_allowed_list:", 0) == 0) {
      std::string value = line.substr(line.find(':') + 1);
      value.erase(0, value.find_first_not_of(" \t"));
      return value;
    }
  }
  return "";
}

// A job of an invasive partition (issue 20 item 2) is confined to its CPUs:
// its script starts pinned there (sched_setaffinity before exec) and, with
// a cpuset cgroup (v1 here), cannot widen its own affinity past them.
TEST_F(CgroupTest, AJobOfCoresIsConfinedToItsCpus) {
  const long cpus_here = ::sysconf(_SC_NPROCESSORS_ONLN);
  const int cpu = cpus_here >= 2 ? 1 : 0;
  const auto procs = cgroups_->prepare(8, "batch", 0);
  const auto cpuset_procs = cgroups_->confine_cpus(8, "batch", {cpu});
  std::vector<std::string> all = procs;
  all.insert(all.end(), cpuset_procs.begin(), cpuset_procs.end());
  BatchLaunch launch = batch(8,
                             "echo $$ > pid.tmp && mv pid.tmp pid\n"
                             "while [ ! -e go ]; do sleep 0.05; done\n"
                             // Asks for every CPU: a cpuset keeps it on its own.
                             "taskset -acp 0-" +
                                 std::to_string(cpus_here - 1) +
                                 " $$ > /dev/null 2>&1\n"
                                 "grep Cpus_allowed_list /proc/self/status > widened\n"
                                 "sleep 30\n",
                             all);
  launch.cpus = {cpu};
  const TaskId id = table_.launch_batch(launch);
  const auto pid = table_.pid(id);
  ASSERT_TRUE(pid);
  for (int i = 0; i < 400 && !fs::exists(dir_ / "pid"); ++i) std::this_thread::sleep_for(25ms);
  ASSERT_TRUE(fs::exists(dir_ / "pid")) << "the script did not start";
  EXPECT_EQ(cpus_allowed(*pid), std::to_string(cpu)) << "pinned before exec";
  const bool has_cpuset = !cpuset_procs.empty();
  if (has_cpuset) {
    // It is in the job's cpuset cgroup, whose CPUs are the job's.
    std::ifstream in("/proc/" + std::to_string(*pid) + "/cgroup");
    std::string line, cpuset;
    while (std::getline(in, line)) {
      if (line.find(":cpuset:") != std::string::npos) cpuset = line.substr(line.rfind(':') + 1);
    }
    EXPECT_EQ(cpuset, "/sched/" + test_node() + "/job_8/batch");
    std::string set = slurp("/sys/fs/cgroup/cpuset/sched/" + test_node() + "/job_8/cpuset.cpus");
    EXPECT_EQ(set, std::to_string(cpu) + "\n");
  }
  std::ofstream(dir_ / "go") << "go\n";
  for (int i = 0; i < 400 && slurp(dir_ / "widened").empty(); ++i) {
    std::this_thread::sleep_for(25ms);
  }
  const std::string widened = slurp(dir_ / "widened");
  ASSERT_FALSE(widened.empty()) << "the script did not get past taskset";
  if (has_cpuset && cpus_here >= 2) {
    EXPECT_NE(widened.find(":\t" + std::to_string(cpu) + "\n"), std::string::npos)
        << "the cpuset let it widen its affinity: " << widened;
  }
  std::cout << "[ confined ] " << cgroups_->kind() << (has_cpuset ? " with cpuset" : " no cpuset")
            << "; after taskset: " << widened;
  table_.signal(id, SIGKILL);
  ASSERT_TRUE(wait_exit(table_, id));
  EXPECT_TRUE(cgroups_->kill_all(8));
  EXPECT_TRUE(cgroups_->remove(8));
  EXPECT_FALSE(fs::exists("/sys/fs/cgroup/cpuset/sched/" + test_node() + "/job_8"));
}

// A resize by cores (issue 20) changes a confined job's cpuset: v1 widens the
// job's set before its leaf's and narrows the leaf's before the job's (the
// kernel refuses a child wider than its parent), so both orders must work.
TEST_F(CgroupTest, AConfinedJobsCpusetWidensAndNarrowsWithItsLeaves) {
  if (::sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs two CPUs to widen to";
  const auto procs = cgroups_->prepare(9, "batch", 0);
  const auto cpuset_procs = cgroups_->confine_cpus(9, "batch", {0});
  if (cgroups_->kind() == "cgroup2") GTEST_SKIP() << "this test reads v1's cpuset files";
  if (cpuset_procs.empty()) {
    // No cpuset here (v1 without the controller, or none): nothing to change.
    EXPECT_FALSE(cgroups_->set_cpus(9, {0, 1}));
    return;
  }
  std::vector<std::string> all = procs;
  all.insert(all.end(), cpuset_procs.begin(), cpuset_procs.end());
  BatchLaunch launch = batch(9, "sleep 30\n", all);
  launch.cpus = {0};
  const TaskId id = table_.launch_batch(launch);
  const auto pid = table_.pid(id);
  ASSERT_TRUE(pid);
  const fs::path job = "/sys/fs/cgroup/cpuset/sched/" + test_node() + "/job_9";
  const auto allowed_becomes = [&](const std::string& want) {
    for (int i = 0; i < 200 && cpus_allowed(*pid) != want; ++i) std::this_thread::sleep_for(10ms);
    return cpus_allowed(*pid) == want;
  };

  ASSERT_TRUE(cgroups_->set_cpus(9, {0, 1}));
  EXPECT_EQ(slurp(job / "cpuset.cpus"), "0-1\n");
  EXPECT_EQ(slurp(job / "batch" / "cpuset.cpus"), "0-1\n");

  ASSERT_TRUE(cgroups_->set_cpus(9, {1}));
  EXPECT_EQ(slurp(job / "cpuset.cpus"), "1\n");
  EXPECT_EQ(slurp(job / "batch" / "cpuset.cpus"), "1\n");
  EXPECT_TRUE(allowed_becomes("1")) << "the process still runs on " << cpus_allowed(*pid);

  EXPECT_FALSE(cgroups_->set_cpus(10, {0})) << "a job with no cpuset";
  EXPECT_FALSE(cgroups_->set_cpus(9, {})) << "an empty set is no set";
  EXPECT_EQ(slurp(job / "cpuset.cpus"), "1\n") << "a refused change changes nothing";
  table_.signal(id, SIGKILL);
  ASSERT_TRUE(wait_exit(table_, id));
  EXPECT_TRUE(cgroups_->kill_all(9));
  EXPECT_TRUE(cgroups_->remove(9));
}

}  // namespace
}  // namespace sched::agent
