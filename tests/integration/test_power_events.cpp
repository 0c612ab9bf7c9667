// Power on a local cluster (issue 17 item 6): the agents' model meter gives
// each idle node 71 W; a corridor below that draw is a power.violation on
// the event stream, clearing the corridor ends it, and `sched corridor show`
// and `sched stats` show the draw.
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "cluster.hpp"

namespace sched::testing {
namespace {

bool has_line(const std::string& text, const std::string& pattern) {
  return std::regex_search(text, std::regex("(^|\n)" + pattern + "(\n|$)"));
}

// The power.violation events journaled so far, oldest first.
std::vector<proto::EventMsg> violations(LocalCluster& cluster) {
  proto::EventsReplayRequest request;
  const auto reply =
      cluster.client().call<proto::EventsReplayReply>(proto::type::kEventsReplay, request);
  std::vector<proto::EventMsg> out;
  for (const auto& event : reply.events) {
    if (event.topic == "power.violation") out.push_back(event);
  }
  return out;
}

TEST(PowerEvents, ACorridorBelowTheIdleDrawIsAViolationUntilCleared) {
  LocalCluster cluster;
  cluster.start_agent("n1");
  cluster.start_agent("n2");
  ASSERT_TRUE(cluster.wait_nodes_up(2)) << cluster.logs();
  ASSERT_TRUE(violations(cluster).empty());

  auto run = run_sched(cluster, {"corridor", "show"});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_TRUE(has_line(run.out, R"(Current:\s+142 W)")) << run.out;
  run = run_sched(cluster, {"stats"});
  EXPECT_TRUE(has_line(run.out, R"(Power:\s+142 W)")) << run.out;

  ASSERT_EQ(run_sched(cluster, {"corridor", "set", "10", "100"}).status, 0);
  std::vector<proto::EventMsg> seen;
  ASSERT_TRUE(eventually([&] {
    seen = violations(cluster);
    return !seen.empty();
  })) << cluster.logs();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].reason, "above");
  EXPECT_EQ(seen[0].power_w, 142.0);
  EXPECT_EQ(seen[0].lower_w, 10.0);
  EXPECT_EQ(seen[0].upper_w, 100.0);
  run = run_sched(cluster, {"stats"});
  EXPECT_TRUE(has_line(run.out, R"(Power:\s+142 W \(corridor 10 W to 100 W\))")) << run.out;
  run = run_sched(cluster, {"stats", "--json"});
  EXPECT_NE(run.out.find("\"power_w\": 142"), std::string::npos) << run.out;

  ASSERT_EQ(run_sched(cluster, {"corridor", "clear"}).status, 0);
  ASSERT_TRUE(eventually([&] {
    seen = violations(cluster);
    return seen.size() == 2;
  })) << cluster.logs();
  EXPECT_EQ(seen[1].reason, "cleared");
  EXPECT_EQ(seen[1].power_w, 142.0);
}

}  // namespace
}  // namespace sched::testing
