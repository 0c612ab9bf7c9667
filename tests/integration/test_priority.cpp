// Issue 18 item 5 on a real local cluster with real users: fair share orders
// two users' jobs as the weights say, `sched prio` shows the factors, a bad
// --qos is refused, only an admin sets a negative nice, and fair-share usage
// outlives a schedd restart.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cluster.hpp"
#include "users.hpp"

namespace sched::testing {
namespace {

using namespace std::chrono_literals;

std::string describe(const CliRun& run) {
  return "exit " + std::to_string(run.status) + "\nstdout:\n" + run.out + "stderr:\n" + run.err;
}

std::string priority_config(int fairshare_weight) {
  return "[priority]\nweight_fairshare = " + std::to_string(fairshare_weight) +
         "\ncalc_period_s = 0.2\n[qos.high]\npriority = 10\n";
}

// Submits `script` as `user`; returns the id (or the refusal as "code: message").
std::string submit_as(const TestUser& user, LocalCluster& cluster, const std::string& workdir,
                      const std::string& script, std::int64_t nice = 0) {
  return answer_as(user, cluster, [&](proto::Client& client) {
    proto::SubmitRequest request;
    request.job.name = "fs";
    request.job.script = "#!/bin/sh\n" + script + "\n";
    request.job.workdir = workdir;
    if (nice != 0) request.job.nice = nice;
    return std::to_string(client.call<proto::SubmitReply>(proto::type::kSubmit, request).id);
  });
}

// The lines of `sched prio` whose first word is one of the ids.
std::string prio_line(const std::string& out, std::int64_t id) {
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string first;
    words >> first;
    if (first == std::to_string(id)) return line;
  }
  return "";
}

struct Outcome {
  std::int64_t alice_job = 0;
  std::int64_t bob_job = 0;
  double alice_start = 0;
  double bob_start = 0;
  std::string prio;     // `sched prio` while both waited
  std::string weights;  // `sched prio -w -u alice` then
};

// alice has run a job; with the one node busy, alice submits, then bob.
Outcome race(int fairshare_weight, const TestUser& alice, const TestUser& bob) {
  ClusterOptions options;
  options.extra_config = priority_config(fairshare_weight);
  LocalCluster cluster(options);
  cluster.start_agent("n1");
  Outcome out;
  EXPECT_TRUE(cluster.wait_nodes_up(1)) << cluster.logs();
  const std::string workdir = shared_workdir(cluster);
  const auto used = std::stoll(submit_as(alice, cluster, workdir, "sleep 1"));
  EXPECT_TRUE(cluster.wait_state(used, "COMPLETED")) << cluster.logs();
  proto::SubmitRequest busy;
  busy.job.name = "busy";
  busy.job.script = "#!/bin/sh\nsleep 30\n";
  busy.job.workdir = workdir;
  const auto blocker = cluster.submit(busy);
  EXPECT_TRUE(cluster.wait_state(blocker, "RUNNING")) << cluster.logs();
  out.alice_job = std::stoll(submit_as(alice, cluster, workdir, "true"));
  out.bob_job = std::stoll(submit_as(bob, cluster, workdir, "true"));
  std::this_thread::sleep_for(500ms);  // a calc period or two
  const CliRun prio = run_sched(cluster, {"prio", "-w", "-u", alice.name});
  EXPECT_EQ(prio.status, 0) << describe(prio);
  const CliRun all = run_sched(cluster, {"prio"});
  EXPECT_EQ(all.status, 0) << describe(all);
  out.weights = prio.out;
  out.prio = all.out;
  cluster.client().call<proto::Empty>(proto::type::kCancel, proto::JobRef{blocker});
  EXPECT_TRUE(cluster.wait_state(out.alice_job, "COMPLETED", 20s)) << cluster.logs();
  EXPECT_TRUE(cluster.wait_state(out.bob_job, "COMPLETED", 20s)) << cluster.logs();
  out.alice_start = cluster.job(out.alice_job).start_time.value_or(-1);
  out.bob_start = cluster.job(out.bob_job).start_time.value_or(-1);
  return out;
}

TEST(Priority, FairShareStartsBobBeforeAliceWhoHasUsedTheCluster) {
  const auto alice = ensure_user("sched_alice");
  const auto bob = ensure_user("sched_bob");
  if (!alice || !bob) GTEST_SKIP() << "needs root, to create test users and run as them";
  const Outcome weighted = race(10000, *alice, *bob);
  EXPECT_LT(weighted.bob_start, weighted.alice_start) << weighted.prio;
  // `sched prio`: the weights, then bob's job above alice's with the higher
  // fair-share factor (bob has used nothing: the whole weight).
  EXPECT_NE(weighted.weights.find("Weights"), std::string::npos) << weighted.weights;
  EXPECT_NE(prio_line(weighted.weights, weighted.alice_job), "") << weighted.weights;
  EXPECT_EQ(prio_line(weighted.weights, weighted.bob_job), "") << "-u: alice's only";
  const std::string bob_line = prio_line(weighted.prio, weighted.bob_job);
  const std::string alice_line = prio_line(weighted.prio, weighted.alice_job);
  ASSERT_FALSE(bob_line.empty()) << weighted.prio;
  ASSERT_FALSE(alice_line.empty()) << weighted.prio;
  EXPECT_NE(bob_line.find(" 10000 "), std::string::npos) << bob_line;
  EXPECT_LT(weighted.prio.find(bob_line), weighted.prio.find(alice_line))
      << "queue order: bob first\n"
      << weighted.prio;
  std::istringstream words(alice_line);
  std::string id, user;
  long long priority = -1, age = -1, fairshare = -1;
  words >> id >> user >> priority >> age >> fairshare;
  EXPECT_EQ(user, "sched_alice");
  EXPECT_GT(fairshare, 0);
  EXPECT_LT(fairshare, 10000) << alice_line;
  EXPECT_EQ(priority, fairshare);

  const Outcome plain = race(0, *alice, *bob);
  EXPECT_LT(plain.alice_start, plain.bob_start) << "weights 0: submit order\n" << plain.prio;
}

TEST(Priority, BadQosIsRefusedAndNegativeNiceIsForAdmins) {
  const auto bob = ensure_user("sched_bob");
  if (!bob) GTEST_SKIP() << "needs root, to create test users and run as them";
  ClusterOptions options;
  options.extra_config = priority_config(0);
  LocalCluster cluster(options);
  cluster.start_agent("n1");
  ASSERT_TRUE(cluster.wait_nodes_up(1)) << cluster.logs();
  const std::string workdir = shared_workdir(cluster);
  const CliRun bad = run_sched(cluster, {"submit", "-D", workdir, "--qos=gold", "--wrap", "true"});
  EXPECT_EQ(bad.status, 1) << describe(bad);
  EXPECT_NE(bad.err.find("Invalid qos specification"), std::string::npos) << describe(bad);
  EXPECT_TRUE(cluster.client()
                  .call<proto::JobList>(proto::type::kJobsQuery, proto::JobsQuery{})
                  .jobs.empty())
      << "no job was made";
  EXPECT_EQ(
      cluster.client().call<proto::JobList>(proto::type::kAcct, proto::AcctQuery{}).jobs.size(),
      0u);

  const std::string refused = submit_as(*bob, cluster, workdir, "true", -5);
  EXPECT_EQ(refused.rfind("permission_denied: permission denied: a negative nice", 0), 0u)
      << refused;
  EXPECT_NE(submit_as(*bob, cluster, workdir, "sleep 5", 5).find_first_not_of("0123456789"), 0u)
      << "a positive nice is anyone's";

  // An admin's negative nice, -A and --qos: recorded and shown.
  const CliRun mine = run_sched(cluster, {"submit", "--parsable", "-D", workdir, "-A", "physics",
                                          "--qos=high", "--nice=-7", "--wrap", "sleep 5"});
  ASSERT_EQ(mine.status, 0) << describe(mine);
  const auto id = std::stoll(mine.out);
  const CliRun show = run_sched(cluster, {"show", std::to_string(id)});
  EXPECT_NE(show.out.find("Account=physics QOS=high Nice=-7"), std::string::npos) << show.out;
  const proto::JobInfo info = cluster.job(id);
  EXPECT_EQ(info.account, "physics");
  EXPECT_EQ(info.qos, "high");
}

TEST(Priority, FairShareUsageIsRebuiltFromTheJournalAfterARestart) {
  const auto alice = ensure_user("sched_alice");
  const auto bob = ensure_user("sched_bob");
  if (!alice || !bob) GTEST_SKIP() << "needs root, to create test users and run as them";
  ClusterOptions options;
  options.extra_config = priority_config(10000);
  LocalCluster cluster(options);
  cluster.start_agent("n1");
  ASSERT_TRUE(cluster.wait_nodes_up(1)) << cluster.logs();
  const std::string workdir = shared_workdir(cluster);
  const auto used = std::stoll(submit_as(*alice, cluster, workdir, "sleep 1"));
  ASSERT_TRUE(cluster.wait_state(used, "COMPLETED")) << cluster.logs();
  cluster.kill_schedd(SIGKILL);
  cluster.start_schedd();
  ASSERT_TRUE(cluster.wait_nodes_up(1)) << cluster.logs();
  // Both wait behind a running job: pending, with their factors.
  proto::SubmitRequest busy;
  busy.job.name = "busy";
  busy.job.script = "#!/bin/sh\nsleep 30\n";
  busy.job.workdir = workdir;
  const auto blocker = cluster.submit(busy);
  ASSERT_TRUE(cluster.wait_state(blocker, "RUNNING")) << cluster.logs();
  const auto a = std::stoll(submit_as(*alice, cluster, workdir, "true"));
  const auto b = std::stoll(submit_as(*bob, cluster, workdir, "true"));
  const proto::JobInfo alice_job = cluster.job(a);
  const proto::JobInfo bob_job = cluster.job(b);
  ASSERT_TRUE(alice_job.factors && bob_job.factors);
  EXPECT_LT(alice_job.factors->fairshare, 10000) << "alice's usage came back from the journal";
  EXPECT_EQ(bob_job.factors->fairshare, 10000);
}

}  // namespace
}  // namespace sched::testing
