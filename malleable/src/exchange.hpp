// Rank-to-rank messages of one process (malleable.h, "Data exchange"): a
// PULL socket the process binds, whose endpoint it gives to the agent and its
// peers, and a PUSH socket per peer it sends to, connected on first use.
// Peers' endpoints come from a table the caller fills (from the agent, once
// it hands them out) or, for ranks not in it, from a resolver (the
// rendezvous folder). Messages carry a FrameHeader so that recv(from) hands
// out each sender's messages in order and keeps the others for later.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <zmq.hpp>

namespace sched::mall {

class Exchange {
 public:
  // A peer's endpoint for a rank missing from the table; throws Failure
  // (SCHED_MALL_ENOPEER) when it cannot tell.
  using Resolver = std::function<std::string(int rank)>;

  // Binds `bind` (a ZeroMQ endpoint whose port may be "*"). Throws
  // Failure(SCHED_MALL_ECOMM).
  Exchange(zmq::context_t& context, int rank, const std::string& bind,
           std::chrono::milliseconds timeout);

  // Where peers reach this process: the bound endpoint, port resolved.
  const std::string& endpoint() const { return endpoint_; }

  void set_peer(int rank, const std::string& endpoint);
  void set_resolver(Resolver resolver) { resolver_ = std::move(resolver); }

  // A new process set (an adaptation's window, or the set after it): this
  // process is `rank` of `epoch`, and `peers` (rank → endpoint) is the whole
  // table. Messages queued to the old set are still delivered; messages of
  // the new epoch that came early are kept, older ones dropped.
  void reset(std::uint32_t new_epoch, int rank, const std::map<int, std::string>& peers);

  // Queues a copy of the data for `to`; waits only while its queue is full.
  // Throws Failure: SCHED_MALL_ENOPEER, SCHED_MALL_ETIMEDOUT (still full
  // after the timeout; nothing was sent), SCHED_MALL_ECOMM.
  void send(int to, const void* data, std::size_t size) { send(to, data, size, false); }

  // The next message from `from`, waiting up to the timeout. Throws
  // Failure(SCHED_MALL_ETIMEDOUT); the message is then kept for a later call.
  zmq::message_t recv(int from) { return recv(from, false); }

  // The library's own messages (sched_mall_probe_all) travel apart from the
  // application's, so that neither takes the other's place in the order.
  void send_control(int to, const void* data, std::size_t size) { send(to, data, size, true); }
  zmq::message_t recv_control(int from) { return recv(from, true); }

 private:
  struct Outbound {
    std::string endpoint;
    zmq::socket_t socket;  // none until the first send
    std::uint64_t next_seq = 0;
    std::uint64_t next_control_seq = 0;
  };
  struct Inbound {
    std::uint64_t next_seq = 0;
    std::map<std::uint64_t, zmq::message_t> early;  // arrived before their turn
  };

  void send(int to, const void* data, std::size_t size, bool control);
  zmq::message_t recv(int from, bool control);
  // Control messages of a set carry its epoch with the top bit set.
  std::uint32_t epoch(bool control) const { return control ? epoch_ | kControlBit : epoch_; }
  static constexpr std::uint32_t kControlBit = 0x80000000u;

  Outbound& outbound(int to);
  // Moves every message waiting on the inbox into `inbound_`.
  void drain_inbox();

  zmq::context_t& context_;
  int rank_;
  std::chrono::milliseconds timeout_;
  std::uint32_t epoch_ = 0;
  zmq::socket_t inbox_;
  std::string endpoint_;
  Resolver resolver_;
  std::map<int, Outbound> outbound_;                          // by destination rank
  std::map<std::pair<std::uint32_t, int>, Inbound> inbound_;  // by (epoch, sender)
};

}  // namespace sched::mall
