#include "sched/proto/transport.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>
#include <vector>

#include "sched/proto/curve.hpp"
#include "sched/proto/session.hpp"

namespace sched::proto {

std::optional<Routed> receive_routed(zmq::socket_t& router, bool* malformed) {
  if (malformed) *malformed = false;
  std::vector<zmq::message_t> frames;
  while (true) {
    zmq::message_t frame;
    if (!router.recv(frame, zmq::recv_flags::dontwait)) {
      if (frames.empty()) return std::nullopt;
      break;  // cannot happen mid-message (ZeroMQ delivers whole messages)
    }
    const bool more = frame.more();
    frames.push_back(std::move(frame));
    if (!more) break;
  }
  if (frames.size() != 2) {
    if (malformed) *malformed = true;
    return std::nullopt;
  }
  Routed routed;
  routed.peer = frames[0].to_string();
  routed.payload = std::move(frames[1]);
  // Set by the ZAP handler for the whole connection; absent without one.
  if (const char* user = zmq_msg_gets(routed.payload.handle(), "User-Id")) routed.user_id = user;
  return routed;
}

void send_routed(zmq::socket_t& router, const std::string& peer, std::string_view payload) {
  // A peer that is gone makes the ROUTER drop the message (not mandatory
  // routing): an answer to a client that gave up is lost, as it should be.
  router.send(zmq::buffer(peer), zmq::send_flags::sndmore | zmq::send_flags::dontwait);
  router.send(zmq::buffer(payload), zmq::send_flags::dontwait);
}

Client::Client(zmq::context_t& context, const std::string& endpoint,
               std::chrono::milliseconds timeout, Signer signer,
               const std::string& server_public_key)
    : socket_(context, zmq::socket_type::dealer),
      endpoint_(endpoint),
      timeout_(timeout),
      curve_(!server_public_key.empty()),
      signer_(std::move(signer)) {
  socket_.set(zmq::sockopt::linger, 0);
  // Who the user is does not come from this key (it is new each time): it
  // only encrypts the link and proves schedd is the one with its key.
  if (curve_) curve::make_client(socket_, curve::generate(), server_public_key);
  try {
    socket_.connect(endpoint);
  } catch (const zmq::error_t& e) {
    throw TransportError("cannot connect to " + endpoint + ": " + e.what());
  }
}

std::string Client::seal(std::string_view type, std::uint64_t seq, const std::string& packed) {
  if (session_ != 0) {
    return encode_session_request(type, seq, packed, session_,
                                  session::mac(session_key_, type, seq, packed));
  }
  return encode_packed_request(type, seq, packed, signer_ ? signer_(type, seq, packed) : "");
}

std::uint64_t Client::send_packed(std::string_view type, std::string packed) {
  const std::uint64_t seq = ++seq_;
  const std::string payload = seal(type, seq, packed);
  if (!socket_.send(zmq::buffer(payload), zmq::send_flags::dontwait)) {
    throw TransportError("cannot send to " + endpoint_ + " (is schedd running?)");
  }
  in_flight_[seq] = Sent{std::string(type), std::move(packed), session_};
  return seq;
}

Envelope Client::take_reply(std::uint64_t seq, bool resent) {
  Envelope reply = receive_reply(seq);
  auto sent = in_flight_.extract(seq);
  if (reply.ok != false) return reply;
  const ErrorBody error = reply.error.value_or(ErrorBody{std::string(code::kInternal), ""});
  if (error.code == code::kSessionGone && !resent && !sent.empty() && sent.mapped().session != 0) {
    // Refused before anything was done: safe to send again. Another request
    // of the same dead session may have opened the new one already.
    if (sent.mapped().session == session_) open_session();
    return take_reply(send_packed(sent.mapped().type, std::move(sent.mapped().packed)), true);
  }
  throw ProtoError(error.code, error.message);
}

void Client::open_session() {
  session_ = 0;
  session_key_.clear();
  const session::KeyPair mine = session::generate();
  const auto opened =
      call<SessionOpened>(type::kSessionOpen, SessionOpen{session::to_hex(mine.public_key)});
  const std::string theirs = session::from_hex(opened.key, mine.public_key.size());
  if (theirs.empty() || opened.session == 0) {
    throw ProtoError(code::kBadField, "session.open: schedd's answer has no valid key or id");
  }
  try {
    session_key_ = session::client_request_key(mine, theirs);
  } catch (const std::invalid_argument& e) {
    throw ProtoError(code::kBadField, std::string("session.open: ") + e.what());
  }
  session_ = opened.session;
}

Envelope Client::raw(std::string_view bytes) {
  ++seq_;
  if (!socket_.send(zmq::buffer(bytes), zmq::send_flags::dontwait)) {
    throw TransportError("cannot send to " + endpoint_);
  }
  // A reply to a message that could not be read carries seq 0.
  return receive_reply(0);
}

Envelope Client::receive_reply(std::uint64_t seq) {
  if (auto kept = replies_.extract(seq); !kept.empty()) return std::move(kept.mapped());
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      in_flight_.erase(seq);  // its answer, should it come, is dropped
      throw TransportError("no answer from " + endpoint_ + " within " +
                           std::to_string(timeout_.count()) + " ms (is schedd running?" +
                           (curve_ ? " Is the public key the one of its key pair?)" : ")"));
    }
    zmq::pollitem_t item{socket_.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, left);
    if (!(item.revents & ZMQ_POLLIN)) continue;
    zmq::message_t message;
    if (!socket_.recv(message, zmq::recv_flags::dontwait)) continue;
    Envelope envelope = decode(message.data(), message.size());
    // What the server sends unasked waits for receive().
    if (!envelope.is_reply()) {
      unasked_.push_back(std::move(envelope));
      continue;
    }
    if (envelope.seq == seq || seq == 0) return envelope;
    // Another request in flight keeps its reply for its take(); a late
    // answer to one that timed out is dropped.
    if (in_flight_.count(envelope.seq) != 0) replies_.emplace(envelope.seq, std::move(envelope));
  }
}

