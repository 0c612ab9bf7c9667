// The process's connection to its node agent ($SCHED_AGENT_ENDPOINT): one
// DEALER socket speaking the project's envelope (docs/protocol.md §2, §7,
// §8). Besides replies, the agent sends notices (proc.adapt_pending, ...):
// they go to the notice handler whenever the socket is read.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <zmq.hpp>

#include "failure.hpp"
#include "sched/malleable.h"
#include "sched/proto/envelope.hpp"

namespace sched::mall {

class AgentLink {
 public:
  // Throws Failure(SCHED_MALL_ENOAGENT) when the endpoint is unusable. An
  // agent that is not there yet is no error: messages wait for it.
  AgentLink(zmq::context_t& context, const std::string& endpoint,
            std::chrono::milliseconds timeout);

  // Sends a request and waits for its reply's body. Throws Failure:
  // SCHED_MALL_ETIMEDOUT (no reply in time), SCHED_MALL_EPROTO (an error
  // reply, or one that cannot be read).
  template <class Reply, class Body>
  Reply call(std::string_view type, const Body& body) {
    return call<Reply>(type, body, timeout_);
  }
  // The same with another time limit. An error reply with code "aborted"
  // throws Failure(SCHED_MALL_EABORTED).
  template <class Reply, class Body>
  Reply call(std::string_view type, const Body& body, std::chrono::milliseconds timeout);

  using NoticeHandler = std::function<void(const proto::Envelope&)>;
  void on_notice(NoticeHandler handler) { notice_ = std::move(handler); }
  // Reads whatever the agent sent, without waiting.
  void poll();

  // Sends a message that gets no reply, without waiting.
  template <class Body>
  void notify(std::string_view type, const Body& body) {
    send(proto::encode_request(type, ++seq_, body));
  }

  const std::string& endpoint() const { return endpoint_; }

 private:
  void send(const std::string& payload);
  proto::Envelope wait_reply(std::string_view type, std::uint64_t seq,
                             std::chrono::milliseconds timeout);
  // A message that is not the awaited reply: a notice goes to the handler;
  // late replies to requests that timed out are dropped.
  void other(const proto::Envelope& envelope);

  zmq::socket_t socket_;
  std::string endpoint_;
  std::chrono::milliseconds timeout_;
  std::uint64_t seq_ = 0;
  NoticeHandler notice_;
};

template <class Reply, class Body>
Reply AgentLink::call(std::string_view type, const Body& body, std::chrono::milliseconds timeout) {
  send(proto::encode_request(type, ++seq_, body));
  const proto::Envelope reply = wait_reply(type, seq_, timeout);
  try {
    return reply.body_as<Reply>();
  } catch (const proto::ProtoError& e) {
    throw Failure(SCHED_MALL_EPROTO,
                  "unreadable reply to " + std::string(type) + " from the node agent: " + e.what());
  }
}

}  // namespace sched::mall
