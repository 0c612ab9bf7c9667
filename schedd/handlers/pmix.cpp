// MPI_Comm_spawn of --mpi=pmix steps (issue 16 item 2, docs/protocol.md §6):
// a rank's spawn, checked and started as a new step of its job; the keys
// ranks publish and look up across nodes; and PMIx_Connect gathered over
// the nodes of the steps it joins (pmix_exchange.hpp keeps the state).
#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <set>
#include <stdexcept>

#include "handlers/handlers.hpp"
#include "sched/convert/wire_convert.hpp"
#include "sched/proto/agent_messages.hpp"
#include "sched/proto/pmi_messages.hpp"
#include "sched/proto/pmix_messages.hpp"
#include "sched/proto/step_messages.hpp"
#include "sched/tasks/spawn_hosts.hpp"

namespace sched::daemon::handlers {
namespace {

// More children than any job here could hold is a mistake, not a plan.
constexpr int kMaxSpawn = 65536;

const Job& running_job(const Message& m, std::int64_t id) {
  const Job* job = m.daemon.engine.find_job(id);
  // Not not_found: that code tells an agent to register again.
  if (!job)
    throw proto::ProtoError(proto::code::kConflict, "job " + std::to_string(id) + " has ended");
  if (job->state != JobState::Running && job->state != JobState::Adapting) {
    throw proto::ProtoError(proto::code::kConflict, "job " + std::to_string(id) + " is " +
                                                        std::string(to_string(job->state)));
  }
  return *job;
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ",") + name;
  return out;
}

// The node of each child of a spawn that an open MPI expansion of step
// `grown` waits for: the expansion's, which the spawn must name (or leave to
// it). Throws ProtoError saying how the spawn differs.
std::vector<std::string> expansion_hosts(const proto::PmixSpawn& body, std::int64_t grown,
                                         const StepRecord::MpiExpansion& expansion) {
  const std::string what =
      "expansion " + std::to_string(expansion.adaptation) + " of step " + std::to_string(grown) +
      " adds " + std::to_string(expansion.hosts.size()) + " processes on " + join(expansion.hosts);
  if (body.tasks != static_cast<int>(expansion.hosts.size())) {
    throw proto::ProtoError(proto::code::kInvalid,
                            "MPI_Comm_spawn of " + std::to_string(body.tasks) +
                                " processes does not match the expansion under way: " + what);
  }
  if (body.hosts.empty()) return expansion.hosts;
  std::vector<std::string> per_child;
  try {
    per_child = tasks::spawn_hosts(body.hosts, body.tasks);
  } catch (const std::invalid_argument& e) {
    throw proto::ProtoError(proto::code::kInvalid, e.what());
  }
  if (per_child != expansion.hosts) {
    throw proto::ProtoError(proto::code::kInvalid,
                            "MPI_Comm_spawn on hosts " + join(per_child) +
                                " does not match the expansion under way: " + what +
                                " (pass the hosts sched_mall_mpi_adapt_begin is given)");
  }
  return per_child;
}

// The checks of docs/protocol.md §6 and the new step's launch; throws
// ProtoError with the reason the MPI call gets.
std::int64_t spawn_step(const Message& m, const proto::PmixSpawn& body, StepRecord& parent,
                        std::vector<std::string>& nodes) {
  DaemonParts& daemon = m.daemon;
  const Job& job = running_job(m, body.job);
  if (parent.launch.mpi.value_or("none") != "pmix") {
    throw proto::ProtoError(proto::code::kInvalid,
                            "step " + std::to_string(body.step) + " is not a --mpi=pmix step");
  }
  const bool here = std::any_of(parent.layout.begin(), parent.layout.end(), [&](const auto& n) {
    return n.first == body.node &&
           std::find(n.second.begin(), n.second.end(), body.rank) != n.second.end();
  });
  if (!here) {
    throw proto::ProtoError(proto::code::kPermissionDenied,
                            "rank " + std::to_string(body.rank) + " of step " +
                                std::to_string(body.step) + " does not run on " + body.node);
  }
  if (body.tasks < 1 || body.tasks > kMaxSpawn) {
    throw proto::ProtoError(proto::code::kInvalid,
                            "cannot spawn " + std::to_string(body.tasks) + " processes");
  }
  if (body.argv.empty() || body.argv.front().empty()) {
    throw proto::ProtoError(proto::code::kInvalid, "no command to spawn");
  }
  const std::vector<std::string> job_nodes = convert::node_names(job, daemon.engine.cluster());
  std::vector<std::string> per_child;
  // The step this spawn may grow: the spawner's, or the one its step's
  // processes joined when an earlier expansion spawned them.
  const std::int64_t grown_id = parent.adapt_of != 0 ? parent.adapt_of : body.step;
  StepRecord* grown = parent.adapt_of != 0 ? daemon.steps.find(job.id, grown_id) : &parent;
  const bool expansion = grown && grown->expansion && !grown->expansion->spawned;
  if (expansion) {
    per_child = expansion_hosts(body, grown_id, *grown->expansion);
  }
  try {
    if (expansion) {
      // Checked above: the expansion's own nodes.
    } else if (body.hosts.empty()) {
      // No host: over the job's nodes, as `sched run -n` would.
      const int count = std::min(static_cast<int>(job_nodes.size()), body.tasks);
      per_child = tasks::spawn_hosts(
          join(std::vector<std::string>(job_nodes.begin(), job_nodes.begin() + count)), body.tasks);
    } else {
      per_child = tasks::spawn_hosts(body.hosts, body.tasks);
    }
  } catch (const std::invalid_argument& e) {
    throw proto::ProtoError(proto::code::kInvalid, e.what());
  }
  for (const std::string& node : per_child) {
    if (!expansion && std::find(job_nodes.begin(), job_nodes.end(), node) == job_nodes.end()) {
      throw proto::ProtoError(proto::code::kInvalid, "host " + node + " is not a node of job " +
                                                         std::to_string(job.id) + " (" +
                                                         join(job_nodes) + ")");
    }
  }
  const auto layout = tasks::spawn_layout(per_child);
  if (!layout) {
    throw proto::ProtoError(proto::code::kInvalid, "hosts '" + body.hosts +
                                                       "': each node's children must follow "
                                                       "block or cyclic order with even counts");
  }
  for (const std::string& node : layout->nodes) {
    const AgentState* agent = daemon.agents.find(node);
    if (!agent || !agent->connected) {
      throw proto::ProtoError(proto::code::kUnavailable, "node " + node + " has no agent");
    }
  }
  StepRecord record;
  record.client = parent.client;
  record.parent = body.step;
  record.remaining = record.tasks = body.tasks;
  record.launch = parent.launch;
  proto::StepLaunch& launch = record.launch;
  launch.step = daemon.steps.next_id(job.id);
  launch.mall_step.reset();
  launch.mall_ranks.reset();
  launch.mall_size.reset();
  if (expansion) {
    // Its processes are the expansion's new ranks of the grown step, which
    // counts their exits: this record keeps their PMIx namespace only.
    record.adapt_of = grown_id;
    record.remaining = 0;
    launch.mall_step = grown_id;
    launch.mall_size = grown->expansion->new_size;
    launch.job_nodes = grown->expansion->job_nodes;  // the added nodes are the job's
    grown->expansion->spawned = true;
  }
  launch.argv = body.argv;
  for (const auto& [key, value] : body.env) launch.env[key] = value;
  if (!body.workdir.empty()) launch.workdir = body.workdir;
  launch.nodes = layout->nodes;
  launch.tasks = body.tasks;
  launch.distribution = std::string(tasks::to_string(layout->distribution));
  launch.pmix_parent = proto::pmix_nspace(body.job, body.step) + ":" + std::to_string(body.rank);
  const int count = static_cast<int>(layout->nodes.size());
  const auto by_node =
      tasks::tasks_by_node(tasks::place_tasks(body.tasks, count, layout->distribution), count);
  for (int i = 0; i < count; ++i) {
    record.layout.emplace_back(layout->nodes[static_cast<std::size_t>(i)],
                               by_node[static_cast<std::size_t>(i)]);
  }
  for (const auto& [node, ranks] : record.layout) {
    launch.ranks = ranks;
    if (expansion) {
      // Child i is window rank old_size + i: the merge puts the spawned
      // processes after the old ones, in their MPI rank order.
      std::vector<int> mall_ranks;
      for (int rank : ranks) mall_ranks.push_back(grown->expansion->old_size + rank);
      launch.mall_ranks = std::move(mall_ranks);
    }
    daemon.agents.send(node, proto::type::kStepLaunch, launch);
  }
  const std::int64_t step = launch.step;
  nodes = layout->nodes;
  daemon.steps.add(job.id, step, std::move(record));
  return step;
}

// The nodes of `step` that run the ranks `which` names ("*": all).
void nodes_of(const StepRecord& step, std::string_view which, std::set<std::string>& nodes) {
  int rank = -1;
  if (which != "*") {
    const auto [end, error] = std::from_chars(which.data(), which.data() + which.size(), rank);
    if (error != std::errc() || end != which.data() + which.size() || rank < 0) {
      throw std::invalid_argument("'" + std::string(which) + "' is not a rank");
    }
  }
  bool any = false;
  for (const auto& [node, ranks] : step.layout) {
    if (ranks.empty()) continue;
    if (rank < 0 || std::find(ranks.begin(), ranks.end(), rank) != ranks.end()) {
      nodes.insert(node);
      any = true;
    }
  }
  if (!any) throw std::invalid_argument("rank " + std::string(which) + " is not in its step");
}

proto::PmixStepMap step_map(std::int64_t id, const StepRecord& step) {
  proto::PmixStepMap map;
  map.step = id;
  map.tasks = step.tasks;
  for (const auto& [node, ranks] : step.layout) {
    if (!ranks.empty()) map.nodes.push_back(node);
  }
  map.distribution = step.launch.distribution.value_or("block");
  map.parent = step.launch.pmix_parent;
  return map;
}

}  // namespace

