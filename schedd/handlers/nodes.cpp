// Nodes: what clients see of them, and an administrator's drain and resume.
#include "handlers/handlers.hpp"
#include "sched/proto/client_messages.hpp"
#include "sched/proto/text.hpp"
#include "status_codes.hpp"

namespace sched::daemon::handlers {
namespace {

constexpr std::size_t kMaxReasonBytes = 256;

std::string node_state(const Node& node) {
  if (!node.up) return "down";
  if (node.draining) return node.job != 0 ? "draining" : "drain";
  return node.job != 0 ? "alloc" : "idle";
}

}  // namespace

void nodes_query(const Message& m) {
  const DaemonParts& daemon = m.daemon;
  proto::NodeList list;
  for (const Node& node : daemon.engine.cluster().nodes()) {
    proto::NodeInfo info;
    info.name = node.name;
    info.state = node_state(node);
    info.cores = node.cores;
    if (node.job != 0) info.jobs.push_back(node.job);
    if (auto it = daemon.node_reasons.find(node.name); it != daemon.node_reasons.end()) {
      info.reason = it->second;
    }
    if (const AgentState* agent = daemon.agents.find(node.name)) {
      info.hostname = agent->info.hostname;
      info.sockets = agent->info.sockets;
      info.pus = agent->info.pus;
      info.memory_bytes = agent->info.memory_bytes;
      info.gpus = agent->info.gpus;
      info.power_w = agent->power_w;
      info.last_heartbeat = agent->last_seen;
      info.containment = agent->info.containment.value_or("none");
      info.run_as = agent->info.run_as.value_or("");
    }
    list.nodes.push_back(std::move(info));
  }
  m.reply(list);
}

void node_update(const Message& m) {
  const auto body = m.body<proto::NodeUpdate>();
  if (body.state != "drain" && body.state != "resume") {
    throw proto::ProtoError(proto::code::kInvalid, "state must be drain or resume, not '" +
                                                       proto::excerpt(body.state) + "'");
  }
  // The reason is shown by `sched nodes` (and journaled): bounded text.
  if (body.reason && (body.reason->size() > kMaxReasonBytes || !proto::valid_utf8(*body.reason))) {
    throw proto::ProtoError(proto::code::kInvalid,
                            "reason: at most " + std::to_string(kMaxReasonBytes) +
                                " bytes of UTF-8 ('" + proto::excerpt(*body.reason) + "')");
  }
  if (const Status status = m.daemon.engine.set_node_draining(body.name, body.state == "drain");
      !status.ok()) {
    throw_status(status);
  }
  if (body.state == "drain") {
    m.daemon.node_reasons[body.name] = body.reason.value_or("drained by an administrator");
  } else {
    m.daemon.node_reasons.erase(body.name);
  }
  m.daemon.save_nodes();  // the drain and its reason outlive a restart
  m.reply(proto::Empty{});
}

}  // namespace sched::daemon::handlers
