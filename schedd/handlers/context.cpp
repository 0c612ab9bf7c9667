#include "handlers/context.hpp"

namespace sched::daemon {

AgentState& Message::from_node(const std::string& node) const {
  AgentState* agent = daemon.agents.find(node);
  if (!agent || !agent->connected || agent->peer != peer) {
    throw proto::ProtoError(proto::code::kNotFound,
                            "node " + node + " is not registered from this agent");
  }
  agent->last_seen = daemon.clock.now();
  return *agent;
}

}  // namespace sched::daemon
