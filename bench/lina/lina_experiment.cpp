// Lina, Ghafoor and Hines's elastic scheduling experiment (JSSPP 2022,
// ../shared/papers/lina-elastic-mpi-scheduling.txt) on an SWF trace: the
// `elastic` policy under all 18 gate × victim combinations (gates default,
// application, system; victims random, gain, resources, expansions,
// adaptation, time), with a fraction of the jobs elastic, against the same
// trace all rigid, each figure the mean of the seeds (Lina: 10 runs).
//
// Lina's setup (docs/experiments.md, "Lina et al."): half of the elastic
// jobs malleable and half evolving (--mode all-malleable: all malleable),
// min 50% and max 800% of the requested size, evolving requests of 1 to
// --request-max × the requested size, rescale costs per processor with α
// and β from U(0.005, 0.05) s (--costs ours: the simulator's per-node
// costs instead). Writes
//   runs.csv     one row per run (fraction, gate, victim, seed),
//   results.csv  per fraction and combination: the mean and standard
//                deviation over the seeds of turnaround time and utilisation,
//   results.md   the tables, Lina's Table 3 for our runs (best and worst
//                victim per gate), and the rigid baseline,
//   figure.svg   turnaround time and utilisation against the elastic
//                fraction, one panel per gate and metric, one line per
//                victim, the rigid trace as a dashed level (Lina's Figs. 1-10).
//
//   build/bench/lina_experiment --out bench/lina/results
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include "sched/lua_policy.hpp"
#include "sched/plot/svg_plot.hpp"
#include "sched/policy_host.hpp"
#include "sched/sim/elastic_workload.hpp"
#include "sched/sim/simulator.hpp"
#include "sched/sim/swf_reader.hpp"

