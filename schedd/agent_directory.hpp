// The node agents the daemon knows: which ZeroMQ peer speaks for which node,
// what the node is (its registration), and when it was last heard from.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <zmq.hpp>

#include "outbox.hpp"
#include "sched/proto/agent_messages.hpp"

namespace sched::daemon {

struct AgentState {
  std::string peer;  // routing id on the agent socket
  proto::AgentRegister info;
  double last_seen = 0;
  std::optional<double> power_w;
  bool connected = false;  // registered and not declared down since
  // Fencing: jobs led from this node when it was lost, whose old run is not
  // known dead until its agent registers clean or reports their exits; at
  // `fence_until` they end anyway (and may be requeued).
  std::set<std::int64_t> fenced;
  double fence_until = 0;
};

class AgentDirectory {
 public:
  AgentDirectory(zmq::socket_t& router, Outbox& outbox) : router_(router), outbox_(outbox) {}

  AgentState& upsert(const std::string& node) { return agents_[node]; }
  AgentState* find(const std::string& node);
  const AgentState* find(const std::string& node) const;
  const std::map<std::string, AgentState>& all() const { return agents_; }

  // Queues a one-way message to a node's agent (sent once the journal is
  // committed). False when the node has no connected agent.
  template <class Body>
  bool send(const std::string& node, std::string_view type, const Body& body);

 private:
  bool send_bytes(const std::string& node, const std::string& bytes);

  zmq::socket_t& router_;
  Outbox& outbox_;
  std::map<std::string, AgentState> agents_;
  std::uint64_t seq_ = 0;
};

template <class Body>
bool AgentDirectory::send(const std::string& node, std::string_view type, const Body& body) {
  return send_bytes(node, proto::encode_request(type, ++seq_, body));
}

}  // namespace sched::daemon
