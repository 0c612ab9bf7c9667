#include "handlers/context.hpp"

namespace sched::daemon {

void Message::check_key_for(const std::string& node) const {
  if (daemon.agent_keys.allows(user_id, node)) return;
  const std::string why = user_id.empty() ? "connection has no key"
                          : daemon.agent_keys.known(user_id)
                              ? "key " + user_id.substr(0, 8) + "… may speak for " +
                                    daemon.agent_keys.nodes_text(user_id) + ", not for " + node
                              : "key " + user_id.substr(0, 8) + "… is no longer authorised";
  Event event;
  event.node = node;
  event.message = envelope.type + " refused: " + why;
  daemon.auth_denied(std::move(event));
  throw proto::ProtoError(proto::code::kPermissionDenied, "permission denied: this agent's " + why);
}

AgentState& Message::from_node(const std::string& node) const {
  check_key_for(node);
  AgentState* agent = daemon.agents.find(node);
  if (!agent || !agent->connected || agent->peer != peer) {
    throw proto::ProtoError(proto::code::kNotFound,
                            "node " + node + " is not registered from this agent");
  }
  agent->last_seen = daemon.clock.now();
  return *agent;
}

}  // namespace sched::daemon
