#include "sim_command.hpp"

#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "sched/install_layout.hpp"
#include "sched/lua_policy.hpp"
#include "sched/policy_host.hpp"
#include "sched/sim/elastic_workload.hpp"
#include "sched/sim/esp_workload.hpp"
#include "sched/sim/native_reader.hpp"
#include "sched/sim/pictures.hpp"
#include "sched/sim/power_workload.hpp"
#include "sched/sim/report.hpp"
#include "sched/sim/simulator.hpp"
#include "sched/sim/swf_reader.hpp"

namespace sched::cli {
namespace {

struct SimOptions {
  std::string workload;
  std::string format;  // swf | native | "" (guess)
  int nodes = 0;
  int cores_per_node = 1;
  long max_jobs = 0;
  std::vector<std::string> policies{"easy_backfill"};
  std::vector<std::string> params;
  std::uint64_t seed = 1;
  std::optional<double> malleable_fraction;
  std::string esp_time_limit;
  // The application model of every job (docs/app-model.md); unset: each
  // workload's own.
  std::string speedup;
  std::optional<double> downey_sigma;
  std::string adaptation;
  double tick_s = 60;
  // MTCT over a recent window, passed on when it moves (as schedd's
  // [scheduler] mtct_window_s and mtct_refresh_fraction, same defaults).
  double mtct_window_s = 60;
  double mtct_refresh_fraction = 0.1;
  std::string out_dir;
  bool no_pictures = false;
};

[[noreturn]] void fail(const std::string& message) {
  std::cerr << "sched sim: " << message << "\n";
  throw CLI::RuntimeError(1);
}

// --speedup and --adaptation over every job's own model. ESP draws each
// job's parameter of the chosen speedup model (elastic_workload.hpp); the
// other workloads keep each job's parameters and change the model's kind.
void apply_model_options(const SimOptions& options, sim::Workload& workload) {
  if (!options.speedup.empty()) {
    const auto kind = sim::EspModelOptions::parse_speedup(options.speedup);
    using Esp = sim::EspModelOptions::Speedup;
    using Kind = sim::SpeedupModel::Kind;
    const Kind model = *kind == Esp::Linear   ? Kind::Linear
                       : *kind == Esp::Downey ? Kind::Downey
                                              : Kind::Amdahl;
    for (sim::WorkloadJob& job : workload.jobs) {
      job.model.speedup.kind = model;
      if (options.downey_sigma) job.model.speedup.downey_sigma = *options.downey_sigma;
    }
  }
  if (!options.adaptation.empty()) {
    const sim::AdaptationCost cost = *sim::AdaptationCost::named(options.adaptation);
    for (sim::WorkloadJob& job : workload.jobs) job.model.adaptation = cost;
  }
}

// swf or native: --format, else from the file's extension.
std::string workload_format(const SimOptions& options) {
  if (!options.format.empty()) return options.format;
  const std::string ext = std::filesystem::path(options.workload).extension().string();
  return ext == ".toml" ? "native" : "swf";
}

// An SWF trace replayed as it is (no option changes its jobs): its jobs are
// kept as records and made one at a time (sim::SwfTrace, issue 15).
bool plain_swf(const SimOptions& options) {
  return options.workload != "esp" && options.workload != "power" &&
         workload_format(options) == "swf" && options.esp_time_limit.empty() &&
         !options.malleable_fraction && options.speedup.empty() && !options.downey_sigma &&
         options.adaptation.empty();
}

sim::SwfOptions swf_options(const SimOptions& options) {
  sim::SwfOptions swf;
  swf.cores_per_node = options.cores_per_node;
  swf.nodes = options.nodes;
  swf.max_jobs = options.max_jobs;
  return swf;
}

sim::Workload read_workload(const SimOptions& options) {
  if (options.workload == "esp") {
    sim::EspOptions esp;
    esp.seed = options.seed;
    esp.malleable_fraction = options.malleable_fraction.value_or(0);
    if (!options.esp_time_limit.empty()) {
      const auto rule = sim::EspTimeLimit::parse(options.esp_time_limit);
      if (!rule) {
        throw sim::WorkloadError(
            "--esp-time-limit must be exact, round:SECONDS or fixed:SECONDS, not '" +
            options.esp_time_limit + "'");
      }
      esp.time_limit = *rule;
    }
    if (options.nodes > 0) esp.nodes = options.nodes;
    if (!options.speedup.empty()) {
      esp.model.speedup = *sim::EspModelOptions::parse_speedup(options.speedup);
    }
    if (options.downey_sigma) esp.model.downey_sigma = *options.downey_sigma;
    if (!options.adaptation.empty()) {
      esp.model.adaptation = *sim::AdaptationCost::named(options.adaptation);
    }
    sim::Workload workload = sim::make_esp(esp);
    if (options.max_jobs > 0 && workload.jobs.size() > static_cast<std::size_t>(options.max_jobs)) {
      workload.jobs.resize(static_cast<std::size_t>(options.max_jobs));
    }
    return workload;
  }
  if (!options.esp_time_limit.empty()) {
    throw sim::WorkloadError("--esp-time-limit applies to the esp workload only");
  }
  if (options.workload == "power") {
    if (options.malleable_fraction) {
      throw sim::WorkloadError("--malleable-fraction does not apply to the power experiment");
    }
    sim::PowerExperimentOptions power;
    power.seed = options.seed;
    return sim::make_power_experiment(power);
  }
  const std::string format = workload_format(options);
  if (format == "native") {
    if (options.malleable_fraction) {
      throw sim::WorkloadError(
          "--malleable-fraction applies to esp and SWF workloads; a native workload says each "
          "job's kind itself");
    }
    sim::Workload workload = sim::read_native(options.workload);
    if (options.max_jobs > 0 && workload.jobs.size() > static_cast<std::size_t>(options.max_jobs)) {
      workload.jobs.resize(static_cast<std::size_t>(options.max_jobs));
    }
    return workload;
  }
  sim::Workload workload = sim::read_swf(options.workload, swf_options(options));
  if (options.malleable_fraction) {
    sim::make_swf_elastic(workload, workload.nodes, *options.malleable_fraction, options.seed);
  }
  return workload;
}

sim::Workload load_workload(const SimOptions& options) {
  sim::Workload workload = read_workload(options);
  if (options.workload != "esp") apply_model_options(options, workload);  // ESP drew them
  return workload;
}

std::string available_policies(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".lua") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  std::string text;
  for (const auto& name : names) text += (text.empty() ? "" : ", ") + name;
  return text.empty() ? "none" : text;
}

std::string fixed(double value, int decimals) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(decimals) << value;
  return out.str();
}

