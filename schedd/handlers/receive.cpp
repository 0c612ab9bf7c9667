#include "handlers/receive.hpp"

#include "sched/proto/transport.hpp"

namespace sched::daemon {

void receive_messages(zmq::socket_t& socket, const RouteTable& routes, const ReceiveRules& rules,
                      DaemonParts& daemon, int batch) {
  for (int i = 0; i < batch; ++i) {
    bool malformed = false;
    auto routed = proto::receive_routed(socket, &malformed);
    if (!routed) {
      if (malformed) {
        ++daemon.bad_messages;
        continue;
      }
      return;
    }
    ++daemon.messages;
    proto::Envelope envelope;
    try {
      envelope = proto::decode(routed->payload.data(), routed->payload.size(),
                               daemon.config.max_message_bytes);
    } catch (const proto::ProtoError& e) {
      ++daemon.bad_messages;
      spdlog::log(rules.undecodable, "{} message refused: {}", rules.peers, e.what());
      daemon.outbox.post(socket, routed->peer, proto::encode_error("error", 0, e.code(), e.what()));
      continue;
    }
    if (rules.drop_replies && envelope.is_reply()) continue;
    const Message message{daemon, socket, routed->peer, envelope};
    try {
      routes.dispatch(message);
    } catch (const proto::ProtoError& e) {
      if (rules.every_refusal_is_bad || e.code() == proto::code::kBadField ||
          e.code() == proto::code::kUnknownType) {
        ++daemon.bad_messages;
      }
      spdlog::log(rules.refused, "{} message {} refused: {}", rules.peers, envelope.type, e.what());
      message.reply_error(e.code(), e.what());
    }
  }
}

}  // namespace sched::daemon
