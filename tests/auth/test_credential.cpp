// Credentials with a real munged (tests/support/munge_support.hpp): what a
// credential proves, and every way a request's credential is refused.
#include <gtest/gtest.h>
#include <unistd.h>

#include <thread>

#include "munge_support.hpp"
#include "sched/auth/credential.hpp"
#include "sched/auth/munge.hpp"
#include "sched/proto/messages.hpp"

namespace sched::auth {
namespace {

const std::string& socket() { return testing::TestMunged::socket(); }

proto::Envelope decoded(const std::string& bytes) {
  return proto::decode(bytes.data(), bytes.size());
}

std::string signed_request(std::string_view type, std::uint64_t seq, const proto::JobRef& body) {
  const std::string packed = proto::encode_body(body);
  return proto::encode_packed_request(type, seq, packed,
                                      munge_encode(request_binding(type, seq, packed), socket()));
}

std::string refusal(const std::string& bytes) {
  try {
    authenticate(decoded(bytes), socket());
  } catch (const proto::ProtoError& e) {
    return e.code() + ": " + e.what();
  }
  return "accepted";
}

TEST(Munge, ACredentialProvesItsMakersUidAndGidAndCarriesItsPayload) {
  const MungeCredential c = munge_decode(munge_encode("hello", socket()), socket());
  EXPECT_EQ(c.uid, ::geteuid());
  EXPECT_EQ(c.gid, ::getegid());
  EXPECT_EQ(c.payload, "hello");
}

TEST(Munge, ACredentialDecodesOnceThenIsAReplay) {
  const std::string cred = munge_encode("once", socket());
  munge_decode(cred, socket());
  try {
    munge_decode(cred, socket());
    FAIL() << "a replay was accepted";
  } catch (const MungeError& e) {
    EXPECT_TRUE(e.replayed()) << e.what();
  }
}

TEST(Munge, NoMungedAtTheSocketIsUnreachable) {
  try {
    munge_encode("x", "/nonexistent/munge.socket");
    FAIL() << "encoded without munged";
  } catch (const MungeError& e) {
    EXPECT_TRUE(e.unreachable()) << e.what();
    EXPECT_NE(std::string(e.what()).find("/nonexistent/munge.socket"), std::string::npos);
  }
}

TEST(RequestCredential, NamesTheCallerFromTheCredential) {
  const Caller caller = authenticate(decoded(signed_request("cancel", 3, {12})), socket());
  EXPECT_EQ(caller.uid, ::geteuid());
  EXPECT_EQ(caller.gid, ::getegid());
  EXPECT_EQ(caller.user, user_name(::geteuid()));
  EXPECT_FALSE(caller.user.empty());
}

TEST(RequestCredential, TheSameRequestSentTwiceIsRefusedAsAReplay) {
  const std::string bytes = signed_request("cancel", 4, {12});
  EXPECT_EQ(refusal(bytes), "accepted");
  EXPECT_EQ(refusal(bytes), "unauthenticated: replayed credential: each request needs a new one");
}

TEST(RequestCredential, AMissingCredentialIsRefused) {
  EXPECT_EQ(refusal(proto::encode_request("cancel", 5, proto::JobRef{12})),
            "unauthenticated: the request has no credential (cred): sign it with MUNGE "
            "(docs/protocol.md §2)");
}

TEST(RequestCredential, ACredentialLiftedOntoAnotherRequestIsRefused) {
  // The credential of "cancel job 12" on "cancel job 13", on another seq and
  // on another type: each is another request.
  const std::string packed = proto::encode_body(proto::JobRef{12});
  const auto lift = [&](std::string_view type, std::uint64_t seq, const proto::JobRef& body) {
    const std::string cred = munge_encode(request_binding("cancel", 6, packed), socket());
    return proto::encode_request(type, seq, body, cred);
  };
  const std::string other = "unauthenticated: the credential was made for another request";
  EXPECT_EQ(refusal(lift("cancel", 6, {13})), other);
  EXPECT_EQ(refusal(lift("cancel", 7, {12})), other);
  EXPECT_EQ(refusal(lift("job.show", 6, {12})), other);
  EXPECT_EQ(refusal(lift("cancel", 6, {12})), "accepted");
}

TEST(RequestCredential, AnExpiredCredentialIsRefused) {
  const std::string packed = proto::encode_body(proto::JobRef{1});
  const std::string cred = munge_encode(request_binding("cancel", 8, packed), socket(), 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(2100));
  const std::string why = refusal(proto::encode_packed_request("cancel", 8, packed, cred));
  EXPECT_EQ(why.rfind("unauthenticated: expired credential", 0), 0u) << why;
}

TEST(RequestCredential, AForgedCredentialIsRefused) {
  const std::string why =
      refusal(proto::encode_request("cancel", 9, proto::JobRef{1}, "MUNGE:AAAAforged:"));
  EXPECT_EQ(why.rfind("unauthenticated: invalid credential", 0), 0u) << why;
}

TEST(RequestCredential, NoMungedForSchedd_IsUnavailableNotAnIdentity) {
  try {
    authenticate(decoded(signed_request("cancel", 10, {1})), "/nonexistent/munge.socket");
    FAIL() << "accepted without munged";
  } catch (const proto::ProtoError& e) {
    EXPECT_EQ(e.code(), "unavailable");
  }
}

TEST(RequestCredential, TheClientSignerSignsEveryRequestAnew) {
  const proto::Signer sign = munge_signer(socket());
  const std::string packed = proto::encode_body(proto::JobRef{1});
  const std::string a =
      proto::encode_packed_request("cancel", 11, packed, sign("cancel", 11, packed));
  const std::string b =
      proto::encode_packed_request("cancel", 11, packed, sign("cancel", 11, packed));
  EXPECT_NE(a, b);
  EXPECT_EQ(refusal(a), "accepted");
  EXPECT_EQ(refusal(b), "accepted");
  EXPECT_THROW(munge_signer("/nonexistent/munge.socket")("cancel", 1, packed),
               proto::TransportError);
}

}  // namespace
}  // namespace sched::auth