void pmix_spawn(const Message& m) {
  const auto body = m.body<proto::PmixSpawn>();
  m.from_node(body.node);
  StepRecord* parent = m.daemon.steps.find(body.job, body.step);
  if (!parent) {
    throw proto::ProtoError(proto::code::kConflict, "job " + std::to_string(body.job) +
                                                        " has no step " +
                                                        std::to_string(body.step) + " running");
  }
  const std::string client = parent->client;
  try {
    std::vector<std::string> nodes;
    const std::int64_t step = spawn_step(m, body, *parent, nodes);
    spdlog::info("job {}: rank {} of step {} spawned step {} ({} processes on {})", body.job,
                 body.rank, body.step, step, body.tasks, join(nodes));
    m.reply(proto::PmixSpawned{step, nodes});
  } catch (const proto::ProtoError& e) {
    // The MPI call gets an error code only: the reason goes to the step's
    // `sched run` too.
    spdlog::info("job {}: MPI_Comm_spawn of rank {} of step {} refused: {}", body.job, body.rank,
                 body.step, e.what());
    if (!client.empty()) {
      proto::StepOutput out{
          body.job,  body.step, body.node,
          body.rank, "err",     "sched: MPI_Comm_spawn refused: " + std::string(e.what()) + "\n"};
      m.daemon.outbox.post(m.daemon.clients, client,
                           proto::encode_request(proto::type::kStepOutput, 0, out));
    }
    // Open MPI 4.1 does not tell the spawning communicator's other ranks
    // that its root's spawn failed: they would wait in MPI_Comm_spawn
    // forever. A step of more than one rank fails instead (pmi.step_failed).
    if (StepRecord* step = m.daemon.steps.find(body.job, body.step); step && step->tasks > 1) {
      const proto::PmiStepFailed failed{body.job, body.step,
                                        "MPI step failed: MPI_Comm_spawn by rank " +
                                            std::to_string(body.rank) + " refused: " + e.what()};
      m.daemon.pmi_fences.drop(body.job, body.step);
      for (const auto& [node, ranks] : step->layout) {
        m.daemon.agents.send(node, proto::type::kPmiStepFailed, failed);
      }
    }
    throw;
  }
}

