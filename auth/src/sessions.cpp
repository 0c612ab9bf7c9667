#include "sched/auth/sessions.hpp"

#include <stdexcept>

namespace sched::auth {
namespace {

[[noreturn]] void gone(const std::string& why) {
  throw proto::ProtoError(proto::code::kSessionGone, why + ": open a new session");
}

[[noreturn]] void refuse(const std::string& why) {
  throw proto::ProtoError(proto::code::kUnauthenticated, why);
}

}  // namespace

proto::SessionOpened Sessions::open(const Caller& caller, const std::string& peer,
                                    const proto::SessionOpen& request, std::uint64_t seq,
                                    double now, double ttl_s) {
  const proto::session::KeyPair mine = proto::session::generate();
  const std::string theirs = proto::session::from_hex(request.key, mine.public_key.size());
  if (theirs.empty()) {
    throw proto::ProtoError(proto::code::kBadField,
                            "body.key: expected an X25519 public key as 64 hex digits");
  }
  std::string key;
  try {
    key = proto::session::server_request_key(mine, theirs);
  } catch (const std::invalid_argument& e) {
    throw proto::ProtoError(proto::code::kBadField, std::string("body.key: ") + e.what());
  }
  make_room_for(caller.uid);
  std::uint64_t id = proto::session::random_id();
  while (sessions_.count(id) != 0) id = proto::session::random_id();
  sessions_.emplace(id, Session{caller, peer, std::move(key), seq, now});
  return proto::SessionOpened{id, proto::session::to_hex(mine.public_key), ttl_s};
}

const Caller& Sessions::check(const proto::Envelope& request, const std::string& peer, double now,
                              double ttl_s) {
  const std::uint64_t id = request.session.value_or(0);
  const auto found = sessions_.find(id);
  if (found == sessions_.end()) gone("unknown session " + std::to_string(id));
  Session& session = found->second;
  if (session.peer != peer)
    gone("session " + std::to_string(id) + " belongs to another connection");
  if (now - session.last_used > ttl_s) {
    sessions_.erase(found);
    gone("session " + std::to_string(id) + " expired");
  }
  if (!request.mac || request.mac->empty()) {
    refuse("the request has no MAC (mac): sign it with the session's key");
  }
  if (!proto::session::verify(session.key, request.type, request.seq, proto::packed_body(request),
                              *request.mac)) {
    refuse("wrong MAC: the request was not signed with session " + std::to_string(id) + "'s key");
  }
  if (request.seq <= session.last_seq) {
    refuse("replayed request: seq " + std::to_string(request.seq) +
           " is not above the session's last, " + std::to_string(session.last_seq));
  }
  session.last_seq = request.seq;
  session.last_used = now;
  return session.caller;
}

void Sessions::expire(double now, double ttl_s) {
  std::erase_if(sessions_, [&](const auto& entry) { return now - entry.second.last_used > ttl_s; });
}

void Sessions::make_room_for(uid_t uid) {
  std::size_t count = 0;
  auto oldest = sessions_.end();
  for (auto it = sessions_.begin(); it != sessions_.end(); ++it) {
    if (it->second.caller.uid != uid) continue;
    ++count;
    if (oldest == sessions_.end() || it->second.last_used < oldest->second.last_used) oldest = it;
  }
  if (count >= kMaxPerUser) sessions_.erase(oldest);
}

}  // namespace sched::auth