std::optional<Envelope> Client::receive(std::chrono::milliseconds timeout) {
  if (!unasked_.empty()) {
    Envelope envelope = std::move(unasked_.front());
    unasked_.pop_front();
    return envelope;
  }
  zmq::pollitem_t item{socket_.handle(), 0, ZMQ_POLLIN, 0};
  zmq::poll(&item, 1, timeout);
  if (!(item.revents & ZMQ_POLLIN)) return std::nullopt;
  zmq::message_t message;
  if (!socket_.recv(message, zmq::recv_flags::dontwait)) return std::nullopt;
  return decode(message.data(), message.size());
}

namespace {

// The first port of the system's ephemeral range: outgoing connections take
// their local ports from it, so a port found free there may be taken by one
// before the caller binds it.
int ephemeral_low() {
  std::ifstream range("/proc/sys/net/ipv4/ip_local_port_range");
  int low = 0;
  int high = 0;
  if (range >> low >> high && low > 2048) return low;
  return 32768;
}

// Whether `port` (0: any) can be bound on 127.0.0.1 now; the port bound.
int try_bind(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw TransportError(std::string("socket: ") + std::strerror(errno));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  socklen_t length = sizeof address;
  const bool bound = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
                     ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0;
  ::close(fd);
  return bound ? ntohs(address.sin_port) : -1;
}

}  // namespace

int free_tcp_port() {
  // Below the ephemeral range first (see ephemeral_low), at random so that
  // callers in parallel rarely pick the same one.
  const int low = ephemeral_low();
  if (low > 10000 + 100) {
    std::random_device seed;
    std::mt19937 pick(seed());
    std::uniform_int_distribution<int> port(10000, low - 1);
    for (int attempt = 0; attempt < 50; ++attempt) {
      if (const int bound = try_bind(port(pick)); bound > 0) return bound;
    }
  }
  const int bound = try_bind(0);
  if (bound <= 0) throw TransportError("cannot find a free port on 127.0.0.1");
  return bound;
}

}  // namespace sched::proto
