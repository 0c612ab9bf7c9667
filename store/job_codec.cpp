#include "job_codec.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <utility>

namespace sched::store {
namespace {

using nlohmann::json;

// JSON has no NaN or infinity (nlohmann would write null), yet an MTCT with
// no computation time is infinite; such values are kept as strings.
json number(double value) {
  if (std::isfinite(value)) return value;
  if (std::isnan(value)) return "nan";
  return value > 0 ? "inf" : "-inf";
}

// nlohmann refuses to write strings that are not UTF-8. A command or an
// environment in another encoding is kept as its bytes, so that it comes back
// unchanged.
json text(const std::string& value) {
  try {
    (void)json(value).dump();
    return value;
  } catch (const json::type_error&) {
    return json{{"bytes", std::vector<std::uint8_t>(value.begin(), value.end())}};
  }
}

json parse_object(const std::string& source, const char* what) {
  json value = json::parse(source, nullptr, /*allow_exceptions=*/false);
  if (!value.is_object()) throw CodecError(std::string(what) + ": not a JSON object");
  return value;
}

[[noreturn]] void bad(const char* key, const char* expected) {
  throw CodecError(std::string("'") + key + "': expected " + expected);
}

// The readers below leave `out` alone when the key is missing.

void read(const json& object, const char* key, double& out) {
  auto it = object.find(key);
  if (it == object.end()) return;
  if (it->is_number()) {
    out = it->get<double>();
  } else if (it->is_string() && *it == "nan") {
    out = std::numeric_limits<double>::quiet_NaN();
  } else if (it->is_string() && *it == "inf") {
    out = std::numeric_limits<double>::infinity();
  } else if (it->is_string() && *it == "-inf") {
    out = -std::numeric_limits<double>::infinity();
  } else {
    bad(key, "a number");
  }
}

void read(const json& object, const char* key, std::optional<double>& out) {
  if (!object.contains(key)) return;
  double value = 0;
  read(object, key, value);
  out = value;
}

void read(const json& object, const char* key, int& out) {
  auto it = object.find(key);
  if (it == object.end()) return;
  if (!it->is_number_integer()) bad(key, "an integer");
  constexpr auto kMax = std::numeric_limits<int>::max();
  constexpr auto kMin = std::numeric_limits<int>::min();
  const bool fits = it->is_number_unsigned()
                        ? it->get<std::uint64_t>() <= static_cast<std::uint64_t>(kMax)
                        : it->get<std::int64_t>() >= kMin && it->get<std::int64_t>() <= kMax;
  if (!fits) bad(key, "an int");
  out = it->get<int>();
}

void read(const json& object, const char* key, std::int64_t& out) {
  auto it = object.find(key);
  if (it == object.end()) return;
  if (!it->is_number_integer() ||
      (it->is_number_unsigned() &&
       it->get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))) {
    bad(key, "an integer");
  }
  out = it->get<std::int64_t>();
}

void read(const json& object, const char* key, std::uint64_t& out) {
  auto it = object.find(key);
  if (it == object.end()) return;
  if (!it->is_number_unsigned()) bad(key, "an unsigned integer");
  out = it->get<std::uint64_t>();
}

void read(const json& object, const char* key, std::optional<std::uint64_t>& out) {
  if (!object.contains(key)) return;
  std::uint64_t value = 0;
  read(object, key, value);
  out = value;
}

void read(const json& object, const char* key, bool& out) {
  auto it = object.find(key);
  if (it == object.end()) return;
  if (!it->is_boolean()) bad(key, "true or false");
  out = it->get<bool>();
}

std::string text_of(const json& value, const char* key) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_object() && value.contains("bytes") && value["bytes"].is_array()) {
    std::string bytes;
    for (const json& byte : value["bytes"]) {
      if (!byte.is_number_unsigned() || byte.get<std::uint64_t>() > 255) bad(key, "bytes");
      bytes.push_back(static_cast<char>(byte.get<std::uint8_t>()));
    }
    return bytes;
  }
  bad(key, "a string");
}

