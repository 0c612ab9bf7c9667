#include "sched/proto/curve.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace sched::proto::curve {
namespace fs = std::filesystem;
namespace {

[[noreturn]] void fail(const fs::path& path, const std::string& what) {
  throw std::runtime_error(path.string() + ": " + what);
}

// The first line of `path` that is not empty or a comment, trimmed.
std::string key_line(const fs::path& path) {
  std::ifstream in(path);
  if (!in) fail(path, std::string("cannot read: ") + std::strerror(errno));
  for (std::string line; std::getline(in, line);) {
    const auto begin = line.find_first_not_of(" \t\r");
    if (begin == std::string::npos) continue;
    const auto end = line.find_last_not_of(" \t\r");
    std::string text = line.substr(begin, end - begin + 1);
    // # is a Z85 character too: a comment is a # line that is not a key.
    if (text[0] == '#' && !is_key(text)) continue;
    return text;
  }
  fail(path, "no key in the file");
}

void write_file(const fs::path& path, const std::string& text, mode_t mode) {
  // Created with its final mode: a secret key is never readable by others,
  // not even for a moment.
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) fail(path, std::string("cannot write: ") + std::strerror(errno));
  ::fchmod(fd, mode);
  const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  if (!written) fail(path, "cannot write the key");
}

}  // namespace

bool available() { return zmq_has("curve") != 0; }

KeyPair generate() {
  if (!available()) throw std::runtime_error("this libzmq has no CURVE support");
  char public_key[kKeyChars + 1];
  char secret_key[kKeyChars + 1];
  if (zmq_curve_keypair(public_key, secret_key) != 0) {
    throw std::runtime_error(std::string("cannot make a key pair: ") + zmq_strerror(zmq_errno()));
  }
  return KeyPair{public_key, secret_key};
}

bool is_key(std::string_view text) {
  if (text.size() != kKeyChars) return false;
  // The Z85 alphabet (ZeroMQ RFC 32).
  constexpr std::string_view alphabet =
      "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";
  return text.find_first_not_of(alphabet) == std::string_view::npos;
}

std::string public_of(const std::string& secret) {
  if (!is_key(secret)) throw std::runtime_error("not a Z85 CURVE key");
  char public_key[kKeyChars + 1];
  if (zmq_curve_public(public_key, secret.c_str()) != 0) {
    throw std::runtime_error(std::string("not a CURVE secret key: ") + zmq_strerror(zmq_errno()));
  }
  return public_key;
}

std::string z85_of(std::string_view binary) {
  if (binary.size() != 32) return {};
  char text[kKeyChars + 1];
  if (!zmq_z85_encode(text, reinterpret_cast<const std::uint8_t*>(binary.data()), 32)) return {};
  return text;
}

KeyPair write_key_pair(const fs::path& dir, const std::string& name, bool overwrite) {
  const fs::path secret = dir / (name + ".key");
  const fs::path pub = dir / (name + ".pub");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) fail(dir, "cannot create the folder: " + ec.message());
  KeyPair pair;
  if (!overwrite && fs::exists(secret)) {
    pair = read_secret_key_file(secret);
  } else {
    pair = generate();
    write_file(
        secret,
        "# sched CURVE secret key of " + name + ": keep it private\n" + pair.secret_key + "\n",
        0600);
  }
  write_file(pub, "# sched CURVE public key of " + name + "\n" + pair.public_key + "\n", 0644);
  return pair;
}

KeyPair read_secret_key_file(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    fail(path, std::string("cannot read: ") + std::strerror(errno));
  // As ssh does: a secret others could read may be theirs too.
  if ((st.st_mode & 077) != 0) {
    fail(path, "the secret key is readable by group or others (chmod 600 it)");
  }
  const std::string secret = key_line(path);
  if (!is_key(secret)) fail(path, "not a CURVE secret key (40 characters of Z85 text expected)");
  return KeyPair{public_of(secret), secret};
}

std::string read_public_key_file(const fs::path& path) {
  const std::string key = key_line(path);
  if (!is_key(key)) fail(path, "not a CURVE public key (40 characters of Z85 text expected)");
  return key;
}

bool is_loopback_endpoint(std::string_view endpoint) {
  if (endpoint.rfind("ipc://", 0) == 0 || endpoint.rfind("inproc://", 0) == 0) return true;
  if (endpoint.rfind("tcp://", 0) != 0) return false;
  std::string_view host = endpoint.substr(6);
  // A connecting endpoint may name its source first: tcp://src;dst.
  if (const auto semicolon = host.find(';'); semicolon != std::string_view::npos) {
    host = host.substr(semicolon + 1);
  }
  if (host.rfind('[', 0) == 0) {
    const auto close = host.find(']');
    return close != std::string_view::npos && host.substr(1, close - 1) == "::1";
  }
  host = host.substr(0, host.rfind(':'));
  if (host == "localhost") return true;
  // An address, not a name that starts like one (127.0.0.1.example.org).
  in_addr address{};
  return ::inet_pton(AF_INET, std::string(host).c_str(), &address) == 1 &&
         (ntohl(address.s_addr) >> 24) == 127;
}

void make_server(zmq::socket_t& socket, const KeyPair& own, const std::string& zap_domain) {
  socket.set(zmq::sockopt::curve_server, true);
  socket.set(zmq::sockopt::curve_secretkey, own.secret_key);
  socket.set(zmq::sockopt::zap_domain, zap_domain);
}

void make_client(zmq::socket_t& socket, const KeyPair& own, const std::string& server_public) {
  socket.set(zmq::sockopt::curve_serverkey, server_public);
  socket.set(zmq::sockopt::curve_publickey, own.public_key);
  socket.set(zmq::sockopt::curve_secretkey, own.secret_key);
}

HandshakeWatch::HandshakeWatch(zmq::context_t& context, zmq::socket_t& socket,
                               const std::string& name)
    : monitor_(context, zmq::socket_type::pair) {
  const std::string endpoint = "inproc://curve-monitor-" + name;
  if (zmq_socket_monitor(socket.handle(), endpoint.c_str(),
                         ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH |
                             ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
                             ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL) != 0) {
    throw std::runtime_error(std::string("cannot watch the connection: ") +
                             zmq_strerror(zmq_errno()));
  }
  monitor_.set(zmq::sockopt::linger, 0);
  monitor_.connect(endpoint);
}

std::optional<std::string> HandshakeWatch::failure() {
  std::optional<std::string> out;
  while (true) {
    // An event is two frames: [event (u16) + value (u32)], [endpoint].
    zmq::message_t event;
    if (!monitor_.recv(event, zmq::recv_flags::dontwait)) return out;
    zmq::message_t address;
    if (event.more()) (void)monitor_.recv(address, zmq::recv_flags::dontwait);
    if (event.size() < 6) continue;
    std::uint16_t what = 0;
    std::uint32_t value = 0;
    std::memcpy(&what, event.data(), 2);
    std::memcpy(&value, static_cast<const char*>(event.data()) + 2, 4);
    if (what == ZMQ_EVENT_HANDSHAKE_SUCCEEDED) {
      failing_ = false;
      continue;
    }
    if (failing_) continue;
    failing_ = true;
    const std::string where = address.to_string();
    if (what == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH) {
      out = where + " refused this key (status " + std::to_string(value) +
            "): is it in the server's authorised keys?";
    } else {
      out = where +
            ": the secure handshake failed: is the server's public key right, and does it "
            "use CURVE?";
    }
  }
}

}  // namespace sched::proto::curve
