// Session keys and MACs (proto/session.hpp): both sides derive the same
// request key from their own pair and the other's public key; a MAC checks
// only for the type, seq and body it was made for, under that key.
#include <gtest/gtest.h>

#include "sched/proto/client_messages.hpp"
#include "sched/proto/envelope.hpp"
#include "sched/proto/session.hpp"

namespace sched::proto::session {
namespace {

TEST(SessionKeys, ClientAndServerDeriveTheSameRequestKeyAndOthersCannot) {
  const KeyPair client = generate();
  const KeyPair server = generate();
  const std::string key = client_request_key(client, server.public_key);
  EXPECT_EQ(key.size(), 32u);
  EXPECT_EQ(server_request_key(server, client.public_key), key);
  // A third party with its own pair and both public keys gets another key.
  const KeyPair eve = generate();
  EXPECT_NE(client_request_key(eve, server.public_key), key);
  EXPECT_NE(server_request_key(eve, client.public_key), key);
  EXPECT_THROW(client_request_key(client, "short"), std::invalid_argument);
  EXPECT_THROW(server_request_key(server, std::string(32, '\0')), std::invalid_argument);
}

TEST(SessionKeys, AMacChecksOnlyForItsTypeSeqAndBodyUnderItsKey) {
  const std::string key(32, 'k');
  const std::string body = encode_body(JobRef{12});
  const std::string m = mac(key, "cancel", 3, body);
  EXPECT_EQ(m.size(), 64u);
  EXPECT_TRUE(verify(key, "cancel", 3, body, m));
  EXPECT_FALSE(verify(std::string(32, 'j'), "cancel", 3, body, m));
  EXPECT_FALSE(verify(key, "job.show", 3, body, m));
  EXPECT_FALSE(verify(key, "cancel", 4, body, m));
  EXPECT_FALSE(verify(key, "cancel", 3, encode_body(JobRef{13}), m));
  EXPECT_FALSE(verify(key, "cancel", 3, body, m.substr(0, 62)));
  EXPECT_FALSE(verify(key, "cancel", 3, body, ""));
}

TEST(SessionKeys, HexRoundTripsAndRefusesWhatIsNotHexOfTheSize) {
  const std::string bytes("\x00\x01\xfe\xff", 4);
  EXPECT_EQ(to_hex(bytes), "0001feff");
  EXPECT_EQ(from_hex("0001feff", 4), bytes);
  EXPECT_EQ(from_hex("0001FEFF", 4), bytes);
  EXPECT_EQ(from_hex("0001fe", 4), "");
  EXPECT_EQ(from_hex("0001feffaa", 4), "");
  EXPECT_EQ(from_hex("0001fexx", 4), "");
  EXPECT_NE(random_id(), 0u);
}

TEST(SessionEnvelope, ASessionRequestCarriesItsIdAndMacAndTheBodyAsPacked) {
  const std::string body = encode_body(JobRef{12});
  const std::string bytes = encode_session_request("cancel", 5, body, 77, std::string(64, 'a'));
  const Envelope e = decode(bytes.data(), bytes.size());
  EXPECT_EQ(e.type, "cancel");
  EXPECT_EQ(e.seq, 5u);
  EXPECT_EQ(e.session, 77u);
  EXPECT_EQ(e.mac, std::string(64, 'a'));
  EXPECT_FALSE(e.cred);
  EXPECT_EQ(packed_body(e), body);
}

}  // namespace
}  // namespace sched::proto::session
