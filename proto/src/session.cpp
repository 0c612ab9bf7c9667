#include "sched/proto/session.hpp"

#include <sodium.h>

#include <stdexcept>

namespace sched::proto::session {
namespace {

void ready() {
  // sodium_init is safe to call again; its result says only "already done".
  static const int once = sodium_init();
  if (once < 0) throw std::runtime_error("libsodium cannot start");
}

const unsigned char* bytes(std::string_view text) {
  return reinterpret_cast<const unsigned char*>(text.data());
}

std::string prefix(std::string_view type, std::uint64_t seq) {
  std::string out = "sched-session 1 ";
  out += type;
  out += ' ';
  out += std::to_string(seq);
  out += '\n';
  return out;
}

void raw_mac(std::string_view key, std::string_view type, std::uint64_t seq,
             std::string_view packed_body, unsigned char* out) {
  crypto_auth_hmacsha256_state state;
  crypto_auth_hmacsha256_init(&state, bytes(key), key.size());
  const std::string head = prefix(type, seq);
  crypto_auth_hmacsha256_update(&state, bytes(head), head.size());
  crypto_auth_hmacsha256_update(&state, bytes(packed_body), packed_body.size());
  crypto_auth_hmacsha256_final(&state, out);
}

}  // namespace

KeyPair generate() {
  ready();
  unsigned char pk[crypto_kx_PUBLICKEYBYTES];
  unsigned char sk[crypto_kx_SECRETKEYBYTES];
  crypto_kx_keypair(pk, sk);
  return {std::string(reinterpret_cast<char*>(pk), sizeof pk),
          std::string(reinterpret_cast<char*>(sk), sizeof sk)};
}

std::string client_request_key(const KeyPair& mine, std::string_view peer_public) {
  if (peer_public.size() != crypto_kx_PUBLICKEYBYTES) {
    throw std::invalid_argument("a session key must be 32 bytes");
  }
  unsigned char rx[crypto_kx_SESSIONKEYBYTES];
  unsigned char tx[crypto_kx_SESSIONKEYBYTES];
  if (crypto_kx_client_session_keys(rx, tx, bytes(mine.public_key), bytes(mine.secret_key),
                                    bytes(peer_public)) != 0) {
    throw std::invalid_argument("schedd's session key is not acceptable");
  }
  // The client sends with tx; schedd receives with its rx: the same key.
  return std::string(reinterpret_cast<char*>(tx), sizeof tx);
}

std::string server_request_key(const KeyPair& mine, std::string_view peer_public) {
  if (peer_public.size() != crypto_kx_PUBLICKEYBYTES) {
    throw std::invalid_argument("a session key must be 32 bytes");
  }
  unsigned char rx[crypto_kx_SESSIONKEYBYTES];
  unsigned char tx[crypto_kx_SESSIONKEYBYTES];
  if (crypto_kx_server_session_keys(rx, tx, bytes(mine.public_key), bytes(mine.secret_key),
                                    bytes(peer_public)) != 0) {
    throw std::invalid_argument("the client's session key is not acceptable");
  }
  return std::string(reinterpret_cast<char*>(rx), sizeof rx);
}

std::string mac(std::string_view key, std::string_view type, std::uint64_t seq,
                std::string_view packed_body) {
  unsigned char out[crypto_auth_hmacsha256_BYTES];
  raw_mac(key, type, seq, packed_body, out);
  return to_hex(std::string_view(reinterpret_cast<char*>(out), sizeof out));
}

bool verify(std::string_view key, std::string_view type, std::uint64_t seq,
            std::string_view packed_body, std::string_view mac_hex) {
  const std::string given = from_hex(mac_hex, crypto_auth_hmacsha256_BYTES);
  if (given.empty()) return false;
  unsigned char out[crypto_auth_hmacsha256_BYTES];
  raw_mac(key, type, seq, packed_body, out);
  return sodium_memcmp(out, given.data(), sizeof out) == 0;
}

std::string to_hex(std::string_view data) {
  std::string out(2 * data.size() + 1, '\0');
  sodium_bin2hex(out.data(), out.size(), bytes(data), data.size());
  out.pop_back();
  return out;
}

std::string from_hex(std::string_view hex, std::size_t size) {
  if (hex.size() != 2 * size) return {};
  std::string out(size, '\0');
  std::size_t length = 0;
  if (sodium_hex2bin(reinterpret_cast<unsigned char*>(out.data()), size, hex.data(), hex.size(),
                     nullptr, &length, nullptr) != 0 ||
      length != size) {
    return {};
  }
  return out;
}

std::uint64_t random_id() {
  ready();
  std::uint64_t id = 0;
  while (id == 0) randombytes_buf(&id, sizeof id);
  return id;
}

}  // namespace sched::proto::session