void pmix_publish(const Message& m) {
  const auto body = m.body<proto::PmixPublish>();
  m.from_node(body.node);
  running_job(m, body.job);
  for (auto& answer : m.daemon.pmix.publish(body.job, body.entries)) {
    m.daemon.agents.send(answer.node, proto::type::kPmixLookupDone,
                         proto::PmixLookupDone{body.job, answer.id, std::move(answer.entries)});
  }
}

void pmix_lookup(const Message& m) {
  const auto body = m.body<proto::PmixLookup>();
  m.from_node(body.node);
  running_job(m, body.job);
  if (auto answer = m.daemon.pmix.lookup(body.job, body.node, body.id, body.keys, body.wait)) {
    m.daemon.agents.send(body.node, proto::type::kPmixLookupDone,
                         proto::PmixLookupDone{body.job, body.id, std::move(answer->entries)});
  }
}

void pmix_connect(const Message& m) {
  const auto body = m.body<proto::PmixConnect>();
  m.from_node(body.node);
  DaemonParts& daemon = m.daemon;
  std::set<std::int64_t> steps;
  std::set<std::string> nodes{body.node};
  std::vector<proto::PmixStepMap> maps;
  std::string error;
  try {
    for (const std::string& proc : body.procs) {
      const std::size_t colon = proc.find(':');
      std::int64_t id = 0;
      const auto [end, bad] = std::from_chars(proc.data(), proc.data() + colon, id);
      if (colon == std::string::npos || bad != std::errc() || end != proc.data() + colon) {
        throw std::invalid_argument("'" + proc + "' is not <step>:<rank>");
      }
      const StepRecord* step = daemon.steps.find(body.job, id);
      if (!step) throw std::invalid_argument("step " + std::to_string(id) + " has ended");
      nodes_of(*step, std::string_view(proc).substr(colon + 1), nodes);
      if (steps.insert(id).second) maps.push_back(step_map(id, *step));
    }
  } catch (const std::invalid_argument& e) {
    error = e.what();
  }
  proto::PmixConnectDone done{body.job, body.id, error, maps, {}};
  if (error.empty()) {
    std::optional<std::map<std::string, std::string>> entries;
    try {
      entries = daemon.pmix.connect(body.job, body.id, steps, nodes, body.node, body.entries);
    } catch (const std::invalid_argument& e) {
      throw proto::ProtoError(proto::code::kInvalid, e.what());
    }
    if (!entries) return;
    done.entries = std::move(*entries);
  } else {
    spdlog::info("job {}: PMIx connect {} from {} fails: {}", body.job, body.id, body.node, error);
  }
  for (const std::string& node : nodes)
    daemon.agents.send(node, proto::type::kPmixConnectDone, done);
}

void pmix_step_ended(DaemonParts& daemon, JobId job, std::int64_t step) {
  for (const auto& [id, arrived] : daemon.pmix.drop_step(job, step)) {
    const proto::PmixConnectDone failed{
        job, id, "step " + std::to_string(step) + " ended before the connect completed", {}, {}};
    for (const std::string& node : arrived) {
      daemon.agents.send(node, proto::type::kPmixConnectDone, failed);
    }
  }
  if (!daemon.steps.newest(job).second) daemon.pmix.drop_job(job);
}

}  // namespace sched::daemon::handlers
