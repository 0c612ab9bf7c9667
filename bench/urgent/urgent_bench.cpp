// Urgent job submit → start on a local cluster of real daemons (issue 17
// item 3). Three cases, each timed from the submission to the urgent job's
// first command (its script stamps the wall time):
//   idle     a node is free: the urgent job just starts;
//   suspend  every node runs a rigid job: easy_backfill suspends the
//            lowest-priority one (lib/urgent.lua) and starts it there;
//   shrink   a malleable job (bench/adapt's adapt_app, one process per node)
//            holds every node: perf_aware shrinks it by one node (the
//            six-step adaptation) and starts the urgent job on that node.
// Prints a table; never fails on time.
//
//   build/bench/urgent_bench [--runs N] [--nodes K]
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "cluster.hpp"
#include "process.hpp"
#include "test_paths.hpp"

namespace {

using sched::testing::ClusterOptions;
using sched::testing::LocalCluster;

double wall_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::unique_ptr<LocalCluster> cluster_of(const std::string& policy, int nodes) {
  ClusterOptions options;
  options.policy = policy;
  options.log_level = "warn";
  auto cluster = std::make_unique<LocalCluster>(options);
  for (int i = 1; i <= nodes; ++i) cluster->start_agent("n" + std::to_string(i));
  if (!cluster->wait_nodes_up(nodes)) throw std::runtime_error("the nodes did not come up");
  std::filesystem::create_directories(cluster->work_dir());
  return cluster;
}

// Submits an urgent one-node job and returns ms from the submission to its
// script's first command.
double time_urgent(LocalCluster& cluster, int run) {
  const std::string stamp = cluster.work_dir() + "/urgent-" + std::to_string(run);
  sched::proto::SubmitRequest request;
  request.job.name = "urgent";
  request.job.urgent = true;
  request.job.workdir = cluster.work_dir();
  request.job.script = "#!/bin/sh\ndate +%s.%N > " + stamp + "\n";
  const double before = wall_now();
  const auto id = cluster.submit(request);
  if (!cluster.wait_state(id, "COMPLETED", std::chrono::seconds(30))) {
    throw std::runtime_error("an urgent job did not complete:\n" + cluster.logs());
  }
  std::ifstream in(stamp);
  double started = 0;
  in >> started;
  return (started - before) * 1000;
}

bool wait_until(const std::function<bool()>& done) {
  return sched::testing::eventually(done, std::chrono::seconds(30));
}

std::vector<double> idle_case(int runs, int nodes) {
  auto cluster = cluster_of("easy_backfill", nodes);
  std::vector<double> out;
  for (int i = 0; i < runs; ++i) out.push_back(time_urgent(*cluster, i));
  return out;
}

std::vector<double> suspend_case(int runs, int nodes) {
  auto cluster = cluster_of("easy_backfill", nodes);
  std::vector<std::int64_t> rigid;
  for (int i = 0; i < nodes; ++i) {
    rigid.push_back(cluster->submit("#!/bin/sh\nsleep 1000\n", 1, 0, "rigid"));
  }
  for (auto id : rigid) {
    if (!cluster->wait_state(id, "RUNNING")) throw std::runtime_error("a rigid job did not start");
  }
  std::vector<double> out;
  for (int i = 0; i < runs; ++i) {
    out.push_back(time_urgent(*cluster, i));
    // The suspended job is back before the next run.
    if (!wait_until([&] {
          return std::all_of(rigid.begin(), rigid.end(),
                             [&](auto id) { return cluster->job(id).state == "RUNNING"; });
        })) {
      throw std::runtime_error("a suspended job did not resume:\n" + cluster->logs());
    }
  }
  for (auto id : rigid) (void)sched::testing::run_sched(*cluster, {"cancel", std::to_string(id)});
  return out;
}

std::vector<double> shrink_case(int runs, int nodes) {
  auto cluster = cluster_of("perf_aware", nodes);
  const std::string stop = cluster->work_dir() + "/stop";
  sched::proto::SubmitRequest request;
  request.job.name = "mall";
  request.job.kind = "malleable";
  request.job.nodes = nodes;
  request.job.min_nodes = 1;
  request.job.max_nodes = nodes;
  request.job.workdir = cluster->work_dir();
  request.job.env["SCHED"] = SCHED_CLI_BIN;
  request.job.env["APP"] = SCHED_URGENT_ADAPT_APP_BIN;
  request.job.script = "#!/bin/sh\n$SCHED run $APP " + stop + "\n";
  const auto mall = cluster->submit(request);
  const auto full = [&] {
    const auto job = cluster->job(mall);
    return job.state == "RUNNING" && job.nodes == nodes;
  };
  if (!wait_until(full)) throw std::runtime_error("the malleable job did not start");
  std::vector<double> out;
  for (int i = 0; i < runs; ++i) {
    out.push_back(time_urgent(*cluster, i));
    // perf_aware grows it back into the freed node before the next run.
    if (!wait_until(full)) throw std::runtime_error("the malleable job did not grow back");
  }
  std::ofstream(stop) << "stop\n";
  (void)cluster->wait_state(mall, "COMPLETED");
  return out;
}

void print(const char* name, std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  const auto pct = [&](double p) { return ms[static_cast<std::size_t>(p * (ms.size() - 1))]; };
  std::printf("| %s | %zu | %.1f | %.1f | %.1f |\n", name, ms.size(), pct(0.5), pct(0.95),
              ms.back());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Urgent job submit → start on a local cluster: idle, by suspension, by shrink"};
  int runs = 10;
  int nodes = 2;
  app.add_option("--runs", runs, "Urgent jobs timed per case")->capture_default_str();
  app.add_option("--nodes", nodes, "Nodes of the local cluster")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  try {
    std::printf(
        "| case | runs | median ms | 95th percentile ms | max ms |\n|---|---|---|---|---|\n");
    print("idle node", idle_case(runs, nodes));
    print("by suspending a rigid job (easy_backfill)", suspend_case(runs, nodes));
    print("by shrinking a malleable job (perf_aware)", shrink_case(runs, nodes));
  } catch (const std::exception& e) {
    std::cerr << "urgent_bench: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
