// MUNGE credentials (libmunge, docs/security.md §2): a local munged vouches
// for the uid and gid of the process that asked it for a credential; any
// munged sharing its key decodes the credential once, within its time to
// live. `socket` is munged's socket; empty means libmunge's default
// (/run/munge/munge.socket.2).
#pragma once

#include <sys/types.h>

#include <stdexcept>
#include <string>
#include <string_view>

namespace sched::auth {

// A munge_err_t and its message (munge_ctx_strerror's, which names the cause).
class MungeError : public std::runtime_error {
 public:
  MungeError(int code, const std::string& message) : std::runtime_error(message), code_(code) {}
  int code() const { return code_; }
  bool replayed() const;     // EMUNGE_CRED_REPLAYED: this credential was decoded before
  bool expired() const;      // EMUNGE_CRED_EXPIRED or _REWOUND: outside its time to live
  bool unreachable() const;  // EMUNGE_SOCKET: no munged answers at the socket

 private:
  int code_;
};

struct MungeCredential {
  uid_t uid = 0;
  gid_t gid = 0;
  std::string payload;
};

// A credential of this process carrying `payload`, valid for `ttl_s`
// seconds (0: munged's default, 300 s). Throws MungeError.
std::string munge_encode(std::string_view payload, const std::string& socket = {}, int ttl_s = 0);
// What a credential proves; throws MungeError when it proves nothing
// (invalid, expired, replayed, or munged unreachable).
MungeCredential munge_decode(const std::string& credential, const std::string& socket = {});
// Whether a munged answers at `socket` (encodes and decodes a credential).
bool munge_answers(const std::string& socket = {});

}  // namespace sched::auth
