#include "sched/sim/native_reader.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <sstream>
#include <utility>

#include "sched/partition.hpp"

namespace sched::sim {
namespace {

// The keys each kind of table may have.
using Keys = std::span<const std::string_view>;

constexpr std::array<std::string_view, 3> kTopKeys = {"cluster", "job", "event"};
constexpr std::array<std::string_view, 4> kClusterKeys = {"nodes", "cores_per_node", "kind",
                                                          "sockets_per_node"};
constexpr std::array<std::string_view, 36> kJobKeys = {"id",
                                                       "cores",
                                                       "min_cores",
                                                       "max_cores",
                                                       "submit",
                                                       "runtime",
                                                       "name",
                                                       "user",
                                                       "kind",
                                                       "nodes",
                                                       "min_nodes",
                                                       "max_nodes",
                                                       "constraint",
                                                       "tasks_per_node",
                                                       "walltime",
                                                       "power_min_w",
                                                       "power_max_w",
                                                       "urgent",
                                                       "command",
                                                       "workdir",
                                                       "env",
                                                       "speedup",
                                                       "serial_fraction",
                                                       "downey_a",
                                                       "downey_sigma",
                                                       "phases",
                                                       "adapt_start_s",
                                                       "adapt_stop_s",
                                                       "adapt_alpha_s",
                                                       "adapt_beta_s",
                                                       "request",
                                                       "adapt_model",
                                                       "adapt_latency_expand_s",
                                                       "adapt_latency_shrink_s",
                                                       "adapt_per_new_node_expand_s",
                                                       "adapt_per_new_node_shrink_s"};
constexpr std::array<std::string_view, 4> kRequestKeys = {"at", "op", "by", "to"};
constexpr std::array<std::string_view, 4> kCorridorKeys = {"time", "type", "lower_w", "upper_w"};
constexpr std::array<std::string_view, 3> kNodeEventKeys = {"time", "type", "node"};
constexpr std::string_view kEventTypes = "corridor, node_down, node_up, node_drain or node_resume";

std::string_view type_name(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a float";
    case toml::node_type::boolean:
      return "a boolean";
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::date:
      return "a date";
    case toml::node_type::time:
      return "a time";
    case toml::node_type::date_time:
      return "a date-time";
    default:
      return "nothing";
  }
}

bool contains(Keys keys, std::string_view key) {
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

// Walks the parsed document; every check reports the line of the value (or
// table) it is about.
class NativeParser {
 public:
  explicit NativeParser(const std::string& source) : source_(source) {}

  Workload parse(std::string_view text) {
    toml::table root;
    try {
      root = toml::parse(text, std::string_view(source_));
    } catch (const toml::parse_error& error) {
      fail(error.source().begin.line, std::string(error.description()));
    }

    Workload workload;
    workload.source = source_;
    check_keys(root, kTopKeys, "at the top level");
    if (const auto* cluster = root.get("cluster")) read_cluster(*cluster, workload);
    for (const auto* table : tables_of(root, "job")) workload.jobs.push_back(read_job(*table));
    for (const auto* table : tables_of(root, "event")) {
      workload.events.push_back(read_event(*table));
    }

    std::sort(workload.jobs.begin(), workload.jobs.end(),
              [](const WorkloadJob& a, const WorkloadJob& b) {
                if (a.submit != b.submit) return a.submit < b.submit;
                return a.id < b.id;
              });
    std::stable_sort(workload.events.begin(), workload.events.end(),
                     [](const TimedEvent& a, const TimedEvent& b) { return a.time < b.time; });
    return workload;
  }

 private:
  [[noreturn]] void fail(std::uint32_t line, const std::string& what) const {
    throw WorkloadError(source_ + ":" + std::to_string(line) + ": " + what);
  }
  [[noreturn]] void fail(const toml::node& node, const std::string& what) const {
    fail(node.source().begin.line, what);
  }

  void check_keys(const toml::table& table, Keys allowed, std::string_view where) const {
    for (auto&& [key, value] : table) {
      if (!contains(allowed, key.str())) {
        fail(key.source().begin.line,
             "unknown key '" + std::string(key.str()) + "' " + std::string(where));
      }
    }
  }

  // The tables of `[[name]]` (or `name = [{...}, ...]`).
  std::vector<const toml::table*> tables_of(const toml::table& root, std::string_view name) const {
    std::vector<const toml::table*> tables;
    const auto* node = root.get(name);
    if (node == nullptr) return tables;
    const auto* array = node->as_array();
    if (array == nullptr) {
      fail(*node, std::string(name) + " must be an array of tables ([[" + std::string(name) +
                      "]]), not " + std::string(type_name(*node)));
    }
    for (const auto& element : *array) {
      const auto* table = element.as_table();
      if (table == nullptr) {
        fail(element, "each " + std::string(name) + " must be a table, not " +
                          std::string(type_name(element)));
      }
      tables.push_back(table);
    }
    return tables;
  }

  // ---- typed field access: nothing when the key is absent ----

  std::optional<double> number(const toml::table& table, std::string_view key) const {
    const auto* node = table.get(key);
    if (node == nullptr) return std::nullopt;
    double value = 0;
    if (const auto integer = node->value_exact<std::int64_t>()) {
      value = static_cast<double>(*integer);
    } else if (const auto floating = node->value_exact<double>()) {
      value = *floating;
    } else {
      fail(*node, std::string(key) + " must be a number, not " + std::string(type_name(*node)));
    }
    if (!std::isfinite(value)) fail(*node, std::string(key) + " must be a finite number");
    return value;
  }

  std::optional<double> seconds(const toml::table& table, std::string_view key) const {
    const auto value = number(table, key);
    if (value && *value < 0) fail(*table.get(key), std::string(key) + " must not be negative");
    return value;
  }

  // A time the simulator steps to (a submit, a run time, a limit, an
  // event): at most kMaxWorkloadSeconds.
  std::optional<double> time_seconds(const toml::table& table, std::string_view key) const {
    const auto value = seconds(table, key);
    if (value && *value > kMaxWorkloadSeconds) {
      fail(*table.get(key), std::string(key) + " is beyond " +
                                std::to_string(static_cast<long>(kMaxWorkloadSeconds)) + " s");
    }
    return value;
  }

  double required_seconds(const toml::table& table, std::string_view key,
                          std::string_view what) const {
    const auto value = time_seconds(table, key);
    if (!value) fail(table, std::string(what) + " has no " + std::string(key));
    return *value;
  }

  std::optional<std::int64_t> integer(const toml::table& table, std::string_view key) const {
    const auto* node = table.get(key);
    if (node == nullptr) return std::nullopt;
    const auto value = node->value_exact<std::int64_t>();
    if (!value) {
      fail(*node, std::string(key) + " must be an integer, not " + std::string(type_name(*node)));
    }
    return value;
  }

  std::optional<int> small_integer(const toml::table& table, std::string_view key) const {
    const auto value = integer(table, key);
    if (value &&
        (*value < std::numeric_limits<int>::min() || *value > std::numeric_limits<int>::max())) {
      fail(*table.get(key), std::string(key) + " is out of range");
    }
    return value ? std::optional<int>(static_cast<int>(*value)) : std::nullopt;
  }

  std::optional<std::string> string(const toml::table& table, std::string_view key) const {
    const auto* node = table.get(key);
    if (node == nullptr) return std::nullopt;
    const auto value = node->value_exact<std::string>();
    if (!value) {
      fail(*node, std::string(key) + " must be a string, not " + std::string(type_name(*node)));
    }
    return value;
  }

  std::optional<bool> boolean(const toml::table& table, std::string_view key) const {
    const auto* node = table.get(key);
    if (node == nullptr) return std::nullopt;
    const auto value = node->value_exact<bool>();
    if (!value) {
      fail(*node,
           std::string(key) + " must be true or false, not " + std::string(type_name(*node)));
    }
    return value;
  }

  // ---- sections ----

  void read_cluster(const toml::node& node, Workload& workload) const {
    const auto* table = node.as_table();
    if (table == nullptr) {
      fail(node, "cluster must be a table ([cluster]), not " + std::string(type_name(node)));
    }
    check_keys(*table, kClusterKeys, "in [cluster]");
    if (const auto nodes = small_integer(*table, "nodes")) {
      if (*nodes < 1) fail(*table->get("nodes"), "cluster nodes must be at least 1");
      workload.nodes = *nodes;
    }
    if (const auto cores = small_integer(*table, "cores_per_node")) {
      if (*cores < 1) fail(*table->get("cores_per_node"), "cores_per_node must be at least 1");
      workload.cores_per_node = *cores;
    }
    // Issue 20 item 2: an invasive partition of all the nodes.
    if (const auto kind = string(*table, "kind")) {
      const auto parsed = parse_partition_kind(*kind);
      if (!parsed) fail(*table->get("kind"), "unknown kind '" + *kind + "' (nodes or cores)");
      workload.cores_partition = *parsed == PartitionKind::Cores;
    }
    if (const auto sockets = small_integer(*table, "sockets_per_node")) {
      if (*sockets < 1)
        fail(*table->get("sockets_per_node"), "sockets_per_node must be at least 1");
      workload.sockets_per_node = *sockets;
    }
  }

  WorkloadJob read_job(const toml::table& table) {
    check_keys(table, kJobKeys, "in [[job]]");
    WorkloadJob job;
    const auto line = table.source().begin.line;

    if (const auto id = integer(table, "id")) {
      if (*id < 1) fail(*table.get("id"), "id must be at least 1");
      job.id = *id;
    } else {
      job.id = previous_id_ + 1;
    }
    if (const auto [earlier, fresh] = id_lines_.emplace(job.id, line); !fresh) {
      const auto* node = table.get("id");
      fail(node ? node->source().begin.line : line, "duplicate job id " + std::to_string(job.id) +
                                                        " (first used at line " +
                                                        std::to_string(earlier->second) + ")");
    }
    previous_id_ = job.id;
    const std::string what = "job " + std::to_string(job.id);

    job.submit = required_seconds(table, "submit", what);
    job.runtime = required_seconds(table, "runtime", what);

    JobSpec& spec = job.spec;
    spec.name = string(table, "name").value_or("job" + std::to_string(job.id));
    spec.user = string(table, "user").value_or("");
    if (const auto kind = string(table, "kind")) {
      const auto parsed = parse_job_kind(*kind);
      if (!parsed) {
        fail(*table.get("kind"),
             "unknown kind '" + *kind + "' (rigid, moldable, malleable or evolving)");
      }
      spec.kind = *parsed;
    } else if (table.contains("min_nodes") || table.contains("max_nodes") ||
               table.contains("min_cores") || table.contains("max_cores")) {
      // docs/design.md §3: a job with min_nodes/max_nodes (min_cores/max_cores
      // in a cluster of kind "cores") given is malleable unless it says otherwise.
      spec.kind = JobKind::Malleable;
    }
    const auto min_nodes = small_integer(table, "min_nodes");
    spec.min_nodes = min_nodes.value_or(0);
    spec.max_nodes = small_integer(table, "max_nodes").value_or(0);
    // A job that gives only a range starts at its lower end.
    spec.nodes = small_integer(table, "nodes").value_or(min_nodes.value_or(1));
    if (const auto cores = small_integer(table, "cores")) {
      if (*cores < 1) fail(*table.get("cores"), "cores must be at least 1");
      spec.layout.edit().cores = *cores;  // in a [cluster] kind = "cores" (issue 20 item 2)
    }
    // A malleable job there, resized by cores within [min_cores, max_cores].
    for (const auto& [key, field] : {std::pair{"min_cores", &JobLayout::min_cores},
                                     std::pair{"max_cores", &JobLayout::max_cores}}) {
      if (const auto value = small_integer(table, key)) {
        if (*value < 1) fail(*table.get(key), std::string(key) + " must be at least 1");
        spec.layout.edit().*field = *value;
      }
    }
    if (const auto constraint = string(table, "constraint")) {
      const auto parsed = parse_node_constraint(*constraint);
      if (!parsed) {
        fail(*table.get("constraint"),
             "unknown constraint '" + *constraint + "' (none, pof2, even, odd or ncube)");
      }
      spec.constraint = *parsed;
    }
    spec.tasks_per_node = small_integer(table, "tasks_per_node").value_or(1);
    spec.walltime = time_seconds(table, "walltime").value_or(0);
    spec.power_min_w = number(table, "power_min_w").value_or(0);
    spec.power_max_w = number(table, "power_max_w").value_or(0);
    spec.urgent = boolean(table, "urgent").value_or(false);
    spec.command = string(table, "command").value_or("");
    spec.workdir = string(table, "workdir").value_or("");
    if (const auto* env = table.get("env")) spec.extra.edit().environment = read_env(*env);

    if (const auto error = normalize_spec(spec)) fail(line, what + ": " + *error);
    read_model(table, job.model);
    return job;
  }

  // The application model's parameters (docs/app-model.md); absent keys keep
  // the defaults.
  void read_model(const toml::table& table, AppModel& model) const {
    if (const auto kind = string(table, "speedup")) {
      if (*kind == "amdahl") {
        model.speedup.kind = SpeedupModel::Kind::Amdahl;
      } else if (*kind == "downey") {
        model.speedup.kind = SpeedupModel::Kind::Downey;
      } else if (*kind == "linear") {
        model.speedup.kind = SpeedupModel::Kind::Linear;
      } else {
        fail(*table.get("speedup"),
             "unknown speedup model '" + *kind + "' (amdahl, downey or linear)");
      }
    }
    if (const auto f = number(table, "serial_fraction")) {
      if (*f < 0 || *f > 1) fail(*table.get("serial_fraction"), "serial_fraction must be in 0..1");
      model.speedup.serial_fraction = *f;
    }
    if (const auto a = number(table, "downey_a")) {
      if (*a < 1) fail(*table.get("downey_a"), "downey_a must be at least 1");
      model.speedup.downey_a = *a;
    }
    if (const auto sigma = seconds(table, "downey_sigma")) model.speedup.downey_sigma = *sigma;
    if (const auto* phases = table.get("phases")) model.phases = read_phases(*phases);
    AdaptationCost& cost = model.adaptation;
    // The named set first; the single keys below change its values.
    if (const auto name = string(table, "adapt_model")) {
      const auto named = AdaptationCost::named(*name);
      if (!named) {
        fail(*table.get("adapt_model"),
             "unknown adaptation cost model '" + *name + "' (per_node or step)");
      }
      cost = *named;
    }
    cost.latency_expand_s =
        seconds(table, "adapt_latency_expand_s").value_or(cost.latency_expand_s);
    cost.latency_shrink_s =
        seconds(table, "adapt_latency_shrink_s").value_or(cost.latency_shrink_s);
    cost.per_new_node_expand_s =
        seconds(table, "adapt_per_new_node_expand_s").value_or(cost.per_new_node_expand_s);
    cost.per_new_node_shrink_s =
        seconds(table, "adapt_per_new_node_shrink_s").value_or(cost.per_new_node_shrink_s);
    cost.start_s_per_node = seconds(table, "adapt_start_s").value_or(cost.start_s_per_node);
    cost.stop_s_per_node = seconds(table, "adapt_stop_s").value_or(cost.stop_s_per_node);
    cost.alpha_s = seconds(table, "adapt_alpha_s").value_or(cost.alpha_s);
    cost.beta_s = seconds(table, "adapt_beta_s").value_or(cost.beta_s);
    for (const auto* request : tables_of(table, "request")) {
      model.requests.push_back(read_request(*request));
    }
    std::stable_sort(
        model.requests.begin(), model.requests.end(),
        [](const EvolvingStep& a, const EvolvingStep& b) { return a.at_done < b.at_done; });
  }

  std::vector<double> read_phases(const toml::node& node) const {
    const auto* array = node.as_array();
    if (array == nullptr || array->empty()) {
      fail(node, "phases must be a non-empty array of numbers, e.g. [1.0, 1.5, 0.7]");
    }
    std::vector<double> phases;
    for (const auto& element : *array) {
      double value = 0;
      if (const auto integer = element.value_exact<std::int64_t>()) {
        value = static_cast<double>(*integer);
      } else if (const auto floating = element.value_exact<double>()) {
        value = *floating;
      } else {
        fail(element, "each phase factor must be a number, not " + std::string(type_name(element)));
      }
      if (!std::isfinite(value) || value <= 0) fail(element, "phase factors must be positive");
      phases.push_back(value);
    }
    return phases;
  }

  EvolvingStep read_request(const toml::table& table) const {
    check_keys(table, kRequestKeys, "in [[job.request]]");
    EvolvingStep step;
    const auto at = number(table, "at");
    if (!at) fail(table, "request has no 'at' (the fraction of the work done, 0..1)");
    if (*at < 0 || *at > 1) fail(*table.get("at"), "at must be in 0..1");
    step.at_done = *at;
    const auto op = string(table, "op");
    if (!op || (*op != "expand" && *op != "shrink")) {
      fail(op ? *table.get("op") : static_cast<const toml::node&>(table),
           "request op must be \"expand\" or \"shrink\"");
    }
    step.op = *op == "expand" ? ResizeRequest::Op::Expand : ResizeRequest::Op::Shrink;
    const auto by = small_integer(table, "by");
    const auto to = small_integer(table, "to");
    if (by.has_value() == to.has_value()) fail(table, "request needs one of 'by' or 'to'");
    if (by && *by < 1) fail(*table.get("by"), "by must be at least 1");
    if (to && *to < 1) fail(*table.get("to"), "to must be at least 1");
    step.by = by.value_or(0);
    step.to = to.value_or(0);
    return step;
  }

  std::vector<std::pair<std::string, std::string>> read_env(const toml::node& node) const {
    const auto* table = node.as_table();
    if (table == nullptr) {
      fail(node, "env must be a table ([job.env]), not " + std::string(type_name(node)));
    }
    std::vector<std::pair<std::string, std::string>> environment;
    for (auto&& [key, value] : *table) {
      const auto text = value.value_exact<std::string>();
      if (!text) {
        fail(value, "environment variable " + std::string(key.str()) + " must be a string, not " +
                        std::string(type_name(value)));
      }
      environment.emplace_back(std::string(key.str()), *text);
    }
    return environment;
  }

  TimedEvent read_event(const toml::table& table) const {
    TimedEvent event;
    const auto type = string(table, "type");
    if (!type) fail(table, "event has no type (" + std::string(kEventTypes) + ")");
    if (*type == "corridor") {
      event.type = TimedEvent::Type::Corridor;
      check_keys(table, kCorridorKeys, "in a corridor event");
    } else if (*type == "node_down" || *type == "node_up" || *type == "node_drain" ||
               *type == "node_resume") {
      event.type = *type == "node_down"    ? TimedEvent::Type::NodeDown
                   : *type == "node_up"    ? TimedEvent::Type::NodeUp
                   : *type == "node_drain" ? TimedEvent::Type::NodeDrain
                                           : TimedEvent::Type::NodeResume;
      check_keys(table, kNodeEventKeys, "in a " + *type + " event");
    } else {
      fail(*table.get("type"),
           "unknown event type '" + *type + "' (" + std::string(kEventTypes) + ")");
    }
    const std::string what = *type + " event";
    event.time = required_seconds(table, "time", what);

    if (event.type == TimedEvent::Type::Corridor) {
      const auto lower = number(table, "lower_w");
      const auto upper = number(table, "upper_w");
      if (!lower) fail(table, what + " has no lower_w");
      if (!upper) fail(table, what + " has no upper_w");
      if (*lower < 0) fail(*table.get("lower_w"), "lower_w must not be negative");
      if (*lower > *upper) fail(*table.get("upper_w"), "upper_w must not be below lower_w");
      event.lower_w = *lower;
      event.upper_w = *upper;
    } else {
      const auto node = string(table, "node");
      if (!node) fail(table, what + " has no node");
      if (node->empty()) fail(*table.get("node"), "node must not be empty");
      event.node = *node;
    }
    return event;
  }

  const std::string& source_;
  JobId previous_id_ = 0;
  std::map<JobId, std::uint32_t> id_lines_;  // id → line of its [[job]]
};

}  // namespace

Workload parse_native(std::string_view text, const std::string& source_name) {
  return NativeParser(source_name).parse(text);
}

Workload read_native(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw WorkloadError(path + ": cannot open workload file");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw WorkloadError(path + ": read error");
  return parse_native(text.str(), path);
}

}  // namespace sched::sim
