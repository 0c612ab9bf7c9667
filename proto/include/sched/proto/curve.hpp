// ZeroMQ CURVE keys and sockets (docs/security.md §3): schedd and each
// node agent have a key pair; a link between them is authenticated and
// encrypted (CurveZMQ). Keys are Z85 text, 40 characters.
//
// Files: NAME.key holds the secret key (mode 0600: a key readable by others
// is refused), NAME.pub the public key; both one line of Z85, lines starting
// with # are comments (# is a Z85 character too: a line that is a key is
// never a comment).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <zmq.hpp>

namespace sched::proto::curve {

inline constexpr std::size_t kKeyChars = 40;  // Z85 of 32 bytes

struct KeyPair {
  std::string public_key;  // Z85
  std::string secret_key;  // Z85
};

// Whether this libzmq was built with CURVE.
bool available();
// A fresh key pair. Throws std::runtime_error when CURVE is not available.
KeyPair generate();
// The public key of a secret key. Throws std::runtime_error when `secret` is
// not a Z85 key.
std::string public_of(const std::string& secret);
// Whether `text` is a 40-character Z85 key.
bool is_key(std::string_view text);
// The Z85 form of a 32-byte binary key (a ZAP request carries binary keys).
std::string z85_of(std::string_view binary);

// Writes DIR/NAME.key (0600) and DIR/NAME.pub for `pair` (a fresh one when
// not given). An existing file is kept unless `overwrite`: the pair in the
// files is returned then. Throws std::runtime_error on a file error.
KeyPair write_key_pair(const std::filesystem::path& dir, const std::string& name,
                       bool overwrite = false);
// Reads a secret key file (its public key is derived). Throws
// std::runtime_error naming the file: missing, unreadable, readable by group
// or others, or not a key.
KeyPair read_secret_key_file(const std::filesystem::path& path);
// Reads a public key file. Throws std::runtime_error naming the file.
std::string read_public_key_file(const std::filesystem::path& path);

// Whether a ZeroMQ endpoint stays on this machine: ipc://, inproc://, or
// tcp:// on 127.0.0.0/8, ::1 or localhost. Such links are not encrypted (what
// can read them can read the processes' memory too).
bool is_loopback_endpoint(std::string_view endpoint);

// Makes `socket` a CURVE server with `own` keys, before it binds. Every
// connection is then checked by the context's ZAP handler (`zap_domain` in
// its requests). libzmq accepts every key when no handler is bound: the
// caller binds its handler first.
void make_server(zmq::socket_t& socket, const KeyPair& own, const std::string& zap_domain);
// Makes `socket` a CURVE client of the server with `server_public` key,
// before it connects.
void make_client(zmq::socket_t& socket, const KeyPair& own, const std::string& server_public);

// Watches a CURVE client socket's handshakes (a ZeroMQ socket monitor): the
// server refusing the key shows only there, as the connection just closes.
class HandshakeWatch {
 public:
  HandshakeWatch(zmq::context_t& context, zmq::socket_t& socket, const std::string& name);
  // Without blocking: a sentence when a handshake failed since the last call
  // (the first failure after a success, not every retry), else nothing.
  std::optional<std::string> failure();

 private:
  zmq::socket_t monitor_;
  bool failing_ = false;
};

}  // namespace sched::proto::curve
