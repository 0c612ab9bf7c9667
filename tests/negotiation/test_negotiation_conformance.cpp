// What each side refuses (docs/negotiation.md §3, §5): a peer's message that
// breaks the protocol earns an error reply with its code and changes
// nothing; timeouts, a peer gone, crossing ends and finalisation leave no job
// agreed twice and none lost.
#include <gtest/gtest.h>

#include "negotiation_pair.hpp"

namespace sched::negotiation {
namespace {

using testing::error_code;
using testing::last;
using testing::message;
using testing::Pair;
using testing::two_nodes;
using Kind = Note::Kind;
namespace type = proto::type;

// An envelope of another protocol version, packed by hand.
std::string envelope_of_version(int v) {
  msgpack::sbuffer buffer;
  msgpack::packer<msgpack::sbuffer> pk(buffer);
  pk.pack_map(4);
  pk.pack(std::string("v"));
  pk.pack(v);
  pk.pack(std::string("type"));
  pk.pack(std::string(type::kNegoInit));
  pk.pack(std::string("seq"));
  pk.pack(1);
  pk.pack(std::string("body"));
  pk.pack_map(0);
  return std::string(buffer.data(), buffer.size());
}

// A hypervisor in an open transaction whose offer S has taken.
struct OpenOffer : ::testing::Test {
  Pair pair;
  void SetUp() override {
    pair.first_offer(two_nodes());
    pair.s.take_offer(pair.now);
    pair.pump();
  }
  std::string answer_to_h(const proto::NegoOfferResponse& response) {
    pair.h.on_message(message(type::kNegoOfferResponse, response), pair.now);
    pair.collect();
    return error_code(pair.h.take_outgoing());
  }
};

TEST(NegotiationConformance, AnotherProtocolVersionIsRefusedAndTheSessionStaysClosed) {
  HypervisorSide h;
  proto::NegoInit init;
  init.version = 2;
  h.on_message(message(type::kNegoInit, init), 0);
  EXPECT_EQ(error_code(h.take_outgoing()), "bad_version");
  EXPECT_FALSE(h.ready());
  h.on_message(envelope_of_version(2), 0);  // the envelope's own version
  auto out = h.take_outgoing();
  EXPECT_EQ(error_code(out), "bad_version");
  // An envelope that cannot be read is answered as on every sched socket.
  EXPECT_EQ(proto::decode(out[0].data(), out[0].size()).type, "error");
  EXPECT_FALSE(h.ready());
  h.on_message(message(type::kNegoInit, proto::NegoInit{}), 0);
  EXPECT_EQ(error_code(h.take_outgoing()), "");
  EXPECT_TRUE(h.ready());
}

TEST(NegotiationConformance, UnknownTypesGarbageAndBadFieldsAreRefused) {
  Pair pair;
  pair.init();
  pair.h.on_message(message("nego.bogus", proto::NegoEmpty{}), pair.now);
  EXPECT_EQ(error_code(pair.h.take_outgoing()), "unknown_type");
  pair.h.on_message(std::string("\xc1 not msgpack"), pair.now);
  EXPECT_EQ(error_code(pair.h.take_outgoing()), "bad_message");
  // REQUEST_RESOURCE_OFFER without its `pending` field.
  pair.h.on_message(message(type::kNegoRequestOffer, proto::NegoEmpty{}), pair.now);
  EXPECT_EQ(error_code(pair.h.take_outgoing()), "bad_field");
  EXPECT_FALSE(pair.h.interested());
  EXPECT_TRUE(pair.h.ready());
}

TEST(NegotiationConformance, ASideRefusesWhatOnlyItsOwnRoleSends) {
  Pair pair;
  pair.init();
  // An iHypervisor never receives RESOURCE_OFFER; an iScheduler never
  // receives NEGOTIATION_START.
  pair.h.on_message(message(type::kNegoOffer, proto::NegoOffer{1, 1, two_nodes(), ""}), pair.now);
  EXPECT_EQ(error_code(pair.h.take_outgoing()), "wrong_role");
  pair.s.on_message(message(type::kNegoStart, proto::NegoStart{1}), pair.now);
  EXPECT_EQ(error_code(pair.s.take_outgoing()), "wrong_role");
}

TEST(NegotiationConformance, NothingButInitBeforeTheSessionIsInitialised) {
  HypervisorSide h;
  h.on_message(message(type::kNegoRequestOffer, proto::NegoRequestOffer{2}), 0);
  EXPECT_EQ(error_code(h.take_outgoing()), "not_initialised");
  EXPECT_FALSE(h.interested());
  SchedulerSide s;
  EXPECT_THROW(s.request_offer(2, 0), NegotiationError);
  EXPECT_TRUE(s.take_outgoing().empty());
}

TEST(NegotiationConformance, AnOfferNobodyAskedForIsOutOfOrder) {
  Pair pair;
  pair.init();
  pair.s.on_message(message(type::kNegoOffer, proto::NegoOffer{1, 1, two_nodes(), "changed"}),
                    pair.now);
  EXPECT_EQ(error_code(pair.s.take_outgoing()), "out_of_order");
  EXPECT_EQ(pair.s.phase(), Phase::None);
  EXPECT_THROW(pair.h.offer(two_nodes(), "changed", pair.now), NegotiationError);
}

TEST_F(OpenOffer, AnAnswerBeforeTheStartOrTwiceIsOutOfOrder) {
  proto::NegoOfferResponse response{pair.s.txn(), 1, true, {{5, "n1", {0}}}, std::nullopt};
  EXPECT_EQ(answer_to_h(response), "");
  EXPECT_EQ(pair.h.phase(), Phase::Judging);
  EXPECT_EQ(answer_to_h(response), "out_of_order");  // the offer is already answered
  EXPECT_EQ(pair.h.phase(), Phase::Judging);
  // A second NEGOTIATION_START for the same transaction.
  pair.h.on_message(message(type::kNegoStart, proto::NegoStart{pair.h.txn()}), pair.now);
  EXPECT_EQ(error_code(pair.h.take_outgoing()), "out_of_order");
}

TEST_F(OpenOffer, AnotherTransactionOrAttemptIsUnknown) {
  proto::NegoOfferResponse response{pair.s.txn() + 1, 1, true, {}, std::nullopt};
  EXPECT_EQ(answer_to_h(response), "unknown_transaction");
  response.txn = pair.s.txn();
  response.attempt = 2;
  EXPECT_EQ(answer_to_h(response), "unknown_transaction");
  EXPECT_EQ(pair.h.phase(), Phase::OfferOpen);
}

TEST_F(OpenOffer, AMappingOutsideTheOfferIsInvalidAndTheOfferStaysOpen) {
  proto::NegoOfferResponse response{pair.s.txn(), 1, true, {{5, "n9", {0}}}, std::nullopt};
  EXPECT_EQ(answer_to_h(response), "invalid");  // a node not offered
  response.mapping = {{5, "n1", {0, 7}}};
  EXPECT_EQ(answer_to_h(response), "invalid");  // a core not offered
  response.mapping = {{5, "n1", {0}}, {6, "n1", {0}}};
  EXPECT_EQ(answer_to_h(response), "invalid");  // a core twice
  EXPECT_EQ(pair.h.phase(), Phase::OfferOpen);
  EXPECT_THROW(pair.s.answer(true, {{5, "n1", {9}}}, "", pair.now), NegotiationError);
  pair.s.answer(true, {{5, "n1", {0}}, {6, "n1", {1}}}, "", pair.now);
  pair.pump();
  EXPECT_EQ(pair.h.phase(), Phase::Judging);
}

TEST(NegotiationConformance, ARejectionAtTheLastAttemptIsRefused) {
  Pair limited;
  limited.first_offer(two_nodes(), Params{.max_attempts = 1});
  limited.s.take_offer(limited.now);
  limited.pump();
  proto::NegoOfferResponse reject{limited.h.txn(), 1, false, {}, std::string("no")};
  limited.h.on_message(message(type::kNegoOfferResponse, reject), limited.now);
  EXPECT_EQ(error_code(limited.h.take_outgoing()), "attempt_limit");
  EXPECT_EQ(limited.h.phase(), Phase::OfferOpen);
}

TEST_F(OpenOffer, ALatePeerIsAbandonedAndItsLateAnswerRefused) {
  const auto txn = pair.h.txn();
  pair.h.tick(pair.now + pair.h.params().timeout_s - 1);
  EXPECT_EQ(pair.h.phase(), Phase::OfferOpen);
  pair.h.tick(pair.now + pair.h.params().timeout_s);
  pair.collect();
  EXPECT_EQ(pair.h.phase(), Phase::None);
  const Note* closed = last(pair.h_notes, Kind::Closed);
  ASSERT_NE(closed, nullptr);
  EXPECT_EQ(closed->reason, "timeout");
  auto to_s = pair.h.take_outgoing();  // NEGOTIATION_END abandoned
  ASSERT_EQ(to_s.size(), 1u);
  // S's answer crosses H's end: H refuses it, S closes on H's end and its
  // RESPONSE_NEGOTIATION_END is taken silently.
  proto::NegoOfferResponse late{txn, 1, true, {{5, "n1", {0}}}, std::nullopt};
  EXPECT_EQ(answer_to_h(late), "unknown_transaction");
  pair.s.on_message(to_s[0], pair.now);
  pair.pump();
  EXPECT_EQ(pair.s.phase(), Phase::None);
  EXPECT_EQ(last(pair.s_notes, Kind::Closed)->outcome, "abandoned");
  EXPECT_EQ(last(pair.h_notes, Kind::Agreed), nullptr);
  EXPECT_EQ(last(pair.s_notes, Kind::Agreed), nullptr);
  EXPECT_EQ(last(pair.h_notes, Kind::Refused)->code, "unknown_transaction");
}

TEST_F(OpenOffer, APeerGoneBeforeTheEndIsAnsweredStartsNothing) {
  pair.s.answer(true, {{5, "n1", {0}}}, "", pair.now);
  pair.pump();
  pair.h.accept_mapping(pair.now);
  pair.h.take_outgoing();  // the END agreed never reaches S
  pair.h.peer_gone();
  pair.s.peer_gone();
  pair.collect();
  EXPECT_EQ(last(pair.h_notes, Kind::Agreed), nullptr);
  EXPECT_EQ(last(pair.s_notes, Kind::Agreed), nullptr);
  EXPECT_EQ(last(pair.h_notes, Kind::Closed)->reason, "peer gone");
  EXPECT_FALSE(pair.h.ready());
  // A new session: H lists what it runs, and nothing of the lost transaction.
  pair.h.set_running({});
  pair.init();
  EXPECT_TRUE(last(pair.s_notes, Kind::Initialised)->running.empty());
}

TEST_F(OpenOffer, AnAgreementAnsweredTooLateIsRevokedOnBothSides) {
  pair.s.answer(true, {{5, "n1", {0}}}, "", pair.now);
  pair.pump();
  pair.h.accept_mapping(pair.now);
  auto end = pair.h.take_outgoing();  // held back: S is slow
  pair.h.tick(pair.now + pair.h.params().timeout_s);
  pair.collect();
  EXPECT_EQ(last(pair.h_notes, Kind::Closed)->outcome, "abandoned");
  EXPECT_TRUE(pair.h.take_outgoing().empty());  // its END is already out
  // S hands the job over on H's END; H refuses the late answer, and S takes
  // the job back: started by neither, lost by neither.
  for (const auto& m : end) pair.s.on_message(m, pair.now);
  pair.pump();
  EXPECT_NE(last(pair.s_notes, Kind::Agreed), nullptr);
  EXPECT_EQ(last(pair.h_notes, Kind::Agreed), nullptr);
  EXPECT_EQ(last(pair.h_notes, Kind::Refused)->code, "unknown_transaction");
  const Note* revoked = last(pair.s_notes, Kind::Revoked);
  ASSERT_NE(revoked, nullptr);
  EXPECT_EQ(revoked->mapping, (std::vector<proto::NegoPlacement>{{5, "n1", {0}}}));
}

TEST_F(OpenOffer, APeerThatInitialisesAgainReplacesItsSession) {
  SchedulerSide restarted;
  restarted.init({}, "restarted", pair.now);
  for (const auto& m : restarted.take_outgoing()) pair.h.on_message(m, pair.now);
  pair.collect();
  EXPECT_EQ(last(pair.h_notes, Kind::Closed)->reason, "peer initialised anew");
  EXPECT_EQ(pair.h.phase(), Phase::None);
  EXPECT_TRUE(pair.h.ready());
  EXPECT_FALSE(pair.h.interested());
  for (const auto& m : pair.h.take_outgoing()) restarted.on_message(m, pair.now);
  EXPECT_TRUE(restarted.ready());
}

TEST_F(OpenOffer, AJobThatRunsAlreadyIsNotMappedNorStartedUrgently) {
  pair.h.set_running({5});
  proto::NegoOfferResponse response{pair.s.txn(), 1, true, {{5, "n1", {0}}}, std::nullopt};
  EXPECT_EQ(answer_to_h(response), "invalid");
  EXPECT_EQ(pair.h.phase(), Phase::OfferOpen);
  pair.h.on_message(message(type::kNegoUrgent, proto::NegoUrgent{5, 1, 0}), pair.now);
  EXPECT_EQ(error_code(pair.h.take_outgoing()), "invalid");
}

TEST_F(OpenOffer, EndsThatCrossCloseBothSidesWithoutErrors) {
  pair.s.abandon("queue changed", pair.now);
  pair.h.abandon("partition changed", pair.now);
  pair.pump();
  EXPECT_EQ(pair.s.phase(), Phase::None);
  EXPECT_EQ(pair.h.phase(), Phase::None);
  EXPECT_EQ(last(pair.s_notes, Kind::Refused), nullptr);
  EXPECT_EQ(last(pair.h_notes, Kind::Refused), nullptr);
  EXPECT_EQ(last(pair.h_notes, Kind::Closed)->outcome, "abandoned");
}

TEST_F(OpenOffer, AnAgreedEndFromTheSchedulerOrWithAnotherMappingIsInvalid) {
  proto::NegoEnd agreed{pair.h.txn(), "agreed", {}, std::nullopt};
  pair.h.on_message(message(type::kNegoEnd, agreed), pair.now);
  EXPECT_EQ(error_code(pair.h.take_outgoing()), "invalid");
  pair.s.answer(true, {{5, "n1", {0}}}, "", pair.now);
  pair.pump();
  agreed.mapping = {{5, "n1", {1}}};
  pair.s.on_message(message(type::kNegoEnd, agreed), pair.now);
  EXPECT_EQ(error_code(pair.s.take_outgoing()), "invalid");
  pair.collect();
  EXPECT_EQ(last(pair.s_notes, Kind::Agreed), nullptr);
  EXPECT_EQ(pair.s.phase(), Phase::Judging);
}

TEST_F(OpenOffer, FinalizingAbandonsTheTransactionAndClosesTheSession) {
  pair.s.finalize("shutting down", pair.now);
  pair.pump();
  EXPECT_FALSE(pair.s.ready());
  EXPECT_FALSE(pair.h.ready());
  EXPECT_EQ(last(pair.h_notes, Kind::Closed)->reason, "session finalized");
  EXPECT_EQ(last(pair.h_notes, Kind::Finalized)->reason, "shutting down");
  EXPECT_NE(last(pair.s_notes, Kind::Finalized), nullptr);
  pair.h.on_message(message(type::kNegoRequestOffer, proto::NegoRequestOffer{1}), pair.now);
  EXPECT_EQ(error_code(pair.h.take_outgoing()), "not_initialised");
  pair.init();
  EXPECT_TRUE(pair.h.ready());
}

TEST_F(OpenOffer, FinalizationsThatCrossCloseBothSides) {
  pair.s.finalize("bye", pair.now);
  pair.h.finalize("bye too", pair.now);
  pair.pump();
  EXPECT_FALSE(pair.s.ready());
  EXPECT_FALSE(pair.h.ready());
  EXPECT_EQ(last(pair.s_notes, Kind::Refused), nullptr);
  EXPECT_EQ(last(pair.h_notes, Kind::Refused), nullptr);
}

}  // namespace
}  // namespace sched::negotiation