void print_comparison(const std::vector<sim::SimResult>& results) {
  std::cout << "\n"
            << std::left << std::setw(18) << "policy" << std::right << std::setw(8) << "jobs"
            << std::setw(16) << "makespan_s" << std::setw(14) << "avg_wait_s" << std::setw(14)
            << "avg_resp_s" << std::setw(10) << "avg_bsld" << std::setw(8) << "util"
            << "\n";
  for (const auto& r : results) {
    const auto& m = r.metrics;
    std::cout << std::left << std::setw(18) << r.policy << std::right << std::setw(8) << m.jobs
              << std::setw(16) << fixed(m.makespan, 1) << std::setw(14) << fixed(m.avg_wait, 1)
              << std::setw(14) << fixed(m.avg_response, 1) << std::setw(10) << fixed(m.avg_bsld, 2)
              << std::setw(8) << fixed(m.utilization, 3) << "\n";
  }
}

void run_sim(const SimOptions& options) {
  if (options.cores_per_node < 1) fail("--cores-per-node must be at least 1");
  if (options.nodes < 0) fail("--nodes must not be negative");
  LuaPolicyOptions policy_options;
  policy_options.seed = options.seed;
  for (const std::string& text : options.params) {
    auto param = parse_param(text);
    if (!param) fail("--param expects key=value, got '" + text + "'");
    policy_options.params[param->first] = param->second;
  }

  // Resolve and load every policy before spending time on the workload.
  const std::string dir = layout::policy_dir_or(default_policy_dir());
  // Each loaded once: a policy is not used before its run, so the one loaded
  // here is the one a fresh load would give (same file, options and seed).
  std::vector<std::unique_ptr<LuaPolicy>> policies;
  for (const std::string& name : options.policies) {
    auto path = resolve_policy_path(name, dir);
    if (!path) {
      fail("unknown policy '" + name + "': no file " + name + ".lua in " + dir +
           " (available: " + available_policies(dir) + ")");
    }
    try {
      policies.push_back(LuaPolicy::load(*path, policy_options));
    } catch (const PolicyLoadError& e) {
      fail(std::string("cannot load policy: ") + e.what());
    }
  }

  sim::Workload workload;
  std::optional<sim::SwfTrace> trace;
  try {
    if (plain_swf(options)) {
      trace = sim::read_swf_trace(options.workload, swf_options(options));
    } else {
      workload = load_workload(options);
    }
  } catch (const sim::WorkloadError& e) {
    fail(e.what());
  }

  std::vector<sim::SimResult> results;
  for (std::unique_ptr<LuaPolicy>& policy : policies) {
    sim::SimConfig config;
    config.nodes = options.nodes;
    config.tick_s = options.tick_s;
    config.engine.mtct_window_s = options.mtct_window_s;
    config.engine.mtct_refresh_fraction = options.mtct_refresh_fraction;
    const auto simulator = trace ? std::make_unique<sim::Simulator>(trace->header, *trace, config)
                                 : std::make_unique<sim::Simulator>(workload, config);
    simulator->set_policy(std::move(policy));
    sim::SimResult result = simulator->run();
    std::cout << sim::format_summary(result.policy, result.metrics) << "\n";
    const auto unfinished = std::count_if(result.jobs.begin(), result.jobs.end(),
                                          [](const sim::JobRecord& r) { return r.end < 0; });
    if (unfinished > 0) {
      std::cout << "  warning: " << unfinished << " jobs never finished\n";
    }
    if (result.policy_errors > 0) {
      std::cout << "  warning: " << result.policy_errors
                << " passes failed and were dropped; first: " << result.first_policy_error << "\n";
    }
    if (!options.out_dir.empty()) {
      std::filesystem::path dir_out(options.out_dir);
      if (policies.size() > 1) dir_out /= result.policy;
      std::error_code ec;
      std::filesystem::create_directories(dir_out, ec);
      if (ec) fail("cannot create " + dir_out.string() + ": " + ec.message());
      try {
        sim::write_jobs_csv((dir_out / "jobs.csv").string(), result.jobs);
        sim::write_metrics_json((dir_out / "metrics.json").string(), result.metrics);
        sim::write_resizes_csv((dir_out / "resizes.csv").string(), result.resizes);
        sim::write_power_csv((dir_out / "power.csv").string(), result.power);
        if (!options.no_pictures) sim::write_pictures(dir_out.string(), result);
      } catch (const std::exception& e) {
        fail(e.what());
      }
    }
    results.push_back(std::move(result));
  }
  if (results.size() > 1) print_comparison(results);
}

}  // namespace

