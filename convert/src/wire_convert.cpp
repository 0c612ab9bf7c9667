#include "sched/convert/wire_convert.hpp"

#include <cmath>
#include <cstring>
#include <limits>

#include "sched/job_array.hpp"
#include "sched/proto/text.hpp"

namespace sched::convert {

namespace {

// The fields a job spec and its wire form share, each pair once: `copy(spec
// field, wire field)` copies one way or the other.
template <class Spec, class Msg, class Copy>
void shared_spec_fields(Spec& spec, Msg& msg, Copy copy) {
  copy(spec.name, msg.name);
  copy(spec.user, msg.user);
  copy(spec.nodes, msg.nodes);
  copy(spec.min_nodes, msg.min_nodes);
  copy(spec.max_nodes, msg.max_nodes);
  copy(spec.tasks_per_node, msg.tasks_per_node);
  copy(spec.walltime, msg.walltime);
  copy(spec.power_min_w, msg.power_min_w);
  copy(spec.power_max_w, msg.power_max_w);
  copy(spec.urgent, msg.urgent);
  copy(spec.command, msg.script);
  copy(spec.workdir, msg.workdir);
}

// ---- tasks (issue 16 item 1): only what differs from the defaults, so
// that other jobs' messages stay as they were.
template <class Msg>
void task_fields_to_wire(const JobSpec& spec, Msg& out) {
  if (spec.layout->ntasks != 0) out.ntasks = spec.layout->ntasks;
  if (spec.layout->cpus_per_task != 1) out.cpus_per_task = spec.layout->cpus_per_task;
  if (spec.layout->distribution != tasks::Distribution::Block) {
    out.distribution = std::string(tasks::to_string(spec.layout->distribution));
  }
  if constexpr (requires { out.cores; }) {
    if (spec.layout->cores > 0) out.cores = spec.layout->cores;  // issue 20 item 2
  }
  if constexpr (requires { out.min_cores; }) {  // a malleable job's bounds by cores
    if (spec.layout->min_cores > 0 && spec.layout->min_cores != spec.layout->cores)
      out.min_cores = spec.layout->min_cores;
    if (spec.layout->max_cores > 0 && spec.layout->max_cores != spec.layout->cores)
      out.max_cores = spec.layout->max_cores;
  }
  if constexpr (requires { out.cpu_bind; }) {
    if (spec.layout->cpu_bind != tasks::CpuBind::None) {
      out.cpu_bind = std::string(tasks::to_string(spec.layout->cpu_bind));
    }
  }
}

}  // namespace

proto::JobSpecMsg spec_to_wire(const JobSpec& spec) {
  proto::JobSpecMsg out;
  shared_spec_fields(spec, out, [](const auto& from, auto& to) { to = from; });
  out.kind = std::string(to_string(spec.kind));
  out.node_constraint = std::string(to_string(spec.constraint));
  for (const auto& [name, value] : spec.extra->environment) out.env[name] = value;
  if (!spec.extra->output.empty()) out.output = spec.extra->output;
  if (spec.extra->mem_bytes != 0) out.mem_bytes = static_cast<std::int64_t>(spec.extra->mem_bytes);
  if (!spec.partition.empty()) out.partition = spec.partition;  // issue 20 item 1
  // ---- issue 18 item 2
  if (!spec.extra->dependency.empty()) out.dependency = spec.extra->dependency;
  if (spec.extra->begin_time > 0) out.begin_time = spec.extra->begin_time;
  if (spec.hold) out.hold = true;
  if (!spec.extra->error.empty()) out.error = spec.extra->error;
  if (!spec.extra->args.empty()) out.args = spec.extra->args;
  // ---- priority (issue 18 item 5)
  if (!spec.extra->account.empty()) out.account = spec.extra->account;
  if (!spec.qos.empty()) out.qos = spec.qos;
  if (spec.nice != 0) out.nice = spec.nice;
  // ---- issue 18 item 4
  if (!spec.extra->nodelist.empty()) out.nodelist = spec.extra->nodelist;
  if (!spec.extra->exclude.empty()) out.exclude = spec.extra->exclude;
  if (spec.extra->gpus_per_node != 0) out.gpus_per_node = spec.extra->gpus_per_node;
  // ---- job arrays (issue 18 item 1)
  if (!spec.extra->array.empty()) out.array = spec.extra->array;
  task_fields_to_wire(spec, out);
  if (spec.layout->nodes_from_tasks) out.nodes_from_tasks = true;
  return out;
}

namespace {

// What is wrong with one text field: too long, not UTF-8, or (unless
// `nul_ok`) a NUL byte, which C strings (paths, the environment) cannot hold.
std::optional<std::string> text_error(const std::string& field, const std::string& text,
                                      std::size_t max_bytes, bool nul_ok = false) {
  if (text.size() > max_bytes) {
    return field + ": " + std::to_string(text.size()) + " bytes, over the limit of " +
           std::to_string(max_bytes);
  }
  if (!proto::valid_utf8(text)) return field + ": not valid UTF-8 ('" + proto::excerpt(text) + "')";
  if (!nul_ok && text.find('\0') != std::string::npos) {
    return field + ": holds a NUL byte ('" + proto::excerpt(text) + "')";
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> check_spec_text(const proto::JobSpecMsg& in) {
  using L = SpecTextLimits;
  for (auto error :
       {text_error("job.name", in.name, L::kName), text_error("job.user", in.user, L::kUser),
        text_error("job.script", in.script, L::kScript, /*nul_ok=*/true),
        text_error("job.workdir", in.workdir, L::kPath),
        in.output ? text_error("job.output", *in.output, L::kPath) : std::nullopt,
        in.error ? text_error("job.error", *in.error, L::kPath) : std::nullopt,
        in.account ? text_error("job.account", *in.account, L::kName) : std::nullopt,
        in.qos ? text_error("job.qos", *in.qos, L::kName) : std::nullopt}) {
    if (error) return error;
  }
  if (in.args) {
    if (in.args->size() > L::kArgs) {
      return "job.args: " + std::to_string(in.args->size()) + " arguments, over the limit of " +
             std::to_string(L::kArgs);
    }
    std::size_t args_total = 0;
    for (std::size_t i = 0; i < in.args->size(); ++i) {
      const std::string& arg = (*in.args)[i];
      if (auto error = text_error("job.args[" + std::to_string(i) + "]", arg, L::kEnvValue)) {
        return error;
      }
      args_total += arg.size();
    }
    if (args_total > L::kArgsTotal) {
      return "job.args: " + std::to_string(args_total) + " bytes in all, over the limit of " +
             std::to_string(L::kArgsTotal);
    }
  }
  for (const auto* names : {&in.nodelist, &in.exclude}) {
    if (!*names) continue;
    const char* field = names == &in.nodelist ? "job.nodelist" : "job.exclude";
    if ((*names)->size() > L::kArgs) {
      return std::string(field) + ": " + std::to_string((*names)->size()) +
             " nodes, over the limit of " + std::to_string(L::kArgs);
    }
    for (const std::string& name : **names) {
      if (auto error = text_error(field, name, L::kName)) return error;
    }
  }
  if (in.env.size() > L::kEnvVars) {
    return "job.env: " + std::to_string(in.env.size()) + " variables, over the limit of " +
           std::to_string(L::kEnvVars);
  }
  std::size_t total = 0;
  for (const auto& [name, value] : in.env) {
    if (auto error = text_error("job.env name", name, L::kEnvName)) return error;
    const std::string field = "job.env." + name;
    if (name.empty() || name.find('=') != std::string::npos) {
      return "job.env: '" + proto::excerpt(name) + "' is not a variable name (empty or with '=')";
    }
    if (auto error = text_error(field, value, L::kEnvValue)) return error;
    total += name.size() + value.size();
  }
  if (total > L::kEnvTotal) {
    return "job.env: " + std::to_string(total) + " bytes in all, over the limit of " +
           std::to_string(L::kEnvTotal);
  }
  return std::nullopt;
}

std::optional<std::string> spec_from_wire(const proto::JobSpecMsg& in, JobSpec& out) {
  if (auto error = check_spec_text(in)) return error;
  const auto kind = parse_job_kind(in.kind);
  if (!kind) {
    return "unknown kind '" + proto::excerpt(in.kind) +
           "' (rigid, moldable, malleable or evolving)";
  }
  const auto constraint = parse_node_constraint(in.node_constraint);
  if (!constraint) {
    return "unknown node constraint '" + proto::excerpt(in.node_constraint) +
           "' (none, pof2, even, odd or ncube)";
  }
  if (in.mem_bytes && *in.mem_bytes < 0) {
    return "job.mem_bytes: must not be negative (got " + std::to_string(*in.mem_bytes) + ")";
  }
  // ---- issue 18 item 2
  if (in.dependency) {
    if (auto error = text_error("job.dependency", *in.dependency, SpecTextLimits::kPath)) {
      return error;
    }
  }
  // ---- job arrays (issue 18 item 1): the engine parses it at submit
  if (in.array) {
    if (auto error = text_error("job.array", *in.array, SpecTextLimits::kPath)) return error;
  }
  // ---- partition (issue 20 item 1): the engine says whether it exists
  if (in.partition) {
    if (auto error = text_error("job.partition", *in.partition, SpecTextLimits::kPath)) {
      return error;
    }
  }
  if (in.begin_time && !(std::isfinite(*in.begin_time) && *in.begin_time >= 0)) {
    return "job.begin_time: must be a time, not negative (got " + std::to_string(*in.begin_time) +
           ")";
  }
  // ---- tasks (issue 16 item 1): the engine checks the counts at submit
  std::optional<tasks::Distribution> distribution = tasks::Distribution::Block;
  if (in.distribution) {
    distribution = tasks::parse_distribution(*in.distribution);
    if (!distribution) {
      return "job.distribution: '" + proto::excerpt(*in.distribution) + "' is not block or cyclic";
    }
  }
  std::optional<tasks::CpuBind> cpu_bind = tasks::CpuBind::None;
  if (in.cpu_bind) {
    cpu_bind = tasks::parse_cpu_bind(*in.cpu_bind);
    if (!cpu_bind)
      return "job.cpu_bind: '" + proto::excerpt(*in.cpu_bind) + "' is not none or cores";
  }
  out = JobSpec{};
  shared_spec_fields(out, in, [](auto& to, const auto& from) { to = from; });
  out.layout.edit().ntasks = in.ntasks.value_or(0);
  out.layout.edit().cpus_per_task = in.cpus_per_task.value_or(1);
  if (in.cores && *in.cores < 1) return "job.cores: must be at least 1";
  out.layout.edit().cores = in.cores.value_or(0);
  if ((in.min_cores && *in.min_cores < 1) || (in.max_cores && *in.max_cores < 1)) {
    return "job.min_cores, job.max_cores: must be at least 1";
  }
  out.layout.edit().min_cores = in.min_cores.value_or(0);
  out.layout.edit().max_cores = in.max_cores.value_or(0);
  out.layout.edit().distribution = *distribution;
  out.layout.edit().cpu_bind = *cpu_bind;
  out.layout.edit().nodes_from_tasks = in.nodes_from_tasks.value_or(false);
  out.kind = *kind;
  out.constraint = *constraint;
  out.extra.edit().output = in.output.value_or("");
  out.extra.edit().mem_bytes = static_cast<std::uint64_t>(in.mem_bytes.value_or(0));
  out.partition = in.partition.value_or("");
  // ---- issue 18 item 2 (the engine parses the dependency at submit)
  out.extra.edit().dependency = in.dependency.value_or("");
  out.extra.edit().begin_time = in.begin_time.value_or(0);
  out.hold = in.hold.value_or(false);
  out.extra.edit().error = in.error.value_or("");
  out.extra.edit().args = in.args.value_or(std::vector<std::string>{});
  // ---- priority (issue 18 item 5): the engine checks the QOS name and the
  // nice range, schedd who may use a negative nice.
  out.extra.edit().account = in.account.value_or("");
  out.qos = in.qos.value_or("");
  out.nice = in.nice.value_or(0);
  // ---- issue 18 item 4 (the engine checks the names against the cluster)
  out.extra.edit().nodelist = in.nodelist.value_or(std::vector<std::string>{});
  out.extra.edit().exclude = in.exclude.value_or(std::vector<std::string>{});
  out.extra.edit().gpus_per_node = in.gpus_per_node.value_or(0);
  // ---- job arrays (issue 18 item 1)
  out.extra.edit().array = in.array.value_or("");
  for (const auto& [name, value] : in.env) out.extra.edit().environment.emplace_back(name, value);
  // Every field is written above: a spec that sets none of the rare ones keeps no box.
  out.extra.reset_if_default();
  out.layout.reset_if_default();
  return std::nullopt;
}

std::vector<std::string> node_names(const Job& job, const Cluster& cluster) {
  std::vector<std::string> names;
  for (NodeIndex n : job.allocation) names.push_back(cluster.node(n).name);
  return names;
}

std::map<std::string, std::vector<int>> core_ids(const Job& job, const Cluster& cluster) {
  std::map<std::string, std::vector<int>> ids;
  for (const NodeCores& nc : job.run->cores) ids[cluster.node(nc.node).name] = nc.cores;
  return ids;
}

proto::JobLaunch job_launch(const Job& job, const Cluster& cluster) {
  proto::JobLaunch launch;
  launch.job = job.id;
  launch.name = job.spec.name;
  launch.user = job.spec.user;
  launch.script = job.spec.command;
  launch.workdir = job.spec.workdir;
  launch.output = output_path(job, cluster.node(job.allocation.front()).name);
  launch.error = error_path(job, cluster.node(job.allocation.front()).name);
  if (!job.spec.extra->args.empty()) launch.args = job.spec.extra->args;
  for (const auto& [name, value] : job.spec.extra->environment) launch.env[name] = value;
  launch.nodes = node_names(job, cluster);
  launch.tasks_per_node = job.spec.tasks_per_node;
  launch.power_w = power_estimate(job.spec);
  launch.array = array_task_msg(job.spec);  // ---- job arrays (issue 18 item 1)
  if (job.spec.extra->mem_bytes != 0)
    launch.mem_bytes = static_cast<std::int64_t>(job.spec.extra->mem_bytes);
  if (job.spec.extra->gpus_per_node > 0) launch.gpus = job.spec.extra->gpus_per_node;
  task_fields_to_wire(job.spec, launch);
  if (!job.run->cores.empty()) launch.core_ids = core_ids(job, cluster);
  return launch;
}

std::optional<proto::ArrayTaskMsg> array_task_msg(const JobSpec& spec) {
  if (spec.extra->array_job_id == 0) return std::nullopt;
  proto::ArrayTaskMsg array;
  array.job_id = spec.extra->array_job_id;
  array.task_id = spec.extra->array_task_id;
  if (auto parsed = parse_job_array(spec.extra->array, std::numeric_limits<int>::max());
      parsed.ok()) {
    array.count = parsed->count();
    array.min = parsed->min();
    array.max = parsed->max();
    array.step = parsed->step;
  }
  return array;
}

double power_estimate(const JobSpec& spec) {
  if (spec.power_min_w > 0 && spec.power_max_w > 0)
    return (spec.power_min_w + spec.power_max_w) / 2;
  return spec.power_min_w > 0 ? spec.power_min_w : spec.power_max_w;
}

namespace {

OutputNames output_names(const Job& job, const std::string& leader) {
  OutputNames names;
  names.job = job.id;
  names.name = job.spec.name;
  names.user = job.spec.user;
  names.node = leader;
  // ---- job arrays (issue 18 item 1)
  if (job.spec.extra->array_job_id != 0) {
    names.array_master = job.spec.extra->array_job_id;
    names.array_index = static_cast<std::uint32_t>(job.spec.extra->array_task_id);
  }
  return names;
}

}  // namespace

std::string output_path(const Job& job, const std::string& leader) {
  if (!job.spec.extra->output.empty()) {
    return expand_output_pattern(job.spec.extra->output, output_names(job, leader));
  }
  std::string dir = job.spec.workdir.empty() ? "." : job.spec.workdir;
  if (dir.back() != '/') dir += '/';
  return dir + "sched-" + std::to_string(job.id) + ".out";
}

std::optional<std::string> error_path(const Job& job, const std::string& leader) {
  if (job.spec.extra->error.empty()) return std::nullopt;
  return expand_output_pattern(job.spec.extra->error, output_names(job, leader));
}

namespace {

proto::JobInfo common_info(const Job& job, const std::string& leader) {
  proto::JobInfo info;
  info.id = job.id;
  info.name = job.spec.name;
  info.user = job.spec.user;
  info.kind = std::string(to_string(job.spec.kind));
  info.state = std::string(to_string(job.state));
  info.nodes = job.allocation.empty() ? job.spec.nodes : job.size();
  info.req_nodes = job.spec.nodes;
  info.min_nodes = job.spec.min_nodes;
  info.max_nodes = job.spec.max_nodes;
  info.node_constraint = std::string(to_string(job.spec.constraint));
  if (!job.spec.partition.empty()) info.partition = job.spec.partition;  // issue 20 item 1
  info.tasks_per_node = job.spec.tasks_per_node;
  info.walltime = job.spec.walltime;
  info.urgent = job.spec.urgent;
  info.submit_time = job.submit_time;
  if (job.start_time >= 0) info.start_time = job.start_time;
  if (job.end_time >= 0) info.end_time = job.end_time;
  if (job.est_end() >= 0 && !is_terminal(job.state)) info.est_end = job.est_end();
  if (job.state == JobState::Pending) info.expected_start = job.run->expected_start;
  if (is_terminal(job.state) && job.state != JobState::Cancelled)
    info.exit_status = job.exit_status;
  if (job.state == JobState::Cancelled && job.start_time >= 0) info.exit_status = job.exit_status;
  info.expansions = job.run->expansions;
  info.shrinks = job.run->shrinks;
  info.requeues = job.run->requeues;
  info.mtct = job.run->mtct;
  info.power_w = job.run->power_w;
  if (job.spec.power_min_w > 0) info.power_min_w = job.spec.power_min_w;
  if (job.spec.power_max_w > 0) info.power_max_w = job.spec.power_max_w;
  info.workdir = job.spec.workdir;
  info.output = output_path(job, leader);
  info.error = error_path(job, leader);
  if (job.spec.extra->mem_bytes != 0)
    info.mem_bytes = static_cast<std::int64_t>(job.spec.extra->mem_bytes);
  if (job.run->max_rss_bytes)
    info.max_rss_bytes = static_cast<std::int64_t>(*job.run->max_rss_bytes);
  info.cpu_s = job.run->cpu_s;
  if (is_terminal(job.state)) {
    info.reason = job.run->end_reason;
    // A signal says enough by itself (the engine records no words for it).
    if (info.reason.empty() && job.state == JobState::Failed && job.exit_status < 0) {
      const int sig = -job.exit_status;
      const char* name = sigabbrev_np(sig);
      info.reason = "killed by signal " + std::to_string(sig) +
                    (name != nullptr ? " (SIG" + std::string(name) + ")" : std::string());
    }
  }
  // ---- issue 18 item 2
  if (!job.spec.extra->dependency.empty()) info.dependency = job.spec.extra->dependency;
  if (job.spec.extra->begin_time > 0) info.begin_time = job.spec.extra->begin_time;
  // ---- priority (issue 18 item 5)
  if (!job.spec.extra->account.empty()) info.account = job.spec.extra->account;
  if (!job.spec.qos.empty()) info.qos = job.spec.qos;
  if (job.spec.nice != 0) info.nice = job.spec.nice;
  if (job.state == JobState::Pending) {
    info.priority = job.priority;
    info.factors = proto::PriorityFactorsMsg{job.weighted.age, job.weighted.fairshare,
                                             job.weighted.jobsize, job.weighted.qos};
  }
  // ---- issue 18 item 4
  if (!job.spec.extra->nodelist.empty()) info.req_nodelist = job.spec.extra->nodelist;
  if (!job.spec.extra->exclude.empty()) info.exc_nodelist = job.spec.extra->exclude;
  if (job.spec.extra->gpus_per_node > 0) info.gpus_per_node = job.spec.extra->gpus_per_node;
  // ---- job arrays (issue 18 item 1)
  if (job.spec.extra->array_job_id != 0) {
    info.array_job_id = job.spec.extra->array_job_id;
    info.array_task_id = job.spec.extra->array_task_id;
    info.array = job.spec.extra->array;
  }
  task_fields_to_wire(job.spec, info);
  return info;
}

}  // namespace

proto::JobInfo job_info(const Job& job, const Cluster& cluster, int pending_rank) {
  proto::JobInfo info = common_info(
      job, job.allocation.empty() ? std::string() : cluster.node(job.allocation.front()).name);
  info.nodelist = node_names(job, cluster);
  if (!job.run->cores.empty()) info.core_ids = core_ids(job, cluster);
  if (job.state == JobState::Pending) {
    // Slurm's reasons: the head waits for nodes, the others for their turn.
    info.reason = pending_rank == 0 ? "Resources" : "Priority";
    if (job.run->requeues > 0 && pending_rank != 0) info.reason = "Requeued";
    // Not offered to the policy at all: held, or waiting for a dependency or its begin time.
    if (const std::string_view why = waiting_reason(job); !why.empty()) info.reason = why;
  }
  return info;
}

proto::JobInfo job_info(const Job& job, const std::vector<std::string>& nodes) {
  proto::JobInfo info = common_info(job, nodes.empty() ? std::string() : nodes.front());
  info.nodelist = nodes;
  // An ended job's size is where it last ran (a malleable one may have ended
  // at another size than it asked for).
  if (!nodes.empty()) info.nodes = static_cast<int>(nodes.size());
  return info;
}

proto::EventMsg event_msg(const Event& event) {
  proto::EventMsg msg;
  msg.seq = event.seq;
  msg.time = event.time;
  msg.topic = std::string(topic(event.type));
  if (event.job != 0) {
    msg.job = event.job;
    msg.from = std::string(to_string(event.from));
    msg.state = std::string(to_string(event.to));
  }
  if (event.nodes != 0 || event.job != 0) msg.nodes = event.nodes;
  // Each topic's own keys (docs/protocol.md §9): present whenever the topic has them.
  switch (event.type) {
    case EventType::JobAdapting:
    case EventType::JobResized:
    case EventType::JobRequest:
      msg.prev_nodes = event.prev_nodes;
      break;
    case EventType::JobReserved:
      msg.expected_start = event.expected_start;
      break;
    case EventType::PowerCorridor:
      msg.lower_w = event.lower_w;
      msg.upper_w = event.upper_w;
      break;
    case EventType::PowerViolation:
      msg.power_w = event.power_w;
      msg.lower_w = event.lower_w;
      msg.upper_w = event.upper_w;
      msg.reason = event.reason;
      if (!event.message.empty()) msg.message = event.message;
      break;
    case EventType::SchedPass:
      msg.pass_s = event.pass_s;
      msg.actions = event.actions;
      msg.reason = event.reason;
      break;
    case EventType::PolicyError:
    case EventType::PolicyReverted:
      if (!event.code.empty()) msg.code = event.code;
      if (!event.file.empty()) msg.file = event.file;
      if (event.line > 0) msg.line = event.line;
      break;
    case EventType::AuthDenied:
      if (!event.user.empty()) msg.user = event.user;
      if (!event.reason.empty()) msg.reason = event.reason;
      if (!event.code.empty()) msg.code = event.code;
      break;
    case EventType::ResizeRequested:
    case EventType::ResizePending:
    case EventType::ResizeGranted:
    case EventType::ResizeRefused:
    case EventType::ResizeExpired:
      msg.prev_nodes = event.prev_nodes;
      if (!event.user.empty()) msg.user = event.user;
      if (!event.reason.empty()) msg.reason = event.reason;
      if (!event.code.empty()) msg.code = event.code;
      break;
    default:
      break;
  }
  if (!event.node.empty()) msg.node = event.node;
  if (!event.message.empty()) msg.message = event.message;
  // partition.state, and a partition's policy.* and sched.pass (issue 20).
  if (!event.partition.empty()) msg.partition = event.partition;
  if (event.type == EventType::PartitionState && !event.code.empty()) msg.code = event.code;
  return msg;
}

}  // namespace sched::convert
