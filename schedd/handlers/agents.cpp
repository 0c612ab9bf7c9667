// Node agents: registration (and re-adoption of running jobs after a
// restart), heartbeats, what became of the batch scripts the engine asked
// them to run, and their measurements.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <set>

#include "handlers/handlers.hpp"
#include "sched/proto/agent_messages.hpp"

namespace sched::daemon::handlers {

bool holds_node(const Job* job, NodeIndex index) {
  return job && !is_terminal(job->state) &&
         std::find(job->allocation.begin(), job->allocation.end(), index) != job->allocation.end();
}

namespace {

// What a registration lists: jobs running here, and jobs whose exit reports
// follow it.
struct Listed {
  std::set<std::int64_t> running;
  std::set<std::int64_t> exited;
  explicit Listed(const proto::AgentRegister& reg)
      : running(reg.jobs.begin(), reg.jobs.end()), exited(reg.exits.begin(), reg.exits.end()) {}
};

// Jobs restored from the journal and led from this node: running here
// (adopted), ended here with the report following the registration (it
// settles them), or neither: lost, failed at once (no wait: the agent has
// said all it knows).
void adopt_restored_jobs(DaemonParts& daemon, const proto::AgentRegister& reg, const Listed& listed,
                         NodeIndex index) {
  auto& awaiting = daemon.awaiting_agent;
  std::vector<JobId> lost;
  for (auto it = awaiting.begin(); it != awaiting.end();) {
    const Job* job = daemon.engine.find_job(it->first);
    if (!job || job->allocation.empty() || job->allocation.front() != index) {
      ++it;
      continue;
    }
    if (listed.running.count(job->id)) {
      spdlog::info("job {} re-adopted from node {}", job->id, reg.node);
      it = awaiting.erase(it);
    } else if (listed.exited.count(job->id)) {
      ++it;  // its task.exited comes next on the same connection
    } else {
      lost.push_back(job->id);
      it = awaiting.erase(it);
    }
  }
  for (JobId id : lost) {
    spdlog::warn(
        "job {}: its node {} registered without it and without its exit; it ends as failed", id,
        reg.node);
    daemon.engine.job_ended(id, -SIGKILL);
  }
}

// Processes of jobs that are over, or not this node's any more (failed while
// the node was out of touch): they must not run on unseen.
void kill_strays(DaemonParts& daemon, const proto::AgentRegister& reg, NodeIndex index) {
  for (std::int64_t id : reg.jobs) {
    if (!holds_node(daemon.engine.find_job(id), index)) {
      spdlog::info("node {} runs job {}, which is not its any more: killing it", reg.node, id);
      proto::JobKill kill;
      kill.job = id;
      kill.grace_s = daemon.config.kill_grace_s;
      kill.reason = "not running here any more";
      daemon.agents.send(reg.node, proto::type::kJobKill, kill);
    }
  }
}

// Jobs fenced when the node was lost: their old run is dead if the agent
// registers clean without them (a new agent killed what its predecessor
// left); one still running after a partition is killed, and its exit report,
// like one that follows this registration, settles it.
void settle_fenced(DaemonParts& daemon, AgentState& agent, const proto::AgentRegister& reg,
                   const Listed& listed) {
  std::vector<JobId> dead;
  for (JobId id : agent.fenced) {
    if (listed.exited.count(id)) continue;
    if (listed.running.count(id)) {
      proto::JobKill kill;
      kill.job = id;
      kill.grace_s = 0;
      kill.reason = "its node was lost";
      daemon.agents.send(reg.node, proto::type::kJobKill, kill);
    } else if (reg.clean) {
      dead.push_back(id);
    }
  }
  for (JobId id : dead) {
    agent.fenced.erase(id);
    spdlog::info("job {}: its old run on {} is gone", id, reg.node);
    daemon.engine.job_ended(id, -SIGKILL);
  }
}

// A new agent that replaced one schedd had not yet missed (a quick restart)
// killed what its predecessor left: the jobs led from here that it lists
// neither as running nor as ended are gone, and end as on a node failure
// (requeued with on_failure = requeue). Restored jobs are adopt_restored_jobs'.
void end_vanished_jobs(DaemonParts& daemon, AgentState& agent, const proto::AgentRegister& reg,
                       const Listed& listed, NodeIndex index) {
  Engine& engine = daemon.engine;
  std::vector<JobId> gone;
  for (const auto& [id, job] : engine.jobs()) {
    const bool live = job->state == JobState::Starting || job->state == JobState::Running ||
                      job->state == JobState::Adapting || job->state == JobState::Suspended;
    if (live && !job->allocation.empty() && job->allocation.front() == index &&
        !listed.running.count(id) && !listed.exited.count(id) && !daemon.awaiting_agent.count(id)) {
      gone.push_back(id);
    }
  }
  if (gone.empty()) return;
  spdlog::warn("node {}: a new agent runs none of its {} jobs; they end", reg.node, gone.size());
  // No job.kill to the new agent: its "not running here" answer could reach
  // schedd after the job was requeued and started there again, and end
  // that run. Unreachable, the leader's jobs end at once (the enactor's
  // results, fed now).
  agent.connected = false;
  (void)engine.set_node_up(reg.node, false, "its agent restarted");  // a known node: ok
  agent.connected = true;
  // Their leader is unreachable: the enactor ended them at once (queued).
  daemon.enactor.results().feed(engine);
}

}  // namespace

void agent_register(const Message& m) {
  const auto reg = m.body<proto::AgentRegister>();
  DaemonParts& daemon = m.daemon;
  if (reg.node.empty()) {
    // Answered, not refused: an agent's bad configuration is not a bad message.
    m.reply_error(proto::code::kInvalid, "the node name is empty");
    return;
  }
  // A key registers only as a node the authorised-keys file binds it to.
  m.check_key_for(reg.node);
  AgentState& agent = daemon.agents.upsert(reg.node);
  if (agent.connected && agent.peer != m.peer) {
    spdlog::info("node {}: a new agent connection replaces the old one", reg.node);
  }
  agent.peer = m.peer;
  agent.info = reg;
  agent.last_seen = daemon.clock.now();
  agent.connected = true;

  Engine& engine = daemon.engine;
  const Listed listed(reg);
  const bool known = engine.cluster().find(reg.node).has_value();
  if (!known) {
    engine.add_node(reg.node, std::max(reg.cores, 1));
    Event event;
    event.type = EventType::NodeUp;
    event.node = reg.node;
    event.message = "registered";
    engine.publish(std::move(event));
    engine.request_pass(PassReason::Manual);  // its node.up event journaled the node list
  }
  (void)engine.set_node_gpus(reg.node, reg.gpus);  // known by now
  // An invasive partition packs jobs by socket (issue 20 item 2).
  (void)engine.set_node_sockets(reg.node, std::max(reg.sockets, 1));
  const NodeIndex index = *engine.cluster().find(reg.node);
  if (!reg.clean) {
    // Processes an earlier agent left could not be killed: no new work here,
    // whether the node is new to schedd or not.
    const std::string why = "not clean: processes of an earlier agent are left";
    daemon.node_reasons[reg.node] = why;
    spdlog::error("node {}: {}", reg.node, why);
    (void)engine.set_node_up(reg.node, false, why);  // a known node: ok
  } else if (known) {
    end_vanished_jobs(daemon, agent, reg, listed, index);
    (void)engine.set_node_up(reg.node, true, "agent registered");  // a known node: ok
    // Back from a failure; an administrator's drain stays.
    if (!engine.cluster().node(index).draining) daemon.node_reasons.erase(reg.node);
  }
  adopt_restored_jobs(daemon, reg, listed, index);
  settle_fenced(daemon, agent, reg, listed);
  kill_strays(daemon, reg, index);
  m.reply(proto::RegisterReply{daemon.config.heartbeat_s, daemon.client_endpoint,
                               daemon.config.down_after_s});
}

void agent_heartbeat(const Message& m) {
  const auto body = m.body<proto::AgentHeartbeat>();
  m.from_node(body.node).power_w = body.power_w;
  m.reply(proto::Empty{});
}

void task_started(const Message& m) {
  const auto body = m.body<proto::TaskStarted>();
  m.from_node(body.node);
  m.daemon.engine.job_started(body.job);
  m.reply(proto::Empty{});
}

void task_exited(const Message& m) {
  const auto body = m.body<proto::TaskExited>();
  m.from_node(body.node).fenced.erase(body.job);
  // The reply leaves after the turn's journal commit (the outbox), so
  // `recorded` is true when the agent reads it; until then the agent keeps
  // the report and sends it again after a reconnection.
  m.reply(proto::TaskExitedReply{true});
  Engine& engine = m.daemon.engine;
  const Job* job = engine.find_job(body.job);
  // Only the leader runs the batch script; its end is the job's end.
  if (!job || job->allocation.empty() ||
      engine.cluster().node(job->allocation.front()).name != body.node) {
    return;
  }
  if (!body.message.empty()) spdlog::warn("job {}: {}", body.job, body.message);
  m.daemon.enactor.forget_kill(body.job);
  m.daemon.awaiting_agent.erase(body.job);
  JobEndReport report;
  report.reason = body.message;
  if (body.max_rss_bytes && *body.max_rss_bytes >= 0) {
    report.max_rss_bytes = static_cast<std::uint64_t>(*body.max_rss_bytes);
  }
  if (body.cpu_s && *body.cpu_s >= 0) report.cpu_s = body.cpu_s;
  engine.job_ended(body.job, body.status, report);
}

void perf_report(const Message& m) {
  const auto body = m.body<proto::PerfReport>();
  m.from_node(body.node);
  Engine& engine = m.daemon.engine;
  const Job* job = engine.find_job(body.job);
  if (!job || is_terminal(job->state)) return;
  if (body.comm_s < 0 || body.compute_s < 0) {
    throw proto::ProtoError(proto::code::kInvalid, "phase times must not be negative");
  }
  auto& nodes = m.daemon.phases[body.job];
  nodes[body.node] = NodePhases{body.comm_s, body.compute_s};
  double comm = 0;
  double compute = 0;
  for (const auto& [node, sums] : nodes) {
    comm += sums.comm_s;
    compute += sums.compute_s;
  }
  // The sums over the nodes; the engine takes the ratio over its window.
  // No phase measured yet is no data, not an MTCT of zero.
  if (compute > 0) engine.perf_totals(body.job, comm, compute);
}

void power_report(const Message& m) {
  const auto body = m.body<proto::PowerReport>();
  AgentState& agent = m.from_node(body.node);
  agent.power_w = body.node_w;
  for (const auto& [id, watts] : body.jobs_w) {
    char* end = nullptr;
    const long long job = std::strtoll(id.c_str(), &end, 10);
    if (end == id.c_str() || *end != '\0' || watts < 0) {
      throw proto::ProtoError(proto::code::kBadField,
                              "body.jobs_w: '" + id + "' is not a job id with watts >= 0");
    }
    m.daemon.engine.power_report(job, watts);
  }
}

}  // namespace sched::daemon::handlers
