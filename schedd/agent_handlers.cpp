// Messages from node agents: registration (and re-adoption of running jobs
// after a restart), heartbeats, and what became of the processes the engine
// asked them to run.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <csignal>
#include <set>

#include "schedd.hpp"

namespace sched::daemon {

void Daemon::drain_agents() {
  for (int i = 0; i < 1000; ++i) {
    bool malformed = false;
    auto routed = proto::receive_routed(agents_socket_, &malformed);
    if (!routed) {
      if (malformed) {
        ++bad_messages_;
        continue;
      }
      return;
    }
    ++messages_;
    proto::Envelope message;
    try {
      message =
          proto::decode(routed->payload.data(), routed->payload.size(), config_.max_message_bytes);
    } catch (const proto::ProtoError& e) {
      ++bad_messages_;
      spdlog::warn("agent message refused: {}", e.what());
      outbox_.post(agents_socket_, routed->peer,
                   proto::encode_error("error", 0, e.code(), e.what()));
      continue;
    }
    if (message.is_reply()) continue;  // agents answer nothing the engine asked
    try {
      handle_agent(routed->peer, message);
    } catch (const proto::ProtoError& e) {
      ++bad_messages_;
      spdlog::warn("agent message {} refused: {}", message.type, e.what());
      reply_error(agents_socket_, routed->peer, message, e.code(), e.what());
    }
  }
}

void Daemon::handle_agent(const std::string& peer, const proto::Envelope& message) {
  namespace type = proto::type;
  const std::string& t = message.type;
  if (t == type::kAgentRegister) {
    on_register(peer, message.body_as<proto::AgentRegister>(), message.seq);
    return;
  }
  // Everything else comes from a registered agent, through its own peer.
  auto from_node = [&](const std::string& node) -> AgentState& {
    AgentState* agent = agents_.find(node);
    if (!agent || !agent->connected || agent->peer != peer) {
      throw proto::ProtoError(proto::code::kNotFound,
                              "node " + node + " is not registered from this agent");
    }
    agent->last_seen = clock_.now();
    return *agent;
  };
  if (t == type::kAgentHeartbeat) {
    const auto body = message.body_as<proto::AgentHeartbeat>();
    AgentState& agent = from_node(body.node);
    agent.load = body.load;
    agent.power_w = body.power_w;
    reply(agents_socket_, peer, message, proto::Empty{});
  } else if (t == type::kTaskStarted) {
    const auto body = message.body_as<proto::TaskStarted>();
    from_node(body.node);
    engine_.job_started(body.job);
    reply(agents_socket_, peer, message, proto::Empty{});
  } else if (t == type::kTaskExited) {
    const auto body = message.body_as<proto::TaskExited>();
    from_node(body.node);
    // Acknowledged once journaled: until then the agent keeps the report and
    // sends it again after a reconnection.
    reply(agents_socket_, peer, message, proto::Empty{});
    const Job* job = engine_.find_job(body.job);
    // Only the leader runs the batch script; its end is the job's end.
    if (!job || job->allocation.empty() ||
        engine_.cluster().node(job->allocation.front()).name != body.node) {
      return;
    }
    if (!body.message.empty()) spdlog::warn("job {}: {}", body.job, body.message);
    enactor_.forget_kill(body.job);
    awaiting_agent_.erase(body.job);
    engine_.job_ended(body.job, body.status);
  } else if (t == type::kPerfReport) {
    const auto body = message.body_as<proto::PerfReport>();
    from_node(body.node);
    const Job* job = engine_.find_job(body.job);
    if (!job || is_terminal(job->state)) return;
    if (body.comm_s < 0 || body.compute_s < 0) {
      throw proto::ProtoError(proto::code::kInvalid, "phase times must not be negative");
    }
    auto& nodes = phases_[body.job];
    nodes[body.node] = NodePhases{body.comm_s, body.compute_s};
    double comm = 0;
    double compute = 0;
    for (const auto& [node, sums] : nodes) {
      comm += sums.comm_s;
      compute += sums.compute_s;
    }
    // No phase measured yet is no data, not an MTCT of zero.
    if (compute > 0) engine_.perf_report(body.job, comm / compute);
  } else if (t == type::kPowerReport) {
    const auto body = message.body_as<proto::PowerReport>();
    AgentState& agent = from_node(body.node);
    agent.power_w = body.node_w;
    for (const auto& [id, watts] : body.jobs_w) {
      char* end = nullptr;
      const long long job = std::strtoll(id.c_str(), &end, 10);
      if (end == id.c_str() || *end != '\0' || watts < 0) {
        throw proto::ProtoError(proto::code::kBadField,
                                "body.jobs_w: '" + id + "' is not a job id with watts >= 0");
      }
      engine_.power_report(job, watts);
    }
  } else if (t == type::kAdaptReady) {
    const auto body = message.body_as<proto::AdaptReady>();
    from_node(body.node);
    if (auto error = enactor_.adaptations().on_ready(body)) {
      throw proto::ProtoError(proto::code::kConflict, *error);
    }
  } else if (t == type::kAdaptComplete || t == type::kAdaptFailed) {
    const auto body = message.body_as<proto::AdaptReport>();
    from_node(body.node);
    auto& adaptations = enactor_.adaptations();
    const auto error =
        t == type::kAdaptComplete ? adaptations.on_complete(body) : adaptations.on_failed(body);
    if (error) throw proto::ProtoError(proto::code::kConflict, *error);
  } else if (t == type::kStepOutput) {
    const auto body = message.body_as<proto::StepOutput>();
    from_node(body.node);
    if (const StepRecord* step = steps_.find(body.job, body.step); step && !step->client.empty()) {
      outbox_.post(clients_, step->client, proto::encode_request(type::kStepOutput, 0, body));
    }
  } else if (t == type::kStepExited) {
    const auto body = message.body_as<proto::StepExited>();
    from_node(body.node);
    if (const StepRecord* step = steps_.find(body.job, body.step)) {
      const std::string client = step->client;
      if (!client.empty()) {
        outbox_.post(clients_, client, proto::encode_request(type::kStepExited, 0, body));
      }
      if (auto done = steps_.task_exited(body.job, body.step); done && !done->empty()) {
        outbox_.post(
            clients_, *done,
            proto::encode_request(type::kStepDone, 0, proto::StepRef{body.job, body.step}));
      }
    }
  } else if (t == type::kStepRunning) {
    const auto body = message.body_as<proto::StepRunning>();
    from_node(body.node);
    const Job* job = engine_.find_job(body.launch.job);
    const auto index = engine_.cluster().find(body.node);
    const bool here =
        job && index && !is_terminal(job->state) &&
        std::find(job->allocation.begin(), job->allocation.end(), *index) != job->allocation.end();
    // A step of a job that is not this node's any more is killed with it
    // (on_register); nothing to adopt.
    if (here && steps_.adopt(body.node, body.launch)) {
      spdlog::info("job {}: step {} adopted on {} ({} tasks)", body.launch.job, body.launch.step,
                   body.node, body.launch.ranks.size());
    }
  } else {
    throw proto::ProtoError(proto::code::kUnknownType, "unknown message type '" + t + "'");
  }
}

void Daemon::on_register(const std::string& peer, const proto::AgentRegister& reg,
                         std::uint64_t seq) {
  if (reg.node.empty()) {
    outbox_.post(agents_socket_, peer,
                 proto::encode_error(proto::type::kAgentRegister, seq, proto::code::kInvalid,
                                     "the node name is empty"));
    return;
  }
  AgentState& agent = agents_.upsert(reg.node);
  if (agent.connected && agent.peer != peer) {
    spdlog::info("node {}: a new agent connection replaces the old one", reg.node);
  }
  agent.peer = peer;
  agent.info = reg;
  agent.last_seen = clock_.now();
  agent.connected = true;

  if (!engine_.cluster().find(reg.node)) {
    engine_.add_node(reg.node, std::max(reg.cores, 1));
    Event event;
    event.type = EventType::NodeUp;
    event.node = reg.node;
    event.message = "registered";
    engine_.publish(std::move(event));
    engine_.request_pass(PassReason::Manual);
    save_nodes();
  } else {
    engine_.set_node_up(reg.node, true, "agent registered");
    // Back from a failure; an administrator's drain stays.
    const Node& node = engine_.cluster().node(*engine_.cluster().find(reg.node));
    if (!node.draining) node_reasons_.erase(reg.node);
  }

  // Jobs restored from the journal and led from this node: running here
  // (adopted) or not (lost; its end, if it came while schedd was away, is
  // the agent's to report next).
  const std::set<std::int64_t> running(reg.jobs.begin(), reg.jobs.end());
  const NodeIndex index = *engine_.cluster().find(reg.node);
  for (auto it = awaiting_agent_.begin(); it != awaiting_agent_.end();) {
    const Job* job = engine_.find_job(it->first);
    if (!job || job->allocation.empty() || job->allocation.front() != index) {
      ++it;
      continue;
    }
    if (running.count(job->id)) {
      spdlog::info("job {} re-adopted from node {}", job->id, reg.node);
      it = awaiting_agent_.erase(it);
    } else {
      // Give the agent a moment to report an exit it kept while we were away.
      it->second = std::min(it->second, clock_.now() + 5);
      ++it;
    }
  }
  // Processes of jobs that are over, or not this node's any more (failed
  // while the node was out of touch): they must not run on unseen.
  for (std::int64_t id : reg.jobs) {
    const Job* job = engine_.find_job(id);
    const bool here =
        job && !is_terminal(job->state) &&
        std::find(job->allocation.begin(), job->allocation.end(), index) != job->allocation.end();
    if (!here) {
      spdlog::info("node {} runs job {}, which is not its any more: killing it", reg.node, id);
      proto::JobKill kill;
      kill.job = id;
      kill.grace_s = config_.kill_grace_s;
      kill.reason = "not running here any more";
      agents_.send(reg.node, proto::type::kJobKill, kill);
    }
  }
  outbox_.post(agents_socket_, peer,
               proto::encode_reply(proto::type::kAgentRegister, seq,
                                   proto::RegisterReply{config_.heartbeat_s, client_endpoint_}));
}

}  // namespace sched::daemon
