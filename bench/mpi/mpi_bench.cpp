// MPI start time on a local cluster of real daemons (issue 16): the time
// from `sched run -n TASKS --mpi=MPI` in a batch script to all of its ranks
// past MPI_Init, over NODES virtual nodes on loopback. One job runs the step
// `runs` times in a row; its script stamps the wall time just before each
// `sched run`, each rank stamps it after MPI_Init (bench/mpi/mpi_init_stamp.c),
// and the step's start is the last rank's stamp. Also the whole step (to
// `sched run`'s exit, MPI_Finalize and the agents' reports included).
// Prints a table; never fails on time.
//
//   build/bench/mpi_bench [--runs N] [--nodes K] [--tasks T] [--mpi pmi2|pmi1|pmix]
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cluster.hpp"
#include "test_paths.hpp"

namespace {

namespace fs = std::filesystem;
using sched::testing::ClusterOptions;
using sched::testing::LocalCluster;

std::vector<double> numbers(const fs::path& path) {
  std::ifstream in(path);
  std::vector<double> out;
  for (double x; in >> x;) out.push_back(x);
  return out;
}

struct Figures {
  std::vector<double> start_ms;  // to the last rank past MPI_Init
  std::vector<double> step_ms;   // to `sched run`'s exit
};

Figures measure(int runs, int nodes, int tasks, const std::string& mpi, const std::string& app) {
  ClusterOptions options;
  options.log_level = "warn";
  LocalCluster cluster(options);
  const int per_node = (tasks + nodes - 1) / nodes;
  for (int i = 1; i <= nodes; ++i) cluster.start_agent("n" + std::to_string(i), per_node);
  if (!cluster.wait_nodes_up(nodes)) throw std::runtime_error("the nodes did not come up");
  const fs::path work = cluster.work_dir();
  fs::create_directories(work);
  std::string script = "#!/bin/sh\nset -e\n";
  for (int run = 0; run < runs; ++run) {
    const std::string r = (work / ("run" + std::to_string(run))).string();
    script += "date +%s.%N > " + r + ".before\n";
    script +=
        "$SCHED run -n " + std::to_string(tasks) + " --mpi=" + mpi + " $APP > " + r + ".ranks\n";
    script += "date +%s.%N > " + r + ".after\n";
  }
  sched::proto::SubmitRequest request;
  request.job.name = "mpi_bench";
  request.job.nodes = nodes;
  request.job.workdir = work.string();
  request.job.env["SCHED"] = SCHED_CLI_BIN;
  request.job.env["APP"] = app;
  request.job.script = script;
  const auto id = cluster.submit(request);
  if (!cluster.wait_state(id, "COMPLETED", std::chrono::seconds(60 + 20 * runs))) {
    std::ifstream out(cluster.job(id).output);
    std::cerr << out.rdbuf();
    throw std::runtime_error("the benchmark job did not complete:\n" + cluster.logs());
  }
  Figures figures;
  for (int run = 0; run < runs; ++run) {
    const fs::path r = work / ("run" + std::to_string(run));
    const auto before = numbers(r.string() + ".before");
    const auto after = numbers(r.string() + ".after");
    const auto ranks = numbers(r.string() + ".ranks");
    if (before.size() != 1 || after.size() != 1 ||
        ranks.size() != static_cast<std::size_t>(tasks)) {
      throw std::runtime_error("run " + std::to_string(run) + ": " + std::to_string(ranks.size()) +
                               " of " + std::to_string(tasks) + " ranks reported");
    }
    figures.start_ms.push_back((*std::max_element(ranks.begin(), ranks.end()) - before[0]) * 1000);
    figures.step_ms.push_back((after[0] - before[0]) * 1000);
  }
  return figures;
}

void print(const std::string& name, std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  const std::size_t n = ms.size();
  const double median = n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
  std::printf("| %s | %zu | %.1f | %.1f | %.1f |\n", name.c_str(), n, median, ms.front(),
              ms.back());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "MPI start time on a local cluster: sched run -n T --mpi=M to all ranks past MPI_Init"};
  int runs = 7;
  int nodes = 8;
  int tasks = 32;
  std::string mpi = "pmi2";
  app.add_option("--runs", runs, "Steps timed (in one job)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--nodes", nodes, "Virtual nodes (agents)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--tasks", tasks, "Ranks of each step")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--mpi", mpi, "sched run's --mpi: pmi2 or pmi1 (MPICH), pmix (Open MPI)")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  // PMIx is Open MPI's; the PMI-1 wire protocol MPICH's.
  const std::string program =
      mpi == "pmix" ? SCHED_MPI_STAMP_OPENMPI_BIN : SCHED_MPI_STAMP_MPICH_BIN;
  if (program.empty()) {
    std::cerr << "mpi_bench: no MPI program for --mpi=" << mpi
              << " (mpicc.mpich / mpicc.openmpi missing at configure time)\n";
    return 1;
  }
  try {
    const Figures figures = measure(runs, nodes, tasks, mpi, program);
    std::printf(
        "| %d ranks on %d nodes, --mpi=%s | runs | median ms | min ms | max ms |\n"
        "|---|---|---|---|---|\n",
        tasks, nodes, mpi.c_str());
    print("`sched run` → all ranks past MPI_Init", figures.start_ms);
    print("`sched run` → its exit (the whole step)", figures.step_ms);
  } catch (const std::exception& e) {
    std::cerr << "mpi_bench: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
