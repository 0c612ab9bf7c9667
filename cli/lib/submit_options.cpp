#include "submit_options.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <variant>

#include "nodelist.hpp"
#include "sched/dependency.hpp"
#include "sched/job_array.hpp"
#include "slurm_time.hpp"

namespace sched::cli {
namespace {

constexpr int kMaxCount = 1000000;

constexpr std::string_view kSlurmOnly = "a Slurm option with no meaning in sched";

constexpr std::array<OptionInfo, 40> kOptions = {{
    {"job-name", 'J', ValueKind::Required, false, "Job name"},
    {"nodes", 'N', ValueKind::Required, false,
     "Nodes: N, or MIN-MAX (moldable unless --kind says otherwise)"},
    {"min-nodes", 0, ValueKind::Required, false, "Fewest nodes (makes the job malleable)"},
    {"max-nodes", 0, ValueKind::Required, false, "Most nodes (makes the job malleable)"},
    // The paper's names (Chadha et al., Listing 2), so its scripts run unchanged.
    {"min-nodes-invasive", 0, ValueKind::Required, false, "The same as --min-nodes"},
    {"max-nodes-invasive", 0, ValueKind::Required, false, "The same as --max-nodes"},
    {"kind", 0, ValueKind::Required, false, "rigid, moldable, malleable or evolving"},
    {"node-constraints", 0, ValueKind::Required, false,
     "Allowed sizes: none, pof2, even, odd or ncube"},
    {"ntasks-per-node", 0, ValueKind::Required, false, "Tasks per node"},
    {"time", 't', ValueKind::Required, false,
     "Time limit: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S or UNLIMITED"},
    {"min-power", 0, ValueKind::Required, false, "Estimated lowest power per node, watts"},
    {"max-power", 0, ValueKind::Required, false, "Estimated highest power per node, watts"},
    {"urgent", 0, ValueKind::None, false, "Start at once, shrinking others if need be"},
    {"chdir", 'D', ValueKind::Required, false, "Working directory of the job"},
    {"export", 0, ValueKind::Required, false,
     "ALL (default), NONE, or NAME[=VALUE][,...]: what the job gets of the submitting "
     "environment"},
    {"env", 0, ValueKind::Required, false, "NAME=VALUE for the job (repeatable)"},
    {"output", 'o', ValueKind::Required, false,
     "File for the job's standard output, and error without -e (default sched-<id>.out); "
     "patterns %j %x %N %u %A %a %%"},
    {"error", 'e', ValueKind::Required, false,
     "File for the job's standard error (default: the --output file); patterns as -o"},
    {"partition", 'p', ValueKind::Required, false,
     "Partition to run in (default: the cluster's default partition; `sched partition` lists "
     "them)"},
    // ---- priority (issue 18 item 5): -A and --qos below
    {"mem", 0, ValueKind::Required, false,
     "Memory per node: N[K|M|G|T] (default unit M); the job is killed above it"},
    {"mem-per-cpu", 0, ValueKind::Required, true, kSlurmOnly},
    {"mail-type", 0, ValueKind::Required, true, kSlurmOnly},
    {"mail-user", 0, ValueKind::Required, true, kSlurmOnly},
    {"exclusive", 0, ValueKind::None, false,
     "Nodes to itself: always so here, except in a partition of kind cores"},
    {"cores", 0, ValueKind::Required, false,
     "Cores in all, for a partition of kind cores, where jobs share nodes by cores "
     "(default: -n × -c); MIN-MAX: a malleable job there, grown and shrunk by cores, "
     "started at MAX"},
    {"cpus-per-task", 'c', ValueKind::Required, false,
     "Cores of each task (a node must have that many; with --cpu-bind=cores each task is "
     "pinned to its own)"},
    {"gres", 0, ValueKind::Required, false,
     "gpu:N: N GPUs on each node (only nodes with that many; CUDA_VISIBLE_DEVICES=0..N-1)"},
    {"constraint", 'C', ValueKind::Required, true, kSlurmOnly},
    // ---- issue 18 item 2
    {"dependency", 'd', ValueKind::Required, false,
     "Start after other jobs: after|afterany|afterok|afternotok:ID[:ID...], singleton; "
     "',' all, '?' any"},
    {"begin", 'b', ValueKind::Required, false,
     "Not before: now+N[seconds|minutes|hours|days|weeks], HH:MM[:SS], YYYY-MM-DD[THH:MM[:SS]]"},
    {"hold", 'H', ValueKind::None, false, "Submit held: the job waits for `sched release`"},
    // ---- where it may run (issue 18 item 4)
    {"nodelist", 'w', ValueKind::Required, false,
     "Nodes the job must have, a host list (n[1-3],gpu1); -N defaults to their number"},
    {"exclude", 'x', ValueKind::Required, false, "Nodes the job must not have, a host list"},
    // ---- Slurm habits (issue 18 item 7)
    {"ntasks", 'n', ValueKind::Required, false,
     "Tasks in all: spread evenly over the job's nodes, rounding up; without -N, enough nodes "
     "for the tasks' cpus"},
    {"distribution", 'm', ValueKind::Required, false,
     "block (default: consecutive tasks on a node) or cyclic (round robin over the nodes)"},
    {"cpu-bind", 0, ValueKind::Required, false,
     "none (default) or cores: pin each task to its --cpus-per-task cores of its node"},
    // ---- priority (issue 18 item 5)
    {"account", 'A', ValueKind::Required, false,
     "Account the job is charged to (recorded; fair-share usage per account)"},
    {"qos", 'q', ValueKind::Required, false,
     "Quality of service: a QOS of the cluster's config (default normal)"},
    {"nice", 0, ValueKind::Optional, false,
     "Lower the job's priority by N (--nice alone: 100; negative only for an admin)"},
    // ---- job arrays (issue 18 item 1)
    {"array", 'a', ValueKind::Required, false,
     "Job array: indices N-M[:STEP] and lists N,M,... with an optional %THROTTLE "
     "(at most that many tasks at once)"},
}};

const OptionInfo* find_option(std::string_view name) {
  for (const auto& option : kOptions) {
    if (name.size() == 1 ? option.short_name == name[0] : option.name == name) return &option;
  }
  return nullptr;
}

std::string quoted(std::string_view value) { return "'" + std::string(value) + "'"; }

// A count of nodes or tasks: 1 to kMaxCount.
std::variant<int, std::string> parse_count(std::string_view text) {
  for (char c : text) {
    if (c < '0' || c > '9') return quoted(text) + " is not a number";
  }
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec == std::errc::result_out_of_range || value > kMaxCount)
    return quoted(text) + " is too large";
  if (ec != std::errc() || end != text.data() + text.size())
    return quoted(text) + " is not a number";
  if (value < 1) return quoted(text) + " must be at least 1";
  return value;
}

std::variant<NodeRange, std::string> parse_node_range(std::string_view text) {
  const auto dash = text.find('-');
  if (dash == std::string_view::npos) {
    auto count = parse_count(text);
    if (auto* error = std::get_if<std::string>(&count)) return *error;
    return NodeRange{std::get<int>(count), std::get<int>(count)};
  }
  std::array<int, 2> bounds{};
  const std::array<std::string_view, 2> parts = {text.substr(0, dash), text.substr(dash + 1)};
  for (std::size_t i = 0; i < 2; ++i) {
    const bool digits =
        !parts[i].empty() && parts[i].find_first_not_of("0123456789") == std::string_view::npos;
    if (!digits) return quoted(text) + " is not N or MIN-MAX";
    auto count = parse_count(parts[i]);
    if (auto* error = std::get_if<std::string>(&count)) return quoted(text) + ": " + *error;
    bounds[i] = std::get<int>(count);
  }
  if (bounds[0] > bounds[1]) return quoted(text) + " has its minimum above its maximum";
  return NodeRange{bounds[0], bounds[1]};
}

std::variant<double, std::string> parse_watts(std::string_view text) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) {
    return quoted(text) + " is not a number";
  }
  if (value < 0) return quoted(text) + " must not be negative";
  return value;
}

