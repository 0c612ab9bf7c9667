// The negotiation experiment (issue 20 item 4, docs/experiments.md): one
// generated workload of core-level jobs, simulated without negotiation (the
// iScheduler's mapping accepted as it is) and with the iHypervisor's
// socket-packing policy negotiating, at several attempt limits. Prints one
// table of metrics and one of the messages carried. Figures only.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <map>
#include <string>

#include "sched/invasive/simulator.hpp"

using namespace sched::invasive;

int main(int argc, char** argv) {
  CLI::App app{"Negotiation experiment: with and without the iHypervisor's negotiation"};
  int jobs = 400, nodes = 4, sockets = 2, cores = 8, max_cores = 12;
  std::uint64_t seed = 20;
  double gap = 100, max_runtime = 1800;
  std::vector<int> attempts{2, 3, 5};
  int other_seeds = 10;
  int urgent_every = 0;
  std::string policy_dir = SCHED_SOURCE_POLICY_DIR "/negotiation";
  std::string hypervisor = "socket_pack.lua", scheduler = "wait_first.lua";
  app.add_option("--jobs", jobs, "jobs in the workload")->capture_default_str();
  app.add_option("--seed", seed, "workload seed")->capture_default_str();
  app.add_option("--gap", gap, "mean seconds between arrivals")->capture_default_str();
  app.add_option("--max-cores", max_cores, "largest job (cores, one node)")->capture_default_str();
  app.add_option("--max-runtime", max_runtime, "longest job (s)")->capture_default_str();
  app.add_option("--nodes", nodes)->capture_default_str();
  app.add_option("--sockets", sockets, "per node")->capture_default_str();
  app.add_option("--cores", cores, "per socket")->capture_default_str();
  app.add_option("--attempts", attempts, "attempt limits to run")->capture_default_str();
  app.add_option("--policy-dir", policy_dir)->capture_default_str();
  app.add_option("--urgent-every", urgent_every, "every N-th job is urgent (URGENT_JOB; 0: none)")
      ->capture_default_str();
  app.add_option("--other-seeds", other_seeds,
                 "also run seeds 1..N (max_attempts 3) for the table across seeds")
      ->capture_default_str();
  app.add_option("--hypervisor", hypervisor, "the iHypervisor's policy")->capture_default_str();
  app.add_option("--scheduler", scheduler, "the iScheduler's policy")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  const auto workload = generate_workload(jobs, seed, gap, max_cores, max_runtime, urgent_every);
  SimConfig base;
  base.topology = Topology::uniform(nodes, sockets, cores);
  base.scheduler_policy = policy_dir + "/" + scheduler;

  struct Run {
    std::string label;
    SimResult result;
  };
  std::vector<Run> runs;
  SimConfig without = base;
  without.params.max_attempts = 1;
  runs.push_back({"without negotiation", simulate(workload, without)});
  for (int a : attempts) {
    SimConfig with = base;
    with.hypervisor_policy = policy_dir + "/" + hypervisor;
    with.params.max_attempts = a;
    runs.push_back(
        {"with negotiation, max_attempts " + std::to_string(a), simulate(workload, with)});
  }

  std::printf(
      "Workload: %d jobs (seed %llu, mean gap %.0f s, 1-%d cores on one node, "
      "60-%.0f s, urgent: every %d-th (0: none)); partition %d nodes x %d sockets x %d cores; "
      "iScheduler %s, iHypervisor %s.\n\n",
      jobs, static_cast<unsigned long long>(seed), gap, max_cores, max_runtime, urgent_every, nodes,
      sockets, cores, scheduler.c_str(), hypervisor.c_str());
  std::printf(
      "| run | mean wait s | makespan s | utilisation | jobs split %% | extra sockets "
      "/ job | agreements | rounds mean | rounds max | forced at limit | messages | "
      "messages / job |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const auto& [label, r] : runs) {
    std::printf(
        "| %s | %.1f | %.0f | %.3f | %.1f | %.3f | %lld | %.2f | %d | %lld | %lld | "
        "%.1f |\n",
        label.c_str(), r.mean_wait_s, r.makespan_s, r.utilisation, 100 * r.split_fraction,
        r.mean_extra_sockets, static_cast<long long>(r.hypervisor.agreed), r.mean_rounds(),
        r.max_rounds(), static_cast<long long>(r.hypervisor.forced_at_limit),
        static_cast<long long>(r.messages.total), static_cast<double>(r.messages.total) / jobs);
    if (r.unfinished || r.hypervisor.refusals || r.hypervisor.policy_errors ||
        r.scheduler.policy_errors) {
      std::printf(
          "|   ↳ unfinished %d, protocol refusals %lld, policy errors %lld + %lld | | | "
          "| | | | | | | | |\n",
          r.unfinished, static_cast<long long>(r.hypervisor.refusals),
          static_cast<long long>(r.hypervisor.policy_errors),
          static_cast<long long>(r.scheduler.policy_errors));
    }
  }
  std::printf("\nMessages by type:\n\n| type |");
  for (const auto& run : runs) std::printf(" %s |", run.label.c_str());
  std::printf("\n|---|");
  for (std::size_t i = 0; i < runs.size(); ++i) std::printf("---|");
  std::printf("\n");
  std::map<std::string, bool> types;
  for (const auto& run : runs) {
    for (const auto& [t, n] : run.result.messages.by_type) types[t] = true;
  }
  for (const auto& [t, unused] : types) {
    std::printf("| %s |", t.c_str());
    for (const auto& run : runs) {
      auto it = run.result.messages.by_type.find(t);
      std::printf(" %lld |", it == run.result.messages.by_type.end()
                                 ? 0LL
                                 : static_cast<long long>(it->second));
    }
    std::printf("\n");
  }

  if (other_seeds > 0) {
    std::printf("\nAcross seeds 1-%d (the same workload parameters; max_attempts 3):\n\n",
                other_seeds);
    std::printf(
        "| seed | mean wait s without | with | jobs split %% without | with | makespan s "
        "without | with | rounds mean | messages / job without | with |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
    for (int sd = 1; sd <= other_seeds; ++sd) {
      const auto w =
          generate_workload(jobs, static_cast<std::uint64_t>(sd), gap, max_cores, max_runtime);
      SimConfig off = without;
      SimConfig on = base;
      on.hypervisor_policy = policy_dir + "/" + hypervisor;
      on.params.max_attempts = 3;
      const SimResult a = simulate(w, off);
      const SimResult b = simulate(w, on);
      std::printf("| %d | %.1f | %.1f | %.1f | %.1f | %.0f | %.0f | %.2f | %.1f | %.1f |\n", sd,
                  a.mean_wait_s, b.mean_wait_s, 100 * a.split_fraction, 100 * b.split_fraction,
                  a.makespan_s, b.makespan_s, b.mean_rounds(),
                  static_cast<double>(a.messages.total) / jobs,
                  static_cast<double>(b.messages.total) / jobs);
    }
  }
  return 0;
}
