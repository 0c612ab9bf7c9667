// session.open (docs/protocol.md §2.1, docs/security.md §2.1): a client that
// proved who it is with a MUNGE credential gets a session, so that its later
// requests on this connection need no round trip to munged.
#include "handlers/handlers.hpp"
#include "sched/proto/session.hpp"

namespace sched::daemon::handlers {

void session_open(const Message& m) {
  if (m.envelope.session) {
    // Its key would come from nothing but the session itself.
    throw proto::ProtoError(proto::code::kInvalid,
                            "session.open must carry a MUNGE credential, not a session's MAC");
  }
  DaemonParts& daemon = m.daemon;
  m.reply(daemon.sessions.open(*m.caller, m.peer, m.body<proto::SessionOpen>(), m.envelope.seq,
                               daemon.clock.now(), daemon.config.session_ttl_s));
}

}  // namespace sched::daemon::handlers
