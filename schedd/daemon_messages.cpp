// How the Daemon takes in messages: each socket's messages go through the
// one receive loop (handlers/receive.hpp) to that socket's route table.
#include "handlers/receive.hpp"
#include "schedd.hpp"

namespace sched::daemon {

DaemonParts Daemon::parts() {
  return DaemonParts{config_,
                     clock_,
                     engine_,
                     *store_,
                     *policy_,
                     agents_,
                     steps_,
                     enactor_,
                     outbox_,
                     clients_,
                     agents_socket_,
                     client_endpoint_,
                     event_endpoint_,
                     started_at_,
                     node_reasons_,
                     awaiting_agent_,
                     phases_,
                     submitted_,
                     messages_,
                     bad_messages_,
                     [this] { save_nodes(); },
                     access_,
                     agent_keys_->keys(),
                     [this](Event event) { auth_denied(std::move(event)); },
                     *policy_versions_,
                     partition_policies_,
                     pmi_fences_,
                     pmix_,
                     resizes_,
                     sessions_,
                     negotiations_};
}

void Daemon::drain_clients() {
  DaemonParts daemon = parts();
  receive_messages(clients_, client_routes_, kClientRules, daemon, client_log_);
}

void Daemon::drain_agents() {
  DaemonParts daemon = parts();
  receive_messages(agents_socket_, agent_routes_, kAgentRules, daemon, agent_log_);
}

}  // namespace sched::daemon