void add_sim_command(CLI::App& app) {
  auto options = std::make_shared<SimOptions>();
  CLI::App* sim =
      app.add_subcommand("sim", "Replay a workload in the simulator under Lua policies");
  sim->add_option("--workload", options->workload,
                  "SWF or native (TOML) file, 'esp', or 'power' (the paper's power experiment)")
      ->required();
  sim->add_option("--format", options->format, "Workload format (default: from the extension)")
      ->check(CLI::IsMember({"swf", "native"}));
  sim->add_option("--nodes", options->nodes, "Cluster size (default: from the workload)");
  sim->add_option("--cores-per-node", options->cores_per_node,
                  "Cores per node, to turn SWF processor counts into nodes");
  sim->add_option("--max-jobs", options->max_jobs, "Read only the first K job records");
  sim->add_option("--policy", options->policies,
                  "Policy NAME (scripts/policies/NAME.lua) or PATH; repeat to compare")
      ->take_all();
  sim->add_option("--param", options->params, "Policy parameter key=value (repeatable)");
  sim->add_option("--seed", options->seed, "Seed for generated workloads and math.random");
  sim->add_option("--malleable-fraction", options->malleable_fraction,
                  "Make this fraction (0..1) of an esp or SWF workload's jobs malleable "
                  "(SWF: half malleable, half evolving), drawn with the seed")
      ->check(CLI::Range(0.0, 1.0));
  sim->add_option("--esp-time-limit", options->esp_time_limit,
                  "ESP jobs' time limits: exact (their run time, the default), round:SECONDS "
                  "(rounded up, as users give them) or fixed:SECONDS");
  sim->add_option("--speedup", options->speedup,
                  "Every job's speedup model: amdahl, downey or linear (default: the "
                  "workload's; esp draws each job's parameter, docs/app-model.md)")
      ->check(CLI::IsMember({"amdahl", "downey", "linear"}));
  sim->add_option("--downey-sigma", options->downey_sigma,
                  "Downey's variance in parallelism σ (with --speedup downey)")
      ->check(CLI::NonNegativeNumber);
  sim->add_option("--adaptation", options->adaptation,
                  "Every job's adaptation cost: per_node (the default) or step (the live "
                  "figures' fit, docs/app-model.md)")
      ->check(CLI::IsMember({"per_node", "step"}));
  sim->add_option("--tick", options->tick_s, "Seconds between scheduler ticks (0: none)");
  sim->add_option("--mtct-window", options->mtct_window_s,
                  "Seconds of recent measurements a job's MTCT is taken over (0: all since its "
                  "last adaptation; default 60)")
      ->check(CLI::NonNegativeNumber);
  sim->add_option("--mtct-refresh", options->mtct_refresh_fraction,
                  "A new MTCT reaches the policy when it moved by more than this fraction "
                  "(0: every report; default 0.1)")
      ->check(CLI::NonNegativeNumber);
  sim->add_option("--out", options->out_dir,
                  "Write jobs.csv, resizes.csv, power.csv, metrics.json and the pictures "
                  "(gantt.svg, utilisation.svg, queue.svg, power.svg) here");
  sim->add_flag("--no-pictures", options->no_pictures, "With --out: leave out the SVG pictures");
  sim->callback([options] { run_sim(*options); });
}

}  // namespace sched::cli
