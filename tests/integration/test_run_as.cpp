// Jobs run as their user and inside their cgroup (issue 14 items 4 and 5),
// on a local cluster whose agents run as root (CI): a real user, alice, is
// created for the tests (useradd -M). Without root the tests skip and say so.
#include <grp.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cluster.hpp"
#include "sched/proto/process_messages.hpp"
#include "test_users.hpp"

namespace sched::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

proto::SubmitRequest job_of(const std::string& user, const fs::path& workdir,
                            const std::string& script) {
  proto::SubmitRequest request;
  request.job.name = "as-" + user;
  request.job.user = user;
  request.job.script = script;
  request.job.workdir = workdir.string();
  return request;
}

// Whether this cluster's n1 agent has a cgroup for the job, in any
// hierarchy: its subtree is sched/n1.<FNV-1a of its spool folder> (job ids of
// other clusters' agents, left by a killed run, must not count).
bool job_cgroup_exists(LocalCluster& cluster, std::int64_t id) {
  const std::string spool =
      (fs::path(cluster.work_dir()).parent_path() / "spool-n1").lexically_normal().string();
  std::uint32_t hash = 2166136261u;
  for (const unsigned char c : spool) hash = (hash ^ c) * 16777619u;
  char hex[9];
  std::snprintf(hex, sizeof hex, "%08x", hash);
  const std::string subtree = std::string("n1.") + hex + "/job_" + std::to_string(id);
  for (const char* base : {"/sys/fs/cgroup/memory/sched", "/sys/fs/cgroup/sched",
                           "/sys/fs/cgroup/unified/sched", "/sys/fs/cgroup/freezer/sched"}) {
    if (fs::exists(fs::path(base) / subtree)) return true;
  }
  return false;
}

std::string node_containment(LocalCluster& cluster) {
  const auto nodes =
      cluster.client().call<proto::NodeList>(proto::type::kNodesQuery, proto::Empty{});
  return nodes.nodes.empty() ? "" : nodes.nodes.front().containment.value_or("(absent)");
}

class RunAsUser : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to create alice and switch to her";
    alice_ = ensure_user("alice");
    ASSERT_TRUE(alice_) << "useradd alice failed";
    dir_.emplace(*alice_);
  }
  std::optional<TestUser> alice_;
  std::optional<UserDir> dir_;
};

