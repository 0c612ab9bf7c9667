// The ESP experiment of Chadha et al. (Figure 3): perf_aware and fpsma
// against two static baselines, easy_backfill (EASY, a pass at every event)
// and slurm_backfill (Slurm's documented backfill: the paper's baseline), on
// the modified ESP benchmark with 0%, 10%, ..., 100% of the jobs malleable,
// over seeds 1-10 (the order, the application models and the malleable jobs
// all follow the seed), under each time-limit rule given (exact: the
// paper's setup; round:900: limits rounded up to 15 minutes, as users give
// them). Writes
//   runs.csv     one row per run (rule, fraction, policy, seed),
//   results.csv  per rule, fraction and policy: mean, stdev, min and max over
//                the seeds of makespan, utilisation, wait and response,
//   results.md   those tables, the work bound, the utilisation each baseline
//                reaches, and at 100% the reductions beside the paper's,
//   figure3.svg  the means against the malleable fraction (the first rule;
//                the baselines under every rule), with the work bound,
//   sensitivity.md  perf_aware against slurm_backfill at 100% under other
//                application models, one assumption changed at a time.
//
//   build/bench/esp_experiment --out bench/esp/results
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "sched/lua_policy.hpp"
#include "sched/plot/svg_plot.hpp"
#include "sched/policy_host.hpp"
#include "sched/sim/bounds.hpp"
#include "sched/sim/esp_workload.hpp"
#include "sched/sim/simulator.hpp"

