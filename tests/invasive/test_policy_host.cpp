// The negotiation policies' host: the bundled policies' decisions, the
// sandbox and its bounds, and what a broken policy does (a clear error, the
// last good version kept, the side's fallback).
#include <gtest/gtest.h>
#include <unistd.h>

#include "policy_files.hpp"
#include "sched/invasive/components.hpp"
#include "sched/invasive/policies.hpp"

namespace sched::invasive {
namespace {

using testing::bundled;
using testing::TempPolicies;

// One node, two sockets of four cores (cores 0-3 and 4-7).
Partition small_partition() { return Partition(Topology::uniform(1, 2, 4)); }

HypervisorView view_of(const Partition& p) {
  HypervisorView v;
  v.partition = &p;
  return v;
}

std::vector<int> all_cores(const proto::NegoOfferSet& offer) {
  std::vector<int> out;
  for (const auto& r : offer.resources) {
    for (const auto& s : r.sockets) out.insert(out.end(), s.cores.begin(), s.cores.end());
  }
  return out;
}

TEST(NegotiationPolicy, SocketPackOffersTheFreeCoresReal) {
  Partition p = small_partition();
  ASSERT_FALSE(p.start(9, {{9, "n0", {0, 1, 4}}}, 0));
  HypervisorPolicy h(bundled("socket_pack.lua"));
  ASSERT_TRUE(h.host().loaded()) << h.host().last_error().value_or("");
  std::string error;
  auto offer = h.make_offer(view_of(p), &error);
  ASSERT_TRUE(offer) << error;
  EXPECT_FALSE(offer->is_virtual);
  ASSERT_EQ(offer->resources.size(), 1u);
  EXPECT_EQ(offer->resources[0].node, "n0");
  EXPECT_EQ(all_cores(*offer), (std::vector<int>{2, 3, 5, 6, 7}));
}

TEST(NegotiationPolicy, SocketPackRejectsASplitJobAndHoldsItsFragmentBack) {
  Partition p = small_partition();
  HypervisorPolicy h(bundled("socket_pack.lua"));
  HypervisorView v = view_of(p);
  proto::NegoOfferSet offer = *h.make_offer(v, nullptr);
  // Job 2 takes core 3 of socket 0 and cores 4, 5 of socket 1: 3 cores fit
  // on one socket.
  std::vector<proto::NegoPlacement> mapping{{1, "n0", {0, 1, 2}}, {2, "n0", {3, 4, 5}}};
  std::string error;
  auto verdict = h.judge(offer, mapping, v, &error);
  ASSERT_TRUE(verdict) << error;
  EXPECT_FALSE(verdict->accepted);
  EXPECT_EQ(verdict->reason, "job 2 split over 2 sockets (needs 1)");
  // Packed, the same jobs are accepted.
  auto packed = h.judge(offer, {{1, "n0", {0, 1, 2}}, {2, "n0", {4, 5, 6}}}, v, &error);
  ASSERT_TRUE(packed);
  EXPECT_TRUE(packed->accepted);
  // The re-offer leaves out core 3, where job 2 began: virtual.
  v.rejected.push_back(mapping);
  auto again = h.make_offer(v, &error);
  ASSERT_TRUE(again) << error;
  EXPECT_TRUE(again->is_virtual);
  EXPECT_EQ(all_cores(*again), (std::vector<int>{0, 1, 2, 4, 5, 6, 7}));
}

TEST(NegotiationPolicy, WaitFirstMapsTheLongestWaitingFirstInOfferOrder) {
  SchedulerPolicy s(bundled("wait_first.lua"));
  ASSERT_TRUE(s.host().loaded()) << s.host().last_error().value_or("");
  proto::NegoOfferSet offer{1, false, {{"n0", {{0, {0, 1, 2, 3}}, {1, {4, 5, 6, 7}}}}}};
  std::vector<PendingJob> pending{{1, 3, 0}, {2, 3, 5}, {3, 2, 6}, {4, 1, 7}};
  std::string error;
  auto result = s.map(offer, 1, false, pending, std::nullopt, 10, &error);
  ASSERT_TRUE(result) << error;
  ASSERT_TRUE(result->accepted);
  EXPECT_EQ(result->mapping, (std::vector<proto::NegoPlacement>{
                                 {1, "n0", {0, 1, 2}}, {2, "n0", {3, 4, 5}}, {3, "n0", {6, 7}}}));
  // Nothing fits: a rejection with the policy's reason.
  proto::NegoOfferSet small{2, false, {{"n0", {{1, {7}}}}}};
  auto none = s.map(small, 2, false, {{5, 2, 0}}, std::nullopt, 10, &error);
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->accepted);
  EXPECT_EQ(none->reason, "no pending job fits the offer");
}

TEST(NegotiationPolicy, ABrokenFileIsAClearErrorAndTheLastGoodVersionStays) {
  TempPolicies dir;
  const std::string good = R"(return { name = "v1",
    map = function(offer, pending) return nil, "v1 maps nothing" end })";
  const std::string path = dir.write("s.lua", good);
  SchedulerPolicy s(path);
  ASSERT_TRUE(s.host().loaded());
  EXPECT_EQ(s.host().name(), "v1");

  dir.write("s.lua", "return { map = function( end }");  // a syntax error
  EXPECT_FALSE(s.host().reload_if_changed());
  ASSERT_TRUE(s.host().last_error());
  EXPECT_NE(s.host().last_error()->find("s.lua:1:"), std::string::npos) << *s.host().last_error();
  proto::NegoOfferSet offer{1, false, {{"n0", {{0, {0}}}}}};
  auto r = s.map(offer, 1, false, {{1, 1, 0}}, std::nullopt, 0, nullptr);
  ASSERT_TRUE(r);  // v1 still answers
  EXPECT_EQ(r->reason, "v1 maps nothing");

  dir.write("s.lua", "return { name = 'v2' }");  // loads, but has no map
  EXPECT_FALSE(s.host().reload_if_changed());
  EXPECT_NE(s.host().last_error()->find("no function 'map'"), std::string::npos);

  dir.write("s.lua", R"(return { name = "v3",
    map = function(offer, pending) return {{job = pending[1].job, node = "n0", cores = {0}}} end })");
  EXPECT_TRUE(s.host().reload_if_changed());
  EXPECT_EQ(s.host().name(), "v3");
  EXPECT_EQ(s.host().reloads(), 1u);
  r = s.map(offer, 1, false, {{1, 1, 0}}, std::nullopt, 0, nullptr);
  ASSERT_TRUE(r && r->accepted);
  EXPECT_EQ(r->mapping, (std::vector<proto::NegoPlacement>{{1, "n0", {0}}}));
}

