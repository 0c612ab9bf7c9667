// Who may do what, with real users (docs/security.md): alice and bob are
// accounts made for the test; their commands run as them, so their MUNGE
// credentials carry their uids. Needs root (CI runs the tests as root);
// skipped otherwise.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "cluster.hpp"
#include "munge_support.hpp"
#include "sched/auth/credential.hpp"
#include "test_paths.hpp"
#include "users.hpp"

namespace sched::testing {
namespace {

using namespace std::chrono_literals;

struct CliRun {
  int status = -1;
  std::string out;
  std::string err;
};

// Runs `sched --endpoint ... ARGS` as `user` to its end.
CliRun run_as(const TestUser& user, const LocalCluster& cluster,
              const std::vector<std::string>& args) {
  TempDir dir("sched-auth");
  const std::string err_path = dir.str() + "/stderr";
  std::vector<std::string> argv = {SCHED_CLI_BIN, "--endpoint", cluster.client_endpoint()};
  argv.insert(argv.end(), args.begin(), args.end());
  Process process(command_as(user, argv), err_path);
  CliRun run;
  while (auto line = process.read_line(10s)) run.out += *line + "\n";
  if (const auto status = process.wait(10s); status && WIFEXITED(*status)) {
    run.status = WEXITSTATUS(*status);
  }
  run.err = read_file(err_path);
  return run;
}

std::string describe(const CliRun& run) {
  return "exit " + std::to_string(run.status) + "\nstdout:\n" + run.out + "stderr:\n" + run.err;
}

struct Users {
  TestUser alice;
  TestUser bob;
};

std::optional<Users> users() {
  auto alice = ensure_user("sched_alice");
  auto bob = ensure_user("sched_bob");
  if (!alice || !bob) return std::nullopt;
  return Users{*alice, *bob};
}

#define NEED_USERS(u)     \
  const auto u = users(); \
  if (!u) GTEST_SKIP() << "needs root, to create test users and run as them"

std::string job_user(LocalCluster& cluster, std::int64_t id) { return cluster.job(id).user; }

TEST(Auth, AJobIsItsCredentialsUserAndAForgedSubmitNamingAnotherIsRefused) {
  NEED_USERS(u);
  LocalCluster cluster;
  cluster.start_agent("n1");
  ASSERT_TRUE(cluster.wait_nodes_up(1)) << cluster.logs();
  const std::string workdir = shared_workdir(cluster);
  const auto submit_naming = [&](const std::string& named) {
    return [named, workdir](proto::Client& client) {
      proto::SubmitRequest request;
      request.job.name = "forged";
      request.job.user = named;
      request.job.script = "#!/bin/sh\nsleep 30\n";
      request.job.workdir = workdir;
      return std::to_string(client.call<proto::SubmitReply>(proto::type::kSubmit, request).id);
    };
  };
  EXPECT_EQ(answer_as(u->alice, cluster, submit_naming("sched_bob")),
            "permission_denied: permission denied: sched_alice cannot submit jobs as sched_bob");
  EXPECT_EQ(
      cluster.client().call<proto::StatsReply>(proto::type::kStats, proto::Empty{}).jobs_submitted,
      0u);
  // Naming nobody, or herself: the job is hers.
  const auto unnamed = std::stoll(answer_as(u->alice, cluster, submit_naming("")));
  const auto named = std::stoll(answer_as(u->alice, cluster, submit_naming("sched_alice")));
  EXPECT_EQ(job_user(cluster, unnamed), "sched_alice");
  EXPECT_EQ(job_user(cluster, named), "sched_alice");
  // The CLI: $USER says nothing; the credential does.
  const CliRun cli =
      run_as(u->bob, cluster, {"submit", "--parsable", "-D", workdir, "--wrap", "sleep 30"});
  ASSERT_EQ(cli.status, 0) << describe(cli);
  EXPECT_EQ(job_user(cluster, std::stoll(cli.out)), "sched_bob");
}

TEST(Auth, BobCannotCancelOrSeeAlicesJobAndEachRefusalIsAnEvent) {
  NEED_USERS(u);
  LocalCluster cluster;
  cluster.start_agent("n1");
  ASSERT_TRUE(cluster.wait_nodes_up(1)) << cluster.logs();
  const std::string workdir = shared_workdir(cluster);
  Process events({SCHED_CLI_BIN, "--endpoint", cluster.client_endpoint(), "events", "--topic",
                  "auth.denied", "--count", "2"});
  std::this_thread::sleep_for(300ms);  // the subscription reaches schedd

  const CliRun submitted =
      run_as(u->alice, cluster, {"submit", "--parsable", "-D", workdir, "--wrap", "sleep 60"});
  ASSERT_EQ(submitted.status, 0) << describe(submitted);
  const std::string id = submitted.out.substr(0, submitted.out.find('\n'));
  ASSERT_TRUE(cluster.wait_state(std::stoll(id), "RUNNING")) << cluster.logs();

  const CliRun cancel = run_as(u->bob, cluster, {"cancel", id});
  EXPECT_NE(cancel.status, 0) << describe(cancel);
  EXPECT_NE(cancel.err.find("permission denied: job " + id + " belongs to sched_alice"),
            std::string::npos)
      << describe(cancel);
  const CliRun show = run_as(u->bob, cluster, {"show", id});
  EXPECT_EQ(show.status, 1) << describe(show);
  EXPECT_EQ(show.err, "sched: permission denied: job " + id + " belongs to sched_alice\n");
  // The queue lists her job as squeue would, without where it works.
  const CliRun queue = run_as(u->bob, cluster, {"queue", "--json"});
  ASSERT_EQ(queue.status, 0) << describe(queue);
  EXPECT_NE(queue.out.find("\"sched_alice\""), std::string::npos) << queue.out;
  EXPECT_EQ(queue.out.find(workdir), std::string::npos) << queue.out;
  EXPECT_EQ(cluster.job(std::stoll(id)).state, "RUNNING");

  // Both refusals were published, naming bob and the job.
  std::vector<std::string> published;
  while (published.size() < 2) {
    auto line = events.read_line(5s);
    if (!line) break;
    published.push_back(*line);
  }
  ASSERT_EQ(published.size(), 2u) << cluster.logs();
  for (const std::string& line : published) {
    EXPECT_NE(line.find("\"topic\":\"auth.denied\""), std::string::npos) << line;
    EXPECT_NE(line.find("\"user\":\"sched_bob\""), std::string::npos) << line;
    EXPECT_NE(line.find("\"code\":\"permission_denied\""), std::string::npos) << line;
    EXPECT_NE(line.find("\"job\":" + id), std::string::npos) << line;
    // Engine events like every other: numbered in the one sequence (and journaled).
    EXPECT_TRUE(std::regex_search(line, std::regex(R"("seq":[1-9])"))) << line;
  }

  // Alice may, and so may root.
  const CliRun own = run_as(u->alice, cluster, {"show", id});
  EXPECT_EQ(own.status, 0) << describe(own);
  EXPECT_NE(own.out.find(workdir), std::string::npos) << own.out;
  const CliRun cancelled = run_as(u->alice, cluster, {"cancel", id});
  EXPECT_EQ(cancelled.status, 0) << describe(cancelled);
  EXPECT_TRUE(cluster.wait_state(std::stoll(id), "CANCELLED")) << cluster.logs();
}

TEST(Auth, OnlyAdminsReloadThePolicyDrainNodesSetTheCorridorOrSubmitUrgent) {
  NEED_USERS(u);
  ClusterOptions options;
  options.admins = {"sched_alice"};
  LocalCluster cluster(options);
  cluster.start_agent("n1");
  ASSERT_TRUE(cluster.wait_nodes_up(1)) << cluster.logs();
  const std::string workdir = shared_workdir(cluster);
  const auto refused = [&](const std::vector<std::string>& args, const std::string& what) {
    const CliRun run = run_as(u->bob, cluster, args);
    EXPECT_EQ(run.status, 1) << describe(run);
    EXPECT_EQ(run.err, "sched: permission denied: " + what +
                           " is for administrators (sched_bob is not one)\n")
        << describe(run);
  };
  refused({"policy", "reload"}, "reloading the policy");
  refused({"nodes", "drain", "n1"}, "draining and resuming nodes");
  refused({"corridor", "set", "100", "200"}, "setting the power corridor");
  refused({"submit", "-D", workdir, "--urgent", "--wrap", "true"}, "urgent priority");
  const auto nodes = [&] {
    return cluster.client().call<proto::NodeList>(proto::type::kNodesQuery, proto::Empty{});
  };
  EXPECT_EQ(nodes().nodes.at(0).state, "idle");
  EXPECT_EQ(
      cluster.client().call<proto::StatsReply>(proto::type::kStats, proto::Empty{}).jobs_submitted,
      0u);

  // An admin by the config, and root (or whoever runs schedd).
  const CliRun drain = run_as(u->alice, cluster, {"nodes", "drain", "n1"});
  EXPECT_EQ(drain.status, 0) << describe(drain);
  EXPECT_EQ(nodes().nodes.at(0).state, "drain");
  const CliRun reload = run_as(u->alice, cluster, {"policy", "reload"});
  EXPECT_EQ(reload.status, 0) << describe(reload);
  proto::NodeUpdate resume;
  resume.name = "n1";
  resume.state = "resume";
  cluster.client().call<proto::Empty>(proto::type::kNodeUpdate, resume);
  EXPECT_EQ(nodes().nodes.at(0).state, "idle");
}

TEST(Auth, AcctShowsAUserOnlyTheirOwnEndedJobs) {
  NEED_USERS(u);
  LocalCluster cluster;
  cluster.start_agent("n1");
  ASSERT_TRUE(cluster.wait_nodes_up(1)) << cluster.logs();
  const std::string workdir = shared_workdir(cluster);
  const CliRun a =
      run_as(u->alice, cluster, {"submit", "--parsable", "-D", workdir, "--wrap", "true"});
  const CliRun b =
      run_as(u->bob, cluster, {"submit", "--parsable", "-D", workdir, "--wrap", "true"});
  ASSERT_EQ(a.status, 0) << describe(a);
  ASSERT_EQ(b.status, 0) << describe(b);
  ASSERT_TRUE(cluster.wait_state(std::stoll(a.out), "COMPLETED")) << cluster.logs();
  ASSERT_TRUE(cluster.wait_state(std::stoll(b.out), "COMPLETED")) << cluster.logs();
  const CliRun mine = run_as(u->bob, cluster, {"acct", "--json"});
  ASSERT_EQ(mine.status, 0) << describe(mine);
  EXPECT_NE(mine.out.find("\"sched_bob\""), std::string::npos) << mine.out;
  EXPECT_EQ(mine.out.find("\"sched_alice\""), std::string::npos) << mine.out;
  const CliRun hers = run_as(u->bob, cluster, {"acct", "-u", "sched_alice"});
  EXPECT_EQ(hers.status, 1) << describe(hers);
  EXPECT_EQ(hers.err, "sched: permission denied: sched_bob cannot see the jobs of sched_alice\n");
  const auto all = cluster.client().call<proto::JobList>(proto::type::kAcct, proto::AcctQuery{});
  EXPECT_EQ(all.jobs.size(), 2u);
}

TEST(Auth, ARequestWithNoCredentialOrAReplayedOneIsRefusedAndChangesNothing) {
  LocalCluster cluster;
  zmq::context_t context(1);
  proto::Client anonymous(context, cluster.client_endpoint(), 5s);
  try {
    anonymous.call<proto::StatsReply>(proto::type::kStats, proto::Empty{});
    FAIL() << "answered a request with no credential";
  } catch (const proto::ProtoError& e) {
    EXPECT_EQ(e.code(), "unauthenticated");
    EXPECT_EQ(std::string(e.what()),
              "the request has no credential (cred): sign it with MUNGE (docs/protocol.md §2)");
  }
  // One signed drain request, sent twice: the second is a replay.
  proto::Corridor corridor;
  corridor.lower_w = 100;
  corridor.upper_w = 200;
  auto client = cluster.connect();
  const std::string bytes = client->request(proto::type::kCorridorSet, corridor);
  const auto first = client->raw(bytes);
  EXPECT_EQ(first.ok, true);
  corridor.lower_w = 0;
  corridor.upper_w = 0;
  cluster.client().call<proto::Empty>(proto::type::kCorridorSet, corridor);
  const auto again = client->raw(bytes);
  ASSERT_TRUE(again.error);
  EXPECT_EQ(again.error->code, "unauthenticated");
  EXPECT_EQ(again.error->message, "replayed credential: each request needs a new one");
  const auto shown =
      cluster.client().call<proto::Corridor>(proto::type::kCorridorShow, proto::Empty{});
  EXPECT_DOUBLE_EQ(shown.upper_w, 0);
}

TEST(Auth, PerUserLimitsRefuseWithAClearError) {
  NEED_USERS(u);
  ClusterOptions options;
  options.extra_config =
      "\n[limits]\nmax_pending_jobs_per_user = 2\nsubmissions_per_second_per_user = 0.01\n"
      "submission_burst_per_user = 3\n";
  LocalCluster cluster(options);
  const std::string workdir = shared_workdir(cluster);
  // Jobs must fit the cluster to be taken, and wait: one node, drained.
  cluster.start_agent("n1");
  ASSERT_TRUE(cluster.wait_nodes_up(1)) << cluster.logs();
  proto::NodeUpdate drain;
  drain.name = "n1";
  drain.state = "drain";
  cluster.client().call<proto::Empty>(proto::type::kNodeUpdate, drain);
  const auto submit = [&](const TestUser& user) {
    return run_as(user, cluster, {"submit", "--parsable", "-D", workdir, "--wrap", "true"});
  };
  EXPECT_EQ(submit(u->alice).status, 0);
  EXPECT_EQ(submit(u->alice).status, 0);
  const CliRun third = submit(u->alice);
  EXPECT_EQ(third.status, 1) << describe(third);
  EXPECT_EQ(
      third.err,
      "sched: limit: sched_alice has 2 pending jobs (limits.max_pending_jobs_per_user = 2)\n");
  // Bob has his own count, and his own bucket of 3 submissions: his fourth
  // within the bucket's refill (0.01 per second) is refused, pending or not.
  for (int i = 0; i < 3; ++i) {
    const CliRun run = submit(u->bob);
    ASSERT_EQ(run.status, 0) << describe(run);
    cluster.client().call<proto::Empty>(proto::type::kCancel, proto::JobRef{std::stoll(run.out)});
  }
  const CliRun over_rate = submit(u->bob);
  EXPECT_EQ(over_rate.status, 1) << describe(over_rate);
  EXPECT_NE(over_rate.err.find("sched: limit: sched_bob submits faster than "
                               "limits.submissions_per_second_per_user"),
            std::string::npos)
      << describe(over_rate);
}

// An array counts one pending job per task against the limit, as Slurm's
// MaxSubmitJobs counts them: a user cannot pass the limit with one request.
TEST(Auth, AnArrayCountsEachTaskAgainstThePendingLimit) {
  NEED_USERS(u);
  ClusterOptions options;
  options.extra_config = "\n[limits]\nmax_pending_jobs_per_user = 3\n";
  LocalCluster cluster(options);
  const std::string workdir = shared_workdir(cluster);
  cluster.start_agent("n1");
  ASSERT_TRUE(cluster.wait_nodes_up(1)) << cluster.logs();
  const auto submit = [&](const std::string& array) {
    std::vector<std::string> args = {"submit", "--parsable", "--hold", "-D", workdir};
    if (!array.empty()) args.push_back("--array=" + array);
    args.insert(args.end(), {"--wrap", "true"});
    return run_as(u->alice, cluster, args);
  };
  const CliRun big = submit("0-4");
  EXPECT_EQ(big.status, 1) << describe(big);
  EXPECT_EQ(big.err,
            "sched: limit: sched_alice has 0 pending jobs and the array adds 5 "
            "(limits.max_pending_jobs_per_user = 3)\n");
  EXPECT_EQ(run_sched(cluster, {"queue", "-h", "-r"}).out, "") << "nothing was submitted";
  const CliRun fits = submit("0-2");
  EXPECT_EQ(fits.status, 0) << describe(fits);
  const CliRun one_more = submit("");
  EXPECT_EQ(one_more.status, 1) << describe(one_more);
  EXPECT_EQ(one_more.err,
            "sched: limit: sched_alice has 3 pending jobs (limits.max_pending_jobs_per_user = "
            "3)\n");
}

}  // namespace
}  // namespace sched::testing
