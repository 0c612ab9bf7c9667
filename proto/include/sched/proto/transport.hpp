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
#include <map>
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

// A connection to the engine's client endpoint. Requests may be pipelined
// (post, then take each reply by its seq); call() is both at once.
class Client {
 public:
  // Requests carry the signer's credential; with none, they carry no `cred`
  // (schedd refuses them: tests of that refusal). With `server_public_key`
  // (Z85), the link is CURVE with a key pair made for this connection
  // (schedd off loopback; docs/security.md §3).
  Client(zmq::context_t& context, const std::string& endpoint,
         std::chrono::milliseconds timeout = std::chrono::seconds(10), Signer signer = {},
         const std::string& server_public_key = {});

  // Opens a session (proto/session.hpp): one request signed by the signer,
  // after which every request is signed with the session's key instead, at
  // no round trip to munged. From then on, a request refused as
  // session_gone (schedd restarted, the session expired, the connection was
  // made again) makes the client open a new session and send that request
  // again, once. Throws as call() does.
  void open_session();
  std::uint64_t session() const { return session_; }

  // Sends a request and waits for its reply. Throws TransportError when no
  // reply comes in time, ProtoError (with the server's code and message)
  // when the reply is an error.
  template <class Reply, class Body>
  Reply call(std::string_view type, const Body& body) {
    return take<Reply>(post(type, body));
  }
  // Sends a request without waiting for its reply; returns its seq, for
  // take(). Replies are matched by seq, so many requests may be in flight
  // (keep it below ZeroMQ's queue of 1,000 messages).
  template <class Body>
  std::uint64_t post(std::string_view type, const Body& body) {
    return send_packed(type, encode_body(body));
  }
  // The reply of a posted request, waiting up to the timeout; throws as
  // call() does.
  template <class Reply>
  Reply take(std::uint64_t seq) {
    return take_reply(seq, false).template body_as<Reply>();
  }
  // The bytes call() would send for this request (with the next seq and its
  // credential, or its session's MAC), for tests that send them differently
  // (twice, altered).
  template <class Body>
  std::string request(std::string_view type, const Body& body) {
    return seal(type, ++seq_, encode_body(body));
  }
  // Sends raw bytes (tests of malformed input) and returns the decoded reply
  // envelope, error or not.
  Envelope raw(std::string_view bytes);
  // The next message the server sends unasked (a step's output), waiting up
  // to `timeout`; nothing when none came.
  std::optional<Envelope> receive(std::chrono::milliseconds timeout);
  const std::string& endpoint() const { return endpoint_; }

 private:
  // A request in flight, kept to send it again in a new session.
  struct Sent {
    std::string type;
    std::string packed;
    std::uint64_t session = 0;
  };
  std::string seal(std::string_view type, std::uint64_t seq, const std::string& packed);
  std::uint64_t send_packed(std::string_view type, std::string packed);
  Envelope take_reply(std::uint64_t seq, bool resent);
  Envelope receive_reply(std::uint64_t seq);

  zmq::socket_t socket_;
  std::string endpoint_;
  std::chrono::milliseconds timeout_;
  bool curve_ = false;
  std::uint64_t seq_ = 0;
  Signer signer_;
  std::uint64_t session_ = 0;  // 0: none; requests carry the signer's credential
  std::string session_key_;
  std::map<std::uint64_t, Sent> in_flight_;
  std::map<std::uint64_t, Envelope> replies_;  // came while another reply was awaited
  std::deque<Envelope> unasked_;               // came while a call waited for its reply
};

// A free TCP port on 127.0.0.1, below the system's ephemeral range when it
// can (a port from that range may be taken by an outgoing connection before
// the caller binds it); tests use it to avoid collisions.
int free_tcp_port();

}  // namespace sched::proto