void read(const json& object, const char* key, std::string& out) {
  auto it = object.find(key);
  if (it == object.end()) return;
  out = text_of(*it, key);
}

template <typename Enum, typename Parse>
void read_enum(const json& object, const char* key, Enum& out, Parse parse) {
  auto it = object.find(key);
  if (it == object.end()) return;
  std::optional<Enum> value;
  if (it->is_string()) value = parse(it->get<std::string>());
  if (!value) bad(key, "a known name");
  out = *value;
}

}  // namespace

std::string encode_spec(const JobSpec& spec) {
  json environment = json::array();
  for (const auto& [name, value] : spec.extra->environment) {
    environment.push_back(json::array({text(name), text(value)}));
  }
  json object = {
      {"nodes", spec.nodes},
      {"min_nodes", spec.min_nodes},
      {"max_nodes", spec.max_nodes},
      {"constraint", to_string(spec.constraint)},
      {"tasks_per_node", spec.tasks_per_node},
      {"walltime", number(spec.walltime)},
      {"power_min_w", number(spec.power_min_w)},
      {"power_max_w", number(spec.power_max_w)},
      {"urgent", spec.urgent},
      {"command", text(spec.command)},
      {"workdir", text(spec.workdir)},
      {"output", text(spec.extra->output)},
      {"environment", std::move(environment)},
  };
  if (spec.extra->mem_bytes != 0) object["mem_bytes"] = spec.extra->mem_bytes;
  // ---- issue 18 item 2: when it may start (absent: the defaults)
  if (!spec.extra->dependency.empty()) object["dependency"] = text(spec.extra->dependency);
  if (spec.extra->begin_time > 0) object["begin_time"] = number(spec.extra->begin_time);
  if (spec.hold) object["hold"] = true;
  // Output and arguments (issue 18 item 3): only when set, so that specs
  // without them encode as before.
  if (!spec.extra->error.empty()) object["error"] = text(spec.extra->error);
  if (!spec.extra->args.empty()) {
    json args = json::array();
    for (const auto& arg : spec.extra->args) args.push_back(text(arg));
    object["args"] = std::move(args);
  }
  // ---- priority (issue 18 item 5): only when set, as above
  if (!spec.extra->account.empty()) object["account"] = text(spec.extra->account);
  if (!spec.qos.empty()) object["qos"] = text(spec.qos);
  if (spec.nice != 0) object["nice"] = spec.nice;
  // Where it may run (issue 18 item 4), likewise.
  const auto names = [&](const char* key, const std::vector<std::string>& list) {
    if (list.empty()) return;
    json out = json::array();
    for (const auto& name : list) out.push_back(text(name));
    object[key] = std::move(out);
  };
  names("nodelist", spec.extra->nodelist);
  names("exclude", spec.extra->exclude);
  if (spec.extra->gpus_per_node != 0) object["gpus_per_node"] = spec.extra->gpus_per_node;
  // ---- job arrays (issue 18 item 1): only for an array's tasks
  if (spec.extra->array_job_id != 0) {
    object["array"] = text(spec.extra->array);
    object["array_job_id"] = spec.extra->array_job_id;
    object["array_task_id"] = spec.extra->array_task_id;
    object["array_throttle"] = spec.extra->array_throttle;
  }
  // ---- tasks (issue 16 item 1): only when not the defaults, so that
  // older specs decode as before (no migration: the spec is one JSON text)
  if (spec.layout->ntasks != 0) object["ntasks"] = spec.layout->ntasks;
  if (spec.layout->nodes_from_tasks) object["nodes_from_tasks"] = true;  // cleared at submission
  if (spec.layout->cpus_per_task != 1) object["cpus_per_task"] = spec.layout->cpus_per_task;
  if (spec.layout->distribution != tasks::Distribution::Block) {
    object["distribution"] = std::string(tasks::to_string(spec.layout->distribution));
  }
  if (spec.layout->cpu_bind != tasks::CpuBind::None)
    object["cpu_bind"] = std::string(tasks::to_string(spec.layout->cpu_bind));
  // ---- partition (issue 20 item 1): absent in older specs (the engine then
  // puts the job in the default partition when it restores it)
  if (!spec.partition.empty()) object["partition"] = text(spec.partition);
  if (spec.layout->cores != 0) object["cores"] = spec.layout->cores;  // issue 20 item 2: --cores
  if (spec.layout->min_cores != 0) object["min_cores"] = spec.layout->min_cores;  // --cores MIN-MAX
  if (spec.layout->max_cores != 0) object["max_cores"] = spec.layout->max_cores;
  return object.dump();
}

