// Figures of the live system (issue 5), measured on a local cluster of real
// daemons on loopback:
//   1. submissions per second through the client API (one client, each
//      submission answered before the next; and four clients at once),
//   2. submissions per second through the `sched submit` process,
//   3. time from submission to the job's process running on an idle cluster
//      (the script's first command stamps the time).
// Prints a table; never fails on time.
//
//   4. (--prefill N) submissions per second from one client while N jobs
//      already wait, under --policy (issue 15: easy_backfill, 100,000),
//      and schedd's memory then (peak and current RSS, /proc/PID/status).
//
// The client API's clients sign each request with MUNGE and wait for each
// reply, as the `sched` command does; with --session they open a session
// (one MUNGE credential, then a MAC a request) and with --window N keep N
// requests in flight (docs/protocol.md §2.1).
//
//   build/bench/live_bench [--jobs N] [--cli-jobs N] [--latency-runs N]
//                          [--prefill N --policy NAME] [--session] [--window N]
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "cluster.hpp"
#include "test_paths.hpp"

namespace {

using sched::testing::LocalCluster;
using Clock = std::chrono::steady_clock;

sched::testing::ClusterOptions quiet(const std::string& policy = "fcfs") {
  sched::testing::ClusterOptions options;
  options.policy = policy;
  options.log_level = "warn";
  return options;
}

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

double wall_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

sched::proto::SubmitRequest sleeper(const std::string& workdir) {
  sched::proto::SubmitRequest request;
  request.job.name = "bench";
  request.job.script = "#!/bin/sh\nsleep 1000\n";
  request.job.workdir = workdir;
  return request;
}

// How the API's clients talk: a MUNGE credential a request (as the CLI's)
// or a session; how many requests each keeps in flight.
struct Mode {
  bool session = false;
  int window = 1;
};

double api_rate(LocalCluster& cluster, int jobs, int clients, const Mode& mode) {
  const auto start = Clock::now();
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      const auto client = cluster.connect(std::chrono::seconds(30));
      if (mode.session) client->open_session();
      const auto request = sleeper(cluster.work_dir());
      std::deque<std::uint64_t> in_flight;
      for (int i = c; i < jobs; i += clients) {
        if (static_cast<int>(in_flight.size()) >= mode.window) {
          client->take<sched::proto::SubmitReply>(in_flight.front());
          in_flight.pop_front();
        }
        in_flight.push_back(client->post(sched::proto::type::kSubmit, request));
      }
      for (std::uint64_t seq : in_flight) client->take<sched::proto::SubmitReply>(seq);
    });
  }
  for (auto& t : threads) t.join();
  return jobs / seconds_since(start);
}

double cli_rate(LocalCluster& cluster, int jobs) {
  const std::string command = std::string(SCHED_CLI_BIN) + " --endpoint " +
                              cluster.client_endpoint() + " submit --parsable --wrap 'sleep 1000'" +
                              " -D " + cluster.work_dir() + " > /dev/null";
  const auto start = Clock::now();
  for (int i = 0; i < jobs; ++i) {
    if (std::system(command.c_str()) != 0) throw std::runtime_error("sched submit failed");
  }
  return jobs / seconds_since(start);
}

// One client's rate once `prefill` jobs wait behind a busy node (submitted
// by four clients first, not timed).
// A field of /proc/PID/status in kB (VmRSS, VmHWM); 0 when absent.
long status_kb(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::atol(line.c_str() + field.size() + 1);
  }
  return 0;
}

struct Behind {
  double rate = 0;
  long peak_rss_kb = 0;  // schedd's, over the whole run
  long rss_kb = 0;       // schedd's at the end
};

Behind rate_behind(const std::string& policy, int prefill, int jobs, const Mode& mode) {
  LocalCluster cluster(quiet(policy));
  cluster.start_agent("n1");
  if (!cluster.wait_nodes_up(1)) throw std::runtime_error("the node did not come up");
  api_rate(cluster, prefill, 4, mode);
  Behind out;
  out.rate = api_rate(cluster, jobs, 1, mode);
  // One more request after the last pass has run (a stats reply waits for it).
  cluster.client().call<sched::proto::StatsReply>(sched::proto::type::kStats,
                                                  sched::proto::Empty{});
  out.peak_rss_kb = status_kb(cluster.schedd_pid(), "VmHWM");
  out.rss_kb = status_kb(cluster.schedd_pid(), "VmRSS");
  return out;
}

