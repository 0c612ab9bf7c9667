// The daemon's receive loop, one for both of its ROUTER sockets: a bounded
// batch of messages per loop turn (so that the other socket and the timers
// are never starved), each decoded and handed to its route table. What
// cannot be decoded, and what a handler refuses, is answered with an error
// reply and counted.
#pragma once

#include <spdlog/spdlog.h>

#include <cstdint>
#include <string_view>
#include <zmq.hpp>

#include "handlers/context.hpp"
#include "handlers/route_table.hpp"

namespace sched::daemon {

// What differs between the sockets.
struct ReceiveRules {
  std::string_view peers;  // "client" or "agent", in the log
  // Log levels of a message that does not decode, and of one its handler
  // refuses (docs/admin.md "Logs": a refused request is logged once).
  spdlog::level::level_enum undecodable = spdlog::level::info;
  spdlog::level::level_enum refused = spdlog::level::info;
  // Replies are dropped unread (agents answer nothing schedd needs).
  bool drop_replies = false;
  // Every refusal counts in stats.bad_messages, not only those of messages
  // that are malformed (bad_field, unknown_type): our own agents should
  // never be refused.
  bool every_refusal_is_bad = false;
  // Each request must carry a MUNGE credential naming its caller, or its
  // session's id and MAC (docs/security.md); one that does not is refused as
  // unauthenticated (session_gone when its session is unknown or expired).
  bool authenticate = false;
};

inline constexpr ReceiveRules kClientRules{.peers = "client", .authenticate = true};
inline constexpr ReceiveRules kAgentRules{.peers = "agent",
                                          .undecodable = spdlog::level::warn,
                                          .refused = spdlog::level::warn,
                                          .drop_replies = true,
                                          .every_refusal_is_bad = true};

// Bounds the log lines about bad or refused messages: a peer that sends
// thousands must not fill the disk. At most kLines per kIntervalS; the
// lines held back are counted and told in one summary line once the
// interval has passed.
class LogLimiter {
 public:
  static constexpr int kLines = 20;
  static constexpr double kIntervalS = 10;

  // Whether a line may be logged at `now`. When an interval with lines held
  // back has ended, `held_back` gets their count (else 0), for the caller to
  // log first.
  bool admit(double now, std::uint64_t& held_back);

 private:
  double interval_start_ = -1;
  int logged_ = 0;
  std::uint64_t held_back_ = 0;
};

// Handles the messages waiting on `socket`: at most `batch` of them, and no
// more once `max_batch_s` has gone by (a client request costs a round trip to
// munged, so a full batch could hold the loop, and the agents' heartbeats,
// for seconds). Log lines about bad messages go through `log`.
inline constexpr double kMaxBatchS = 0.05;
void receive_messages(zmq::socket_t& socket, const RouteTable& routes, const ReceiveRules& rules,
                      DaemonParts& daemon, LogLimiter& log, int batch = 1000,
                      double max_batch_s = kMaxBatchS);

}  // namespace sched::daemon