void decode_spec(const std::string& source, JobSpec& spec) {
  const json object = parse_object(source, "spec");
  read(object, "nodes", spec.nodes);
  read(object, "min_nodes", spec.min_nodes);
  read(object, "max_nodes", spec.max_nodes);
  read_enum(object, "constraint", spec.constraint, parse_node_constraint);
  read(object, "tasks_per_node", spec.tasks_per_node);
  read(object, "walltime", spec.walltime);
  read(object, "power_min_w", spec.power_min_w);
  read(object, "power_max_w", spec.power_max_w);
  read(object, "urgent", spec.urgent);
  read(object, "command", spec.command);
  read(object, "workdir", spec.workdir);
  read(object, "output", spec.extra.edit().output);
  read(object, "mem_bytes", spec.extra.edit().mem_bytes);
  // ---- issue 18 item 2
  read(object, "dependency", spec.extra.edit().dependency);
  read(object, "begin_time", spec.extra.edit().begin_time);
  read(object, "hold", spec.hold);
  // ---- job arrays (issue 18 item 1)
  read(object, "array", spec.extra.edit().array);
  std::uint64_t array_job_id = 0;  // ids are positive
  read(object, "array_job_id", array_job_id);
  spec.extra.edit().array_job_id = static_cast<JobId>(array_job_id);
  read(object, "array_task_id", spec.extra.edit().array_task_id);
  read(object, "array_throttle", spec.extra.edit().array_throttle);
  // ---- tasks (issue 16 item 1)
  read(object, "ntasks", spec.layout.edit().ntasks);
  read(object, "nodes_from_tasks", spec.layout.edit().nodes_from_tasks);
  read(object, "cpus_per_task", spec.layout.edit().cpus_per_task);
  read_enum(object, "distribution", spec.layout.edit().distribution, tasks::parse_distribution);
  read_enum(object, "cpu_bind", spec.layout.edit().cpu_bind, tasks::parse_cpu_bind);
  read(object, "partition", spec.partition);        // issue 20 item 1
  read(object, "cores", spec.layout.edit().cores);  // issue 20 item 2
  read(object, "min_cores", spec.layout.edit().min_cores);
  read(object, "max_cores", spec.layout.edit().max_cores);
  if (auto it = object.find("environment"); it != object.end()) {
    if (!it->is_array()) bad("environment", "an array of [name, value] pairs");
    spec.extra.edit().environment.clear();
    for (const json& pair : *it) {
      if (!pair.is_array() || pair.size() != 2) bad("environment", "[name, value] pairs");
      spec.extra.edit().environment.emplace_back(text_of(pair[0], "environment"),
                                                 text_of(pair[1], "environment"));
    }
  }
  // Output and arguments (issue 18 item 3).
  if (auto it = object.find("error"); it != object.end())
    spec.extra.edit().error = text_of(*it, "error");
  if (auto it = object.find("args"); it != object.end()) {
    if (!it->is_array()) bad("args", "an array of strings");
    spec.extra.edit().args.clear();
    for (const json& arg : *it) spec.extra.edit().args.push_back(text_of(arg, "args"));
  }
  // ---- priority (issue 18 item 5)
  read(object, "account", spec.extra.edit().account);
  read(object, "qos", spec.qos);
  read(object, "nice", spec.nice);
  // Where it may run (issue 18 item 4).
  for (auto [key, list] : {std::pair{"nodelist", &spec.extra.edit().nodelist},
                           std::pair{"exclude", &spec.extra.edit().exclude}}) {
    auto it = object.find(key);
    if (it == object.end()) continue;
    if (!it->is_array()) bad(key, "an array of node names");
    list->clear();
    for (const json& name : *it) list->push_back(text_of(name, key));
  }
  read(object, "gpus_per_node", spec.extra.edit().gpus_per_node);
  // Written field by field above: a spec that sets none of them keeps no box.
  spec.extra.reset_if_default();
  spec.layout.reset_if_default();
}