namespace {

using namespace sched;

const std::vector<std::string> kGates = {"default", "application", "system"};
const std::vector<std::string> kVictims = {"random",     "gain",       "resources",
                                           "expansions", "adaptation", "time"};

struct Setup {
  std::string trace;
  long jobs = 0;
  int cores_per_node = 1;
  std::vector<double> fractions;
  std::vector<std::uint64_t> seeds;
  std::vector<std::string> gates = kGates;
  std::vector<std::string> victims = kVictims;
  sim::SwfElasticOptions elastic;  // fraction and seed set per run
  std::string mode = "lina";       // lina (half evolving) or all-malleable
  std::string costs = "lina";      // lina (per processor) or ours
};

struct Run {
  double fraction = 0;  // 0: the rigid trace
  std::string gate, victim;
  std::uint64_t seed = 0;
  sim::Metrics metrics;
  std::size_t resizes = 0;
  int unfinished = 0;
  int policy_errors = 0;
};

std::string fmt(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

struct Spread {
  double mean = 0, sd = 0;
};

Spread spread(const std::vector<double>& values) {
  Spread s;
  if (values.empty()) return s;
  const auto n = static_cast<double>(values.size());
  s.mean = std::accumulate(values.begin(), values.end(), 0.0) / n;
  double squares = 0;
  for (double v : values) squares += (v - s.mean) * (v - s.mean);
  s.sd = values.size() > 1 ? std::sqrt(squares / (n - 1)) : 0;
  return s;
}

Run run_one(const Setup& setup, const sim::Workload& rigid, const std::string& policy_path,
            double fraction, const std::string& gate, const std::string& victim,
            std::uint64_t seed) {
  sim::Workload workload = rigid;
  if (fraction > 0) {
    sim::SwfElasticOptions elastic = setup.elastic;
    elastic.fraction = fraction;
    elastic.seed = seed;
    sim::make_swf_elastic(workload, workload.nodes, elastic);
  }
  sim::Simulator simulator(workload, sim::SimConfig{});
  LuaPolicyOptions options;
  options.seed = seed;
  options.params["gate"] = gate;
  options.params["victims"] = victim;
  if (setup.costs == "lina") {
    // The "adaptation" order's estimate: Lina's costs at the middle of
    // their ranges, per node of cores_per_node processors.
    const double c = setup.cores_per_node;
    options.params["b"] = 0.0;
    options.params["alpha"] = 0.0275 * c;
    options.params["beta"] = 0.0275 / c;
  }
  simulator.set_policy(LuaPolicy::load(policy_path, options));
  const sim::SimResult result = simulator.run();
  Run run;
  run.fraction = fraction;
  run.gate = gate;
  run.victim = victim;
  run.seed = seed;
  run.metrics = result.metrics;
  run.resizes = result.resizes.size();
  run.policy_errors = result.policy_errors;
  for (const auto& job : result.jobs) run.unfinished += job.end < 0;
  return run;
}

bool same(double a, double b) { return std::abs(a - b) < 1e-9; }

std::vector<const Run*> select(const std::vector<Run>& runs, double fraction,
                               const std::string& gate, const std::string& victim) {
  std::vector<const Run*> out;
  for (const Run& r : runs) {
    if (same(r.fraction, fraction) && r.gate == gate && r.victim == victim) out.push_back(&r);
  }
  return out;
}

Spread tat(const std::vector<const Run*>& runs) {
  std::vector<double> values;
  for (const Run* r : runs) values.push_back(r->metrics.avg_response);
  return spread(values);
}

Spread util(const std::vector<const Run*>& runs) {
  std::vector<double> values;
  for (const Run* r : runs) values.push_back(100 * r->metrics.utilization);
  return spread(values);
}

double reduction(double ours, double base) { return 100 * (base - ours) / base; }

void write_runs_csv(const std::filesystem::path& path, const std::vector<Run>& runs) {
  std::ofstream out(path);
  out << "fraction,gate,victim,seed,jobs,makespan_s,utilization,avg_wait_s,avg_tat_s,resizes,"
         "unfinished\n";
  for (const Run& r : runs) {
    out << fmt(r.fraction, 2) << ',' << r.gate << ',' << r.victim << ',' << r.seed << ','
        << r.metrics.jobs << ',' << fmt(r.metrics.makespan, 1) << ','
        << fmt(r.metrics.utilization, 4) << ',' << fmt(r.metrics.avg_wait, 1) << ','
        << fmt(r.metrics.avg_response, 1) << ',' << r.resizes << ',' << r.unfinished << '\n';
  }
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

void write_results_csv(const std::filesystem::path& path, const std::vector<Run>& runs,
                       const Setup& setup) {
  std::ofstream out(path);
  out << "fraction,gate,victim,seeds,avg_tat_s_mean,avg_tat_s_sd,utilization_pct_mean,"
         "utilization_pct_sd,resizes_mean\n";
  const auto row = [&](double fraction, const std::string& gate, const std::string& victim) {
    const auto selected = select(runs, fraction, gate, victim);
    if (selected.empty()) return;
    double resizes = 0;
    for (const Run* r : selected) resizes += static_cast<double>(r->resizes);
    const Spread t = tat(selected), u = util(selected);
    out << fmt(fraction, 2) << ',' << gate << ',' << victim << ',' << selected.size() << ','
        << fmt(t.mean, 1) << ',' << fmt(t.sd, 1) << ',' << fmt(u.mean, 2) << ',' << fmt(u.sd, 2)
        << ',' << fmt(resizes / static_cast<double>(selected.size()), 1) << '\n';
  };
  row(0, "rigid", "-");
  for (double f : setup.fractions) {
    for (const auto& g : setup.gates) {
      for (const auto& v : setup.victims) row(f, g, v);
    }
  }
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

std::string markdown(const std::vector<Run>& runs, const Setup& setup, const std::string& command,
                     int nodes) {
  const auto rigid = select(runs, 0, "rigid", "-");
  const Spread rigid_tat = tat(rigid), rigid_util = util(rigid);
  std::string md = "# Lina et al.'s elastic experiment on " +
                   std::filesystem::path(setup.trace).filename().string() + "\n\n";
  md += "The first " + std::to_string(setup.jobs) + " jobs of the trace on " +
        std::to_string(nodes) + " nodes of " + std::to_string(setup.cores_per_node) +
        " processor(s); seeds " + std::to_string(setup.seeds.front()) + "-" +
        std::to_string(setup.seeds.back()) +
        " (each draws which jobs are elastic, the evolving requests and the costs); every figure "
        "is the mean over the seeds. Mode `" +
        setup.mode + "` (" +
        (setup.mode == "lina" ? "half of the elastic jobs malleable, half evolving"
                              : "every elastic job malleable") +
        "), evolving requests of 1 to " + fmt(setup.elastic.request_max_fraction, 2) +
        " × the requested size, costs `" + setup.costs + "` (" +
        (setup.costs == "lina" ? "Lina's, per processor: α, β from U(0.005, 0.05) s, latency "
                                 "U(0.015, 0.1) + U(0.005, 0.05) s, no process start cost"
                               : "the simulator's per-node default: (b + 0.25 s) per node "
                                 "changed + 2 s / (n_old + n_new), b = 1 s / 0.5 s") +
        "). Produced by `" + command + "` (one of the runs of `bench/lina/run.sh`).\n\n";
  md +=
      "**Rigid trace** (the `elastic` policy with no elastic job is EASY): average turnaround "
      "time " +
      fmt(rigid_tat.mean, 0) + " s, utilisation " + fmt(rigid_util.mean, 2) + "%.\n\n";

  for (const std::string metric : {"tat", "util"}) {
    const bool is_tat = metric == "tat";
    md += is_tat ? "## Average turnaround time: % lower than the rigid trace\n\n"
                 : "## Utilisation: points above the rigid trace\n\n";
    md += "| elastic | gate |";
    for (const auto& v : setup.victims) md += " " + v + " |";
    md += "\n|---|---|";
    for (std::size_t i = 0; i < setup.victims.size(); ++i) md += "---|";
    md += "\n";
    for (double f : setup.fractions) {
      for (const auto& g : setup.gates) {
        md += "| " + fmt(f * 100, 0) + "% | " + g + " |";
        for (const auto& v : setup.victims) {
          const auto selected = select(runs, f, g, v);
          if (selected.empty()) {
            md += " – |";
            continue;
          }
          const double value = is_tat ? reduction(tat(selected).mean, rigid_tat.mean)
                                      : util(selected).mean - rigid_util.mean;
          md += " " + fmt(value, is_tat ? 1 : 2) + " |";
        }
        md += "\n";
      }
    }
    md += "\n";
  }

  // Lina's Table 3: per gate, the best and the worst victim order at any
  // fraction and the largest difference between them.
  md +=
      "## Best and worst victim order (Lina's Table 3)\n\nPer gate, the largest difference "
      "between the best and the worst victim order at any fraction: turnaround time as % of "
      "the worst, utilisation in points.\n\n| gate | TAT best | TAT worst | TAT difference | "
      "utilisation best | utilisation worst | utilisation difference |\n"
      "|---|---|---|---|---|---|---|\n";
  for (const auto& g : setup.gates) {
    double best_tat_gap = -1, best_util_gap = -1;
    std::string tat_cell[3], util_cell[3];
    for (double f : setup.fractions) {
      std::string lo_v, hi_v, ulo_v, uhi_v;
      double lo = 1e300, hi = -1e300, ulo = 1e300, uhi = -1e300;
      for (const auto& v : setup.victims) {
        const auto selected = select(runs, f, g, v);
        if (selected.empty()) continue;
        const double t = tat(selected).mean, u = util(selected).mean;
        if (t < lo) lo = t, lo_v = v;
        if (t > hi) hi = t, hi_v = v;
        if (u < ulo) ulo = u, ulo_v = v;
        if (u > uhi) uhi = u, uhi_v = v;
      }
      if (lo_v.empty()) continue;
      const double gap = 100 * (hi - lo) / hi;
      if (gap > best_tat_gap) {
        best_tat_gap = gap;
        tat_cell[0] = lo_v;
        tat_cell[1] = hi_v;
        tat_cell[2] = fmt(gap, 2) + "% at " + fmt(f * 100, 0) + "% elastic";
      }
      if (uhi - ulo > best_util_gap) {
        best_util_gap = uhi - ulo;
        util_cell[0] = uhi_v;
        util_cell[1] = ulo_v;
        util_cell[2] = fmt(uhi - ulo, 2) + " at " + fmt(f * 100, 0) + "% elastic";
      }
    }
    md += "| " + g + " | " + tat_cell[0] + " | " + tat_cell[1] + " | " + tat_cell[2] + " | " +
          util_cell[0] + " | " + util_cell[1] + " | " + util_cell[2] + " |\n";
  }

  // Failed passes or jobs left over would make a figure meaningless: say so.
  int unfinished = 0, errors = 0;
  for (const Run& r : runs) unfinished += r.unfinished, errors += r.policy_errors;
  md += "\nJobs unfinished over all runs: " + std::to_string(unfinished) +
        "; failed policy passes: " + std::to_string(errors) + ".\n";
  return md;
}

plot::Figure figure(const std::vector<Run>& runs, const Setup& setup) {
  const auto rigid = select(runs, 0, "rigid", "-");
  plot::Figure fig;
  fig.title = "Elastic policy on " + std::filesystem::path(setup.trace).filename().string() + " (" +
              std::to_string(setup.jobs) + " jobs, mean of " + std::to_string(setup.seeds.size()) +
              " seeds, mode " + setup.mode + ", costs " + setup.costs + ")";
  fig.columns = 2;
  fig.panel_width = 520;
  fig.panel_height = 320;
  for (const auto& g : setup.gates) {
    for (const bool is_tat : {true, false}) {
      plot::Panel panel;
      panel.title = std::string(is_tat ? "Average turnaround time" : "Utilisation") + ", gate " + g;
      panel.x_label = "elastic jobs (%)";
      panel.y_label = is_tat ? "seconds" : "percent";
      for (const auto& v : setup.victims) {
        plot::Series series;
        series.name = "victims " + v;
        for (double f : setup.fractions) {
          const auto selected = select(runs, f, g, v);
          if (selected.empty()) continue;
          series.points.emplace_back(f * 100, is_tat ? tat(selected).mean : util(selected).mean);
        }
        panel.series.push_back(std::move(series));
      }
      plot::Series level;
      level.name = "rigid trace";
      level.markers = false;
      level.dash = "4 4";
      level.colour = "#000000";
      const double y = is_tat ? tat(rigid).mean : util(rigid).mean;
      level.points = {{setup.fractions.front() * 100, y}, {setup.fractions.back() * 100, y}};
      panel.series.push_back(std::move(level));
      fig.panels.push_back(std::move(panel));
    }
  }
  return fig;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Lina et al.'s elastic scheduling experiment on an SWF trace"};
  Setup setup;
  setup.trace = std::string(SCHED_SHARED_WORKLOADS_DIR) + "/lublin_256.swf";
  setup.jobs = 2000;
  setup.fractions = {0.1, 0.3, 0.5, 0.7, 1.0};
  setup.seeds = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  std::string out_dir = "out/lina-experiment";
  app.add_option("--out", out_dir, "Folder for runs.csv, results.csv, results.md, figure.svg");
  app.add_option("--trace", setup.trace, "SWF trace")->capture_default_str();
  app.add_option("--jobs", setup.jobs, "Use the first N job records of the trace")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--cores-per-node", setup.cores_per_node,
                 "Processors per node (the trace's sizes are processors)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--fractions", setup.fractions, "Elastic fractions, ascending, in (0, 1]")
      ->check(CLI::Range(0.01, 1.0));
  app.add_option("--seeds", setup.seeds, "Seeds (runs averaged)");
  app.add_option("--gates", setup.gates, "Gates: default, application, system");
  app.add_option("--victims", setup.victims,
                 "Victim orders: random, gain, resources, expansions, adaptation, time");
  app.add_option("--mode", setup.mode,
                 "lina (half of the elastic jobs malleable, half evolving) or all-malleable")
      ->capture_default_str()
      ->check(CLI::IsMember({"lina", "all-malleable"}));
  app.add_option("--request-max", setup.elastic.request_max_fraction,
                 "Evolving requests change the size by 1 to this × the requested size")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--costs", setup.costs,
                 "lina (per processor, α and β from U(0.005, 0.05)) or ours (per node)")
      ->capture_default_str()
      ->check(CLI::IsMember({"lina", "ours"}));
  CLI11_PARSE(app, argc, argv);
  if (setup.seeds.empty() || setup.fractions.empty() || setup.gates.empty() ||
      setup.victims.empty()) {
    std::cerr << "lina_experiment: need at least one seed, fraction, gate and victim order\n";
    return 1;
  }
  std::sort(setup.fractions.begin(), setup.fractions.end());
  setup.elastic.malleable_share = setup.mode == "lina" ? 0.5 : 1.0;
  setup.elastic.costs = setup.costs == "lina" ? sim::SwfElasticOptions::Costs::PerProcessor
                                              : sim::SwfElasticOptions::Costs::Ours;
  setup.elastic.cores_per_node = setup.cores_per_node;

  const auto policy = resolve_policy_path("elastic", default_policy_dir());
  if (!policy) {
    std::cerr << "lina_experiment: no elastic policy in " << default_policy_dir() << "\n";
    return 1;
  }
  std::string command = "build/bench/lina_experiment";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--out") {
      ++i;  // the folder is not part of the setting
      continue;
    }
    command += " " + arg;
  }
  try {
    sim::SwfOptions swf;
    swf.cores_per_node = setup.cores_per_node;
    swf.max_jobs = setup.jobs;
    const sim::Workload rigid = sim::read_swf(setup.trace, swf);
    std::vector<Run> runs;
    for (std::uint64_t seed : setup.seeds) {
      Run run = run_one(setup, rigid, *policy, 0, "default", "gain", seed);
      run.gate = "rigid";
      run.victim = "-";
      runs.push_back(std::move(run));
    }
    for (double f : setup.fractions) {
      for (const auto& g : setup.gates) {
        for (const auto& v : setup.victims) {
          for (std::uint64_t seed : setup.seeds) {
            Run run = run_one(setup, rigid, *policy, f, g, v, seed);
            if (run.unfinished > 0 || run.policy_errors > 0) {
              std::cerr << "warning: " << g << "/" << v << " at " << f << " seed " << seed << ": "
                        << run.unfinished << " jobs unfinished, " << run.policy_errors
                        << " failed passes\n";
            }
            runs.push_back(std::move(run));
          }
        }
        std::cerr << "lina_experiment: " << fmt(f * 100, 0) << "% elastic, gate " << g << " done\n";
      }
    }
    const std::filesystem::path out(out_dir);
    std::filesystem::create_directories(out);
    write_runs_csv(out / "runs.csv", runs);
    write_results_csv(out / "results.csv", runs, setup);
    const std::string md = markdown(runs, setup, command, rigid.nodes);
    std::ofstream(out / "results.md") << md;
    plot::write_svg((out / "figure.svg").string(), figure(runs, setup));
    std::cout << md << "\nwritten to " << out_dir << "/\n";
  } catch (const std::exception& e) {
    std::cerr << "lina_experiment: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
