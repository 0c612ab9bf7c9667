// Evolving jobs' own requests, live (issue 17 item 1, docs/malleable.md): a
// real application (apps/mall_evolve.c) asks through the malleable library,
// its node agent relays to schedd, the bundled elastic policy grants, and
// the grant arrives as a normal adaptation; `sched resize` asks for the
// owner, and refuses another user.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "cluster.hpp"
#include "test_paths.hpp"
#include "users.hpp"

namespace sched::testing {
namespace {

using namespace std::chrono_literals;

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

// Every process the job started (from $MALL_PROBE_PIDS), killed at the end
// whatever happened.
struct Pids {
  std::string file;
  ~Pids() {
    std::ifstream in(file);
    for (pid_t pid = 0; in >> pid;) ::kill(pid, SIGKILL);
  }
};

// `sched ARGS` run as `user` (its credential says who asks).
CliRun sched_as(const TestUser& user, const LocalCluster& cluster,
                const std::vector<std::string>& args) {
  TempDir dir("sched-evolve");
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

TEST(Evolving, AnApplicationAsksToGrowAndShrinkAndWaitsWhenNoNodeIsFree) {
  const auto u = users();
  if (!u) GTEST_SKIP() << "needs root, to create test users and run as them";
  ClusterOptions options;
  options.policy = "elastic";  // serves evolving requests first in each pass
  LocalCluster cluster(options);
  for (const char* node : {"n1", "n2", "n3", "n4"}) cluster.start_agent(node);
  ASSERT_TRUE(cluster.wait_nodes_up(4)) << cluster.logs();
  const std::string work = shared_workdir(cluster);
  Pids pids{work + "/pids"};
  const std::string stop = work + "/stop";
  const std::string go = work + "/go-";
  // Alice's evolving job of 1 to 4 nodes, started on 2: it asks for 4, then
  // 2, then 3 (each once the test says go).
  const std::string id_text = answer_as(u->alice, cluster, [&](proto::Client& client) {
    proto::SubmitRequest request;
    request.job.name = "evolve";
    request.job.kind = "evolving";
    request.job.nodes = 2;
    request.job.min_nodes = 1;
    request.job.max_nodes = 4;
    request.job.workdir = work;
    request.job.env["SCHED"] = SCHED_CLI_BIN;
    request.job.env["APP"] = SCHED_MALL_EVOLVE_BIN;
    request.job.env["MALL_PROBE_PIDS"] = pids.file;
    request.job.env["SCHED_MALL_TIMEOUT_MS"] = "10000";
    request.job.script =
        "#!/bin/sh\n$SCHED run $APP " + stop + " " + go + " 4 2 3\necho \"step status $?\"\n";
    return std::to_string(client.call<proto::SubmitReply>(proto::type::kSubmit, request).id);
  });
  const std::int64_t id = std::stoll(id_text);
  const auto output = [&] { return read_file(cluster.job(id).output); };
  const auto says = [&](const std::string& line) {
    return eventually([&] { return output().find(line + "\n") != std::string::npos; }, 20s);
  };
  ASSERT_TRUE(says("start on 2")) << output() << cluster.logs();

  // 2 → 4 with two idle nodes: granted, and the commit shows 4 processes.
  std::ofstream(go + "1") << "go\n";
  ASSERT_TRUE(says("request 1: GRANTED 4")) << output() << cluster.logs();
  ASSERT_TRUE(says("resized 2->4")) << output() << cluster.logs();
  EXPECT_TRUE(eventually([&] { return cluster.job(id).nodes == 4; }));

  // 4 → 2: a shrink is granted at once.
  std::ofstream(go + "2") << "go\n";
  ASSERT_TRUE(says("request 2: GRANTED 2")) << output() << cluster.logs();
  ASSERT_TRUE(says("resized 4->2")) << output() << cluster.logs();
  ASSERT_TRUE(eventually([&] { return cluster.job(id).nodes == 2; })) << cluster.logs();

  // A rigid job takes the two free nodes; 2 → 3 waits for one.
  const auto rigid = cluster.submit("#!/bin/sh\nsleep 60\n", 2, 0, "blocker");
  ASSERT_TRUE(cluster.wait_state(rigid, "RUNNING")) << cluster.logs();
  std::ofstream(go + "3") << "go\n";
  ASSERT_TRUE(says("request 3 to 3: PENDING")) << output() << cluster.logs();
  std::this_thread::sleep_for(1s);  // several passes: none grows the job
  EXPECT_EQ(output().find("request 3: GRANTED"), std::string::npos) << output();
  EXPECT_EQ(cluster.job(id).nodes, 2);
  // The rigid job ends: the request is granted in the pass that follows.
  cluster.client().call<proto::Empty>(proto::type::kCancel, proto::JobRef{rigid});
  ASSERT_TRUE(says("request 3: GRANTED 3")) << output() << cluster.logs();
  ASSERT_TRUE(says("resized 2->3")) << output() << cluster.logs();

  // `sched resize`: bob may not; alice, the owner, may (the grant reaches
  // the application as any adaptation does).
  const CliRun by_bob = sched_as(u->bob, cluster, {"resize", id_text, "--nodes", "4"});
  EXPECT_EQ(by_bob.status, 1) << describe(by_bob);
  EXPECT_NE(by_bob.err.find("permission denied: job " + id_text + " belongs to sched_alice"),
            std::string::npos)
      << describe(by_bob);
  const CliRun by_alice = sched_as(u->alice, cluster, {"resize", id_text, "--nodes", "4"});
  EXPECT_EQ(by_alice.status, 0) << describe(by_alice);
  EXPECT_NE(by_alice.out.find("job " + id_text + ": resize to 4 nodes requested (request "),
            std::string::npos)
      << describe(by_alice);
  ASSERT_TRUE(says("resized 3->4")) << output() << cluster.logs();
  EXPECT_TRUE(eventually([&] { return cluster.job(id).nodes == 4; }));

  // Clear errors: no such job, a size outside the bounds, a job that is not
  // evolving.
  const CliRun unknown = run_sched(cluster, {"resize", "9999", "--nodes", "2"});
  EXPECT_EQ(unknown.status, 1);
  EXPECT_NE(unknown.err.find("job 9999: no job 9999"), std::string::npos) << describe(unknown);
  const CliRun outside = run_sched(cluster, {"resize", id_text, "--nodes", "9"});
  EXPECT_EQ(outside.status, 1);
  EXPECT_NE(outside.err.find("takes 1 to 4 nodes: 9 is outside"), std::string::npos)
      << describe(outside);
  const auto waiting = cluster.submit("#!/bin/sh\ntrue\n", 1, 0, "rigid");
  const CliRun not_evolving =
      run_sched(cluster, {"resize", std::to_string(waiting), "--nodes", "2"});
  EXPECT_EQ(not_evolving.status, 1);
  EXPECT_NE(not_evolving.err.find("is rigid, only evolving jobs ask to resize"), std::string::npos)
      << describe(not_evolving);

  // The events tell the story (schedd logs each one).
  const std::string logs = cluster.logs();
  for (const char* topic : {"resize.requested", "resize.pending", "resize.granted"}) {
    EXPECT_NE(logs.find(topic), std::string::npos) << topic;
  }
  std::ofstream(stop) << "stop\n";
  ASSERT_TRUE(cluster.wait_state(id, "COMPLETED", 20s)) << output() << cluster.logs();
  EXPECT_NE(output().find("done on 4\nstep status 0\n"), std::string::npos) << output();
}

}  // namespace
}  // namespace sched::testing
