// Resizing and suspending by cores in an invasive partition (issue 20 item 2)
// on a local cluster: a malleable job's step (mall_cores) grown from 1 to 2
// cores and shrunk back, its process's Cpus_allowed_list read back from
// /proc/PID/status after each step and from the application itself; an
// urgent job started at once by shrinking a malleable job by cores, and by
// suspending a rigid job, which then resumes on its very cores and completes.
// The partition's node c1 is a virtual node of 2 cores: its core k is this
// host's CPU k modulo the host's count.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "cluster.hpp"
#include "test_paths.hpp"

namespace sched::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// Generous: the machine running the tests may be loaded.
constexpr std::chrono::milliseconds kLong = 90s;

// Starts what it can: a malleable job by cores at its fewest cores.
constexpr const char* kStartPolicy = R"(
local P = { name = "start_cores", api = 1 }
function P.schedule(ctx)
  for _, job in ipairs(ctx.pending) do
    if job.min_cores and job.min_cores < job.max_cores then
      ctx:start(job, { cores = job.min_cores })
    else
      ctx:start(job)
    end
  end
end
return P
)";

// The same, then a running malleable job grows into the free cores.
constexpr const char* kGrowPolicy = R"(
local P = { name = "grow_cores", api = 1 }
function P.schedule(ctx)
  for _, job in ipairs(ctx.pending) do ctx:start(job) end
  local free = 0
  for _, node in pairs(ctx:free_cores()) do free = free + node.free end
  for _, job in ipairs(ctx.running) do
    if job.max_cores and job.state == "RUNNING" and job.core_count < job.max_cores and free > 0 then
      ctx:expand(job, math.min(job.max_cores, job.core_count + free))
    end
  end
end
return P
)";

// A job that waits makes the running malleable jobs shrink to their fewest.
constexpr const char* kShrinkPolicy = R"(
local P = { name = "shrink_cores", api = 1 }
function P.schedule(ctx)
  local waiting = false
  for _, job in ipairs(ctx.pending) do
    if not ctx:start(job) then waiting = true end
  end
  if not waiting then return end
  for _, job in ipairs(ctx.running) do
    if job.max_cores and job.state == "RUNNING" and job.core_count > job.min_cores then
      ctx:shrink(job, job.min_cores)
    end
  end
end
return P
)";

void write_file(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".new";
  std::ofstream(temporary) << text;
  fs::rename(temporary, path);  // the daemon never reads half a file
}

// The Cpus_allowed_list the kernel shows for core ids of a virtual node
// (core k on host CPU k modulo the host's count): "0-1", "0", "0,2-3".
std::string cpu_list(const std::vector<int>& cores) {
  const long host = std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN));
  std::set<int> cpus;
  for (int core : cores) cpus.insert(static_cast<int>(core % host));
  std::string text;
  for (auto it = cpus.begin(); it != cpus.end();) {
    const int first = *it;
    int last = first;
    for (++it; it != cpus.end() && *it == last + 1; ++it) last = *it;
    if (!text.empty()) text += ",";
    text += std::to_string(first);
    if (last != first) text += "-" + std::to_string(last);
  }
  return text;
}

// A process's Cpus_allowed_list, read from /proc ("" when it is gone).
std::string cpus_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Cpus_allowed_list:", 0) == 0) {
      const auto value = line.find_first_not_of(" \t", 18);
      return value == std::string::npos ? "" : line.substr(value);
    }
  }
  return "";
}

std::vector<pid_t> pids_in(const std::string& file) {
  std::ifstream in(file);
  std::vector<pid_t> pids;
  for (pid_t pid = 0; in >> pid;) pids.push_back(pid);
  return pids;
}

class CoresResize : public ::testing::Test {
 protected:
  // `policy`: the partition's policy, a file (rewritten by the test) or a
  // bundled policy's name.
  void start(const std::string& policy) {
    fs::create_directory_symlink(std::string(SCHED_SOURCE_POLICY_DIR) + "/lib",
                                 dir_.str() + "/lib");
    write_file(policy_, kStartPolicy);
    ClusterOptions options;
    options.policy = "fcfs";
    options.adapt_backoff_s = 1;
    options.extra_config =
        "\n[partitions.rigid]\nnodes = \"n1\"\ndefault = true\n\n"
        "[partitions.shared]\nnodes = \"c1\"\nkind = \"cores\"\npolicy = \"" +
        (policy.empty() ? policy_ : policy) + "\"\n";
    cluster_ = std::make_unique<LocalCluster>(options);
    cluster_->start_agent("n1");
    cluster_->start_agent("c1", 2);
    ASSERT_TRUE(cluster_->wait_nodes_up(2)) << cluster_->logs();
    work_ = cluster_->work_dir();
    pids_ = work_ + "/pids";
    stop_ = work_ + "/stop";
  }
  void TearDown() override {
    for (pid_t pid : pids_in(pids_)) ::kill(pid, SIGKILL);
  }

