// Client sessions on schedd's side (proto/session.hpp, docs/security.md
// §2.1): a session is opened by a request that MUNGE authenticated, is bound
// to the connection it was opened on, and names its caller for every later
// request that carries its id, a seq above its last one and a MAC under its
// key. It ends after `ttl_s` without a request, and with schedd (the table
// is in memory only).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

#include "sched/auth/credential.hpp"
#include "sched/proto/envelope.hpp"
#include "sched/proto/session.hpp"

namespace sched::auth {

class Sessions {
 public:
  // At most this many sessions per uid: opening one more ends that user's
  // least recently used (a user cannot fill schedd's memory with them).
  static constexpr std::size_t kMaxPerUser = 64;

  // A new session of `caller` (authenticated by its credential) on the
  // connection `peer`, keyed from `request`'s client key; `seq` is the
  // opening request's (later ones must be above it). Throws
  // proto::ProtoError(bad_field) when the key is not 64 hex digits of a
  // valid X25519 key.
  proto::SessionOpened open(const Caller& caller, const std::string& peer,
                            const proto::SessionOpen& request, std::uint64_t seq, double now,
                            double ttl_s);

  // The caller of `request`, which carries a session id. Throws
  // proto::ProtoError and changes nothing when it is refused:
  // session_gone when the session is unknown, expired (no request for
  // `ttl_s`) or was opened on another connection than `peer`;
  // unauthenticated when the MAC is missing or wrong, or the seq is not
  // above the session's last (a replay). On success, the session's last
  // seq and last use move on.
  const Caller& check(const proto::Envelope& request, const std::string& peer, double now,
                      double ttl_s);

  // Forgets the sessions unused for `ttl_s`.
  void expire(double now, double ttl_s);
  std::size_t size() const { return sessions_.size(); }

 private:
  struct Session {
    Caller caller;
    std::string peer;
    std::string key;
    std::uint64_t last_seq = 0;
    double last_used = 0;
  };
  void make_room_for(uid_t uid);
  std::unordered_map<std::uint64_t, Session> sessions_;
};

}  // namespace sched::auth