TEST(NegotiationPolicy, RuntimeErrorsBoundsAndBadShapesAreErrorsNotCrashes) {
  TempPolicies dir;
  Partition p = small_partition();
  const HypervisorView v = view_of(p);
  auto host_error = [&](const std::string& body) {
    HypervisorPolicy h(dir.write("h.lua", "return { make_offer = function(view) " + body +
                                              " end, judge = function() return true end }"),
                       LuaHostOptions{1'000'000, 8u << 20});
    EXPECT_TRUE(h.host().loaded()) << h.host().last_error().value_or("");
    std::string error;
    EXPECT_FALSE(h.make_offer(v, &error));
    return error;
  };
  EXPECT_NE(host_error("error('no offer today')").find("no offer today"), std::string::npos);
  EXPECT_NE(host_error("while true do end").find("instruction limit"), std::string::npos);
  EXPECT_NE(host_error("while true do pcall(function() while true do end end) end")
                .find("instruction limit"),
            std::string::npos);
  EXPECT_NE(host_error("local t = {} for i = 1, 1e9 do t[i] = i end").find("memory"),
            std::string::npos);
  EXPECT_NE(host_error("return 42").find("is a number, not a table"), std::string::npos);
  EXPECT_NE(host_error("return {resources = {{node = 'n0', sockets = {{socket = 0, cores = "
                       "{'x'}}}}}}")
                .find("offer.resources[1].sockets[1].cores[1] is not an integer"),
            std::string::npos);
  EXPECT_NE(host_error("return io.open('/etc/passwd')").find("io"), std::string::npos);
  EXPECT_NE(host_error("return os.exit(1)").find("os"), std::string::npos);
  EXPECT_NE(host_error("leak = 1").find("globals are locked"), std::string::npos);
  EXPECT_NE(host_error("return load(string.dump(function() end))()").find("attempt"),
            std::string::npos);
}

TEST(NegotiationPolicy, AFailingJudgeRejectsAndAFailingMakeOfferOffersAllFreeCores) {
  TempPolicies dir;
  Partition p = small_partition();
  HypervisorPolicy h(dir.write("h.lua", R"(return {
    make_offer = function(view) error("offer broken") end,
    judge = function(offer, mapping, view) error("judge broken") end })"));
  SchedulerPolicy s(bundled("wait_first.lua"));
  HypervisorComponent hyper(p, &h);
  SchedulerComponent sched(s, {3, 60, 0}, "test");
  auto pump = [&] {
    for (int i = 0; i < 100; ++i) {
      auto a = sched.take_outgoing();
      auto b = hyper.take_outgoing();
      if (a.empty() && b.empty()) return;
      for (auto& m : a) hyper.receive(m, 0);
      for (auto& m : b) sched.receive(m, 0);
    }
  };
  sched.start(0);
  pump();
  sched.submit({1, 2, 0}, 0);
  pump();
  // Every offer fell back to all free cores; every judgement to a rejection;
  // the third (last) mapping was accepted as the protocol requires.
  // Four offers (the fourth after the agreement, declined) and three
  // judgements (the last one asked for the statistics only) failed.
  EXPECT_EQ(hyper.stats().policy_errors, 4 + 3);
  EXPECT_NE(hyper.stats().last_policy_error->find("offer broken"), std::string::npos);
  EXPECT_EQ(hyper.stats().rejected_mappings, 2);
  EXPECT_EQ(hyper.stats().agreed, 1);
  EXPECT_EQ(hyper.stats().rounds, (std::vector<int>{3}));
  ASSERT_TRUE(p.has(1));
  EXPECT_EQ(p.jobs().at(1).placement, (std::vector<proto::NegoPlacement>{{1, "n0", {0, 1}}}));
  EXPECT_TRUE(sched.pending().empty());
}

}  // namespace
}  // namespace sched::invasive