  // A malleable job of MIN-MAX cores running mall_cores as a step.
  std::int64_t submit_malleable(int min_cores, int max_cores) {
    proto::SubmitRequest request;
    request.job.name = "mall";
    request.job.kind = "malleable";
    request.job.partition = "shared";
    request.job.cores = max_cores;
    request.job.min_cores = min_cores;
    request.job.max_cores = max_cores;
    request.job.workdir = work_;
    request.job.env["SCHED"] = SCHED_CLI_BIN;
    request.job.env["APP"] = SCHED_MALL_CORES_BIN;
    request.job.env["MALL_PROBE_PIDS"] = pids_;
    request.job.script = "#!/bin/sh\n$SCHED run $APP " + stop_ + "\necho \"step status $?\"\n";
    return cluster_->submit(request);
  }

  // A rigid job of `cores` cores that writes its CPUs to TAG.cpus, waits for
  // the file TAG.go, and writes them again to TAG.end.
  std::int64_t submit_rigid(const std::string& tag, int cores, bool urgent = false) {
    proto::SubmitRequest request;
    request.job.name = tag;
    request.job.partition = "shared";
    request.job.cores = cores;
    request.job.urgent = urgent;
    request.job.workdir = work_;
    request.job.script = "#!/bin/sh\ngrep Cpus_allowed_list /proc/self/status > " + tag +
                         ".cpus\nwhile [ ! -e " + tag +
                         ".go ]; do sleep 0.1; done\ngrep Cpus_allowed_list /proc/self/status > " +
                         tag + ".end\n";
    return cluster_->submit(request);
  }

  std::string output(std::int64_t id) { return read_file(cluster_->job(id).output); }
  bool output_has(std::int64_t id, const std::string& text) {
    return eventually([&] { return output(id).find(text) != std::string::npos; }, kLong);
  }
  std::vector<int> cores_of(std::int64_t id) {
    const auto info = cluster_->job(id);
    if (!info.core_ids || !info.core_ids->count("c1")) return {};
    return info.core_ids->at("c1");
  }
  std::string file(const std::string& name) { return read_file(work_ + "/" + name); }
  bool file_line(const std::string& name) {
    return eventually(
        [&] {
          const std::string text = file(name);
          return !text.empty() && text.back() == '\n';
        },
        kLong);
  }
  void release(const std::string& tag) { std::ofstream(work_ + "/" + tag + ".go") << "go\n"; }

  TempDir dir_{"sched-cores-resize"};
  std::string policy_ = dir_.str() + "/policy.lua";
  std::unique_ptr<LocalCluster> cluster_;
  std::string work_;
  std::string pids_;
  std::string stop_;
};

TEST_F(CoresResize, AMalleableJobGrowsAndShrinksByCoresAndItsProcessFollows) {
  start("");
  const std::int64_t id = submit_malleable(1, 2);
  ASSERT_TRUE(output_has(id, "start cpus")) << output(id) << cluster_->logs();
  ASSERT_EQ(cores_of(id).size(), 1u);
  ASSERT_TRUE(eventually([&] { return !pids_in(pids_).empty(); }, kLong));
  const pid_t app = pids_in(pids_).front();
  const std::string one = cpu_list(cores_of(id));
  EXPECT_EQ(cpus_of(app), one) << "started on its one core";
  EXPECT_NE(output(id).find("start cpus " + one + "\n"), std::string::npos) << output(id);

  // Grown to 2 cores: the process has them before it goes on.
  write_file(policy_, kGrowPolicy);
  ASSERT_TRUE(output_has(id, "resized 1->1 cores 2/2")) << output(id) << cluster_->logs();
  ASSERT_TRUE(eventually([&] { return cluster_->job(id).state == "RUNNING"; }, kLong));
  const std::vector<int> grown = cores_of(id);
  ASSERT_EQ(grown.size(), 2u);
  const std::string two = cpu_list(grown);
  EXPECT_EQ(cpus_of(app), two);
  EXPECT_NE(output(id).find("resized 1->1 cores 2/2 cpus " + two + "\n"), std::string::npos)
      << output(id);

  // A job that waits: the malleable one shrinks back to 1 core, narrowed
  // once it committed, and the waiting job gets the core it gave back.
  write_file(policy_, kShrinkPolicy);
  const std::int64_t waiting = submit_rigid("w", 1);
  ASSERT_TRUE(output_has(id, "resized 1->1 cores 1/1")) << output(id) << cluster_->logs();
  ASSERT_TRUE(cluster_->wait_state(waiting, "RUNNING", kLong)) << cluster_->logs();
  const std::vector<int> shrunk = cores_of(id);
  ASSERT_EQ(shrunk.size(), 1u);
  const std::string left = cpu_list(shrunk);
  EXPECT_TRUE(eventually([&] { return cpus_of(app) == left; }, kLong)) << cpus_of(app);
  EXPECT_NE(output(id).find("resized 1->1 cores 1/1 cpus " + left + "\n"), std::string::npos)
      << output(id);
  const std::vector<int> w_cores = cores_of(waiting);
  ASSERT_EQ(w_cores.size(), 1u);
  EXPECT_NE(w_cores[0], shrunk[0]) << "the core it gave back";
  ASSERT_TRUE(file_line("w.cpus"));
  EXPECT_EQ(file("w.cpus"), "Cpus_allowed_list:\t" + cpu_list(w_cores) + "\n");

  std::ofstream(stop_) << "stop\n";
  release("w");
  EXPECT_TRUE(cluster_->wait_state(id, "COMPLETED", kLong)) << output(id) << cluster_->logs();
  EXPECT_TRUE(cluster_->wait_state(waiting, "COMPLETED", kLong)) << cluster_->logs();
  EXPECT_NE(output(id).find("step status 0"), std::string::npos) << output(id);
}

