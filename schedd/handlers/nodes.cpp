// Nodes: what clients see of them, and an administrator's drain and resume.
#include <optional>

#include "access.hpp"
#include "handlers/handlers.hpp"
#include "handlers/pages.hpp"
#include "sched/proto/client_messages.hpp"
#include "sched/proto/text.hpp"
#include "status_codes.hpp"

namespace sched::daemon::handlers {
namespace {

constexpr std::size_t kMaxReasonBytes = 256;

}  // namespace

void nodes_query(const Message& m) {
  const auto query = m.body<proto::NodesQuery>();
  const DaemonParts& daemon = m.daemon;
  m.reply(nodes_page(
      daemon.engine.cluster(), query, page_bounds(query.limit, daemon.config),
      [&](const Node& node, proto::NodeInfo& info) {
        const auto& partitions = daemon.engine.partitions();
        if (static_cast<std::size_t>(node.partition) < partitions.size()) {
          info.partition = partitions[static_cast<std::size_t>(node.partition)].spec.name;
        }
        // A node of an invasive partition (issue 20 item 2): its busy cores,
        // the jobs holding them, and "mixed" while some are free.
        if (const auto index = daemon.engine.cluster().find(node.name);
            index && daemon.engine.core_map().tracked(*index)) {
          const CoreMap& cores = daemon.engine.core_map();
          info.cores_alloc = cores.cores(*index) - cores.free_count(*index);
          info.jobs = cores.holders(*index);
          if (info.state == "alloc" && *info.cores_alloc < cores.cores(*index)) {
            info.state = "mixed";
          }
        }
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
      }));
}

void node_update(const Message& m) {
  const auto body = m.body<proto::NodeUpdate>();
  require_admin(m, "draining and resuming nodes");
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
  const bool drain = body.state == "drain";
  const std::string why = drain ? body.reason.value_or("drained by an administrator") : "";
  if (const Status status = m.daemon.engine.set_node_draining(body.name, drain, why);
      !status.ok()) {
    throw_status(status);
  }
  // What `sched nodes` shows, and the journal keeps.
  auto& reasons = m.daemon.node_reasons;
  if (drain) {
    reasons[body.name] = why;
  } else {
    reasons.erase(body.name);
  }
  m.daemon.save_nodes();  // the drain and its reason outlive a restart
  m.reply(proto::Empty{});
}

}  // namespace sched::daemon::handlers