TEST_F(RunAsUser, AlicesJobRunsAsHerInAHerCleanEnvironmentAndWritesHerFiles) {
  // The agent's environment (root's, from the tests'): none of it may
  // reach her job.
  ::setenv("SCHED_TEST_ROOT_ONLY", "secret", 1);
  LocalCluster cluster;
  cluster.start_agent("n1");
  ASSERT_TRUE(cluster.wait_nodes_up(1)) << cluster.logs();
  auto request = job_of("alice", dir_->path(),
                        "#!/bin/sh\n"
                        "id -u > uid.txt\n"
                        "echo \"user=$USER logname=$LOGNAME home=$HOME\"\n"
                        "env\n");
  request.job.env = {{"GIVEN", "yes"}};
  const auto id = cluster.submit(request);
  ASSERT_TRUE(cluster.wait_state(id, "COMPLETED")) << cluster.logs();

  EXPECT_EQ(read_file(dir_->path() / "uid.txt"), std::to_string(alice_->uid) + "\n");
  const fs::path out = dir_->path() / ("sched-" + std::to_string(id) + ".out");
  struct stat st {};
  ASSERT_EQ(::stat(out.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, alice_->uid);
  ASSERT_EQ(::stat((dir_->path() / "uid.txt").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, alice_->uid);
  const std::string text = read_file(out);
  const passwd* pw = ::getpwnam("alice");
  ASSERT_NE(pw, nullptr);
  EXPECT_NE(text.find(std::string("user=alice logname=alice home=") + pw->pw_dir + "\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("GIVEN=yes\n"), std::string::npos) << text;
  EXPECT_NE(text.find("SCHED_JOB_ID=" + std::to_string(id) + "\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("SCHED_TEST_ROOT_ONLY"), std::string::npos) << text;
  EXPECT_EQ(text.find("HOME=/root"), std::string::npos) << text;
}

TEST_F(RunAsUser, AnUnknownUsersJobFailsWithTheReasonAndRunsNothing) {
  LocalCluster cluster;
  cluster.start_agent("n1");
  ASSERT_TRUE(cluster.wait_nodes_up(1)) << cluster.logs();
  const auto id =
      cluster.submit(job_of("no-such-user-sched14", cluster.work_dir(), "#!/bin/sh\ntouch ran\n"));
  ASSERT_TRUE(cluster.wait_state(id, "FAILED")) << cluster.logs();
  const auto job = cluster.job(id);
  EXPECT_EQ(job.reason, "unknown user 'no-such-user-sched14' on this node");
  EXPECT_EQ(job.exit_status, 127);
  EXPECT_FALSE(fs::exists(fs::path(cluster.work_dir()) / "ran"));
}

TEST(RootJobs, AreRefusedAtSubmitWhenTheConfigForbidsThemAndAllowedWhenItAllows) {
  ClusterOptions options;
  options.allow_root_jobs = false;
  LocalCluster strict(options);
  try {
    strict.submit(job_of("root", strict.work_dir(), "#!/bin/sh\ntrue\n"));
    ADD_FAILURE() << "a root job was accepted";
  } catch (const proto::ProtoError& e) {
    EXPECT_EQ(e.code(), "invalid");
    EXPECT_EQ(std::string(e.what()),
              "jobs of root are refused here: submit as another user (or set allow_root_jobs in "
              "the [jobs] section of the config)");
  }
  // Nothing was queued.
  const auto queue =
      strict.client().call<proto::JobList>(proto::type::kJobsQuery, proto::JobsQuery{});
  EXPECT_TRUE(queue.jobs.empty());

  // The test cluster's default (as `sched cluster up`'s) allows them.
  LocalCluster relaxed;
  relaxed.start_agent("n1");
  ASSERT_TRUE(relaxed.wait_nodes_up(1)) << relaxed.logs();
  const auto id = relaxed.submit(job_of("root", relaxed.work_dir(), "#!/bin/sh\nid -u\n"));
  ASSERT_TRUE(relaxed.wait_state(id, "COMPLETED")) << relaxed.logs();
}

TEST(RootJobs, AnAgentThatForbidsThemFailsTheLaunchWithTheReason) {
  if (::geteuid() != 0) GTEST_SKIP() << "the agent must run as root for this";
  ClusterOptions options;
  options.agent_allow_root_jobs = false;  // schedd lets the job through; the agent does not
  LocalCluster cluster(options);
  cluster.start_agent("n1");
  ASSERT_TRUE(cluster.wait_nodes_up(1)) << cluster.logs();
  const auto id = cluster.submit(job_of("root", cluster.work_dir(), "#!/bin/sh\ntouch ran\n"));
  ASSERT_TRUE(cluster.wait_state(id, "FAILED")) << cluster.logs();
  EXPECT_EQ(cluster.job(id).reason, "jobs of root are not allowed on this node (allow_root_jobs)");
  EXPECT_FALSE(fs::exists(fs::path(cluster.work_dir()) / "ran"));
}

TEST_F(RunAsUser, AJobOverItsMemIsKilledByItsCgroupWithAClearReason) {
  LocalCluster cluster;
  cluster.start_agent("n1");
  ASSERT_TRUE(cluster.wait_nodes_up(1)) << cluster.logs();
  const std::string containment = node_containment(cluster);
  std::cout << "[ containment ] n1 reports " << containment << "\n";
  auto request = job_of("alice", dir_->path(),
                        "#!/bin/sh\n"
                        "perl -e '$x = \"x\" x (200 * 1024 * 1024); print length($x), \"\\n\"'\n"
                        "echo after\n");
  request.job.mem_bytes = std::int64_t{32} << 20;
  if (containment == "none") {
    // The fallback: no limit to enforce; the process-tree kill still ends
    // the job on cancel.
    request.job.script = "#!/bin/sh\nsleep 60 &\nsleep 60\n";
    const auto id = cluster.submit(request);
    ASSERT_TRUE(cluster.wait_state(id, "RUNNING")) << cluster.logs();
    cluster.client().call<proto::Empty>(proto::type::kCancel, proto::JobRef{id});
    ASSERT_TRUE(cluster.wait_state(id, "CANCELLED")) << cluster.logs();
    GTEST_SKIP() << "no writable cgroups here: containment none, fallback checked";
  }
  ASSERT_TRUE(containment == "cgroup2" || containment == "cgroup1") << containment;
  const auto id = cluster.submit(request);
  ASSERT_TRUE(cluster.wait_state(id, "FAILED", 30s)) << cluster.logs();
  const auto job = cluster.job(id);
  EXPECT_EQ(job.reason,
            "out of memory: the job went over its --mem limit of 32 MiB and the kernel killed "
            "its processes");
  EXPECT_EQ(job.mem_bytes, std::int64_t{32} << 20);
  ASSERT_TRUE(job.max_rss_bytes);
  EXPECT_LE(*job.max_rss_bytes, std::int64_t{33} << 20);
  EXPECT_GT(*job.max_rss_bytes, std::int64_t{1} << 20);
}

TEST_F(RunAsUser, AcctShowsMaxMemoryAndCpuTimeAndTheCgroupIsGone) {
  LocalCluster cluster;
  cluster.start_agent("n1");
  ASSERT_TRUE(cluster.wait_nodes_up(1)) << cluster.logs();
  const std::string containment = node_containment(cluster);
  if (containment == "none") GTEST_SKIP() << "no writable cgroups here: nothing is measured";
  // Busy for a while (CPU time) with 20 MiB held (memory).
  auto request = job_of("alice", dir_->path(),
                        "#!/bin/sh\n"
                        "perl -e '$x = \"x\" x (20 * 1024 * 1024); $i = 0; "
                        "while ($i < 3000000) { $i++ } print \"ok\\n\"'\n");
  const auto id = cluster.submit(request);
  ASSERT_TRUE(cluster.wait_state(id, "COMPLETED", 30s)) << cluster.logs();
  proto::AcctQuery query;
  query.ids = {id};
  const auto list = cluster.client().call<proto::JobList>(proto::type::kAcct, query);
  ASSERT_EQ(list.jobs.size(), 1u);
  const auto& job = list.jobs.front();
  ASSERT_TRUE(job.max_rss_bytes) << "acct has no MaxRSS";
  EXPECT_GE(*job.max_rss_bytes, std::int64_t{20} << 20);
  ASSERT_TRUE(job.cpu_s) << "acct has no TotalCPU";
  EXPECT_GT(*job.cpu_s, 0.0);
  // Its cgroup went with it.
  EXPECT_TRUE(eventually([&] { return !job_cgroup_exists(cluster, id); }));
}

// Whether `uid` can connect to the unix socket at `path` (a forked child
// takes the uid and tries).
bool can_connect_as(uid_t uid, gid_t gid, const std::string& path) {
  const pid_t child = ::fork();
  if (child == 0) {
    if (::setgroups(0, nullptr) != 0 || ::setgid(gid) != 0 || ::setuid(uid) != 0) ::_exit(3);
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
    ::_exit(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 ? 0 : 1);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

TEST_F(RunAsUser, TheAgentSocketOfAJobIsHersAloneAndSpeaksForHerJobOnly) {
  const auto bob = ensure_user("bob");
  ASSERT_TRUE(bob) << "useradd bob failed";
  LocalCluster cluster;
  cluster.start_agent("n1");
  ASSERT_TRUE(cluster.wait_nodes_up(1)) << cluster.logs();
  const auto id = cluster.submit(job_of("alice", dir_->path(),
                                        "#!/bin/sh\necho \"$SCHED_AGENT_ENDPOINT\" > endpoint\n"
                                        "sleep 60\n"));
  ASSERT_TRUE(cluster.wait_state(id, "RUNNING")) << cluster.logs();
  ASSERT_TRUE(eventually([&] { return fs::exists(dir_->path() / "endpoint"); }));
  std::string endpoint = read_file(dir_->path() / "endpoint");
  ASSERT_TRUE(endpoint.starts_with("ipc://")) << endpoint;
  endpoint.pop_back();  // the newline
  const std::string path = endpoint.substr(6);
  EXPECT_TRUE(path.ends_with("/job-" + std::to_string(id) + "/agent.ipc")) << path;

  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, alice_->uid);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat(fs::path(path).parent_path().c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, alice_->uid);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  EXPECT_TRUE(can_connect_as(alice_->uid, alice_->gid, path));
  EXPECT_FALSE(can_connect_as(bob->uid, bob->gid, path));
  // While it runs, the job has its cgroup (where the node has cgroups).
  const std::string containment = node_containment(cluster);
  EXPECT_EQ(job_cgroup_exists(cluster, id), containment != "none") << containment;

  // Who can connect speaks for this job only: a report for another job,
  // or for a rank that does not run here, is refused.
  zmq::context_t context(1);
  zmq::socket_t dealer(context, zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::linger, 0);
  dealer.set(zmq::sockopt::rcvtimeo, 5000);
  dealer.connect(endpoint);
  const auto refusal = [&](const std::string& bytes) -> std::string {
    dealer.send(zmq::buffer(bytes));
    zmq::message_t reply;
    if (!dealer.recv(reply)) return "(no reply)";
    const auto envelope = proto::decode(reply.data(), reply.size());
    return envelope.error ? envelope.error->message : "(accepted)";
  };
  proto::ProcPhase phase;
  phase.job = id + 1000;
  phase.comm_s = 1;
  phase.compute_s = 1;
  EXPECT_EQ(refusal(proto::encode_request(proto::type::kProcPhase, 1, phase)),
            "this connection belongs to job " + std::to_string(id) +
                ": a process reports only for its own job, not job " + std::to_string(id + 1000));
  proto::ProcInit init;
  init.job = id;
  init.step = 0;
  init.rank = 0;
  EXPECT_EQ(refusal(proto::encode_request(proto::type::kProcInit, 2, init)),
            "job " + std::to_string(id) + " has no rank 0 of step 0 on n1");
  cluster.client().call<proto::Empty>(proto::type::kCancel, proto::JobRef{id});
  ASSERT_TRUE(cluster.wait_state(id, "CANCELLED")) << cluster.logs();
  // The job's directory, socket and cgroup go with it.
  EXPECT_TRUE(eventually([&] { return !fs::exists(fs::path(path).parent_path()); }));
  EXPECT_TRUE(eventually([&] { return !job_cgroup_exists(cluster, id); }));
}

}  // namespace
}  // namespace sched::testing