// Slurm's --mem: a whole number with an optional K, M, G or T suffix (powers
// of 1024), megabytes when it has none.
std::variant<std::uint64_t, std::string> parse_mem(std::string_view text) {
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end == text.data()) return quoted(text) + " is not a memory size";
  std::string_view unit(end, static_cast<std::size_t>(text.data() + text.size() - end));
  int shift = 20;
  if (unit == "K" || unit == "k") {
    shift = 10;
  } else if (unit == "M" || unit == "m" || unit.empty()) {
    shift = 20;
  } else if (unit == "G" || unit == "g") {
    shift = 30;
  } else if (unit == "T" || unit == "t") {
    shift = 40;
  } else {
    return quoted(text) + " is not a memory size (N[K|M|G|T])";
  }
  if (value == 0) return quoted(text) + " must be more than 0";
  if (value > (std::uint64_t{1} << (62 - shift))) return quoted(text) + " is too large";
  return value << shift;
}

bool is_env_name(std::string_view name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  for (char c : name) {
    const bool ok =
        (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) return false;
  }
  return true;
}

void set_env(std::vector<std::pair<std::string, std::string>>& environment, std::string name,
             std::string value) {
  for (auto& [existing, old_value] : environment) {
    if (existing == name) {
      old_value = std::move(value);
      return;
    }
  }
  environment.emplace_back(std::move(name), std::move(value));
}

