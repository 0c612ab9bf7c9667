#include "agent_link.hpp"

namespace sched::mall {
namespace {

proto::Envelope decode(const zmq::message_t& message) {
  try {
    return proto::decode(message.data(), message.size());
  } catch (const proto::ProtoError& e) {
    throw Failure(SCHED_MALL_EPROTO,
                  "unreadable message from the node agent: " + std::string(e.what()));
  }
}

}  // namespace

AgentLink::AgentLink(zmq::context_t& context, const std::string& endpoint,
                     std::chrono::milliseconds timeout)
    : socket_(context, zmq::socket_type::dealer), endpoint_(endpoint), timeout_(timeout) {
  // finalize waits for the last reply, so nothing is left to deliver at close.
  socket_.set(zmq::sockopt::linger, 0);
  try {
    socket_.connect(endpoint);
  } catch (const zmq::error_t& e) {
    throw Failure(SCHED_MALL_ENOAGENT,
                  "cannot connect to the node agent at " + endpoint + ": " + e.what());
  }
}

void AgentLink::send(const std::string& payload) {
  // Never blocks: a full queue means the agent has stopped reading.
  if (!socket_.send(zmq::buffer(payload), zmq::send_flags::dontwait)) {
    throw Failure(SCHED_MALL_ENOAGENT,
                  "the node agent at " + endpoint_ + " does not take messages (is it running?)");
  }
}

void AgentLink::other(const proto::Envelope& envelope) {
  if (!envelope.is_reply() && notice_) notice_(envelope);
}

void AgentLink::poll() {
  while (true) {
    zmq::message_t message;
    if (!socket_.recv(message, zmq::recv_flags::dontwait)) return;
    other(decode(message));
  }
}

proto::Envelope AgentLink::wait_reply(std::string_view type, std::uint64_t seq,
                                      std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    const auto left =
        std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      throw Failure(SCHED_MALL_ETIMEDOUT, "no answer to " + std::string(type) +
                                              " from the node agent at " + endpoint_ + " within " +
                                              std::to_string(timeout.count()) + " ms");
    }
    zmq::pollitem_t item{socket_.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, left);
    zmq::message_t message;
    if (!(item.revents & ZMQ_POLLIN) || !socket_.recv(message, zmq::recv_flags::dontwait)) {
      continue;
    }
    proto::Envelope envelope = decode(message);
    if (!envelope.is_reply() || envelope.seq != seq) {
      other(envelope);
      continue;
    }
    if (!*envelope.ok) {
      if (envelope.error && envelope.error->code == proto::code::kAborted) {
        throw Failure(SCHED_MALL_EABORTED, envelope.error->message);
      }
      const std::string why = envelope.error ? envelope.error->code + ": " + envelope.error->message
                                             : "no reason given";
      throw Failure(SCHED_MALL_EPROTO,
                    "the node agent refused " + std::string(type) + " (" + why + ")");
    }
    return envelope;
  }
}

}  // namespace sched::mall
