// schedd's ZAP handler (ZeroMQ RFC 27): libzmq asks it, once per connection
// to a CURVE socket, whether the client's public key may connect. Agent
// keys must be in the authorised-keys file; any client key may reach the
// client and event sockets (who the user is comes with each request). An
// accepted connection's messages carry the User-Id the handler gave: for an
// agent, its public key, which schedd then binds to a node name
// (docs/security.md §3).
#pragma once

#include <functional>
#include <string>
#include <zmq.hpp>

#include "authorized_agents.hpp"

namespace sched::daemon {

// ZAP domains of schedd's CURVE sockets.
inline constexpr const char* kAgentDomain = "sched-agents";
inline constexpr const char* kClientDomain = "sched-clients";

class ZapHandler {
 public:
  // A refused connection: the peer's address, its key (Z85) and why.
  using OnDenied =
      std::function<void(const std::string& address, const std::string& key, const std::string&)>;

  // Binds inproc://zeromq.zap.01 in `context`: create it before any CURVE
  // socket binds (libzmq lets every key in while no handler is bound).
  ZapHandler(zmq::context_t& context, AuthorizedAgentsFile& agents, OnDenied on_denied);

  zmq::socket_t& socket() { return socket_; }
  // Answers every request waiting, without blocking.
  void answer();

 private:
  zmq::socket_t socket_;
  AuthorizedAgentsFile& agents_;
  OnDenied on_denied_;
};

}  // namespace sched::daemon