std::optional<std::string> add_env(SubmitOptions& options, std::string_view pair) {
  const auto equals = pair.find('=');
  if (equals == std::string_view::npos || !is_env_name(pair.substr(0, equals))) {
    return quoted(pair) + " is not NAME=VALUE";
  }
  set_env(options.environment, std::string(pair.substr(0, equals)),
          std::string(pair.substr(equals + 1)));
  return std::nullopt;
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// sbatch's --nice range.
std::variant<std::int64_t, std::string> parse_nice(std::string_view text) {
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size())
    return quoted(text) + " is not a number";
  if (value > 2147483645 || value < -2147483645) {
    return quoted(text) + " is out of range (-2147483645 to 2147483645)";
  }
  return value;
}

// Sets one of our options from its (non-empty) value; returns what is wrong
// with the value, without the option's name.
std::optional<std::string> set_value(SubmitOptions& o, const OptionInfo& option,
                                     std::string_view value) {
  const std::string_view name = option.name;
  const auto count = [&](std::optional<int>& field) -> std::optional<std::string> {
    auto parsed = parse_count(value);
    if (auto* error = std::get_if<std::string>(&parsed)) return *error;
    field = std::get<int>(parsed);
    return std::nullopt;
  };
  const auto watts = [&](std::optional<double>& field) -> std::optional<std::string> {
    auto parsed = parse_watts(value);
    if (auto* error = std::get_if<std::string>(&parsed)) return *error;
    field = std::get<double>(parsed);
    return std::nullopt;
  };
  if (name == "job-name") {
    o.job_name = std::string(value);
  } else if (name == "nodes") {
    auto parsed = parse_node_range(value);
    if (auto* error = std::get_if<std::string>(&parsed)) return *error;
    o.nodes = std::get<NodeRange>(parsed);
  } else if (name == "min-nodes" || name == "min-nodes-invasive") {
    return count(o.min_nodes);
  } else if (name == "max-nodes" || name == "max-nodes-invasive") {
    return count(o.max_nodes);
  } else if (name == "ntasks-per-node") {
    return count(o.tasks_per_node);
  } else if (name == "ntasks") {
    return count(o.ntasks);
  } else if (name == "cpus-per-task") {
    return count(o.cpus_per_task);
  } else if (name == "cores") {
    auto parsed = parse_node_range(value);
    if (auto* error = std::get_if<std::string>(&parsed)) return *error;
    o.cores = std::get<NodeRange>(parsed);
  } else if (name == "distribution") {
    // Slurm's NODE:SOCKET form: only the node level means something here.
    const std::string level = lower(value.substr(0, value.find(':')));
    o.distribution = tasks::parse_distribution(level);
    if (!o.distribution) return quoted(value) + " is not block or cyclic";
  } else if (name == "cpu-bind") {
    o.cpu_bind = tasks::parse_cpu_bind(lower(value));
    if (!o.cpu_bind) return quoted(value) + " is not none or cores";
  } else if (name == "nodelist" || name == "exclude") {
    std::vector<std::string> nodes;
    try {
      nodes = expand_nodelist(value);
    } catch (const std::invalid_argument& e) {
      return quoted(value) + " is not a host list: " + e.what();
    }
    sort_nodelist(nodes);
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    (name == "nodelist" ? o.nodelist : o.exclude) = std::move(nodes);
  } else if (name == "gres") {
    // gpu, gpu:N or gpu:TYPE:N; GPU types are not told apart here.
    std::string_view rest = value;
    if (!rest.starts_with("gpu")) return quoted(value) + " is not gpu[:N] (the only resource here)";
    rest.remove_prefix(3);
    if (rest.empty()) {
      o.gpus = 1;
      return std::nullopt;
    }
    if (rest.front() != ':') return quoted(value) + " is not gpu[:N]";
    rest.remove_prefix(1);
    if (const auto colon = rest.rfind(':'); colon != std::string_view::npos) {
      rest.remove_prefix(colon + 1);
    }
    auto parsed = parse_count(rest);
    if (auto* error = std::get_if<std::string>(&parsed)) return *error;
    o.gpus = std::get<int>(parsed);

  } else if (name == "kind") {
    o.kind = parse_job_kind(lower(value));
    if (!o.kind) return quoted(value) + " is not a job kind (rigid, moldable, malleable, evolving)";
  } else if (name == "node-constraints") {
    o.constraint = parse_node_constraint(lower(value));
    if (!o.constraint) {
      return quoted(value) + " is not a node constraint (none, pof2, even, odd, ncube)";
    }
  } else if (name == "time") {
    const auto seconds = parse_duration(value);
    if (!seconds) return quoted(value) + " is not a time (" + std::string(kDurationForms) + ")";
    o.walltime = static_cast<double>(*seconds);
  } else if (name == "min-power") {
    return watts(o.power_min_w);
  } else if (name == "max-power") {
    return watts(o.power_max_w);
  } else if (name == "mem") {
    auto parsed = parse_mem(value);
    if (auto* error = std::get_if<std::string>(&parsed)) return *error;
    o.mem_bytes = std::get<std::uint64_t>(parsed);
  } else if (name == "chdir") {
    o.workdir = std::string(value);
  } else if (name == "output") {
    o.output = std::string(value);
  } else if (name == "env") {
    return add_env(o, value);
  } else if (name == "dependency") {
    auto parsed = parse_dependency(value);
    if (!parsed.ok()) return parsed.status().message();
    o.dependency = to_string(parsed.value());
  } else if (name == "array") {
    // The syntax here; schedd checks the indices against its max_array_size.
    auto parsed = parse_job_array(value, kMaxArraySizeCeiling);
    if (!parsed.ok()) return parsed.status().message();
    o.array = std::string(value);
  } else if (name == "begin") {
    if (!parse_begin_time(value, 0)) {
      return quoted(value) + " is not a time (" + std::string(kBeginForms) + ")";
    }
    o.begin = std::string(value);
  } else if (name == "error") {
    o.error = std::string(value);
  } else if (name == "partition") {
    o.partition = std::string(value);  // checked by schedd against its partitions (issue 20)
  } else if (name == "account") {
    o.account = std::string(value);
  } else if (name == "qos") {
    o.qos = std::string(value);
  } else if (name == "nice") {
    auto parsed = parse_nice(value);
    if (auto* error = std::get_if<std::string>(&parsed)) return *error;
    o.nice = std::get<std::int64_t>(parsed);
  } else if (name == "export") {
    // sbatch's forms: ALL or NONE, each optionally followed by NAME=VALUEs,
    // or a list of NAMEs and NAME=VALUEs. A later --export replaces an
    // earlier one's mode; NAME=VALUEs accumulate.
    ExportChoice choice;
    choice.mode = ExportChoice::Mode::List;
    bool first = true;
    while (true) {
      const auto comma = value.find(',');
      const std::string_view item = value.substr(0, comma);
      if (first && (item == "ALL" || item == "NONE")) {
        choice.mode = item == "ALL" ? ExportChoice::Mode::All : ExportChoice::Mode::None;
      } else if (item == "ALL" || item == "NONE") {
        return std::string(item) + " must come first";
      } else if (item.find('=') != std::string_view::npos) {
        if (auto error = add_env(o, item)) return error;
      } else if (is_env_name(item)) {
        choice.names.emplace_back(item);
      } else {
        return quoted(item) + " is not ALL, NONE, NAME or NAME=VALUE";
      }
      first = false;
      if (comma == std::string_view::npos) break;
      value.remove_prefix(comma + 1);
    }
    o.export_choice = std::move(choice);
  }
  return std::nullopt;
}

}  // namespace

