#include "handlers/receive.hpp"

#include <optional>

#include "event_log.hpp"
#include "sched/auth/credential.hpp"
#include "sched/proto/text.hpp"
#include "sched/proto/transport.hpp"

namespace sched::daemon {

bool LogLimiter::admit(double now, std::uint64_t& held_back) {
  held_back = 0;
  if (interval_start_ < 0 || now - interval_start_ >= kIntervalS) {
    held_back = held_back_;
    held_back_ = 0;
    interval_start_ = now;
    logged_ = 0;
  }
  if (logged_ < kLines) {
    ++logged_;
    return true;
  }
  ++held_back_;
  return false;
}

namespace {

// Logs one line about a bad message, within the limiter's bounds.
template <class... Args>
void log_limited(LogLimiter& log, double now, spdlog::level::level_enum level,
                 std::string_view peers, spdlog::format_string_t<Args...> format, Args&&... args) {
  if (!spdlog::should_log(level)) return;
  std::uint64_t held_back = 0;
  const bool admitted = log.admit(now, held_back);
  if (held_back > 0) {
    spdlog::log(level, "{} more bad {} messages not logged (at most {} lines per {} s)", held_back,
                peers, LogLimiter::kLines, LogLimiter::kIntervalS);
  }
  if (admitted) spdlog::log(level, format, std::forward<Args>(args)...);
}

}  // namespace

void receive_messages(zmq::socket_t& socket, const RouteTable& routes, const ReceiveRules& rules,
                      DaemonParts& daemon, LogLimiter& log, int batch, double max_batch_s) {
  const double deadline = daemon.clock.now() + max_batch_s;
  for (int i = 0; i < batch && daemon.clock.now() < deadline; ++i) {
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
      log_limited(log, daemon.clock.now(), rules.undecodable, rules.peers, "{} message refused: {}",
                  rules.peers, e.what());
      daemon.outbox.post(socket, routed->peer, proto::encode_error("error", 0, e.code(), e.what()));
      continue;
    }
    if (rules.drop_replies && envelope.is_reply()) continue;
    std::optional<auth::Caller> caller;
    Message message{daemon, socket, routed->peer, envelope, routed->user_id};
    try {
      if (rules.authenticate) {
        // In a session, a MAC under its key; else a MUNGE credential.
        caller = envelope.session
                     ? daemon.sessions.check(envelope, routed->peer, daemon.clock.now(),
                                             daemon.config.session_ttl_s)
                     : auth::authenticate(envelope, daemon.config.munge_socket);
        message.caller = &*caller;
      }
      routes.dispatch(message);
    } catch (const proto::ProtoError& e) {
      if (rules.every_refusal_is_bad || e.code() == proto::code::kBadField ||
          e.code() == proto::code::kUnknownType || e.code() == proto::code::kUnauthenticated) {
        ++daemon.bad_messages;
      }
      // Permission and limit refusals are logged with their auth.denied event.
      if (e.code() != proto::code::kPermissionDenied && e.code() != proto::code::kLimit) {
        log_limited(log, daemon.clock.now(), rules.refused, rules.peers,
                    "refused peer={} type={} code={} user={} message={}", rules.peers,
                    log_value(proto::excerpt(envelope.type)), e.code(),
                    log_value(caller ? caller->user : std::string("-")), log_value(e.what()));
      }
      message.reply_error(e.code(), e.what());
    }
  }
}

}  // namespace sched::daemon
