// The ESP experiment of Chadha et al. (Figure 3): easy_backfill, fpsma and
// perf_aware on the modified ESP benchmark with 0%, 10%, ..., 100% of the
// jobs malleable. Writes results.csv, results.md (with the paper's numbers
// at 100% beside ours) and figure3.svg (makespan, utilisation, average wait
// and average response against the malleable fraction).
//
//   build/bench/esp_experiment --out bench/esp/results
#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sched/lua_policy.hpp"
#include "sched/plot/svg_plot.hpp"
#include "sched/policy_host.hpp"
#include "sched/sim/esp_workload.hpp"
#include "sched/sim/simulator.hpp"

namespace {

using namespace sched;

struct Row {
  double fraction = 0;
  std::string policy;
  sim::Metrics metrics;
  std::size_t resizes = 0;
  int unfinished = 0;
  int policy_errors = 0;
};

// The paper's reductions at 100% malleable (Section VI-B): perf_aware
// against static backfilling and against FPSMA, in percent.
struct PaperReduction {
  const char* against;
  double makespan, response, wait;
};
constexpr PaperReduction kPaper[] = {{"easy_backfill", 19.3, 29.0, 26.8}, {"fpsma", 4.0, 6.1, 2.0}};

std::string fmt(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

Row run_one(double fraction, const std::string& policy_path, std::uint64_t seed) {
  sim::EspOptions esp;
  esp.seed = seed;
  esp.malleable_fraction = fraction;
  const sim::Workload workload = sim::make_esp(esp);
  sim::SimConfig config;
  sim::Simulator simulator(workload, config);
  LuaPolicyOptions options;
  options.seed = seed;
  simulator.set_policy(LuaPolicy::load(policy_path, options));
  const sim::SimResult result = simulator.run();
  Row row;
  row.fraction = fraction;
  row.policy = result.policy;
  row.metrics = result.metrics;
  row.resizes = result.resizes.size();
  row.policy_errors = result.policy_errors;
  for (const auto& job : result.jobs) row.unfinished += job.end < 0;
  return row;
}

void write_csv(const std::filesystem::path& path, const std::vector<Row>& rows) {
  std::ofstream out(path);
  out << "fraction,policy,jobs,makespan_s,utilization,avg_wait_s,avg_response_s,resizes\n";
  for (const Row& r : rows) {
    out << fmt(r.fraction, 1) << ',' << r.policy << ',' << r.metrics.jobs << ','
        << fmt(r.metrics.makespan, 1) << ',' << fmt(r.metrics.utilization, 4) << ','
        << fmt(r.metrics.avg_wait, 1) << ',' << fmt(r.metrics.avg_response, 1) << ',' << r.resizes
        << '\n';
  }
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

const Row* find(const std::vector<Row>& rows, double fraction, const std::string& policy) {
  for (const Row& r : rows) {
    if (std::abs(r.fraction - fraction) < 1e-9 && r.policy == policy) return &r;
  }
  return nullptr;
}

double reduction(double ours, double theirs) { return 100 * (theirs - ours) / theirs; }

std::string markdown(const std::vector<Row>& rows, std::uint64_t seed) {
  std::string md = "# ESP experiment (Chadha et al., Figure 3)\n\n";
  md += "Modified ESP benchmark, 230 jobs on 32 nodes, seed " + std::to_string(seed) +
        ", one submission every 30 s. Produced by `bench/esp/run.sh`.\n\n";
  md +=
      "| malleable | policy | makespan (s) | utilisation | avg wait (s) | avg response (s) | "
      "resizes |\n|---|---|---|---|---|---|---|\n";
  for (const Row& r : rows) {
    md += "| " + fmt(r.fraction * 100, 0) + "% | " + r.policy + " | " + fmt(r.metrics.makespan, 0) +
          " | " + fmt(r.metrics.utilization * 100, 1) + "% | " + fmt(r.metrics.avg_wait, 1) +
          " | " + fmt(r.metrics.avg_response, 1) + " | " + std::to_string(r.resizes) + " |\n";
  }
  const Row* perf = find(rows, 1.0, "perf_aware");
  if (perf) {
    md += "\n## At 100% malleable: how much lower perf_aware is\n\n";
    md +=
        "| against | makespan (ours / paper) | avg response (ours / paper) | avg wait (ours / "
        "paper) |\n|---|---|---|---|\n";
    for (const PaperReduction& p : kPaper) {
      const Row* other = find(rows, 1.0, p.against);
      if (!other) continue;
      md += std::string("| ") + p.against + " | " +
            fmt(reduction(perf->metrics.makespan, other->metrics.makespan), 1) + "% / " +
            fmt(p.makespan, 1) + "% | " +
            fmt(reduction(perf->metrics.avg_response, other->metrics.avg_response), 1) + "% / " +
            fmt(p.response, 1) + "% | " +
            fmt(reduction(perf->metrics.avg_wait, other->metrics.avg_wait), 1) + "% / " +
            fmt(p.wait, 1) + "% |\n";
    }
  }
  return md;
}

// A policy's legend entry: its name and, for the bundled ones, what it does.
std::string legend_name(const std::string& policy) {
  static const std::map<std::string, std::string> what = {
      {"easy_backfill", "EASY backfilling; malleable jobs keep their requested size"},
      {"fpsma", "favours previously started malleable jobs"},
      {"perf_aware", "the paper's performance-aware resizing, by MTCT"},
  };
  const auto it = what.find(policy);
  return it == what.end() ? policy : policy + " (" + it->second + ")";
}

plot::Figure figure(const std::vector<Row>& rows, const std::vector<std::string>& policies) {
  struct Metric {
    const char* title;
    const char* unit;
    double (*value)(const sim::Metrics&);
  };
  const Metric metrics[] = {
      {"(a) Makespan", "seconds", [](const sim::Metrics& m) { return m.makespan; }},
      {"(b) Average utilisation", "percent",
       [](const sim::Metrics& m) { return m.utilization * 100; }},
      {"(c) Average waiting time", "seconds", [](const sim::Metrics& m) { return m.avg_wait; }},
      {"(d) Average response time", "seconds",
       [](const sim::Metrics& m) { return m.avg_response; }},
  };
  plot::Figure fig;
  fig.title = "ESP on 32 nodes: rigid and malleable jobs";
  fig.columns = 2;
  fig.panel_width = 540;
  fig.panel_height = 340;
  for (const Metric& metric : metrics) {
    plot::Panel panel;
    panel.title = metric.title;
    panel.x_label = "malleable jobs (%)";
    panel.y_label = metric.unit;
    for (const std::string& policy : policies) {
      plot::Series series;
      series.name = legend_name(policy);
      // fpsma and perf_aware coincide while few jobs are malleable: fpsma
      // dashed, over perf_aware, keeps both visible.
      if (policy == "fpsma") series.dash = "6 3";
      if (policy == "perf_aware") series.layer = -1;
      for (const Row& r : rows) {
        if (r.policy == policy)
          series.points.emplace_back(r.fraction * 100, metric.value(r.metrics));
      }
      panel.series.push_back(std::move(series));
    }
    fig.panels.push_back(std::move(panel));
  }
  return fig;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"The ESP experiment of Chadha et al. (Figure 3)"};
  std::string out_dir = "out/esp-experiment";
  std::uint64_t seed = 1;
  std::vector<double> fractions{0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0};
  std::vector<std::string> policies{"easy_backfill", "fpsma", "perf_aware"};
  app.add_option("--out", out_dir, "Folder for results.csv, results.md and figure3.svg");
  app.add_option("--seed", seed, "Seed of the ESP order, models and malleable jobs");
  app.add_option("--fractions", fractions, "Malleable fractions to run")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--policy", policies, "Policies to compare")->take_all();
  CLI11_PARSE(app, argc, argv);

  const std::string dir = default_policy_dir();
  std::vector<std::string> paths;
  for (const std::string& name : policies) {
    auto path = resolve_policy_path(name, dir);
    if (!path) {
      std::cerr << "esp_experiment: unknown policy '" << name << "' in " << dir << "\n";
      return 1;
    }
    paths.push_back(*path);
  }

  std::vector<Row> rows;
  try {
    for (double fraction : fractions) {
      for (const std::string& path : paths) {
        Row row = run_one(fraction, path, seed);
        if (row.unfinished > 0 || row.policy_errors > 0) {
          std::cerr << "warning: " << row.policy << " at " << fraction << ": " << row.unfinished
                    << " jobs unfinished, " << row.policy_errors << " failed passes\n";
        }
        rows.push_back(std::move(row));
      }
    }
    std::filesystem::create_directories(out_dir);
    write_csv(std::filesystem::path(out_dir) / "results.csv", rows);
    const std::string md = markdown(rows, seed);
    std::ofstream(std::filesystem::path(out_dir) / "results.md") << md;
    plot::write_svg((std::filesystem::path(out_dir) / "figure3.svg").string(),
                    figure(rows, policies));
    std::cout << md << "\nwritten to " << out_dir << "/ (results.csv, results.md, figure3.svg)\n";
  } catch (const std::exception& e) {
    std::cerr << "esp_experiment: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