std::span<const OptionInfo> submit_option_table() { return kOptions; }

std::optional<std::string> apply_option(SubmitOptions& options, std::string_view name,
                                        std::optional<std::string_view> value, Dialect dialect) {
  std::string written(name);
  if (!name.starts_with('-')) written.insert(0, name.size() == 1 ? "-" : "--");
  while (name.starts_with('-')) name.remove_prefix(1);
  const OptionInfo* option = name.empty() ? nullptr : find_option(name);
  if (option == nullptr) return "unknown option " + written;
  if (option->slurm_only) {
    if (dialect != Dialect::Slurm) {
      const std::string why =
          option->help == kSlurmOnly ? "" : " (" + std::string(option->help) + ")";
      return written + " is a Slurm option that sched ignores" + why +
             "; it is accepted only in #SBATCH lines";
    }
    const std::string separator = written.starts_with("--") ? "=" : " ";
    options.warnings.push_back(written + (value ? separator + std::string(*value) : "") +
                               " ignored (" + std::string(option->help) + ")");
    return std::nullopt;
  }
  if (option->value == ValueKind::None) {
    if (value) return written + " takes no value";
    if (option->name == "urgent") options.urgent = true;
    if (option->name == "hold") options.hold = true;
    // --exclusive: every job has its nodes to itself here; nothing to record.
    return std::nullopt;
  }
  if (option->name == "nice" && !value) {
    options.nice = 100;  // sbatch's --nice without a value
    return std::nullopt;
  }
  if (!value || value->empty()) return written + " needs a value";
  if (auto error = set_value(options, *option, *value)) return written + ": " + *error;
  return std::nullopt;
}