namespace {

using namespace sched;

struct Run {
  std::string rule;  // time-limit rule
  double fraction = 0;
  std::string policy;
  std::uint64_t seed = 0;
  sim::Metrics metrics;
  std::size_t resizes = 0;
  int unfinished = 0;
  int policy_errors = 0;
};

// Mean, standard deviation (of the sample) and range over the seeds.
struct Spread {
  double mean = 0, sd = 0, min = 0, max = 0;
};

Spread spread(const std::vector<double>& values) {
  Spread s;
  if (values.empty()) return s;
  const auto n = static_cast<double>(values.size());
  s.mean = std::accumulate(values.begin(), values.end(), 0.0) / n;
  double squares = 0;
  for (double v : values) squares += (v - s.mean) * (v - s.mean);
  s.sd = values.size() > 1 ? std::sqrt(squares / (n - 1)) : 0;
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  s.min = *lo;
  s.max = *hi;
  return s;
}

struct Metric {
  const char* key;    // CSV column prefix
  const char* title;  // figure panel
  const char* unit;
  double scale;  // for display
  double (*value)(const sim::Metrics&);
};

const Metric kMetrics[] = {
    {"makespan_s", "(a) Makespan", "seconds", 1, [](const sim::Metrics& m) { return m.makespan; }},
    {"utilization", "(b) Average utilisation", "percent", 100,
     [](const sim::Metrics& m) { return m.utilization; }},
    {"avg_wait_s", "(c) Average waiting time", "seconds", 1,
     [](const sim::Metrics& m) { return m.avg_wait; }},
    {"avg_response_s", "(d) Average response time", "seconds", 1,
     [](const sim::Metrics& m) { return m.avg_response; }},
};
constexpr std::size_t kMakespan = 0, kUtil = 1, kWait = 2, kResponse = 3;

// The paper's reductions at 100% malleable (Section VI-B): perf_aware
// against static backfilling (Slurm's backfill plugin with its defaults)
// and against FPSMA, in percent.
struct PaperReduction {
  const char* policy;
  const char* against;
  double makespan, response, wait;
  bool implied;  // derived from the two reported pairs, not printed in the paper
};
// fpsma against backfilling follows from the two: (1 − 0.193) / (1 − 0.040)
// and so on.
constexpr PaperReduction kPaper[] = {
    {"perf_aware", "backfill", 19.3, 29.0, 26.8, false},
    {"perf_aware", "fpsma", 4.0, 6.1, 2.0, false},
    {"fpsma", "backfill", 100 * (1 - (1 - 0.193) / (1 - 0.040)),
     100 * (1 - (1 - 0.290) / (1 - 0.061)), 100 * (1 - (1 - 0.268) / (1 - 0.020)), true},
};

std::string fmt(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

// The application model of every run (--speedup, --adaptation); the
// sensitivity table changes it one assumption at a time.
sim::EspModelOptions g_model;

sim::EspOptions esp_options(const std::string& rule, double fraction, std::uint64_t seed,
                            const sim::EspModelOptions& model = g_model) {
  sim::EspOptions esp;
  esp.model = model;
  esp.seed = seed;
  esp.malleable_fraction = fraction;
  const auto limit = sim::EspTimeLimit::parse(rule);
  if (!limit) throw std::runtime_error("bad time-limit rule '" + rule + "'");
  esp.time_limit = *limit;
  return esp;
}

// Changes the application models of a workload (the sensitivity table).
using Adjust = std::function<void(sim::Workload&)>;

Run run_one(const std::string& rule, double fraction, const std::string& policy_path,
            std::uint64_t seed, const Adjust& adjust = {},
            const sim::EspModelOptions& model = g_model) {
  sim::Workload workload = sim::make_esp(esp_options(rule, fraction, seed, model));
  if (adjust) adjust(workload);
  sim::Simulator simulator(workload, sim::SimConfig{});
  LuaPolicyOptions options;
  options.seed = seed;
  simulator.set_policy(LuaPolicy::load(policy_path, options));
  const sim::SimResult result = simulator.run();
  Run run;
  run.rule = rule;
  run.fraction = fraction;
  run.policy = result.policy;
  run.seed = seed;
  run.metrics = result.metrics;
  run.resizes = result.resizes.size();
  run.policy_errors = result.policy_errors;
  for (const auto& job : result.jobs) run.unfinished += job.end < 0;
  return run;
}

bool same(double a, double b) { return std::abs(a - b) < 1e-9; }

// The runs of one rule, fraction and policy (one per seed).
std::vector<const Run*> runs_of(const std::vector<Run>& runs, const std::string& rule,
                                double fraction, const std::string& policy) {
  std::vector<const Run*> out;
  for (const Run& r : runs) {
    if (r.rule == rule && same(r.fraction, fraction) && r.policy == policy) out.push_back(&r);
  }
  return out;
}

Spread spread_of(const std::vector<const Run*>& runs, std::size_t metric) {
  std::vector<double> values;
  for (const Run* r : runs) values.push_back(kMetrics[metric].value(r->metrics));
  return spread(values);
}

double reduction(double ours, double theirs) { return 100 * (theirs - ours) / theirs; }

// The reduction of the means, and its range over the seeds (each seed's
// policy against the same seed's baseline).
struct Reduction {
  double of_means = 0, min = 0, max = 0;
};

Reduction reduce(const std::vector<const Run*>& policy, const std::vector<const Run*>& baseline,
                 std::size_t metric) {
  Reduction r;
  r.of_means = reduction(spread_of(policy, metric).mean, spread_of(baseline, metric).mean);
  std::vector<double> each;
  for (const Run* p : policy) {
    for (const Run* b : baseline) {
      if (b->seed == p->seed) {
        each.push_back(
            reduction(kMetrics[metric].value(p->metrics), kMetrics[metric].value(b->metrics)));
      }
    }
  }
  const Spread s = spread(each);
  r.min = s.min;
  r.max = s.max;
  return r;
}

struct Setup {
  std::vector<std::string> rules;
  std::vector<double> fractions;
  std::vector<std::string> policies;
  std::vector<std::uint64_t> seeds;
};

void write_runs_csv(const std::filesystem::path& path, const std::vector<Run>& runs) {
  std::ofstream out(path);
  out << "time_limit,fraction,policy,seed,jobs,makespan_s,utilization,avg_wait_s,avg_response_s,"
         "resizes,unfinished\n";
  for (const Run& r : runs) {
    out << r.rule << ',' << fmt(r.fraction, 1) << ',' << r.policy << ',' << r.seed << ','
        << r.metrics.jobs << ',' << fmt(r.metrics.makespan, 1) << ','
        << fmt(r.metrics.utilization, 4) << ',' << fmt(r.metrics.avg_wait, 1) << ','
        << fmt(r.metrics.avg_response, 1) << ',' << r.resizes << ',' << r.unfinished << '\n';
  }
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

void write_summary_csv(const std::filesystem::path& path, const std::vector<Run>& runs,
                       const Setup& setup) {
  std::ofstream out(path);
  out << "time_limit,fraction,policy,seeds";
  for (const Metric& m : kMetrics) {
    for (const char* stat : {"mean", "sd", "min", "max"}) out << ',' << m.key << '_' << stat;
  }
  out << '\n';
  for (const std::string& rule : setup.rules) {
    for (double fraction : setup.fractions) {
      for (const std::string& policy : setup.policies) {
        const auto selected = runs_of(runs, rule, fraction, policy);
        if (selected.empty()) continue;
        out << rule << ',' << fmt(fraction, 1) << ',' << policy << ',' << selected.size();
        for (std::size_t m = 0; m < std::size(kMetrics); ++m) {
          const Spread s = spread_of(selected, m);
          const int decimals = m == kUtil ? 4 : 1;
          out << ',' << fmt(s.mean, decimals) << ',' << fmt(s.sd, decimals) << ','
              << fmt(s.min, decimals) << ',' << fmt(s.max, decimals);
        }
        out << '\n';
      }
    }
  }
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

// The work bound: ESP's node-seconds over the machine. At requested sizes
// it is the same for every seed; a malleable job on fewer nodes needs fewer
// node-seconds (Amdahl), so at 100% malleable the bound with every job at
// its cheapest size is lower (and depends on the seed's models).
struct WorkBound {
  double requested_s = 0;
  Spread cheapest_s;
};

WorkBound work_bound(const Setup& setup) {
  WorkBound bound;
  const sim::Workload rigid = sim::make_esp(esp_options("exact", 0, setup.seeds.front()));
  for (const auto& job : rigid.jobs) bound.requested_s += job.spec.nodes * job.runtime;
  bound.requested_s /= rigid.nodes;
  std::vector<double> cheapest;
  for (std::uint64_t seed : setup.seeds) {
    const sim::Workload all = sim::make_esp(esp_options("exact", 1, seed));
    double node_seconds = 0;
    for (const auto& job : all.jobs) node_seconds += sim::least_node_seconds(job);
    cheapest.push_back(node_seconds / all.nodes);
  }
  bound.cheapest_s = spread(cheapest);
  return bound;
}

std::string cell(const Spread& s, double scale, int decimals) {
  return fmt(s.mean * scale, decimals) + " ± " + fmt(s.sd * scale, decimals) + " [" +
         fmt(s.min * scale, decimals) + ", " + fmt(s.max * scale, decimals) + "]";
}

bool is_baseline(const std::string& policy) {
  return policy == "easy_backfill" || policy == "slurm_backfill";
}

std::string markdown(const std::vector<Run>& runs, const Setup& setup, const WorkBound& bound) {
  std::string seeds;
  for (std::uint64_t s : setup.seeds) seeds += (seeds.empty() ? "" : ", ") + std::to_string(s);
  std::string md = "# ESP experiment (Chadha et al., Figure 3)\n\n";
  md += "Modified ESP benchmark, 230 jobs on 32 nodes, one submission every 30 s, seeds " + seeds +
        " (each seed draws the order, the application models and the malleable jobs). Every "
        "figure is mean ± standard deviation [min, max] over the seeds. Time-limit rules "
        "(`sched sim --esp-time-limit`): `exact` = the run time (the paper's setup), "
        "`round:S` = rounded up to S seconds (as users give limits). Produced by "
        "`bench/esp/run.sh`.\n\n";
  md += "**Work bound** (ESP's node-seconds over 32 nodes: no schedule finishes sooner): " +
        fmt(bound.requested_s, 0) +
        " s at the requested sizes (every rigid schedule); with every job malleable and at its "
        "cheapest size (Amdahl: its smallest) " +
        fmt(bound.cheapest_s.mean, 0) + " s [" + fmt(bound.cheapest_s.min, 0) + ", " +
        fmt(bound.cheapest_s.max, 0) +
        "]. A baseline's utilisation is the work bound over its "
        "makespan.\n\n";

  md +=
      "## What the baselines reach\n\n| rule | baseline | makespan (s) | utilisation (%) | "
      "makespan over the work bound |\n|---|---|---|---|---|\n";
  for (const std::string& rule : setup.rules) {
    for (const std::string& policy : setup.policies) {
      if (!is_baseline(policy)) continue;
      const auto selected = runs_of(runs, rule, setup.fractions.front(), policy);
      if (selected.empty()) continue;
      const Spread ms = spread_of(selected, kMakespan);
      md += "| " + rule + " | " + policy + " | " + cell(ms, 1, 0) + " | " +
            cell(spread_of(selected, kUtil), 100, 1) + " | " + fmt(ms.mean / bound.requested_s, 3) +
            " |\n";
    }
  }

  for (const std::string& rule : setup.rules) {
    md += "\n## Time limits `" + rule + "`\n\n";
    md +=
        "| malleable | policy | makespan (s) | utilisation (%) | avg wait (s) | avg response "
        "(s) | resizes (mean) |\n|---|---|---|---|---|---|---|\n";
    for (double fraction : setup.fractions) {
      for (const std::string& policy : setup.policies) {
        const auto selected = runs_of(runs, rule, fraction, policy);
        if (selected.empty()) continue;
        double resizes = 0;
        for (const Run* r : selected) resizes += static_cast<double>(r->resizes);
        resizes /= static_cast<double>(selected.size());
        md += "| " + fmt(fraction * 100, 0) + "% | " + policy + " | " +
              cell(spread_of(selected, kMakespan), 1, 0) + " | " +
              cell(spread_of(selected, kUtil), 100, 1) + " | " +
              cell(spread_of(selected, kWait), 1, 0) + " | " +
              cell(spread_of(selected, kResponse), 1, 0) + " | " + fmt(resizes, 0) + " |\n";
      }
    }
  }

  // At 100%: each malleable policy against each baseline under each rule.
  const double full = setup.fractions.back();
  md += "\n## At " + fmt(full * 100, 0) +
        "% malleable: how much lower (%)\n\nReduction of the means over the seeds, and "
        "[min, max] of the per-seed reductions (same seed, same rule). The paper's figures: "
        "perf_aware against Slurm's backfill and against FPSMA as printed; fpsma against "
        "backfill implied by the two (marked *).\n\n"
        "| rule | policy | against | makespan (ours / paper) | avg response (ours / paper) | "
        "avg wait (ours / paper) |\n|---|---|---|---|---|---|\n";
  for (const std::string& rule : setup.rules) {
    for (const std::string& policy : {std::string("perf_aware"), std::string("fpsma")}) {
      const auto mine = runs_of(runs, rule, full, policy);
      if (mine.empty()) continue;
      for (const std::string& against : setup.policies) {
        if (against == policy || against == "perf_aware") continue;
        const auto theirs = runs_of(runs, rule, full, against);
        if (theirs.empty()) continue;
        const PaperReduction* paper = nullptr;
        for (const PaperReduction& p : kPaper) {
          const bool backfill = std::string(p.against) == "backfill" && is_baseline(against);
          if (p.policy == policy && (backfill || p.against == against)) paper = &p;
        }
        const auto column = [&](std::size_t metric, double paper_value) {
          const Reduction r = reduce(mine, theirs, metric);
          std::string text =
              fmt(r.of_means, 1) + " [" + fmt(r.min, 1) + ", " + fmt(r.max, 1) + "] / ";
          if (!paper) return text + "–";
          return text + fmt(paper_value, 1) + (paper->implied ? "*" : "");
        };
        md += "| " + rule + " | " + policy + " | " + against + " | " +
              column(kMakespan, paper ? paper->makespan : 0) + " | " +
              column(kResponse, paper ? paper->response : 0) + " | " +
              column(kWait, paper ? paper->wait : 0) + " |\n";
      }
    }
  }
  return md;
}

// A policy's legend entry: its name and, for the bundled ones, what it does.
std::string legend_name(const std::string& policy) {
  static const std::map<std::string, std::string> what = {
      {"easy_backfill", "EASY backfilling, a pass at every event"},
      {"slurm_backfill", "Slurm's backfill: every 30 s, conservative"},
      {"fpsma", "favours previously started malleable jobs"},
      {"perf_aware", "the paper's performance-aware resizing, by MTCT"},
  };
  const auto it = what.find(policy);
  return it == what.end() ? policy : policy + " (" + it->second + ")";
}

plot::Figure figure(const std::vector<Run>& runs, const Setup& setup, const WorkBound& bound) {
  plot::Figure fig;
  std::string seeds = std::to_string(setup.seeds.size()) + " seed";
  if (setup.seeds.size() != 1) seeds += "s";
  fig.title = "ESP on 32 nodes: rigid and malleable jobs (means over " + seeds + ")";
  fig.columns = 2;
  fig.panel_width = 540;
  fig.panel_height = 360;
  for (std::size_t m = 0; m < std::size(kMetrics); ++m) {
    const Metric& metric = kMetrics[m];
    plot::Panel panel;
    panel.title = metric.title;
    panel.x_label = "malleable jobs (%)";
    panel.y_label = metric.unit;
    for (std::size_t r = 0; r < setup.rules.size(); ++r) {
      const std::string& rule = setup.rules[r];
      for (const std::string& policy : setup.policies) {
        // The malleable policies under the first rule only: they do not
        // backfill, so limits change little for them.
        if (r > 0 && !is_baseline(policy)) continue;
        plot::Series series;
        series.name = legend_name(policy) + ", limits " + rule;
        if (r > 0) series.dash = "2 3";
        if (policy == "fpsma") series.dash = "6 3";
        if (policy == "perf_aware") series.layer = -1;
        for (double fraction : setup.fractions) {
          const auto selected = runs_of(runs, rule, fraction, policy);
          if (selected.empty()) continue;
          series.points.emplace_back(fraction * 100, spread_of(selected, m).mean * metric.scale);
        }
        panel.series.push_back(std::move(series));
      }
    }
    if (m == kMakespan) {
      plot::Series work;
      work.name = "work bound (requested sizes)";
      work.markers = false;
      work.dash = "4 4";
      work.colour = "#000000";
      work.points = {{setup.fractions.front() * 100, bound.requested_s},
                     {setup.fractions.back() * 100, bound.requested_s}};
      panel.series.push_back(std::move(work));
    }
    fig.panels.push_back(std::move(panel));
  }
  return fig;
}

// Which assumption of the application model moves the response result
// (issue 21 item 3, the sensitivity table): perf_aware against
// slurm_backfill at 100% malleable, exact limits, every seed, with one
// assumption changed at a time. The baseline runs every job at its
// requested size, where the models do not matter (runtime is defined there).
struct Variant {
  std::string group;  // the assumption changed
  std::string name;
  sim::EspModelOptions model;  // the speedup model and adaptation cost
  Adjust adjust;               // any other change, after the model
};

std::vector<Variant> variants() {
  const auto each = [](auto change) {
    return [change](sim::Workload& workload) {
      for (auto& job : workload.jobs) change(job.model);
    };
  };
  const auto with_cost = [](sim::AdaptationCost cost) {
    sim::EspModelOptions model;
    model.adaptation = cost;
    return model;
  };
  const auto with_speedup = [](sim::EspModelOptions::Speedup speedup, double sigma = 1) {
    sim::EspModelOptions model;
    model.speedup = speedup;
    model.downey_sigma = sigma;
    return model;
  };
  sim::AdaptationCost free_cost = sim::AdaptationCost::step();
  free_cost.latency_expand_s = free_cost.latency_shrink_s = 0;
  free_cost.per_new_node_expand_s = free_cost.per_new_node_shrink_s = 0;
  sim::AdaptationCost paper_per_node = sim::AdaptationCost::step();
  paper_per_node.latency_expand_s = paper_per_node.latency_shrink_s = 0;
  paper_per_node.per_new_node_expand_s = paper_per_node.per_new_node_shrink_s = 0;
  paper_per_node.start_s_per_node = 3.1;
  paper_per_node.stop_s_per_node = 1.8;
  sim::AdaptationCost paper_per_step = sim::AdaptationCost::step();
  paper_per_step.latency_expand_s = 3.1;
  paper_per_step.latency_shrink_s = 1.8;
  paper_per_step.per_new_node_expand_s = paper_per_step.per_new_node_shrink_s = 0;
  sim::AdaptationCost data_x10 = sim::AdaptationCost::per_node();
  data_x10.alpha_s *= 10;
  data_x10.beta_s *= 10;
  sim::AdaptationCost step_data = sim::AdaptationCost::step();
  step_data.alpha_s = sim::AdaptationCost::per_node().alpha_s;
  step_data.beta_s = sim::AdaptationCost::per_node().beta_s;
  using Speedup = sim::EspModelOptions::Speedup;
  return {
      {"ours",
       "ours (docs/app-model.md): Amdahl s in [0.002, 0.05], 8 AMR phases in [0.5, 1.5], "
       "`per_node` cost: (b + 0.25 s) per node changed + 2 s / (n_old + n_new), b = 1 s expand, "
       "0.5 s shrink",
       {},
       {}},
      {"adaptation cost", "free", with_cost(free_cost), {}},
      {"adaptation cost",
       "`step`, calibrated on the live bench/adapt figures: 7.85 ms + 0.446 ms "
       "per node of the new set (expand), 1.63 ms + 0.570 ms (shrink)",
       with_cost(sim::AdaptationCost::step()),
       {}},
      {"adaptation cost",
       "`step` + our data term (α = 0.25 s per node changed, β = 2 s)",
       with_cost(step_data),
       {}},
      {"adaptation cost",
       "the paper's Figure 5 maxima per step: 3.1 s expand, 1.8 s shrink, "
       "whatever the nodes changed",
       with_cost(paper_per_step),
       {}},
      {"adaptation cost",
       "the paper's Figure 5 maxima per node changed: 3.1 s / 1.8 s",
       with_cost(paper_per_node),
       {}},
      {"adaptation cost",
       "`per_node` with the data term ×10 (α = 2.5 s per node, β = 20 s)",
       with_cost(data_x10),
       {}},
      {"speedup model", "linear (S(n) = n)", with_speedup(Speedup::Linear), {}},
      {"speedup model", "Amdahl, s = 0.05 for every job (poor)", {}, each([](sim::AppModel& m) {
         m.speedup.serial_fraction = 0.05;
       })},
      {"speedup model", "Downey, A in [8, 128], σ = 1", with_speedup(Speedup::Downey, 1), {}},
      {"speedup model", "Downey, A in [8, 128], σ = 2", with_speedup(Speedup::Downey, 2), {}},
      {"phases", "no AMR phases (factor 1)", {}, each([](sim::AppModel& m) { m.phases.clear(); })},
      {"adaptation cost and speedup",
       "`step` and linear speedup",
       [] {
         sim::EspModelOptions model;
         model.speedup = Speedup::Linear;
         model.adaptation = sim::AdaptationCost::step();
         return model;
       }(),
       {}},
  };
}

std::string sensitivity(const std::vector<std::uint64_t>& seeds, const std::string& perf_path,
                        const std::string& slurm_path) {
  const std::string rule = "exact";
  std::vector<Run> baseline;
  for (std::uint64_t seed : seeds) baseline.push_back(run_one(rule, 1, slurm_path, seed));
  std::vector<const Run*> theirs;
  for (const Run& r : baseline) theirs.push_back(&r);
  const double base_run = spread_of(theirs, kResponse).mean - spread_of(theirs, kWait).mean;
  std::string md =
      "# Sensitivity of the ESP result to the application model\n\n"
      "perf_aware against slurm_backfill at 100% malleable, time limits exact, seeds " +
      std::to_string(seeds.front()) + "-" + std::to_string(seeds.back()) +
      ", one assumption changed at a time (slurm_backfill runs every job at its requested "
      "size, where the model does not matter: its mean response " +
      fmt(spread_of(theirs, kResponse).mean, 0) + " s, wait " +
      fmt(spread_of(theirs, kWait).mean, 0) + " s, run " + fmt(base_run, 0) +
      " s). Reductions of the means (%); run = response − wait, against the baseline's. The "
      "paper: makespan 19.3%, response 29.0%, wait 26.8%. Produced by `bench/esp/run.sh`.\n\n"
      "| assumption | model | makespan | response | wait | perf_aware run (s) | × static |\n"
      "|---|---|---|---|---|---|---|\n";
  for (const Variant& v : variants()) {
    std::vector<Run> mine_runs;
    for (std::uint64_t seed : seeds)
      mine_runs.push_back(run_one(rule, 1, perf_path, seed, v.adjust, v.model));
    std::vector<const Run*> mine;
    for (const Run& r : mine_runs) mine.push_back(&r);
    const double run_s = spread_of(mine, kResponse).mean - spread_of(mine, kWait).mean;
    md += "| " + v.group + " | " + v.name + " | " +
          fmt(reduce(mine, theirs, kMakespan).of_means, 1) + " | " +
          fmt(reduce(mine, theirs, kResponse).of_means, 1) + " | " +
          fmt(reduce(mine, theirs, kWait).of_means, 1) + " | " + fmt(run_s, 0) + " | " +
          fmt(run_s / base_run, 2) + " |\n";
  }
  return md;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"The ESP experiment of Chadha et al. (Figure 3)"};
  std::string out_dir = "out/esp-experiment";
  Setup setup;
  setup.seeds = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  setup.fractions = {0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0};
  setup.policies = {"easy_backfill", "slurm_backfill", "fpsma", "perf_aware"};
  setup.rules = {"exact", "round:900"};
  std::uint64_t seed = 0;
  app.add_option("--out", out_dir, "Folder for the CSV files, results.md and figure3.svg");
  app.add_option("--seeds", setup.seeds, "Seeds to run (order, models and malleable jobs)")
      ->capture_default_str();
  app.add_option("--seed", seed, "One seed only (instead of --seeds)");
  app.add_option("--fractions", setup.fractions, "Malleable fractions to run, ascending")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--policy", setup.policies, "Policies to compare")->take_all();
  app.add_option("--time-limits", setup.rules,
                 "Time-limit rules: exact, round:SECONDS or fixed:SECONDS")
      ->capture_default_str();
  std::string speedup = "amdahl";
  app.add_option("--speedup", speedup,
                 "Speedup model of every job: amdahl (s drawn in [0.002, 0.05]), downey (A drawn "
                 "in [8, 128]) or linear")
      ->capture_default_str();
  app.add_option("--downey-sigma", g_model.downey_sigma, "Downey's σ with --speedup downey")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  std::string adaptation = "per_node";
  app.add_option("--adaptation", adaptation, "Adaptation cost: per_node or step")
      ->capture_default_str();
  bool no_sensitivity = false;
  app.add_flag("--no-sensitivity", no_sensitivity,
               "Skip the sensitivity table (perf_aware against slurm_backfill at 100%)");
  CLI11_PARSE(app, argc, argv);
  if (seed != 0) setup.seeds = {seed};
  const auto speedup_kind = sim::EspModelOptions::parse_speedup(speedup);
  const auto cost = sim::AdaptationCost::named(adaptation);
  if (!speedup_kind || !cost) {
    std::cerr << "esp_experiment: --speedup must be amdahl, downey or linear and --adaptation "
                 "per_node or step\n";
    return 1;
  }
  g_model.speedup = *speedup_kind;
  g_model.adaptation = *cost;
  std::sort(setup.fractions.begin(), setup.fractions.end());
  if (setup.seeds.empty() || setup.fractions.empty() || setup.rules.empty()) {
    std::cerr << "esp_experiment: need at least one seed, fraction and time-limit rule\n";
    return 1;
  }
  for (const std::string& rule : setup.rules) {
    if (!sim::EspTimeLimit::parse(rule)) {
      std::cerr << "esp_experiment: --time-limits must be exact, round:SECONDS or "
                   "fixed:SECONDS, not '"
                << rule << "'\n";
      return 1;
    }
  }

  const std::string dir = default_policy_dir();
  std::vector<std::string> paths;
  for (const std::string& name : setup.policies) {
    auto path = resolve_policy_path(name, dir);
    if (!path) {
      std::cerr << "esp_experiment: unknown policy '" << name << "' in " << dir << "\n";
      return 1;
    }
    paths.push_back(*path);
  }

  std::vector<Run> runs;
  try {
    for (const std::string& rule : setup.rules) {
      for (double fraction : setup.fractions) {
        for (std::size_t p = 0; p < paths.size(); ++p) {
          for (std::uint64_t s : setup.seeds) {
            Run run = run_one(rule, fraction, paths[p], s);
            if (run.unfinished > 0 || run.policy_errors > 0) {
              std::cerr << "warning: " << run.policy << " at " << fraction << " seed " << s
                        << " limits " << rule << ": " << run.unfinished << " jobs unfinished, "
                        << run.policy_errors << " failed passes\n";
            }
            runs.push_back(std::move(run));
          }
        }
      }
    }
    const WorkBound bound = work_bound(setup);
    const std::filesystem::path out(out_dir);
    std::filesystem::create_directories(out);
    write_runs_csv(out / "runs.csv", runs);
    write_summary_csv(out / "results.csv", runs, setup);
    const std::string md = markdown(runs, setup, bound);
    std::ofstream(out / "results.md") << md;
    plot::write_svg((out / "figure3.svg").string(), figure(runs, setup, bound));
    std::cout << md;
    if (!no_sensitivity) {
      const auto perf = resolve_policy_path("perf_aware", dir);
      const auto slurm = resolve_policy_path("slurm_backfill", dir);
      if (!perf || !slurm) throw std::runtime_error("no perf_aware or slurm_backfill in " + dir);
      const std::string table = sensitivity(setup.seeds, *perf, *slurm);
      std::ofstream(out / "sensitivity.md") << table;
      std::cout << "\n" << table;
    }
    std::cout << "\nwritten to " << out_dir << "/\n";
  } catch (const std::exception& e) {
    std::cerr << "esp_experiment: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