std::string encode_progress(const Job& job) {
  json object = {
      {"outcome", to_string(job.outcome)},
      {"expansions", job.run->expansions},
      {"shrinks", job.run->shrinks},
      {"gain", job.run->gain},
      {"requeues", job.run->requeues},
      {"suspensions", job.run->suspensions},
      {"suspended_since", number(job.run->suspended_since)},
      {"limit_extension", number(job.run->limit_extension)},
      {"adapting_since", number(job.run->adapting_since)},
      {"resize_held_until", number(job.run->resize_held_until)},
      {"node_seconds", number(job.node_seconds)},
      {"allocation_since", number(job.allocation_since)},
      {"version", job.version},
  };
  // Unset optionals are left out: absent reads back as unset.
  if (job.run->mtct) object["mtct"] = number(*job.run->mtct);
  if (job.run->power_w) object["power_w"] = number(*job.run->power_w);
  if (job.run->expected_start) object["expected_start"] = number(*job.run->expected_start);
  if (!job.run->end_reason.empty()) object["end_reason"] = text(job.run->end_reason);
  // An invasive partition's job: its core ids per node, in the order of the
  // nodes saved with it (issue 20 item 2).
  if (!job.run->cores.empty()) {
    nlohmann::json cores = nlohmann::json::array();
    for (const NodeCores& entry : job.run->cores) cores.push_back(entry.cores);
    object["cores"] = std::move(cores);
  }
  if (job.run->max_rss_bytes) object["max_rss_bytes"] = *job.run->max_rss_bytes;
  if (job.run->cpu_s) object["cpu_s"] = number(*job.run->cpu_s);
  // ---- issue 18 item 2: a hold outlives a restart (the dependency's state
  // is worked out again from the jobs it names)
  if (job.hold != HoldKind::None) object["hold"] = job.hold == HoldKind::Admin ? "admin" : "user";
  if (job.run->request) {
    object["request"] = {
        {"op", job.run->request->op == ResizeRequest::Op::Expand ? "expand" : "shrink"},
        {"nodes", job.run->request->nodes},
    };
  }
  return object.dump();
}