std::optional<std::string> apply_arguments(SubmitOptions& options,
                                           const std::vector<std::string>& words, Dialect dialect) {
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string_view word = words[i];
    std::string_view name;
    std::optional<std::string_view> value;
    if (word.starts_with("--") && word.size() > 2) {
      const auto equals = word.find('=');
      name = word.substr(0, equals);
      if (equals != std::string_view::npos) value = word.substr(equals + 1);
    } else if (word.starts_with('-') && word.size() > 1 && word[1] != '-') {
      name = word.substr(0, 2);
      if (word.size() > 2) value = word.substr(2);  // -N4
    } else {
      return quoted(word) + " is not an option";
    }
    const OptionInfo* option = find_option(name.substr(name.starts_with("--") ? 2 : 1));
    if (option != nullptr && option->value == ValueKind::Required && !value &&
        i + 1 < words.size()) {
      value = words[++i];
    }
    if (auto error = apply_option(options, name, value, dialect)) return error;
  }
  return std::nullopt;
}

SubmitOptions merge(const SubmitOptions& base, const SubmitOptions& over) {
  SubmitOptions out = base;
  const auto take = [](auto& field, const auto& other) {
    if (other) field = other;
  };
  take(out.job_name, over.job_name);
  take(out.nodes, over.nodes);
  take(out.min_nodes, over.min_nodes);
  take(out.max_nodes, over.max_nodes);
  take(out.kind, over.kind);
  take(out.constraint, over.constraint);
  take(out.tasks_per_node, over.tasks_per_node);
  take(out.walltime, over.walltime);
  take(out.power_min_w, over.power_min_w);
  take(out.power_max_w, over.power_max_w);
  take(out.mem_bytes, over.mem_bytes);
  take(out.urgent, over.urgent);
  take(out.workdir, over.workdir);
  take(out.output, over.output);
  // ---- issue 18 item 2
  take(out.dependency, over.dependency);
  take(out.begin, over.begin);
  take(out.hold, over.hold);
  take(out.error, over.error);
  take(out.export_choice, over.export_choice);
  take(out.ntasks, over.ntasks);
  take(out.cpus_per_task, over.cpus_per_task);
  take(out.cores, over.cores);
  take(out.distribution, over.distribution);
  take(out.cpu_bind, over.cpu_bind);
  // ---- priority (issue 18 item 5)
  take(out.account, over.account);
  take(out.partition, over.partition);
  take(out.qos, over.qos);
  take(out.nice, over.nice);
  take(out.nodelist, over.nodelist);
  take(out.exclude, over.exclude);
  take(out.gpus, over.gpus);
  // ---- job arrays (issue 18 item 1)
  take(out.array, over.array);
  for (const auto& [name, value] : over.environment) set_env(out.environment, name, value);
  out.warnings.insert(out.warnings.end(), over.warnings.begin(), over.warnings.end());
  return out;
}

