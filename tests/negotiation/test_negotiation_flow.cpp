// The negotiation's normal course (docs/negotiation.md §5): initialisation,
// offers on request, mappings judged and re-offered, the attempt limit,
// agreement, declining, status reports and urgent jobs.
#include <gtest/gtest.h>

#include "negotiation_pair.hpp"

namespace sched::negotiation {
namespace {

using testing::count;
using testing::last;
using testing::Pair;
using testing::two_nodes;
using Kind = Note::Kind;

std::vector<proto::NegoPlacement> job_on_n1(std::int64_t job, std::vector<int> cores) {
  return {{job, "n1", std::move(cores)}};
}

TEST(NegotiationFlow, InitAgreesTheSmallerLimitsAndReportsRunningJobs) {
  Pair pair(HypervisorLimits{.max_attempts = 4, .max_timeout_s = 5, .min_status_interval_s = 2});
  pair.h.set_running({7, 9});
  pair.init(Params{.max_attempts = 6, .timeout_s = 30, .status_interval_s = 0.5});
  ASSERT_TRUE(pair.s.ready());
  ASSERT_TRUE(pair.h.ready());
  const Note* init = last(pair.s_notes, Kind::Initialised);
  ASSERT_NE(init, nullptr);
  EXPECT_EQ(init->params.max_attempts, 4);
  EXPECT_EQ(init->params.timeout_s, 5);
  EXPECT_EQ(init->params.status_interval_s, 2);
  EXPECT_EQ(init->running, (std::vector<std::int64_t>{7, 9}));
  EXPECT_EQ(pair.h.params().max_attempts, 4);
}

TEST(NegotiationFlow, AFirstMappingAcceptedIsAgreedOnBothSides) {
  Pair pair;
  pair.first_offer(two_nodes());
  const Note* offer = last(pair.s_notes, Kind::Offer);
  ASSERT_NE(offer, nullptr);
  EXPECT_EQ(offer->attempt, 1);
  EXPECT_EQ(offer->offer->resources.size(), 2u);
  EXPECT_EQ(pair.s.phase(), Phase::FirstOffer);

  pair.s.take_offer(pair.now);
  pair.pump();
  EXPECT_NE(last(pair.h_notes, Kind::Started), nullptr);
  EXPECT_NE(last(pair.s_notes, Kind::Started), nullptr);

  pair.s.answer(true, job_on_n1(5, {0, 1}), "", pair.now);
  pair.pump();
  const Note* answer = last(pair.h_notes, Kind::Answer);
  ASSERT_NE(answer, nullptr);
  EXPECT_TRUE(answer->accepted);

  pair.h.accept_mapping(pair.now);
  // S hands the jobs over when it answers H's NEGOTIATION_END; H starts
  // nothing before that answer arrives.
  auto to_s = pair.h.take_outgoing();
  pair.collect();
  EXPECT_EQ(last(pair.h_notes, Kind::Agreed), nullptr);
  for (const auto& m : to_s) pair.s.on_message(m, pair.now);
  pair.collect();
  const Note* s_agreed = last(pair.s_notes, Kind::Agreed);
  ASSERT_NE(s_agreed, nullptr);
  EXPECT_EQ(s_agreed->mapping, job_on_n1(5, {0, 1}));
  EXPECT_EQ(last(pair.h_notes, Kind::Agreed), nullptr);
  pair.pump();
  const Note* h_agreed = last(pair.h_notes, Kind::Agreed);
  ASSERT_NE(h_agreed, nullptr);
  EXPECT_EQ(h_agreed->mapping, job_on_n1(5, {0, 1}));
  EXPECT_EQ(pair.h.phase(), Phase::None);
  EXPECT_EQ(pair.s.phase(), Phase::None);
  EXPECT_TRUE(pair.h.interested());  // S still has jobs: the next change brings an offer
}

TEST(NegotiationFlow, ARejectedMappingBringsANewOfferUntilAgreement) {
  Pair pair;
  pair.first_offer(two_nodes(1));
  pair.s.take_offer(pair.now);
  pair.pump();
  // S spreads job 5 over both nodes; H wants it packed on one socket.
  pair.s.answer(true, {{5, "n1", {0}}, {5, "n2", {2}}}, "", pair.now);
  pair.pump();
  proto::NegoOfferSet packed;
  packed.offer = 2;
  packed.is_virtual = true;  // H shows only n1's first socket to steer S
  packed.resources.push_back({"n1", {{0, {0, 1}}}});
  pair.h.reoffer(packed, "mapping_rejected: job 5 split over two nodes", pair.now);
  pair.pump();
  const Note* second = last(pair.s_notes, Kind::Offer);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(second->attempt, 2);
  EXPECT_TRUE(second->offer->is_virtual);
  EXPECT_EQ(second->reason, "mapping_rejected: job 5 split over two nodes");
  EXPECT_EQ(pair.s.phase(), Phase::OfferOpen);

  pair.s.answer(true, job_on_n1(5, {0, 1}), "", pair.now);
  pair.pump();
  pair.h.accept_mapping(pair.now);
  pair.pump();
  EXPECT_EQ(last(pair.h_notes, Kind::Agreed)->mapping, job_on_n1(5, {0, 1}));
  EXPECT_EQ(count(pair.h_notes, Kind::Answer), 2);
}

TEST(NegotiationFlow, TheSchedulerMayRejectAnOfferAndGetAnother) {
  Pair pair;
  pair.first_offer(two_nodes(1));
  pair.s.take_offer(pair.now);
  pair.pump();
  pair.s.answer(false, {}, "job 5 needs 8 cores", pair.now);
  pair.pump();
  const Note* answer = last(pair.h_notes, Kind::Answer);
  ASSERT_NE(answer, nullptr);
  EXPECT_FALSE(answer->accepted);
  EXPECT_EQ(answer->reason, "job 5 needs 8 cores");
  // Nothing to agree on: H must offer again (or abandon).
  EXPECT_THROW(pair.h.accept_mapping(pair.now), NegotiationError);
  pair.h.reoffer(two_nodes(2), "offer_rejected", pair.now);
  pair.pump();
  EXPECT_EQ(last(pair.s_notes, Kind::Offer)->attempt, 2);
}

TEST(NegotiationFlow, AtTheLastAttemptBothSidesMustAccept) {
  Pair pair;
  pair.first_offer(two_nodes(1), Params{.max_attempts = 2});
  pair.s.take_offer(pair.now);
  pair.pump();
  pair.s.answer(true, job_on_n1(5, {0}), "", pair.now);
  pair.pump();
  pair.h.reoffer(two_nodes(2), "mapping_rejected: fragmented", pair.now);
  pair.pump();
  const Note* offer = last(pair.s_notes, Kind::Offer);
  ASSERT_NE(offer, nullptr);
  EXPECT_TRUE(offer->last_attempt);
  try {
    pair.s.answer(false, {}, "no", pair.now);
    FAIL() << "a rejection at the last attempt must be refused";
  } catch (const NegotiationError& e) {
    EXPECT_EQ(e.code(), "attempt_limit");
  }
  EXPECT_TRUE(pair.s.take_outgoing().empty());  // the refused call sent nothing
  pair.s.answer(true, job_on_n1(5, {3}), "", pair.now);
  pair.pump();
  EXPECT_TRUE(last(pair.h_notes, Kind::Answer)->last_attempt);
  try {
    pair.h.reoffer(two_nodes(3), "still not", pair.now);
    FAIL() << "a re-offer after the last attempt must be refused";
  } catch (const NegotiationError& e) {
    EXPECT_EQ(e.code(), "attempt_limit");
  }
  pair.h.accept_mapping(pair.now);
  pair.pump();
  EXPECT_EQ(last(pair.h_notes, Kind::Agreed)->mapping, job_on_n1(5, {3}));
}

TEST(NegotiationFlow, DecliningEndsTheInterestUntilJobsArriveAgain) {
  Pair pair;
  pair.first_offer(two_nodes());
  pair.s.decline("queue_empty", pair.now);
  pair.pump();
  const Note* closed = last(pair.h_notes, Kind::Closed);
  ASSERT_NE(closed, nullptr);
  EXPECT_EQ(closed->outcome, "declined");
  EXPECT_EQ(closed->reason, "queue_empty");
  EXPECT_FALSE(pair.h.interested());
  EXPECT_EQ(last(pair.s_notes, Kind::Closed)->outcome, "declined");
  // H may not offer to a scheduler with nothing to place.
  EXPECT_THROW(pair.h.offer(two_nodes(2), "changed", pair.now), NegotiationError);
  pair.s.request_offer(1, pair.now);
  pair.pump();
  EXPECT_EQ(last(pair.h_notes, Kind::OfferRequested)->pending, 1);
  pair.h.offer(two_nodes(2), "requested", pair.now);
  pair.pump();
  EXPECT_EQ(last(pair.s_notes, Kind::Offer)->txn, 2);
}

TEST(NegotiationFlow, StatusReportsFollowTheAgreedInterval) {
  Pair pair;
  pair.init(Params{.status_interval_s = 30});
  EXPECT_FALSE(pair.h.status_due(pair.now + 29));
  EXPECT_TRUE(pair.h.status_due(pair.now + 30));
  proto::NegoStatus status;
  status.cores_total = 8;
  status.cores_busy = 6;
  status.utilisation = 0.75;
  status.jobs.push_back({5, "running", 6});
  pair.h.report(status, pair.now + 30);
  pair.pump();
  const Note* report = last(pair.s_notes, Kind::Status);
  ASSERT_NE(report, nullptr);
  EXPECT_EQ(report->status->cores_busy, 6);
  EXPECT_EQ(report->status->jobs.size(), 1u);
  EXPECT_FALSE(pair.h.status_due(pair.now + 31));
  EXPECT_TRUE(pair.h.take_outgoing().empty());  // a report is never answered
  EXPECT_TRUE(pair.s.take_outgoing().empty());
}

TEST(NegotiationFlow, AnUrgentJobIsAnsweredEvenDuringATransaction) {
  Pair pair;
  pair.first_offer(two_nodes());
  pair.s.take_offer(pair.now);
  pair.pump();
  pair.s.urgent({42, 4, 1}, pair.now);
  pair.pump();
  const Note* urgent = last(pair.h_notes, Kind::Urgent);
  ASSERT_NE(urgent, nullptr);
  EXPECT_EQ(urgent->urgent->cores, 4);
  EXPECT_THROW(pair.s.urgent({42, 4, 1}, pair.now), NegotiationError);  // one at a time
  proto::NegoUrgentResponse answer;
  answer.job = 42;
  answer.started = true;
  answer.placement.push_back({42, "n2", {0, 1, 2, 3}});
  answer.victims.push_back({7, "shrunk", 2});
  pair.h.answer_urgent(answer, pair.now);
  pair.pump();
  const Note* got = last(pair.s_notes, Kind::UrgentAnswer);
  ASSERT_NE(got, nullptr);
  EXPECT_TRUE(got->urgent_answer->started);
  EXPECT_EQ(got->urgent_answer->victims[0].action, "shrunk");
  EXPECT_EQ(pair.s.phase(), Phase::OfferOpen);  // the transaction goes on
  EXPECT_THROW(pair.h.answer_urgent(answer, pair.now), NegotiationError);
}

}  // namespace
}  // namespace sched::negotiation
