#include "policy_try.hpp"

#include <stdlib.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "connection.hpp"
#include "sched/convert/snapshot_convert.hpp"
#include "sched/install_layout.hpp"
#include "sched/lua_policy.hpp"
#include "sched/plot/svg_plot.hpp"
#include "sched/policy_host.hpp"
#include "sched/sim/twin.hpp"
#include "slurm_time.hpp"
#include "table.hpp"

namespace sched::cli {
namespace {

struct TryOptions {
  std::string file;
  std::string horizon = "2h";
  std::string window;  // empty: the horizon
  std::vector<std::string> params;
  std::string out;
  bool json = false;
};

// "90s", "30m", "2h", "1d", or a Slurm time (M, H:M:S, D-H, ...).
std::optional<double> parse_span(const std::string& text) {
  if (!text.empty() && std::string("smhd").find(text.back()) != std::string::npos) {
    const std::string number = text.substr(0, text.size() - 1);
    if (number.empty() || !std::all_of(number.begin(), number.end(), [](unsigned char c) {
          return std::isdigit(c) || c == '.';
        })) {
      return std::nullopt;
    }
    const double value = std::strtod(number.c_str(), nullptr);
    switch (text.back()) {
      case 's':
        return value;
      case 'm':
        return value * 60;
      case 'h':
        return value * 3600;
      default:
        return value * 86400;
    }
  }
  if (const auto seconds = parse_duration(text); seconds && *seconds > 0) {
    return static_cast<double>(*seconds);
  }
  return std::nullopt;
}

// A folder of our own for the running policy's files, removed with it.
class TempDir {
 public:
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "sched-policy-try-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("cannot make a temporary folder");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::shared_ptr<LuaPolicy> load_policy(const std::string& path, const PolicyParams& params,
                                       const std::string& lib_dir, const std::string& what) {
  LuaPolicyOptions options;
  options.params = params;
  options.lib_dir = lib_dir;
  try {
    return LuaPolicy::load(path, options);
  } catch (const PolicyLoadError& e) {
    throw std::runtime_error(what + " does not load: " + e.what());
  }
}

std::string fixed(double value, int decimals) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(decimals) << value;
  return out.str();
}

struct Side {
  std::string role;  // current, candidate
  std::string source;
  PolicyParams params;
  sim::TwinResult result;
};

// The table's rows: (name, value of a side as text).
std::vector<std::pair<std::string, std::string (*)(const sim::TwinMetrics&)>> metric_rows() {
  return {
      {"mean wait (s)", [](const sim::TwinMetrics& m) { return fixed(m.mean_wait_s, 1); }},
      {"max wait (s)", [](const sim::TwinMetrics& m) { return fixed(m.max_wait_s, 1); }},
      {"mean response (s)", [](const sim::TwinMetrics& m) { return fixed(m.mean_response_s, 1); }},
      {"utilisation", [](const sim::TwinMetrics& m) { return fixed(m.utilization, 3); }},
      {"resizes", [](const sim::TwinMetrics& m) { return std::to_string(m.resizes); }},
      {"corridor violations",
       [](const sim::TwinMetrics& m) { return std::to_string(m.violations); }},
      {"finished in horizon", [](const sim::TwinMetrics& m) { return std::to_string(m.finished); }},
      {"started", [](const sim::TwinMetrics& m) { return std::to_string(m.started); }},
      {"still waiting", [](const sim::TwinMetrics& m) { return std::to_string(m.still_waiting); }},
      {"policy errors", [](const sim::TwinMetrics& m) { return std::to_string(m.policy_errors); }},
  };
}

nlohmann::json metrics_json(const sim::TwinMetrics& m) {
  return {{"mean_wait_s", m.mean_wait_s},
          {"max_wait_s", m.max_wait_s},
          {"waited", m.waited},
          {"mean_response_s", m.mean_response_s},
          {"utilization", m.utilization},
          {"resizes", m.resizes},
          {"violations", m.violations},
          {"finished", m.finished},
          {"started", m.started},
          {"still_waiting", m.still_waiting},
          {"arrivals", m.arrivals},
          {"policy_errors", m.policy_errors},
          {"first_policy_error", m.first_policy_error}};
}

nlohmann::json side_json(const Side& side) {
  nlohmann::json params = nlohmann::json::object();
  for (const auto& [key, value] : side.params) params[key] = param_text(value);
  nlohmann::json starts = nlohmann::json::object();
  for (const auto& [id, time] : side.result.predicted_start) starts[std::to_string(id)] = time;
  return {{"role", side.role},
          {"policy", side.result.policy},
          {"source", side.source},
          {"params", params},
          {"metrics", metrics_json(side.result.metrics)},
          {"predicted_start", starts}};
}

// Jobs waiting and nodes busy over the horizon (minutes from now), one step
// line per policy. Sizes are the jobs' sizes at start (resizes not drawn).
plot::Figure comparison_figure(const std::vector<Side>& sides) {
  plot::Figure figure;
  figure.title = "sched policy try";
  figure.columns = 2;
  // Fields set by name, so that new ones keep their defaults.
  plot::Panel waiting;
  waiting.title = "Jobs waiting";
  waiting.y_label = "jobs";
  plot::Panel busy;
  busy.title = "Nodes busy";
  busy.y_label = "nodes";
  for (plot::Panel* panel : {&waiting, &busy}) {
    panel->x_label = "minutes from now";
    panel->y_min = 0;
  }
  for (const Side& side : sides) {
    std::map<double, std::pair<int, int>> changes;  // time → (Δ waiting, Δ busy)
    const double now = side.result.now;
    const double horizon = side.result.horizon_s;
    for (const sim::JobRecord& job : side.result.sim.jobs) {
      // Seconds from now; what happened before the snapshot counts at 0.
      const auto at = [now](double time) { return std::max(time - now, 0.0); };
      changes[at(job.submit)].first += 1;
      if (job.start >= 0 && at(job.start) <= horizon) {
        changes[at(job.start)].first -= 1;
        changes[at(job.start)].second += job.nodes;
        if (job.end >= 0 && at(job.end) <= horizon) changes[at(job.end)].second -= job.nodes;
      }
    }
    const std::string name = side.role + ": " + side.result.policy;
    plot::Series w;
    plot::Series b;
    for (plot::Series* series : {&w, &b}) {
      series->name = name;
      series->step = true;
      series->markers = false;
    }
    int in_queue = 0;
    int nodes = 0;
    for (const auto& [time, delta] : changes) {
      in_queue += delta.first;
      nodes += delta.second;
      w.points.emplace_back(time / 60, in_queue);
      b.points.emplace_back(time / 60, nodes);
    }
    w.points.emplace_back(side.result.horizon_s / 60, in_queue);
    b.points.emplace_back(side.result.horizon_s / 60, nodes);
    waiting.series.push_back(std::move(w));
    busy.series.push_back(std::move(b));
  }
  figure.panels = {std::move(waiting), std::move(busy)};
  return figure;
}

void write_outputs(const std::string& dir, const std::vector<Side>& sides) {
  std::filesystem::create_directories(dir);
  const std::string metrics_path = (std::filesystem::path(dir) / "policy-try.csv").string();
  std::ofstream metrics(metrics_path);
  metrics << "metric";
  for (const Side& side : sides) metrics << "," << side.role << ":" << side.result.policy;
  metrics << "\n";
  for (const auto& [name, value] : metric_rows()) {
    metrics << name;
    for (const Side& side : sides) metrics << "," << value(side.result.metrics);
    metrics << "\n";
  }
  const std::string jobs_path = (std::filesystem::path(dir) / "policy-try-jobs.csv").string();
  std::ofstream jobs(jobs_path);
  jobs << "role,policy,job,submit,start,end,nodes,state\n";
  for (const Side& side : sides) {
    for (const sim::JobRecord& job : side.result.sim.jobs) {
      jobs << side.role << "," << side.result.policy << "," << job.id << "," << fixed(job.submit, 3)
           << "," << (job.start >= 0 ? fixed(job.start, 3) : "") << ","
           << (job.end >= 0 ? fixed(job.end, 3) : "") << "," << job.nodes << ","
           << to_string(job.state) << "\n";
    }
  }
  if (!metrics || !jobs) throw std::runtime_error("cannot write the comparison in " + dir);
  plot::write_svg((std::filesystem::path(dir) / "policy-try.svg").string(),
                  comparison_figure(sides));
}

void run_try(const TryOptions& options) {
  const auto horizon = parse_span(options.horizon);
  if (!horizon) throw std::runtime_error("--horizon " + options.horizon + ": not a duration");
  const auto window = options.window.empty() ? horizon : parse_span(options.window);
  if (!window) throw std::runtime_error("--window " + options.window + ": not a duration");

  PolicyParams given;
  for (const std::string& param : options.params) {
    const auto parsed = parse_param(param);
    if (!parsed) throw std::runtime_error("--param " + param + ": expected key=value");
    given[parsed->first] = parsed->second;
  }
  // The candidate loads before schedd is asked anything: a broken file
  // stops here, and nothing anywhere changed.
  const auto path = resolve_policy_path(options.file, layout::policy_dir_or(default_policy_dir()));
  if (!path) throw std::runtime_error("no policy " + options.file);
  (void)load_policy(*path, given, "", "policy " + *path);

  proto::PolicySnapshotRequest request;
  request.window_s = *window;
  const auto reply =
      client().call<proto::PolicySnapshotReply>(proto::type::kPolicySnapshot, request);
  LiveSnapshot snapshot;
  if (auto error = convert::snapshot_from_wire(reply, snapshot)) {
    throw std::runtime_error("schedd's snapshot: " + *error);
  }
  PolicyParams current_params;
  for (const auto& [key, value] : snapshot.policy_params) {
    if (const auto parsed = parse_param(key + "=" + value)) current_params[key] = parsed->second;
  }
  // As policy.check: no --param keeps the running policy's.
  const PolicyParams candidate_params = options.params.empty() ? current_params : given;

  TempDir tmp;
  const std::string current_path = sim::write_snapshot_policy(snapshot, tmp.path());
  sim::TwinOptions twin;
  twin.horizon_s = *horizon;
  std::vector<Side> sides(2);
  sides[0].role = "current";
  sides[0].source = snapshot.policy_path;
  sides[0].params = current_params;
  sides[0].result = sim::run_twin(snapshot,
                                  load_policy(current_path, current_params, tmp.path() + "/lib",
                                              "the running policy (" + snapshot.policy_path + ")"),
                                  twin);
  sides[1].role = "candidate";
  sides[1].source = *path;
  sides[1].params = candidate_params;
  sides[1].result =
      sim::run_twin(snapshot, load_policy(*path, candidate_params, "", "policy " + *path), twin);

  if (!options.out.empty()) write_outputs(options.out, sides);
  if (options.json) {
    nlohmann::json out = {{"time", snapshot.now},
                          {"horizon_s", *horizon},
                          {"window_s", snapshot.arrival_window_s},
                          {"running", snapshot.running.size()},
                          {"pending", snapshot.pending.size()},
                          {"arrivals", sides[0].result.metrics.arrivals},
                          {"policies", {side_json(sides[0]), side_json(sides[1])}}};
    std::cout << out.dump(2) << "\n";
    return;
  }
  std::cout << "Twin of " << format_timestamp(snapshot.now) << ": " << snapshot.nodes.size()
            << " node(s), " << snapshot.running.size() << " running, " << snapshot.pending.size()
            << " waiting, " << sides[0].result.metrics.arrivals
            << " arrival(s) replayed from the last " << format_duration(*window) << "; horizon "
            << format_duration(*horizon) << "\n\n";
  Table table({{"METRIC"},
               {"CURRENT (" + sides[0].result.policy + ")", Align::Right},
               {"CANDIDATE (" + sides[1].result.policy + ")", Align::Right}});
  for (const auto& [name, value] : metric_rows()) {
    table.add_row({name, value(sides[0].result.metrics), value(sides[1].result.metrics)});
  }
  std::cout << table.render();
  for (const Side& side : sides) {
    if (side.result.metrics.policy_errors > 0) {
      std::cout << "\n"
                << side.role << ": " << side.result.metrics.policy_errors
                << " failed pass(es), the first: " << side.result.metrics.first_policy_error
                << "\n";
    }
  }
  if (!options.out.empty()) {
    std::cout << "\nWrote " << options.out << "/policy-try.csv, policy-try-jobs.csv and "
              << "policy-try.svg\n";
  }
}

}  // namespace

void add_policy_try_command(CLI::App& policy) {
  auto options = std::make_shared<TryOptions>();
  CLI::App* command = policy.add_subcommand(
      "try",
      "Run a candidate policy and the running one on twins of the live system (simulated "
      "here, to a horizon) and compare them; changes nothing");
  command->add_option("file", options->file, "Policy file, or the name of a bundled policy")
      ->required();
  command->add_option("--horizon", options->horizon,
                      "How far to simulate: 90s, 30m, 2h, 1d or a Slurm time (default 2h)");
  command->add_option("--window", options->window,
                      "Recent submissions to replay as future arrivals (default: the horizon)");
  command->add_option("--param", options->params,
                      "Candidate parameter key=value (repeatable; none: the running policy's)");
  command->add_option("--out", options->out, "Folder for the comparison (CSV and SVG)");
  command->add_flag("--json", options->json, "Print JSON");
  command->callback([options] { run_command([&] { run_try(*options); }); });
}

}  // namespace sched::cli