JobKind infer_kind(const SubmitOptions& options) {
  if (options.kind) return *options.kind;
  if (options.min_nodes || options.max_nodes) return JobKind::Malleable;
  // --cores MIN-MAX: resized by cores in an invasive partition (issue 20 item 2).
  if (options.cores && options.cores->min != options.cores->max) return JobKind::Malleable;
  if (options.nodes && options.nodes->min != options.nodes->max) return JobKind::Moldable;
  return JobKind::Rigid;
}

EnvList export_environment(const SubmitOptions& options, const EnvList& submitting) {
  const ExportChoice choice = options.export_choice.value_or(ExportChoice{});
  EnvList out;
  for (const auto& [name, value] : submitting) {
    bool take = false;
    switch (choice.mode) {
      case ExportChoice::Mode::All:
        // The job's node sets these for the job itself; a submission from
        // inside another job must not hand down that job's.
        take = !name.starts_with("SLURM_") &&
               (!name.starts_with("SCHED_") || name.starts_with("SCHED_MALL_"));
        break;
      case ExportChoice::Mode::None:
        break;
      case ExportChoice::Mode::List:
        take = std::find(choice.names.begin(), choice.names.end(), name) != choice.names.end();
        break;
    }
    if (take && is_env_name(name)) set_env(out, name, value);
  }
  for (const auto& [name, value] : options.environment) set_env(out, name, value);
  return out;
}

