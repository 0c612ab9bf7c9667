#include "sched/auth/credential.hpp"

#include <pwd.h>
#include <sodium.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "sched/auth/munge.hpp"
#include "sched/proto/text.hpp"

namespace sched::auth {
namespace {

std::string sha256_hex(std::string_view data) {
  [[maybe_unused]] static const int ready = sodium_init();  // once; SHA-256 needs no more
  unsigned char digest[crypto_hash_sha256_BYTES];
  crypto_hash_sha256(digest, reinterpret_cast<const unsigned char*>(data.data()), data.size());
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * sizeof digest);
  for (unsigned char byte : digest) {
    out += kHex[byte >> 4];
    out += kHex[byte & 15];
  }
  return out;
}

[[noreturn]] void refuse(const std::string& why) {
  throw proto::ProtoError(proto::code::kUnauthenticated, why);
}

}  // namespace

std::string request_binding(std::string_view type, std::uint64_t seq,
                            std::string_view packed_body) {
  std::string out = "sched-request 1 ";
  out += type;
  out += ' ';
  out += std::to_string(seq);
  out += ' ';
  out += sha256_hex(packed_body);
  return out;
}

proto::Signer munge_signer(std::string socket) {
  return [socket = std::move(socket)](std::string_view type, std::uint64_t seq,
                                      std::string_view body) {
    try {
      return munge_encode(request_binding(type, seq, body), socket);
    } catch (const MungeError& e) {
      // Not the server's answer: the request never left.
      throw proto::TransportError(std::string("cannot get a MUNGE credential: ") + e.what());
    }
  };
}

Caller authenticate(const proto::Envelope& request, const std::string& socket) {
  if (!request.cred || request.cred->empty()) {
    refuse("the request has no credential (cred): sign it with MUNGE (docs/protocol.md §2)");
  }
  MungeCredential decoded;
  try {
    decoded = munge_decode(*request.cred, socket);
  } catch (const MungeError& e) {
    if (e.unreachable()) {
      throw proto::ProtoError(proto::code::kUnavailable,
                              std::string("schedd cannot check credentials: ") + e.what());
    }
    if (e.replayed()) refuse("replayed credential: each request needs a new one");
    if (e.expired()) refuse(std::string("expired credential: ") + e.what());
    refuse(std::string("invalid credential: ") + e.what());
  }
  if (decoded.payload != request_binding(request.type, request.seq, proto::packed_body(request))) {
    refuse("the credential was made for another request");
  }
  Caller caller{decoded.uid, decoded.gid, user_name(decoded.uid)};
  if (caller.user.empty()) {
    refuse("uid " + std::to_string(decoded.uid) + " has no user name on schedd's host");
  }
  return caller;
}

std::string user_name(uid_t uid) {
  long size = sysconf(_SC_GETPW_R_SIZE_MAX);
  std::vector<char> buffer(static_cast<std::size_t>(size > 0 ? size : 16384));
  passwd entry{};
  passwd* found = nullptr;
  while (getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) == ERANGE) {
    buffer.resize(buffer.size() * 2);
  }
  return found ? std::string(found->pw_name) : std::string();
}

}  // namespace sched::auth
