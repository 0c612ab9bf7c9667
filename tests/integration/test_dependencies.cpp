// Issue 18 item 2 on a real local cluster: pipelines chained with afterok,
// holds and releases (and who may release), requeue of a running job, and
// a dependency that outlives a schedd restart.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>

#include "cluster.hpp"
#include "munge_support.hpp"
#include "sched/auth/credential.hpp"
#include "users.hpp"

namespace sched::testing {
namespace {

using namespace std::chrono_literals;

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A job that appends its name to `log` in the work folder and exits with `code`.
proto::SubmitRequest step(LocalCluster& cluster, const std::string& name, int code,
                          const std::string& dependency = "") {
  proto::SubmitRequest request;
  request.job.name = name;
  request.job.script = "#!/bin/sh\necho " + name + " >> log\nexit " + std::to_string(code) + "\n";
  request.job.workdir = cluster.work_dir();
  if (!dependency.empty()) request.job.dependency = dependency;
  return request;
}

std::string after_ok(std::int64_t id) { return "afterok:" + std::to_string(id); }

std::string describe(const CliRun& run) {
  return "exit " + std::to_string(run.status) + "\nstdout:\n" + run.out + "stderr:\n" + run.err;
}

TEST(Dependencies, APipelineThatSucceedsRunsInOrder) {
  LocalCluster cluster;
  cluster.start_agent("n1");
  cluster.start_agent("n2");
  ASSERT_TRUE(cluster.wait_nodes_up(2)) << cluster.logs();
  // Submitted through the CLI as users do: sbatch's option and its answer.
  std::filesystem::create_directories(cluster.work_dir());
  const auto submit = [&](const std::string& name, const std::string& dependency) {
    std::vector<std::string> args = {"submit", "--parsable", "-D", cluster.work_dir(), "-J", name};
    if (!dependency.empty()) args.push_back("--dependency=" + dependency);
    args.insert(args.end(), {"--wrap", "sleep 0.3; echo " + name + " >> log"});
    const CliRun run = run_sched(cluster, args);
    EXPECT_EQ(run.status, 0) << describe(run);
    return std::stoll(run.out);
  };
  const auto a = submit("first", "");
  const auto b = submit("second", after_ok(a));
  const auto c = submit("third", after_ok(b));
  EXPECT_EQ(cluster.job(c).reason, "Dependency");
  EXPECT_EQ(cluster.job(c).dependency, after_ok(b));
  ASSERT_TRUE(cluster.wait_state(c, "COMPLETED", 20s)) << cluster.logs();
  EXPECT_EQ(slurp(cluster.work_dir() + "/log"), "first\nsecond\nthird\n");
  const auto first = cluster.job(a);
  const auto second = cluster.job(b);
  const auto third = cluster.job(c);
  ASSERT_TRUE(first.end_time && second.start_time && second.end_time && third.start_time);
  EXPECT_GE(*second.start_time, *first.end_time);
  EXPECT_GE(*third.start_time, *second.end_time);
}

TEST(Dependencies, AFailureMakesTheRestOfThePipelineNeverSatisfied) {
  LocalCluster cluster;
  cluster.start_agent("n1");
  ASSERT_TRUE(cluster.wait_nodes_up(1)) << cluster.logs();
  const auto a = cluster.submit(step(cluster, "first", 3));
  const auto b = cluster.submit(step(cluster, "second", 0, after_ok(a)));
  const auto c = cluster.submit(step(cluster, "third", 0, after_ok(b)));
  ASSERT_TRUE(cluster.wait_state(a, "FAILED")) << cluster.logs();
  ASSERT_TRUE(eventually([&] { return cluster.job(c).reason == "DependencyNeverSatisfied"; }));
  EXPECT_EQ(cluster.job(b).reason, "DependencyNeverSatisfied");
  EXPECT_EQ(cluster.job(b).state, "PENDING") << "kept: kill_invalid_depend is off by default";
  const CliRun queue = run_sched(cluster, {"queue"});
  ASSERT_EQ(queue.status, 0) << describe(queue);
  EXPECT_NE(queue.out.find("(DependencyNeverSatisfied)"), std::string::npos) << queue.out;
  std::this_thread::sleep_for(500ms);
  EXPECT_EQ(cluster.job(c).state, "PENDING");
  EXPECT_EQ(slurp(cluster.work_dir() + "/log"), "first\n");
}

TEST(Dependencies, KillInvalidDependCancelsTheRestOfThePipeline) {
  ClusterOptions options;
  options.kill_invalid_depend = true;
  LocalCluster cluster(options);
  cluster.start_agent("n1");
  ASSERT_TRUE(cluster.wait_nodes_up(1)) << cluster.logs();
  const auto a = cluster.submit(step(cluster, "first", 3));
  const auto b = cluster.submit(step(cluster, "second", 0, after_ok(a)));
  const auto c = cluster.submit(step(cluster, "third", 0, after_ok(b)));
  ASSERT_TRUE(cluster.wait_state(c, "CANCELLED")) << cluster.logs();
  EXPECT_EQ(cluster.job(b).state, "CANCELLED");
  EXPECT_EQ(cluster.job(b).reason, "DependencyNeverSatisfied");
  EXPECT_EQ(cluster.job(c).reason, "DependencyNeverSatisfied");
  EXPECT_EQ(slurp(cluster.work_dir() + "/log"), "first\n");
}

// Issue 15: an ended job leaves schedd's memory min_job_age_s after it
// ended (Slurm's MinJobAge; 300 s by default, applied on reload): `sched
// queue -t CD` no longer lists it, while `sched show`, `sched acct` and a
// dependency on it still find it (the journal).
TEST(Dependencies, AnEndedJobLeavesMemoryAfterMinJobAgeAndStaysKnown) {
  LocalCluster cluster;
  cluster.start_agent("n1");
  ASSERT_TRUE(cluster.wait_nodes_up(1)) << cluster.logs();
  const auto a = cluster.submit(step(cluster, "first", 0));
  ASSERT_TRUE(cluster.wait_state(a, "COMPLETED")) << cluster.logs();
  const std::string id = std::to_string(a);
  const auto listed = [&] {
    const CliRun queue = run_sched(cluster, {"queue", "-t", "CD", "-h", "-o", "%i"});
    EXPECT_EQ(queue.status, 0) << describe(queue);
    return queue.out.find(id) != std::string::npos;
  };
  EXPECT_TRUE(listed()) << "kept in memory for min_job_age_s = 300";

  const std::string config =
      (std::filesystem::path(cluster.state_dir()).parent_path() / "sched.toml").string();
  std::string text = [&] {
    std::ifstream in(config);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  const auto at = text.find("min_job_age_s = 300");
  ASSERT_NE(at, std::string::npos) << text;
  text.replace(at, std::string("min_job_age_s = 300").size(), "min_job_age_s = 0");
  std::ofstream(config) << text;
  cluster.signal_schedd(SIGHUP);
  ASSERT_TRUE(eventually([&] {
    return cluster.logs().find("applied=scheduler.min_job_age_s") != std::string::npos;
  })) << cluster.logs();
  // Dropped at the next tick (every 0.2 s).
  ASSERT_TRUE(eventually([&] { return !listed(); }, 30s)) << "still in memory\n" << cluster.logs();
  EXPECT_EQ(cluster.job(a).state, "COMPLETED") << "sched show reads the journal";
  const CliRun acct = run_sched(cluster, {"acct", "-j", id});
  ASSERT_EQ(acct.status, 0) << describe(acct);
  EXPECT_NE(acct.out.find(id), std::string::npos) << acct.out;
  const auto b = cluster.submit(step(cluster, "second", 0, after_ok(a)));
  ASSERT_TRUE(cluster.wait_state(b, "COMPLETED")) << cluster.logs();
  EXPECT_EQ(slurp(cluster.work_dir() + "/log"), "first\nsecond\n");
}

TEST(Dependencies, UnknownJobsAndBadSpecsAreRefusedAtSubmit) {
  LocalCluster cluster;
  cluster.start_agent("n1");
  ASSERT_TRUE(cluster.wait_nodes_up(1)) << cluster.logs();
  auto bad = step(cluster, "x", 0, "afterok:4242");
  EXPECT_EQ(error_of([&] { cluster.submit(bad); }), "invalid: Job dependency problem: no job 4242");
  bad.job.dependency = "afterok:1?after:x";
  EXPECT_EQ(error_of([&] { cluster.submit(bad); }),
            "invalid: Job dependency problem: dependency 'afterok:1?after:x': 'x' is not a job id");
  const CliRun cli = run_sched(cluster, {"submit", "-D", cluster.work_dir(), "--dependency",
                                         "afterok:1,after:2?after:3", "--wrap", "true"});
  EXPECT_EQ(cli.status, 1);
  EXPECT_NE(cli.err.find("cannot be mixed"), std::string::npos) << cli.err;
  EXPECT_EQ(
      cluster.client().call<proto::StatsReply>(proto::type::kStats, proto::Empty{}).jobs_submitted,
      0u);
}

TEST(Dependencies, AHeldJobRunsAfterRelease) {
  LocalCluster cluster;
  cluster.start_agent("n1");
  ASSERT_TRUE(cluster.wait_nodes_up(1)) << cluster.logs();
  std::filesystem::create_directories(cluster.work_dir());
  const CliRun submitted = run_sched(
      cluster, {"submit", "--parsable", "--hold", "-D", cluster.work_dir(), "--wrap", "true"});
  ASSERT_EQ(submitted.status, 0) << describe(submitted);
  const auto id = std::stoll(submitted.out);
  std::this_thread::sleep_for(600ms);  // passes run; the node is idle
  EXPECT_EQ(cluster.job(id).state, "PENDING");
  EXPECT_EQ(cluster.job(id).reason, "JobHeldUser");
  const CliRun released = run_sched(cluster, {"release", std::to_string(id)});
  ASSERT_EQ(released.status, 0) << describe(released);
  ASSERT_TRUE(cluster.wait_state(id, "COMPLETED")) << cluster.logs();
  // Releasing what is not held is a clear error.
  const CliRun again = run_sched(cluster, {"release", std::to_string(id)});
  EXPECT_EQ(again.status, 1);
  EXPECT_NE(again.err.find("is not held"), std::string::npos) << again.err;

  // `sched hold` by an admin (root is one) makes a user's hold an admin's.
  auto request = step(cluster, "blocker", 0, after_ok(id));
  request.job.hold = true;
  const auto blocker = cluster.submit(request);
  const CliRun held = run_sched(cluster, {"hold", std::to_string(blocker)});
  ASSERT_EQ(held.status, 0) << describe(held);
  EXPECT_EQ(cluster.job(blocker).reason, "JobHeldAdmin");
}

TEST(Dependencies, BobCannotReleaseAlicesJobNorAliceAnAdminsHold) {
  const auto alice = ensure_user("sched_alice");
  const auto bob = ensure_user("sched_bob");
  if (!alice || !bob) GTEST_SKIP() << "needs root, to create test users and run as them";
  LocalCluster cluster;
  cluster.start_agent("n1");
  ASSERT_TRUE(cluster.wait_nodes_up(1)) << cluster.logs();
  const std::string workdir = shared_workdir(cluster);
  // The node stays busy: alice's job, once released, still waits.
  proto::SubmitRequest busy = step(cluster, "busy", 0);
  busy.job.script = "#!/bin/sh\nsleep 30\n";
  const auto blocker = cluster.submit(busy);
  ASSERT_TRUE(cluster.wait_state(blocker, "RUNNING")) << cluster.logs();
  const std::string id = answer_as(*alice, cluster, [&](proto::Client& client) {
    proto::SubmitRequest request;
    request.job.name = "held";
    request.job.script = "#!/bin/sh\ntrue\n";
    request.job.workdir = workdir;
    request.job.hold = true;
    return std::to_string(client.call<proto::SubmitReply>(proto::type::kSubmit, request).id);
  });
  const auto job = std::stoll(id);
  const auto verb = [&](std::string_view type) {
    return [type, job](proto::Client& client) {
      client.call<proto::Empty>(type, proto::JobRef{job});
      return std::string("ok");
    };
  };
  EXPECT_EQ(answer_as(*bob, cluster, verb(proto::type::kJobRelease)),
            "permission_denied: permission denied: job " + id + " belongs to sched_alice");
  EXPECT_EQ(cluster.job(job).reason, "JobHeldUser");
  // An admin's hold: alice may not lift it.
  cluster.client().call<proto::Empty>(proto::type::kJobHold, proto::JobRef{job});
  EXPECT_EQ(cluster.job(job).reason, "JobHeldAdmin");
  EXPECT_EQ(answer_as(*alice, cluster, verb(proto::type::kJobRelease)),
            "permission_denied: permission denied: job " + id +
                " was held by an admin; only an admin may release it");
  cluster.client().call<proto::Empty>(proto::type::kJobRelease, proto::JobRef{job});
  // Her own hold she lifts herself.
  EXPECT_EQ(answer_as(*alice, cluster, verb(proto::type::kJobHold)), "ok");
  EXPECT_EQ(cluster.job(job).reason, "JobHeldUser");
  EXPECT_EQ(answer_as(*alice, cluster, verb(proto::type::kJobRelease)), "ok");
  EXPECT_NE(cluster.job(job).reason, "JobHeldUser");
  cluster.client().call<proto::Empty>(proto::type::kCancel, proto::JobRef{blocker});
  ASSERT_TRUE(cluster.wait_state(job, "COMPLETED")) << cluster.logs();
}

TEST(Dependencies, RequeueKillsARunningJobAndQueuesItAgain) {
  LocalCluster cluster;
  cluster.start_agent("n1");
  ASSERT_TRUE(cluster.wait_nodes_up(1)) << cluster.logs();
  proto::SubmitRequest request = step(cluster, "again", 0);
  request.job.script = "#!/bin/sh\necho run >> log\nsleep 30\n";
  const auto id = cluster.submit(request);
  ASSERT_TRUE(cluster.wait_state(id, "RUNNING")) << cluster.logs();
  // A pending job cannot be requeued: a second one waits behind it.
  const auto waiting = cluster.submit(request);
  const CliRun refused = run_sched(cluster, {"requeue", std::to_string(waiting)});
  EXPECT_EQ(refused.status, 1);
  EXPECT_NE(refused.err.find("only a running job can be requeued"), std::string::npos)
      << refused.err;

  const CliRun requeued = run_sched(cluster, {"requeue", std::to_string(id)});
  ASSERT_EQ(requeued.status, 0) << describe(requeued);
  // Back in the queue (behind nothing older) and started again.
  ASSERT_TRUE(eventually([&] { return cluster.job(id).requeues == 1; })) << cluster.logs();
  ASSERT_TRUE(cluster.wait_state(id, "RUNNING")) << cluster.logs();
  EXPECT_TRUE(eventually([&] { return slurp(cluster.work_dir() + "/log") == "run\nrun\n"; }))
      << slurp(cluster.work_dir() + "/log");
}

TEST(Dependencies, ADependencyAndAHoldSurviveARestart) {
  LocalCluster cluster;
  cluster.start_agent("n1");
  ASSERT_TRUE(cluster.wait_nodes_up(1)) << cluster.logs();
  const auto done = cluster.submit(step(cluster, "done", 0));
  ASSERT_TRUE(cluster.wait_state(done, "COMPLETED")) << cluster.logs();
  proto::SubmitRequest request = step(cluster, "running", 0);
  request.job.script = "#!/bin/sh\nsleep 3\necho running >> log\n";
  const auto running = cluster.submit(request);
  ASSERT_TRUE(cluster.wait_state(running, "RUNNING")) << cluster.logs();
  const auto waits = cluster.submit(step(cluster, "waits", 0, after_ok(running)));
  auto held = step(cluster, "held", 0, after_ok(done));
  held.job.hold = true;
  const auto held_id = cluster.submit(held);
  EXPECT_EQ(cluster.job(waits).reason, "Dependency");

  cluster.kill_schedd(SIGKILL);
  cluster.start_schedd();
  EXPECT_EQ(cluster.job(waits).reason, "Dependency");
  EXPECT_EQ(cluster.job(waits).dependency, after_ok(running));
  EXPECT_EQ(cluster.job(held_id).reason, "JobHeldUser");
  // The job it waits for ends after the restart: it runs.
  ASSERT_TRUE(cluster.wait_state(waits, "COMPLETED", 30s)) << cluster.logs();
  // The one it waited for ended before the restart: the journal says how.
  cluster.client().call<proto::Empty>(proto::type::kJobRelease, proto::JobRef{held_id});
  ASSERT_TRUE(cluster.wait_state(held_id, "COMPLETED")) << cluster.logs();
  EXPECT_EQ(slurp(cluster.work_dir() + "/log"), "done\nrunning\nwaits\nheld\n");
}

}  // namespace
}  // namespace sched::testing
