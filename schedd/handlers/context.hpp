// What a message handler gets (docs/design.md §5): the daemon's parts it may
// use, the peer the message came from and the decoded message. A handler
// answers through it, or throws proto::ProtoError, which the receive loop
// answers as an error reply (receive.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <zmq.hpp>

#include "access.hpp"
#include "agent_directory.hpp"
#include "authorized_agents.hpp"
#include "daemon_config.hpp"
#include "live_enactor.hpp"
#include "negotiation.hpp"
#include "outbox.hpp"
#include "pmi_fences.hpp"
#include "pmix_exchange.hpp"
#include "policy_versions.hpp"
#include "resize_requests.hpp"
#include "sched/auth/sessions.hpp"
#include "sched/engine.hpp"
#include "sched/env.hpp"
#include "sched/policy_host.hpp"
#include "sched/proto/envelope.hpp"
#include "state_store.hpp"
#include "step_table.hpp"

namespace sched::daemon {

// A node's latest perf.report of a job: MTCT = Σ comm / Σ compute.
struct NodePhases {
  double comm_s = 0;
  double compute_s = 0;
};

// The daemon's parts, as references to the Daemon's own members
// (Daemon::parts builds it for each turn of the receive loop).
struct DaemonParts {
  const DaemonConfig& config;
  const Clock& clock;
  Engine& engine;
  StateStore& store;
  PolicyHost& policy;
  AgentDirectory& agents;
  StepTable& steps;
  LiveEnactor& enactor;
  Outbox& outbox;
  zmq::socket_t& clients;  // agents' step output goes on to the client of the step
  zmq::socket_t& agents_socket;
  const std::string& client_endpoint;  // told to agents when they register
  const std::string& event_endpoint;
  double started_at;
  std::map<std::string, std::string>& node_reasons;  // why a node is down or drained
  // Restored jobs whose leader's agent has not yet said whether it runs them.
  std::map<JobId, double>& awaiting_agent;
  std::map<JobId, std::map<std::string, NodePhases>>& phases;
  std::uint64_t& submitted;
  std::uint64_t& messages;
  std::uint64_t& bad_messages;
  std::function<void()> save_nodes;  // journals the node list (a drain, its reason)
  Access& access;                    // who may do what (client messages)
  // The agent keys and the nodes each may speak for (docs/security.md §3).
  const AuthorizedAgents& agent_keys;
  // Logs and publishes an auth.denied event (rate-limited; its type is set).
  std::function<void(Event)> auth_denied;
  // ---- issue 22: the journal of deployed policy versions
  PolicyVersions& versions;
  // ---- issue 20 item 1: the hosts of partitions' own policies, by name
  std::map<std::string, std::unique_ptr<PolicyHost>>& partition_policies;
  // ---- issue 16 item 2: the PMI fences of MPI steps
  PmiFences& pmi_fences;
  PmixExchange& pmix;  // MPI_Comm_spawn (pmix_exchange.hpp)
  // ---- issue 17 item 1: evolving jobs' live requests
  ResizeRequests& resizes;
  // ---- issue 15: client sessions (docs/security.md §2.1)
  auth::Sessions& sessions;
  // ---- issue 20 items 3, 5: the negotiated partitions
  const std::vector<std::unique_ptr<Negotiation>>& negotiations;
};

// One message received on a socket.
struct Message {
  DaemonParts& daemon;
  zmq::socket_t& socket;  // where it came from: replies go back there
  const std::string& peer;
  const proto::Envelope& envelope;
  // The connection's ZAP User-Id: an agent's CURVE public key (Z85).
  const std::string& user_id;
  // Who sent it, from its credential or session: set on the client socket only.
  const auth::Caller* caller = nullptr;

  // The body as `Body`; a ProtoError (bad_field) names what is wrong.
  template <class Body>
  Body body() const {
    return envelope.body_as<Body>();
  }
  // Answers the message (sent once the journal has committed).
  template <class Body>
  void reply(const Body& body) const {
    daemon.outbox.post(socket, peer, proto::encode_reply(envelope.type, envelope.seq, body));
  }
  void reply_error(std::string_view code, const std::string& message) const {
    daemon.outbox.post(socket, peer,
                       proto::encode_error(envelope.type, envelope.seq, code, message));
  }

  // An agent's message about `node`: the connection's key must be one the
  // node is bound to (permission_denied and an auth.denied event otherwise:
  // docs/security.md §3), and the node's agent must have registered
  // through this peer (not_found otherwise, and the agent registers again).
  // Marks the agent as heard from now.
  AgentState& from_node(const std::string& node) const;
  // Throws permission_denied (and publishes auth.denied) unless the
  // connection's key may speak for `node`.
  void check_key_for(const std::string& node) const;
};

}  // namespace sched::daemon
