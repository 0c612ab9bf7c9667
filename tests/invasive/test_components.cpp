// The components against a hand-driven peer: an urgent job while an offer
// is open, and the status report reaching the iScheduler's policy.
#include <gtest/gtest.h>
#include <unistd.h>

#include "policy_files.hpp"
#include "sched/invasive/components.hpp"

namespace sched::invasive {
namespace {

using negotiation::Note;
using negotiation::Phase;
using negotiation::SchedulerSide;
using testing::bundled;
using testing::TempPolicies;

// Delivers messages both ways until none is left.
template <class S>
void pump(S& s, HypervisorComponent& h, double now) {
  for (int i = 0; i < 100; ++i) {
    auto a = s.take_outgoing();
    auto b = h.take_outgoing();
    if (a.empty() && b.empty()) return;
    for (auto& m : a) h.receive(m, now);
    for (auto& m : b) {
      if constexpr (std::is_same_v<S, SchedulerSide>) {
        s.on_message(m, now);
      } else {
        s.receive(m, now);
      }
    }
  }
}

TEST(NegotiationComponents, AnUrgentJobAbandonsTheOpenOfferFirst) {
  Partition p(Topology::uniform(1, 2, 4));
  HypervisorPolicy policy(bundled("socket_pack.lua"));
  HypervisorComponent h(p, &policy);
  SchedulerSide s;  // driven by hand: it holds the offer open
  s.init({3, 60, 0}, "test", 0);
  pump(s, h, 0);
  s.request_offer(1, 0);
  pump(s, h, 0);
  s.take_offer(0);
  pump(s, h, 0);
  ASSERT_EQ(s.phase(), Phase::OfferOpen);
  s.take_notes();
  s.urgent({7, 6, 1}, 1);
  pump(s, h, 1);
  auto notes = s.take_notes();
  const Note* closed = nullptr;
  const Note* answer = nullptr;
  for (const auto& n : notes) {
    if (n.kind == Note::Kind::Closed) closed = &n;
    if (n.kind == Note::Kind::UrgentAnswer) answer = &n;
  }
  // §5.7: the transaction is abandoned (its reason names the job), then the
  // urgent job starts, packed: socket 0 whole, then two cores of socket 1.
  ASSERT_TRUE(closed);
  EXPECT_EQ(closed->outcome, "abandoned");
  EXPECT_EQ(closed->reason, "urgent job 7");
  ASSERT_TRUE(answer);
  ASSERT_TRUE(answer->urgent_answer->started);
  EXPECT_EQ(answer->urgent_answer->placement,
            (std::vector<proto::NegoPlacement>{{7, "n0", {0, 1, 2, 3, 4, 5}}}));
  EXPECT_TRUE(answer->urgent_answer->victims.empty());
  ASSERT_TRUE(p.has(7));
  // S is still interested: the retry (one new offer) offers what is left.
  auto offers = 0;
  for (const auto& n : notes) offers += n.kind == Note::Kind::Offer;
  EXPECT_EQ(offers, 1);
  ASSERT_TRUE(s.open_offer());
  EXPECT_EQ(s.open_offer()->resources.at(0).sockets.at(0).cores, (std::vector<int>{6, 7}));
}

TEST(NegotiationComponents, TheStatusReportReachesTheSchedulersPolicy) {
  TempPolicies dir;
  Partition p(Topology::uniform(1, 2, 4));
  HypervisorComponent h(p, nullptr, {10, 60, 1});
  SchedulerPolicy policy(dir.write("s.lua", R"(return { map = function(offer, pending, report)
    if report == nil then error("no report yet") end
    return {{job = pending[1].job, node = "n0", cores = {report.cores_busy}}}
  end })"));
  SchedulerComponent s(policy, {3, 60, 1}, "test");
  s.start(0);
  pump(s, h, 0);
  h.tick(1);  // the agreed interval has passed: a STATUS_REPORT
  pump(s, h, 1);
  ASSERT_TRUE(s.last_report());
  EXPECT_EQ(s.last_report()->cores_total, 8);
  EXPECT_EQ(s.last_report()->cores_busy, 0);
  s.submit({1, 1, 1}, 1);
  pump(s, h, 1);
  EXPECT_EQ(s.stats().policy_errors, 0) << s.stats().last_policy_error.value_or("");
  ASSERT_TRUE(p.has(1));
  EXPECT_EQ(p.jobs().at(1).placement, (std::vector<proto::NegoPlacement>{{1, "n0", {0}}}));
}

}  // namespace
}  // namespace sched::invasive
