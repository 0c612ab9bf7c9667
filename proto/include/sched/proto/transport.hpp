// ZeroMQ plumbing shared by the daemon, the agent and the CLI (cppzmq).
//
// Clients and agents use DEALER sockets and send one frame: the encoded
// envelope. The engine's ROUTER sockets see [peer identity, envelope] and
// answer the same way. Events go out on PUB as [topic, body].
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <zmq.hpp>

#include "sched/proto/envelope.hpp"

namespace sched::proto {

// Default endpoints (docs/design.md §5); the config may change them.
inline constexpr std::string_view kDefaultClientEndpoint = "tcp://127.0.0.1:7100";
inline constexpr std::string_view kDefaultAgentEndpoint = "tcp://127.0.0.1:7101";
inline constexpr std::string_view kDefaultEventEndpoint = "tcp://127.0.0.1:7102";

// No answer, or the socket could not be set up: a problem of reaching the
// peer, not of what was said (that is ProtoError).
class TransportError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One message received on a ROUTER socket.
struct Routed {
  std::string peer;  // the sender's routing id, to answer it
  zmq::message_t payload;
  // What the ZAP handler said of the connection (a CURVE peer's public key
  // in schedd); empty on a socket without authentication.
  std::string user_id;
};

// Receives [identity, payload] without blocking; nothing when no message is
// waiting. Messages with another frame count are dropped (and counted by the
// caller through the return of `malformed`).
std::optional<Routed> receive_routed(zmq::socket_t& router, bool* malformed = nullptr);
void send_routed(zmq::socket_t& router, const std::string& peer, std::string_view payload);

// Makes the credential of one request from its type, seq and packed body
// (sched/auth/credential.hpp has the MUNGE one); it may throw.
using Signer =
    std::function<std::string(std::string_view type, std::uint64_t seq, std::string_view body)>;

// A connection to the engine's client endpoint: one request at a time.
class Client {
 public:
  // Requests carry the signer's credential; with none, they carry no `cred`
  // (schedd refuses them: tests of that refusal). With `server_public_key`
  // (Z85), the link is CURVE with a key pair made for this connection
  // (schedd off loopback; docs/security.md §3).
  Client(zmq::context_t& context, const std::string& endpoint,
         std::chrono::milliseconds timeout = std::chrono::seconds(10), Signer signer = {},
         const std::string& server_public_key = {});

  // Sends a request and waits for its reply. Throws TransportError when no
  // reply comes in time, ProtoError (with the server's code and message)
  // when the reply is an error.
  template <class Reply, class Body>
  Reply call(std::string_view type, const Body& body) {
    return exchange(request(type, body)).template body_as<Reply>();
  }
  // The bytes call() would send for this request (with the next seq and its
  // credential), for tests that send them differently (twice, altered).
  template <class Body>
  std::string request(std::string_view type, const Body& body) {
    const std::string packed = encode_body(body);
    ++seq_;
    return encode_packed_request(type, seq_, packed,
                                 signer_ ? signer_(type, seq_, packed) : std::string());
  }
  // Sends raw bytes (tests of malformed input) and returns the decoded reply
  // envelope, error or not.
  Envelope raw(std::string_view bytes);
  // The next message the server sends unasked (a step's output), waiting up
  // to `timeout`; nothing when none came.
  std::optional<Envelope> receive(std::chrono::milliseconds timeout);
  const std::string& endpoint() const { return endpoint_; }

 private:
  Envelope exchange(const std::string& payload);
  Envelope receive_reply(std::uint64_t seq);

  zmq::socket_t socket_;
  std::string endpoint_;
  std::chrono::milliseconds timeout_;
  bool curve_ = false;
  std::uint64_t seq_ = 0;
  Signer signer_;
  std::deque<Envelope> unasked_;  // came while a call waited for its reply
};

// A free TCP port on 127.0.0.1, below the system's ephemeral range when it
// can (a port from that range may be taken by an outgoing connection before
// the caller binds it); tests use it to avoid collisions.
int free_tcp_port();

}  // namespace sched::proto
