// Client sessions on schedd's side (sched/auth/sessions.hpp): a request
// signed with its session's key names the session's caller; every other one
// (replayed, out of order, signed with another key, altered, of an unknown,
// expired or other connection's session) is refused and changes nothing.
#include <gtest/gtest.h>

#include "sched/auth/sessions.hpp"
#include "sched/proto/messages.hpp"

namespace sched::auth {
namespace {

constexpr double kTtl = 60;
const Caller kAlice{1001, 1001, "alice"};

// The client's side of one session: its key, derived as proto::Client does.
struct ClientSide {
  std::uint64_t id = 0;
  std::string key;
};

ClientSide open(Sessions& sessions, const Caller& caller = kAlice,
                const std::string& peer = "peer-a", double now = 0) {
  const proto::session::KeyPair mine = proto::session::generate();
  const proto::SessionOpened opened = sessions.open(
      caller, peer, proto::SessionOpen{proto::session::to_hex(mine.public_key)}, 1, now, kTtl);
  return {opened.session,
          proto::session::client_request_key(mine, proto::session::from_hex(opened.key, 32))};
}

std::string sealed(const ClientSide& side, std::uint64_t seq, std::int64_t job = 12,
                   std::string_view type = "cancel") {
  const std::string packed = proto::encode_body(proto::JobRef{job});
  return proto::encode_session_request(type, seq, packed, side.id,
                                       proto::session::mac(side.key, type, seq, packed));
}

// "accepted by <user>", or the refusal's code and message.
std::string check(Sessions& sessions, const std::string& bytes, const std::string& peer = "peer-a",
                  double now = 1) {
  const proto::Envelope request = proto::decode(bytes.data(), bytes.size());
  try {
    return "accepted by " + sessions.check(request, peer, now, kTtl).user;
  } catch (const proto::ProtoError& e) {
    return e.code() + ": " + e.what();
  }
}

TEST(Sessions, ARequestSignedWithTheSessionsKeyNamesItsCaller) {
  Sessions sessions;
  const ClientSide side = open(sessions);
  EXPECT_EQ(check(sessions, sealed(side, 2)), "accepted by alice");
  EXPECT_EQ(check(sessions, sealed(side, 3)), "accepted by alice");
  // Sequence numbers may skip (a request the client gave up on).
  EXPECT_EQ(check(sessions, sealed(side, 10)), "accepted by alice");
}

TEST(Sessions, TheSameRequestTwiceOrAnOlderSeqIsAReplay) {
  Sessions sessions;
  const ClientSide side = open(sessions);
  const std::string bytes = sealed(side, 5);
  EXPECT_EQ(check(sessions, bytes), "accepted by alice");
  EXPECT_EQ(check(sessions, bytes),
            "unauthenticated: replayed request: seq 5 is not above the session's last, 5");
  EXPECT_EQ(check(sessions, sealed(side, 4)),
            "unauthenticated: replayed request: seq 4 is not above the session's last, 5");
  // Not even the opening request's seq.
  const ClientSide other = open(sessions);
  EXPECT_EQ(check(sessions, sealed(other, 1)),
            "unauthenticated: replayed request: seq 1 is not above the session's last, 1");
}

TEST(Sessions, AnotherKeyAnAlteredBodyTypeOrSeqOrNoMacIsRefusedAndChangesNothing) {
  Sessions sessions;
  const ClientSide side = open(sessions);
  const std::string wrong = "unauthenticated: wrong MAC: the request was not signed with session " +
                            std::to_string(side.id) + "'s key";
  ClientSide forger = side;
  forger.key = proto::session::generate().secret_key;  // any other 32 bytes
  EXPECT_EQ(check(sessions, sealed(forger, 100)), wrong);
  // The MAC of one request on another: body, type, seq.
  const std::string packed = proto::encode_body(proto::JobRef{12});
  const std::string mac = proto::session::mac(side.key, "cancel", 7, packed);
  const auto lifted = [&](std::string_view type, std::uint64_t seq, std::int64_t job) {
    return proto::encode_session_request(type, seq, proto::encode_body(proto::JobRef{job}), side.id,
                                         mac);
  };
  EXPECT_EQ(check(sessions, lifted("cancel", 7, 13)), wrong);
  EXPECT_EQ(check(sessions, lifted("job.show", 7, 12)), wrong);
  EXPECT_EQ(check(sessions, lifted("cancel", 8, 12)), wrong);
  EXPECT_EQ(check(sessions, proto::encode_session_request("cancel", 9, packed, side.id, "")),
            "unauthenticated: the request has no MAC (mac): sign it with the session's key");
  EXPECT_EQ(check(sessions, proto::encode_session_request("cancel", 9, packed, side.id, "zz")),
            wrong);
  // None of these moved the session's seq: its own request 7 still passes.
  EXPECT_EQ(check(sessions, lifted("cancel", 7, 12)), "accepted by alice");
}

TEST(Sessions, AnUnknownSessionOrAnotherConnectionsIsGone) {
  Sessions sessions;
  const ClientSide side = open(sessions);
  ClientSide unknown = side;
  unknown.id = side.id + 1;
  EXPECT_EQ(check(sessions, sealed(unknown, 2)),
            "session_gone: unknown session " + std::to_string(unknown.id) + ": open a new session");
  EXPECT_EQ(check(sessions, sealed(side, 2), "peer-b"),
            "session_gone: session " + std::to_string(side.id) +
                " belongs to another connection: open a new session");
  EXPECT_EQ(check(sessions, sealed(side, 2), "peer-a"), "accepted by alice");
}

TEST(Sessions, ASessionUnusedForItsTimeToLiveExpires) {
  Sessions sessions;
  const ClientSide side = open(sessions);
  // Each request moves its end on.
  EXPECT_EQ(check(sessions, sealed(side, 2), "peer-a", kTtl - 1), "accepted by alice");
  EXPECT_EQ(check(sessions, sealed(side, 3), "peer-a", 2 * kTtl - 2), "accepted by alice");
  EXPECT_EQ(check(sessions, sealed(side, 4), "peer-a", 3 * kTtl),
            "session_gone: session " + std::to_string(side.id) + " expired: open a new session");
  EXPECT_EQ(sessions.size(), 0u);
  const ClientSide idle = open(sessions, kAlice, "peer-a", 10);
  sessions.expire(10 + kTtl, kTtl);
  EXPECT_EQ(sessions.size(), 1u);
  sessions.expire(10 + kTtl + 1, kTtl);
  EXPECT_EQ(sessions.size(), 0u);
  EXPECT_EQ(check(sessions, sealed(idle, 2)).rfind("session_gone: unknown session", 0), 0u);
}

TEST(Sessions, AKeyThatIsNotOneIsABadField) {
  Sessions sessions;
  // Not hex, too short, and 32 zero bytes (a point no key exchange accepts).
  for (const std::string& key : std::vector<std::string>{
           "", "abc", std::string(64, 'g'), std::string(62, '0'), std::string(64, '0')}) {
    try {
      sessions.open(kAlice, "peer-a", proto::SessionOpen{key}, 1, 0, kTtl);
      FAIL() << "opened with key '" << key << "'";
    } catch (const proto::ProtoError& e) {
      EXPECT_EQ(e.code(), "bad_field");
    }
  }
  EXPECT_EQ(sessions.size(), 0u);
}

TEST(Sessions, AUserHoldsABoundedNumberAndTheLeastRecentlyUsedGoes) {
  Sessions sessions;
  const ClientSide first = open(sessions, kAlice, "peer-a", 0);
  const ClientSide second = open(sessions, kAlice, "peer-a", 1);
  EXPECT_EQ(check(sessions, sealed(first, 2), "peer-a", 2), "accepted by alice");
  for (std::size_t i = 2; i < Sessions::kMaxPerUser; ++i) open(sessions, kAlice, "peer-a", 3);
  open(sessions, Caller{1002, 1002, "bob"}, "peer-b", 3);
  EXPECT_EQ(sessions.size(), Sessions::kMaxPerUser + 1);
  // One more of alice's: her least recently used (second) goes, not bob's.
  open(sessions, kAlice, "peer-a", 4);
  EXPECT_EQ(sessions.size(), Sessions::kMaxPerUser + 1);
  EXPECT_EQ(check(sessions, sealed(second, 2), "peer-a", 5).rfind("session_gone", 0), 0u);
  EXPECT_EQ(check(sessions, sealed(first, 3), "peer-a", 5), "accepted by alice");
}

}  // namespace
}  // namespace sched::auth
