// Client sessions (docs/protocol.md §2.1, docs/security.md §2.1): a client
// proves who it is once per connection with a MUNGE credential, on a
// `session.open` request that carries a fresh X25519 public key (libsodium
// crypto_kx); schedd answers with its own public key and a session id, and
// both sides derive the same request key. Every later request of the
// connection carries the session id, a seq above the session's last one, and
// an HMAC-SHA-256 under that key over its type, seq and packed body: a
// microsecond to make and check, against a round trip to munged on each side.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace sched::proto {

namespace type {
inline constexpr std::string_view kSessionOpen = "session.open";
}

// The body of session.open (signed with a MUNGE credential, which binds it).
struct SessionOpen {
  std::string key;  // the client's X25519 public key, 64 hex digits
  template <class V>
  void fields(V& v) {
    v("key", key);
  }
};

// Its reply.
struct SessionOpened {
  std::uint64_t session = 0;  // the id later requests carry
  std::string key;            // schedd's X25519 public key of this session, 64 hex digits
  double ttl_s = 0;           // the session ends after this long without a request
  template <class V>
  void fields(V& v) {
    v("session", session);
    v("key", key);
    v("ttl_s", ttl_s);
  }
};

namespace session {

// One side's key pair of one session (raw bytes, 32 each).
struct KeyPair {
  std::string public_key;
  std::string secret_key;
};

KeyPair generate();
// The key requests are signed with, as the client and as schedd derive it
// from their own pair and the other's public key (raw). Throws
// std::invalid_argument when `peer_public` is not a valid 32-byte key.
std::string client_request_key(const KeyPair& mine, std::string_view peer_public);
std::string server_request_key(const KeyPair& mine, std::string_view peer_public);

// HMAC-SHA-256 under `key` of "sched-session 1 <type> <seq>\n" then the
// packed body, as 64 hex digits.
std::string mac(std::string_view key, std::string_view type, std::uint64_t seq,
                std::string_view packed_body);
// Whether `mac_hex` is that MAC (compared in constant time).
bool verify(std::string_view key, std::string_view type, std::uint64_t seq,
            std::string_view packed_body, std::string_view mac_hex);

std::string to_hex(std::string_view bytes);
// Raw bytes of a hex text of exactly `bytes` bytes; empty when it is not one.
std::string from_hex(std::string_view hex, std::size_t bytes);
// A random id for a new session (never 0).
std::uint64_t random_id();

}  // namespace session
}  // namespace sched::proto
