#include "exchange.hpp"

#include "failure.hpp"
#include "frame_header.hpp"
#include "sched/malleable.h"

namespace sched::mall {

Exchange::Exchange(zmq::context_t& context, int rank, const std::string& bind,
                   std::chrono::milliseconds timeout)
    : context_(context), rank_(rank), timeout_(timeout), inbox_(context, zmq::socket_type::pull) {
  inbox_.set(zmq::sockopt::linger, 0);
  try {
    inbox_.bind(bind);
    endpoint_ = inbox_.get(zmq::sockopt::last_endpoint);
  } catch (const zmq::error_t& e) {
    throw Failure(SCHED_MALL_ECOMM, "cannot bind the data socket to " + bind + ": " + e.what() +
                                        " (see SCHED_MALL_BIND)");
  }
}

void Exchange::set_peer(int rank, const std::string& endpoint) {
  Outbound& peer = outbound_[rank];
  if (peer.endpoint == endpoint) return;
  peer.endpoint = endpoint;
  peer.socket = zmq::socket_t();  // reconnects to the new endpoint at the next send
}

void Exchange::reset(std::uint32_t new_epoch, int rank, const std::map<int, std::string>& peers) {
  drain_inbox();
  epoch_ = new_epoch;
  rank_ = rank;
  outbound_.clear();  // each socket's linger delivers what it still holds
  for (const auto& [peer, endpoint] : peers) outbound_[peer].endpoint = endpoint;
  // The set is complete: ranks not in it are errors, not files to wait for.
  resolver_ = nullptr;
  std::erase_if(inbound_, [new_epoch](const auto& entry) {
    const std::uint32_t e = entry.first.first & ~kControlBit;
    return e != new_epoch && e != new_epoch + 1;
  });
}

Exchange::Outbound& Exchange::outbound(int to) {
  Outbound& peer = outbound_[to];
  if (peer.endpoint.empty()) {
    if (!resolver_)
      throw Failure(SCHED_MALL_ENOPEER, "no endpoint known for rank " + std::to_string(to));
    peer.endpoint = resolver_(to);
  }
  if (!peer.socket) {
    zmq::socket_t socket(context_, zmq::socket_type::push);
    // Data still queued when the process finalizes is delivered first.
    socket.set(zmq::sockopt::linger, static_cast<int>(timeout_.count()));
    socket.set(zmq::sockopt::sndtimeo, static_cast<int>(timeout_.count()));
    try {
      socket.connect(peer.endpoint);
    } catch (const zmq::error_t& e) {
      const std::string endpoint = std::exchange(peer.endpoint, "");
      throw Failure(SCHED_MALL_ECOMM, "cannot connect to rank " + std::to_string(to) + " at " +
                                          endpoint + ": " + e.what());
    }
    peer.socket = std::move(socket);
  }
  return peer;
}

void Exchange::send(int to, const void* data, std::size_t size, bool control) {
  Outbound& peer = outbound(to);
  std::uint64_t& seq = control ? peer.next_control_seq : peer.next_seq;
  const auto header = encode_frame_header({epoch(control), rank_, seq});
  // Only the first frame can wait for room: ZeroMQ takes a message whole.
  if (!peer.socket.send(zmq::buffer(header), zmq::send_flags::sndmore)) {
    throw Failure(SCHED_MALL_ETIMEDOUT, "rank " + std::to_string(to) + " at " + peer.endpoint +
                                            " has not taken earlier messages within " +
                                            std::to_string(timeout_.count()) + " ms");
  }
  peer.socket.send(zmq::message_t(data, size), zmq::send_flags::none);
  ++seq;
}

zmq::message_t Exchange::recv(int from, bool control) {
  Inbound& in = inbound_[{epoch(control), from}];
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  while (true) {
    if (auto it = in.early.find(in.next_seq); it != in.early.end()) {
      zmq::message_t message = std::move(it->second);
      in.early.erase(it);
      ++in.next_seq;
      return message;
    }
    const auto left =
        std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      throw Failure(SCHED_MALL_ETIMEDOUT, "no message from rank " + std::to_string(from) +
                                              " within " + std::to_string(timeout_.count()) +
                                              " ms");
    }
    zmq::pollitem_t item{inbox_.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, left);
    drain_inbox();
  }
}

void Exchange::drain_inbox() {
  while (true) {
    zmq::message_t head;
    if (!inbox_.recv(head, zmq::recv_flags::dontwait)) return;
    zmq::message_t data;
    bool well_formed = head.more() && inbox_.recv(data, zmq::recv_flags::dontwait);
    // Frames beyond two mean a stranger's message: read them away.
    while (data.more()) {
      well_formed = false;
      if (!inbox_.recv(data, zmq::recv_flags::dontwait)) break;
    }
    const auto header = decode_frame_header(head.data(), head.size());
    if (!well_formed || !header) continue;
    Inbound& in = inbound_[{header->epoch, header->from}];
    if (header->seq < in.next_seq) continue;  // a duplicate: already handed out
    in.early.insert_or_assign(header->seq, std::move(data));
  }
}

}  // namespace sched::mall
