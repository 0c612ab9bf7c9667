// `sched policy try` on a live cluster (issue 22 item 3): schedd's
// policy.snapshot feeds twins of the running system in the CLI; the running
// policy's twin predicts when waiting jobs start, and the live cluster then
// starts them within a few seconds of it (jobs sleep to just under their
// limit, the twin's estimate of a run); a broken candidate is an error that
// changes nothing.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "cluster.hpp"

namespace sched::testing {
namespace {

std::string describe(const CliRun& run) {
  return "status " + std::to_string(run.status) + "\n--- stdout\n" + run.out + "--- stderr\n" +
         run.err;
}

// A job that runs until half a second before its limit.
std::string sleeper(double limit_s) {
  return "#!/bin/sh\nsleep " + std::to_string(limit_s - 0.5) + "\n";
}

// How far the twin's start times may be from the live ones: the twin ends a
// job at its limit, the live one ends 0.5 s earlier, and each start adds
// schedd's tick (0.2 s) and a launch; two starts chain here.
constexpr double kToleranceS = 3;

TEST(PolicyTry, TwinsCompareTwoPoliciesAndPredictTheLiveStarts) {
  LocalCluster cluster;  // fcfs
  cluster.start_agent("n1");
  cluster.start_agent("n2");
  ASSERT_TRUE(cluster.wait_nodes_up(2)) << cluster.logs();
  const auto a = cluster.submit(sleeper(10), 1, 10, "a");
  const auto b = cluster.submit(sleeper(20), 1, 20, "b");
  ASSERT_TRUE(cluster.wait_state(a, "RUNNING")) << cluster.logs();
  ASSERT_TRUE(cluster.wait_state(b, "RUNNING")) << cluster.logs();
  // c needs both nodes: at b's end. Under FCFS d waits behind c; EASY
  // backfills it on a's node (its 6 s end before b's).
  const auto c = cluster.submit(sleeper(8), 2, 8, "c");
  const auto d = cluster.submit(sleeper(6), 1, 6, "d");
  ASSERT_EQ(cluster.job(c).state, "PENDING");

  TempDir out("sched-policy-try");
  auto run = run_sched(
      cluster, {"policy", "try", "easy_backfill", "--horizon", "2m", "--json", "--out", out.str()});
  ASSERT_EQ(run.status, 0) << describe(run) << cluster.logs();
  const auto json = nlohmann::json::parse(run.out);
  EXPECT_EQ(json["running"], 2);
  EXPECT_EQ(json["pending"], 2);
  ASSERT_EQ(json["policies"].size(), 2u) << json;
  const auto& current = json["policies"][0];
  const auto& candidate = json["policies"][1];
  EXPECT_EQ(current["role"], "current");
  EXPECT_EQ(current["policy"], "fcfs");
  EXPECT_EQ(candidate["policy"], "easy_backfill");
  for (const auto* side : {&current, &candidate}) {
    const auto& m = (*side)["metrics"];
    for (const char* key : {"mean_wait_s", "max_wait_s", "mean_response_s", "utilization",
                            "resizes", "violations", "finished"}) {
      EXPECT_TRUE(m.contains(key)) << key << " in " << m;
    }
    EXPECT_EQ(m["policy_errors"], 0) << m;
    // a, b, c, d and maybe replayed arrivals end within 2 minutes.
    EXPECT_GE(m["finished"].get<int>(), 4) << m;
  }
  const std::string cs = std::to_string(c);
  const std::string ds = std::to_string(d);
  ASSERT_TRUE(current["predicted_start"].contains(cs)) << current;
  ASSERT_TRUE(current["predicted_start"].contains(ds)) << current;
  const double c_twin = current["predicted_start"][cs];
  const double d_twin = current["predicted_start"][ds];
  // EASY starts d earlier than FCFS, and its mean wait is lower.
  EXPECT_LT(candidate["predicted_start"][ds].get<double>(), d_twin - 5) << json;
  EXPECT_LT(candidate["metrics"]["mean_wait_s"].get<double>(),
            current["metrics"]["mean_wait_s"].get<double>());
  EXPECT_TRUE(std::filesystem::exists(out.str() + "/policy-try.csv"));
  EXPECT_TRUE(std::filesystem::exists(out.str() + "/policy-try-jobs.csv"));
  std::ifstream csv(out.str() + "/policy-try.csv");
  std::string header;
  std::getline(csv, header);
  EXPECT_EQ(header, "metric,current:fcfs,candidate:easy_backfill");

  // The live cluster (FCFS) then does what the current policy's twin said.
  ASSERT_TRUE(cluster.wait_state(c, "RUNNING", std::chrono::seconds(40))) << cluster.logs();
  ASSERT_TRUE(cluster.wait_state(d, "RUNNING", std::chrono::seconds(40))) << cluster.logs();
  const double c_live = cluster.job(c).start_time.value_or(-1);
  const double d_live = cluster.job(d).start_time.value_or(-1);
  std::cout << "policy try: c twin " << std::fixed << c_twin << " live " << c_live << " error "
            << c_live - c_twin << " s; d twin " << d_twin << " live " << d_live << " error "
            << d_live - d_twin << " s\n";
  EXPECT_NEAR(c_live, c_twin, kToleranceS);
  EXPECT_NEAR(d_live, d_twin, kToleranceS);
}

TEST(PolicyTry, PrintsATableAndABrokenCandidateChangesNothing) {
  LocalCluster cluster;  // fcfs
  cluster.start_agent("n1");
  ASSERT_TRUE(cluster.wait_nodes_up(1)) << cluster.logs();
  const auto running = cluster.submit(sleeper(30), 1, 30, "long");
  ASSERT_TRUE(cluster.wait_state(running, "RUNNING")) << cluster.logs();
  const auto waiting = cluster.submit(sleeper(5), 1, 5, "next");

  auto run = run_sched(cluster, {"policy", "try", "easy_backfill", "--horizon", "1m"});
  ASSERT_EQ(run.status, 0) << describe(run);
  EXPECT_NE(run.out.find("1 running, 1 waiting"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("CURRENT (fcfs)"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("CANDIDATE (easy_backfill)"), std::string::npos) << run.out;
  for (const char* row : {"mean wait (s)", "max wait (s)", "mean response (s)", "utilisation",
                          "resizes", "corridor violations", "finished in horizon"}) {
    EXPECT_NE(run.out.find(row), std::string::npos) << row << "\n" << run.out;
  }

  TempDir dir("sched-policy-try-broken");
  const std::string broken = dir.str() + "/broken.lua";
  {
    std::ofstream file(broken);
    file << "local P = { api = 1 }\nif then\n";
  }
  run = run_sched(cluster, {"policy", "try", broken});
  EXPECT_EQ(run.status, 1) << describe(run);
  EXPECT_NE(run.err.find("broken.lua:2"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("does not load"), std::string::npos) << run.err;
  const auto info =
      cluster.client().call<proto::PolicyInfoReply>(proto::type::kPolicyInfo, proto::Empty{});
  EXPECT_EQ(info.name, "fcfs");
  EXPECT_EQ(info.reloads, 0u);
  EXPECT_EQ(cluster.job(running).state, "RUNNING");
  EXPECT_EQ(cluster.job(waiting).state, "PENDING");

  // A bad horizon is refused before anything is asked.
  run = run_sched(cluster, {"policy", "try", "fcfs", "--horizon", "soon"});
  EXPECT_EQ(run.status, 1) << describe(run);
  EXPECT_NE(run.err.find("--horizon soon"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace sched::testing