TEST_F(CoresResize, AnUrgentJobStartsAtOnceBySuspendingARigidJobThatResumesOnItsCores) {
  start("easy_backfill");
  const std::int64_t rigid = submit_rigid("a", 2);
  ASSERT_TRUE(cluster_->wait_state(rigid, "RUNNING", kLong)) << cluster_->logs();
  ASSERT_TRUE(file_line("a.cpus")) << cluster_->logs();
  const std::vector<int> before = cores_of(rigid);
  ASSERT_EQ(before.size(), 2u);

  const std::int64_t urgent = submit_rigid("u", 1, true);
  ASSERT_TRUE(cluster_->wait_state(urgent, "RUNNING", kLong)) << cluster_->logs();
  EXPECT_EQ(cluster_->job(rigid).state, "SUSPENDED");
  ASSERT_TRUE(file_line("u.cpus")) << cluster_->logs();
  EXPECT_EQ(file("u.cpus"), "Cpus_allowed_list:\t" + cpu_list(cores_of(urgent)) + "\n");

  // The urgent job ends: the rigid one resumes on the very cores it had.
  release("u");
  ASSERT_TRUE(cluster_->wait_state(urgent, "COMPLETED", kLong)) << cluster_->logs();
  ASSERT_TRUE(cluster_->wait_state(rigid, "RUNNING", kLong)) << cluster_->logs();
  EXPECT_EQ(cores_of(rigid), before);
  release("a");
  ASSERT_TRUE(cluster_->wait_state(rigid, "COMPLETED", kLong)) << cluster_->logs();
  ASSERT_TRUE(file_line("a.end"));
  EXPECT_EQ(file("a.end"), file("a.cpus")) << "the same CPUs after the resume";
}

TEST_F(CoresResize, AnUrgentJobStartsByShrinkingAMalleableJobByCores) {
  start("easy_backfill");
  const std::int64_t id = submit_malleable(1, 2);  // started at 2 cores
  ASSERT_TRUE(output_has(id, "start cpus")) << output(id) << cluster_->logs();
  ASSERT_EQ(cores_of(id).size(), 2u);

  const std::int64_t urgent = submit_rigid("u", 1, true);
  ASSERT_TRUE(cluster_->wait_state(urgent, "RUNNING", kLong)) << output(id) << cluster_->logs();
  EXPECT_TRUE(output_has(id, "resized 1->1 cores 1/1")) << output(id);
  EXPECT_EQ(cluster_->job(id).state, "RUNNING") << "shrunk, not suspended";
  const std::vector<int> kept = cores_of(id);
  const std::vector<int> taken = cores_of(urgent);
  ASSERT_EQ(kept.size(), 1u);
  ASSERT_EQ(taken.size(), 1u);
  EXPECT_NE(kept[0], taken[0]);

  release("u");
  ASSERT_TRUE(cluster_->wait_state(urgent, "COMPLETED", kLong)) << cluster_->logs();
  std::ofstream(stop_) << "stop\n";
  EXPECT_TRUE(cluster_->wait_state(id, "COMPLETED", kLong)) << output(id) << cluster_->logs();
}

}  // namespace
}  // namespace sched::testing
