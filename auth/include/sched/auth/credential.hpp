// A client request's credential (docs/protocol.md §2): the MUNGE payload
// binds the request's type, seq and a SHA-256 of its packed body, so a
// credential lifted from one request is refused on any other; munged refuses
// a second decode of the same credential (a replay).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "sched/proto/envelope.hpp"
#include "sched/proto/transport.hpp"

namespace sched::auth {

// Who sent a request, as its credential proves.
struct Caller {
  uid_t uid = 0;
  gid_t gid = 0;
  std::string user;  // the uid's name on this host
};

// The payload a request's credential carries.
std::string request_binding(std::string_view type, std::uint64_t seq, std::string_view packed_body);

// Signs requests with MUNGE credentials of this process (through `socket`).
proto::Signer munge_signer(std::string socket = {});

// The caller of `request`, from its credential (decoded through `socket`).
// Throws proto::ProtoError: unauthenticated when the credential is missing,
// invalid, expired, replayed, bound to another request, or of a uid with no
// name here; unavailable when munged does not answer.
Caller authenticate(const proto::Envelope& request, const std::string& socket = {});

// The name of `uid` on this host (getpwuid_r); empty when it has none.
std::string user_name(uid_t uid);

}  // namespace sched::auth
