// Requests from clients (the sched CLI, monitoring tools): each is answered
// once, after the journal has committed what it changed.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "schedd.hpp"
#include "sched/convert/wire_convert.hpp"

namespace sched::daemon {
namespace {

std::set<JobState> parse_states(const std::vector<std::string>& names) {
  std::set<JobState> states;
  for (const std::string& name : names) {
    std::string upper = name;
    std::transform(upper.begin(), upper.end(), upper.begin(), ::toupper);
    const auto state = parse_job_state(upper);
    if (!state) throw proto::ProtoError(proto::code::kInvalid, "unknown job state '" + name + "'");
    states.insert(*state);
  }
  return states;
}

std::string param_text(const ParamValue& value) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, bool>) {
          return v ? "true" : "false";
        } else if constexpr (std::is_same_v<T, std::string>) {
          return v;
        } else {
          return std::to_string(v);
        }
      },
      value);
}

std::string node_state(const Node& node) {
  if (!node.up) return "down";
  if (node.draining) return node.job != 0 ? "draining" : "drain";
  return node.job != 0 ? "alloc" : "idle";
}

}  // namespace

void Daemon::reply_error(zmq::socket_t& socket, const std::string& peer,
                         const proto::Envelope& request, std::string_view code,
                         const std::string& message) {
  outbox_.post(socket, peer, proto::encode_error(request.type, request.seq, code, message));
}

void Daemon::drain_clients() {
  // A bounded batch per loop turn, so agents and timers are never starved.
  for (int i = 0; i < 1000; ++i) {
    bool malformed = false;
    auto routed = proto::receive_routed(clients_, &malformed);
    if (!routed) {
      if (malformed) {
        ++bad_messages_;
        continue;
      }
      return;
    }
    ++messages_;
    proto::Envelope request;
    try {
      request =
          proto::decode(routed->payload.data(), routed->payload.size(), config_.max_message_bytes);
    } catch (const proto::ProtoError& e) {
      ++bad_messages_;
      spdlog::info("client message refused: {}", e.what());
      outbox_.post(clients_, routed->peer, proto::encode_error("error", 0, e.code(), e.what()));
      continue;
    }
    try {
      handle_client(routed->peer, request);
    } catch (const proto::ProtoError& e) {
      if (e.code() == proto::code::kBadField || e.code() == proto::code::kUnknownType) {
        ++bad_messages_;
      }
      reply_error(clients_, routed->peer, request, e.code(), e.what());
    }
  }
}

proto::JobInfo Daemon::info_of(const Job& job, int pending_rank) const {
  // An ended job has given its nodes back: its journal record keeps them.
  if (is_terminal(job.state)) {
    if (auto stored = store_->load_job(job.id)) return job_info(job, stored->nodes);
  }
  return job_info(job, engine_.cluster(), pending_rank);
}

void Daemon::run_step(const std::string& peer, const proto::Envelope& request) {
  const auto body = request.body_as<proto::StepRun>();
  const Job* job = engine_.find_job(body.job);
  if (!job) throw proto::ProtoError(proto::code::kNotFound, "no job " + std::to_string(body.job));
  if (job->state != JobState::Running && job->state != JobState::Adapting) {
    throw proto::ProtoError(proto::code::kConflict, "job " + std::to_string(body.job) + " is " +
                                                        std::string(to_string(job->state)) +
                                                        ", not running");
  }
  if (body.argv.empty()) throw proto::ProtoError(proto::code::kInvalid, "no command to run");
  const std::vector<std::string> job_nodes = node_names(*job);
  const int size = static_cast<int>(job_nodes.size());
  int nodes = body.nodes;
  if (nodes == 0) nodes = body.tasks > 0 ? std::min(size, body.tasks) : size;
  if (nodes < 1 || nodes > size) {
    throw proto::ProtoError(
        proto::code::kInvalid,
        "the job has " + std::to_string(size) + " nodes; cannot run on " + std::to_string(nodes));
  }
  const int tasks = body.tasks > 0 ? body.tasks : nodes * job->spec.tasks_per_node;
  if (tasks < nodes) {
    throw proto::ProtoError(proto::code::kInvalid, std::to_string(tasks) + " tasks cannot use " +
                                                       std::to_string(nodes) + " nodes");
  }
  const std::vector<std::string> step_nodes(job_nodes.begin(), job_nodes.begin() + nodes);
  for (const std::string& node : step_nodes) {
    const AgentState* agent = agents_.find(node);
    if (!agent || !agent->connected) {
      throw proto::ProtoError(proto::code::kUnavailable, "node " + node + " has no agent");
    }
  }
  StepRecord record;
  record.client = peer;
  record.remaining = record.tasks = tasks;
  proto::StepLaunch& launch = record.launch;
  launch.job = job->id;
  launch.step = steps_.next_id(job->id);
  launch.argv = body.argv;
  launch.workdir = body.workdir.empty() ? job->spec.workdir : body.workdir;
  launch.env = body.env;
  launch.job_nodes = job_nodes;
  launch.nodes = step_nodes;
  launch.tasks = tasks;
  launch.job_name = job->spec.name;
  launch.tasks_per_node = job->spec.tasks_per_node;
  launch.power_w = power_estimate(job->spec);
  // Block distribution: consecutive ranks per node, counts differing by one.
  int rank = 0;
  for (int i = 0; i < nodes; ++i) {
    std::vector<int> ranks;
    const int count = tasks / nodes + (i < tasks % nodes ? 1 : 0);
    for (int k = 0; k < count; ++k) ranks.push_back(rank++);
    record.layout.emplace_back(step_nodes[static_cast<std::size_t>(i)], ranks);
  }
  for (const auto& [node, ranks] : record.layout) {
    launch.ranks = ranks;
    agents_.send(node, proto::type::kStepLaunch, launch);
  }
  const std::int64_t step = launch.step;
  steps_.add(job->id, step, std::move(record));
  reply(clients_, peer, request, proto::StepStarted{step, step_nodes, tasks});
}

