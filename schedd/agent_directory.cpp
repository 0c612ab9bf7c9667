#include "agent_directory.hpp"

#include "sched/proto/transport.hpp"

namespace sched::daemon {

AgentState* AgentDirectory::find(const std::string& node) {
  auto it = agents_.find(node);
  return it == agents_.end() ? nullptr : &it->second;
}

const AgentState* AgentDirectory::find(const std::string& node) const {
  auto it = agents_.find(node);
  return it == agents_.end() ? nullptr : &it->second;
}

bool AgentDirectory::send_bytes(const std::string& node, const std::string& bytes) {
  const AgentState* agent = find(node);
  if (!agent || !agent->connected) return false;
  outbox_.post(router_, agent->peer, bytes);
  return true;
}

}  // namespace sched::daemon