void decode_progress(const std::string& source, Job& job) {
  const json object = parse_object(source, "progress");
  read_enum(object, "outcome", job.outcome, parse_job_state);
  read(object, "expansions", job.run.edit().expansions);
  read(object, "shrinks", job.run.edit().shrinks);
  read(object, "gain", job.run.edit().gain);
  read(object, "requeues", job.run.edit().requeues);
  read(object, "suspensions", job.run.edit().suspensions);
  read(object, "suspended_since", job.run.edit().suspended_since);
  read(object, "limit_extension", job.run.edit().limit_extension);
  read(object, "adapting_since", job.run.edit().adapting_since);
  read(object, "resize_held_until", job.run.edit().resize_held_until);
  read(object, "node_seconds", job.node_seconds);
  read(object, "allocation_since", job.allocation_since);
  read(object, "version", job.version);
  read(object, "mtct", job.run.edit().mtct);
  read(object, "power_w", job.run.edit().power_w);
  read(object, "expected_start", job.run.edit().expected_start);
  read(object, "end_reason", job.run.edit().end_reason);
  if (const auto it = object.find("cores"); it != object.end()) {
    if (!it->is_array())
      throw CodecError("job " + std::to_string(job.id) + ": cores is not a list");
    for (const auto& entry : *it) {
      NodeCores node_cores;
      node_cores.node = -1;  // the engine pairs entry i with the i-th saved node
      if (!entry.is_array()) {
        throw CodecError("job " + std::to_string(job.id) + ": cores holds a non-list");
      }
      for (const auto& core : entry) {
        if (!core.is_number_integer()) {
          throw CodecError("job " + std::to_string(job.id) + ": a core id is not an integer");
        }
        node_cores.cores.push_back(core.get<int>());
      }
      job.run.edit().cores.push_back(std::move(node_cores));
    }
  }
  read(object, "max_rss_bytes", job.run.edit().max_rss_bytes);
  read(object, "cpu_s", job.run.edit().cpu_s);
  // ---- issue 18 item 2
  read_enum(object, "hold", job.hold, [](const std::string& hold) -> std::optional<HoldKind> {
    if (hold == "user") return HoldKind::User;
    if (hold == "admin") return HoldKind::Admin;
    return std::nullopt;
  });
  if (auto it = object.find("request"); it != object.end()) {
    if (!it->is_object()) bad("request", "an object");
    ResizeRequest request;
    read_enum(*it, "op", request.op, [](const std::string& op) -> std::optional<ResizeRequest::Op> {
      if (op == "expand") return ResizeRequest::Op::Expand;
      if (op == "shrink") return ResizeRequest::Op::Shrink;
      return std::nullopt;
    });
    read(*it, "nodes", request.nodes);
    job.run.edit().request = request;
  }
  // Every field is written above: a job that never ran keeps no box.
  job.run.reset_if_default();
}

std::string encode_strings(const std::vector<std::string>& strings) {
  json array = json::array();
  for (const std::string& s : strings) array.push_back(text(s));
  return array.dump();
}

std::vector<std::string> decode_strings(const std::string& source) {
  const json array = json::parse(source, nullptr, /*allow_exceptions=*/false);
  if (!array.is_array()) throw CodecError("not a JSON array of strings");
  std::vector<std::string> strings;
  strings.reserve(array.size());
  for (const json& value : array) strings.push_back(text_of(value, "array element"));
  return strings;
}

std::string encode_ids(const std::vector<JobId>& ids) { return json(ids).dump(); }

std::string encode_event_fields(const Event& event) {
  json object = json::object();
  if (event.expected_start != 0) object["expected_start"] = number(event.expected_start);
  if (event.lower_w != 0) object["lower_w"] = number(event.lower_w);
  if (event.upper_w != 0) object["upper_w"] = number(event.upper_w);
  if (event.power_w != 0) object["power_w"] = number(event.power_w);
  if (event.pass_s != 0) object["pass_s"] = number(event.pass_s);
  if (event.actions != 0) object["actions"] = event.actions;
  if (!event.reason.empty()) object["reason"] = text(event.reason);
  if (!event.code.empty()) object["code"] = text(event.code);
  if (!event.file.empty()) object["file"] = text(event.file);
  if (event.line != 0) object["line"] = event.line;
  if (!event.user.empty()) object["user"] = text(event.user);
  // issue 20 item 1: partition.state, and a partition's passes and policy events
  if (!event.partition.empty()) object["partition"] = text(event.partition);
  return object.dump();
}

void decode_event_fields(const std::string& source, Event& event) {
  const json object = parse_object(source, "fields");
  read(object, "expected_start", event.expected_start);
  read(object, "lower_w", event.lower_w);
  read(object, "upper_w", event.upper_w);
  read(object, "power_w", event.power_w);
  read(object, "pass_s", event.pass_s);
  read(object, "actions", event.actions);
  read(object, "reason", event.reason);
  read(object, "code", event.code);
  read(object, "file", event.file);
  read(object, "line", event.line);
  read(object, "user", event.user);
  read(object, "partition", event.partition);
}

}  // namespace sched::store