Submission build_submission(const SubmitOptions& options, std::string command,
                            const EnvList& submitting, double now) {
  Submission out;
  JobSpec& spec = out.spec;
  spec.kind = infer_kind(options);
  const bool range = options.nodes && options.nodes->min != options.nodes->max;
  spec.min_nodes = options.min_nodes.value_or(range ? options.nodes->min : 0);
  spec.max_nodes = options.max_nodes.value_or(range ? options.nodes->max : 0);
  if (options.nodes) {
    spec.nodes = range ? spec.max_nodes : options.nodes->min;
  } else if (options.nodelist && !options.min_nodes && !options.max_nodes) {
    spec.nodes = static_cast<int>(options.nodelist->size());  // sbatch -w n[1-2]: two nodes
  } else {
    spec.nodes = options.max_nodes.value_or(options.min_nodes.value_or(1));
  }
  spec.name = options.job_name.value_or("");
  spec.constraint = options.constraint.value_or(NodeConstraint::None);
  spec.tasks_per_node = options.tasks_per_node.value_or(1);
  if (options.ntasks && !options.tasks_per_node) {
    spec.tasks_per_node = (*options.ntasks + spec.nodes - 1) / spec.nodes;
  }
  // ---- tasks (issue 16 item 1)
  spec.layout.edit().ntasks = options.ntasks.value_or(0);
  if (options.ntasks && options.tasks_per_node) {
    // --ntasks-per-node wins: -n only caps the tasks the nodes run.
    // Both up to kMaxCount: their product needs 64 bits.
    spec.layout.edit().ntasks = static_cast<int>(std::min<long long>(
        *options.ntasks, static_cast<long long>(spec.nodes) * *options.tasks_per_node));
  }
  spec.layout.edit().cpus_per_task = options.cpus_per_task.value_or(1);
  if (options.cores) {  // issue 20 item 2: N, or MIN-MAX started at MAX
    spec.layout.edit().cores = options.cores->max;
    if (options.cores->min != options.cores->max) {
      spec.layout.edit().min_cores = options.cores->min;
      spec.layout.edit().max_cores = options.cores->max;
    }
  }
  spec.layout.edit().distribution = options.distribution.value_or(tasks::Distribution::Block);
  spec.layout.edit().cpu_bind = options.cpu_bind.value_or(tasks::CpuBind::None);
  // -n without -N (nor -w or a range): the engine sizes the job from the
  // cores of the cluster's nodes; one node until then.
  spec.layout.edit().nodes_from_tasks = options.ntasks && !options.nodes && !options.nodelist &&
                                        !options.min_nodes && !options.max_nodes &&
                                        !options.tasks_per_node && spec.kind == JobKind::Rigid;
  spec.walltime = options.walltime.value_or(0);
  spec.power_min_w = options.power_min_w.value_or(0);
  spec.power_max_w = options.power_max_w.value_or(0);
  spec.extra.edit().mem_bytes = options.mem_bytes.value_or(0);
  spec.urgent = options.urgent.value_or(false);
  spec.workdir = options.workdir.value_or("");
  spec.extra.edit().environment = export_environment(options, submitting);
  spec.extra.edit().output = options.output.value_or("");
  spec.extra.edit().error = options.error.value_or("");
  spec.command = std::move(command);
  // ---- issue 18 item 4
  spec.extra.edit().nodelist = options.nodelist.value_or(std::vector<std::string>{});
  spec.extra.edit().exclude = options.exclude.value_or(std::vector<std::string>{});
  spec.extra.edit().gpus_per_node = options.gpus.value_or(0);
  // ---- issue 18 item 2
  spec.extra.edit().dependency = options.dependency.value_or("");
  spec.hold = options.hold.value_or(false);
  // ---- priority (issue 18 item 5)
  spec.extra.edit().account = options.account.value_or("");
  spec.partition = options.partition.value_or("");
  spec.qos = options.qos.value_or("");
  spec.nice = options.nice.value_or(0);
  // ---- job arrays (issue 18 item 1)
  spec.extra.edit().array = options.array.value_or("");
  if (options.begin) {
    const auto begin = parse_begin_time(*options.begin, now);
    if (!begin) {
      out.error = "--begin: '" + *options.begin + "' is not a time";
      return out;
    }
    // A time already past is no wait (0 is the engine's "at once").
    spec.extra.edit().begin_time = *begin > now ? *begin : 0;
  }
  out.warnings = options.warnings;
  out.error = normalize_spec(spec);
  return out;
}

}  // namespace sched::cli