void Daemon::handle_client(const std::string& peer, const proto::Envelope& request) {
  namespace type = proto::type;
  const std::string& t = request.type;
  if (t == type::kSubmit) {
    const auto body = request.body_as<proto::SubmitRequest>();
    JobSpec spec;
    if (auto error = spec_from_wire(body.job, spec)) {
      throw proto::ProtoError(proto::code::kInvalid, *error);
    }
    if (spec.workdir.empty() || !std::filesystem::path(spec.workdir).is_absolute()) {
      throw proto::ProtoError(proto::code::kInvalid,
                              "workdir must be an absolute path (got '" + spec.workdir + "')");
    }
    if (spec.command.empty()) throw proto::ProtoError(proto::code::kInvalid, "the script is empty");
    auto outcome = engine_.submit(std::move(spec));
    if (!outcome.ok()) throw proto::ProtoError(proto::code::kInvalid, outcome.error);
    ++submitted_;
    reply(clients_, peer, request, proto::SubmitReply{*outcome.value});
  } else if (t == type::kCancel) {
    const auto body = request.body_as<proto::JobRef>();
    const Job* job = engine_.find_job(body.id);
    if (!job) {
      const bool ended = store_->load_job(body.id).has_value();
      throw proto::ProtoError(ended ? proto::code::kConflict : proto::code::kNotFound,
                              ended ? "job " + std::to_string(body.id) + " has already ended"
                                    : "no job " + std::to_string(body.id));
    }
    if (auto error = engine_.cancel(body.id)) {
      throw proto::ProtoError(proto::code::kConflict, *error);
    }
    reply(clients_, peer, request, proto::Empty{});
  } else if (t == type::kJobsQuery) {
    const auto query = request.body_as<proto::JobsQuery>();
    const std::set<JobState> states =
        query.states ? parse_states(*query.states) : std::set<JobState>{};
    std::map<JobId, int> rank;
    int r = 0;
    for (const Job* job : engine_.pending_jobs()) rank[job->id] = r++;
    std::set<JobId> ids;
    if (query.ids) ids.insert(query.ids->begin(), query.ids->end());
    proto::JobList list;
    for (const auto& [id, job] : engine_.jobs()) {
      if (states.empty() ? is_terminal(job->state) : !states.count(job->state)) continue;
      if (query.user && job->spec.user != *query.user) continue;
      if (!ids.empty() && !ids.count(id)) continue;
      auto it = rank.find(id);
      list.jobs.push_back(info_of(*job, it == rank.end() ? -1 : it->second));
    }
    // Running first by start, then pending in priority order (squeue's habit).
    std::sort(list.jobs.begin(), list.jobs.end(),
              [&](const proto::JobInfo& a, const proto::JobInfo& b) {
                const bool pa = a.state == "PENDING";
                const bool pb = b.state == "PENDING";
                if (pa != pb) return !pa;
                if (pa) return rank[a.id] < rank[b.id];
                return a.id < b.id;
              });
    reply(clients_, peer, request, list);
  } else if (t == type::kJobShow) {
    const auto body = request.body_as<proto::JobRef>();
    if (const Job* job = engine_.find_job(body.id)) {
      int rank = -1;
      int r = 0;
      for (const Job* pending : engine_.pending_jobs()) {
        if (pending->id == body.id) rank = r;
        ++r;
      }
      reply(clients_, peer, request, proto::JobReply{info_of(*job, rank)});
    } else if (auto stored = store_->load_job(body.id)) {
      reply(clients_, peer, request, proto::JobReply{job_info(stored->job, stored->nodes)});
    } else {
      throw proto::ProtoError(proto::code::kNotFound, "no job " + std::to_string(body.id));
    }
  } else if (t == type::kNodesQuery) {
    proto::NodeList list;
    std::map<NodeIndex, std::vector<std::int64_t>> jobs_on;
    for (const Node& node : engine_.cluster().nodes()) {
      proto::NodeInfo info;
      info.name = node.name;
      info.state = node_state(node);
      info.cores = node.cores;
      if (node.job != 0) info.jobs.push_back(node.job);
      if (auto it = node_reasons_.find(node.name); it != node_reasons_.end()) {
        info.reason = it->second;
      }
      if (const AgentState* agent = agents_.find(node.name)) {
        info.hostname = agent->info.hostname;
        info.sockets = agent->info.sockets;
        info.pus = agent->info.pus;
        info.memory_bytes = agent->info.memory_bytes;
        info.gpus = agent->info.gpus;
        info.power_w = agent->power_w;
        info.last_heartbeat = agent->last_seen;
      }
      list.nodes.push_back(std::move(info));
    }
    reply(clients_, peer, request, list);
  } else if (t == type::kNodeUpdate) {
    const auto body = request.body_as<proto::NodeUpdate>();
    if (body.state != "drain" && body.state != "resume") {
      throw proto::ProtoError(proto::code::kInvalid,
                              "state must be drain or resume, not '" + body.state + "'");
    }
    if (auto error = engine_.set_node_draining(body.name, body.state == "drain")) {
      throw proto::ProtoError(proto::code::kNotFound, *error);
    }
    if (body.state == "drain") {
      node_reasons_[body.name] = body.reason.value_or("drained by an administrator");
    } else {
      node_reasons_.erase(body.name);
    }
    reply(clients_, peer, request, proto::Empty{});
  } else if (t == type::kPolicyInfo) {
    proto::PolicyInfoReply info;
    if (const auto& current = policy_->current()) info.name = current->name();
    info.path = policy_->path();
    info.reloads = policy_->reloads();
    info.failed_reloads = policy_->failed_reloads();
    for (const auto& [key, value] : config_.params) info.params[key] = param_text(value);
    reply(clients_, peer, request, info);
  } else if (t == type::kPolicyReload) {
    if (auto error = policy_->reload()) throw proto::ProtoError(proto::code::kInvalid, *error);
    proto::PolicyInfoReply info;
    info.name = policy_->current()->name();
    info.path = policy_->path();
    info.reloads = policy_->reloads();
    info.failed_reloads = policy_->failed_reloads();
    reply(clients_, peer, request, info);
  } else if (t == type::kCorridorSet) {
    const auto body = request.body_as<proto::Corridor>();
    if (body.lower_w < 0 || body.upper_w < body.lower_w) {
      throw proto::ProtoError(proto::code::kInvalid, "a corridor needs 0 <= lower <= upper (got " +
                                                         std::to_string(body.lower_w) + ", " +
                                                         std::to_string(body.upper_w) + ")");
    }
    engine_.set_corridor(body.lower_w, body.upper_w);
    reply(clients_, peer, request, proto::Empty{});
  } else if (t == type::kCorridorShow) {
    const PowerView power = engine_.power();
    proto::Corridor body;
    body.lower_w = power.lower_w;
    body.upper_w = power.upper_w;
    body.current_w = power.current_w;
    reply(clients_, peer, request, body);
  } else if (t == type::kStats) {
    const PassStats& s = engine_.stats();
    proto::StatsReply stats;
    stats.server_time = clock_.now();
    stats.uptime_s = clock_.now() - started_at_;
    stats.passes = s.passes;
    stats.failed_passes = s.failed;
    stats.actions = s.actions;
    stats.refusals = s.refusals;
    stats.last_pass_s = s.last_s;
    stats.mean_pass_s = s.passes ? s.total_s / static_cast<double>(s.passes) : 0;
    stats.max_pass_s = s.max_s;
    stats.pending = engine_.pending_queue().size();
    stats.running = engine_.running_jobs_count();
    stats.jobs_submitted = submitted_;
    stats.nodes = static_cast<std::uint64_t>(engine_.cluster().size());
    for (const Node& node : engine_.cluster().nodes()) stats.nodes_up += node.up ? 1 : 0;
    stats.messages = messages_;
    stats.bad_messages = bad_messages_;
    stats.event_endpoint = event_endpoint_;
    reply(clients_, peer, request, stats);
  } else if (t == type::kStepRun) {
    run_step(peer, request);
  } else if (t == type::kStepAttach) {
    const auto body = request.body_as<proto::StepRef>();
    StepRecord* step = steps_.find(body.job, body.step);
    if (!step) {
      throw proto::ProtoError(proto::code::kNotFound, "job " + std::to_string(body.job) +
                                                          " has no step " +
                                                          std::to_string(body.step) + " running");
    }
    step->client = peer;  // a new connection after a restart of either side
    reply(clients_, peer, request, proto::Empty{});
  } else if (t == type::kAcct) {
    const auto query = request.body_as<proto::AcctQuery>();
    AcctQuery q;
    q.user = query.user;
    if (query.states) {
      for (JobState s : parse_states(*query.states)) q.states.push_back(s);
    }
    q.since = query.since;
    q.until = query.until;
    if (query.ids) q.ids = *query.ids;
    if (query.limit) q.limit = static_cast<std::size_t>(std::max<std::int64_t>(*query.limit, 1));
    proto::JobList list;
    for (const StoredJob& stored : store_->finished_jobs(q)) {
      list.jobs.push_back(job_info(stored.job, stored.nodes));
    }
    reply(clients_, peer, request, list);
  } else {
    throw proto::ProtoError(proto::code::kUnknownType, "unknown message type '" + t + "'");
  }
}

}  // namespace sched::daemon