std::vector<double> latencies(int runs) {
  LocalCluster cluster(quiet());
  cluster.start_agent("n1");
  if (!cluster.wait_nodes_up(1)) throw std::runtime_error("the node did not come up");
  std::vector<double> out;
  for (int i = 0; i < runs; ++i) {
    const std::string stamp = cluster.work_dir() + "/stamp-" + std::to_string(i);
    const double before = wall_now();
    const auto id = cluster.submit("#!/bin/sh\ndate +%s.%N > " + stamp + "\n");
    if (!cluster.wait_state(id, "COMPLETED")) throw std::runtime_error("a job did not complete");
    std::ifstream in(stamp);
    double started = 0;
    in >> started;
    out.push_back((started - before) * 1000);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Figures of the live system: submission rates and submit-to-start latency"};
  int jobs = 20000;
  int cli_jobs = 300;
  int latency_runs = 50;
  app.add_option("--jobs", jobs, "Submissions through the client API")->capture_default_str();
  app.add_option("--cli-jobs", cli_jobs, "Submissions through `sched submit`")
      ->capture_default_str();
  app.add_option("--latency-runs", latency_runs, "Jobs timed from submission to start")
      ->capture_default_str();
  int prefill = 0;
  std::string policy = "easy_backfill";
  app.add_option("--prefill", prefill,
                 "Only this: one client's rate (--jobs submissions) while this many jobs wait");
  app.add_option("--policy", policy, "The policy for --prefill")->capture_default_str();
  Mode mode;
  app.add_flag("--session", mode.session,
               "API clients open a session (MAC-signed requests) instead of a MUNGE "
               "credential a request");
  app.add_option("--window", mode.window, "Requests each API client keeps in flight")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  const std::string how = std::string(mode.session ? "session" : "MUNGE a request") + ", window " +
                          std::to_string(mode.window);
  try {
    if (prefill > 0) {
      const Behind behind = rate_behind(policy, prefill, jobs, mode);
      std::printf("| submissions/s, client API, 1 client, %d waiting, %s, %s (%d jobs) | %.0f |\n",
                  prefill, policy.c_str(), how.c_str(), jobs, behind.rate);
      std::printf(
          "| schedd peak RSS (VmHWM) / RSS at the end, %d jobs held | %.0f MB / %.0f MB |\n",
          prefill + jobs, behind.peak_rss_kb / 1024.0, behind.rss_kb / 1024.0);
      return 0;
    }
    double one = 0, four = 0, cli = 0;
    {
      // One node busy with a long job: everything after it waits, as a
      // queue does; each submission still gives a pass and a journal commit.
      LocalCluster cluster(quiet());
      cluster.start_agent("n1");
      if (!cluster.wait_nodes_up(1)) throw std::runtime_error("the node did not come up");
      one = api_rate(cluster, jobs, 1, mode);
      four = api_rate(cluster, jobs, 4, mode);
      cli = cli_rate(cluster, cli_jobs);
    }
    const std::vector<double> lat = latencies(latency_runs);
    const auto pct = [&](double p) { return lat[static_cast<std::size_t>(p * (lat.size() - 1))]; };
    std::printf("| measure | value |\n|---|---|\n");
    std::printf("| submissions/s, client API, 1 client, %s (%d jobs) | %.0f |\n", how.c_str(), jobs,
                one);
    std::printf("| submissions/s, client API, 4 clients, %s (%d jobs) | %.0f |\n", how.c_str(),
                jobs, four);
    std::printf("| submissions/s, `sched submit` processes (%d jobs) | %.0f |\n", cli_jobs, cli);
    std::printf("| submit → process start, median (%d jobs) | %.1f ms |\n", latency_runs, pct(0.5));
    std::printf("| submit → process start, 95th percentile | %.1f ms |\n", pct(0.95));
    std::printf("| submit → process start, max | %.1f ms |\n", lat.back());
  } catch (const std::exception& e) {
    std::cerr << "live_bench: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
