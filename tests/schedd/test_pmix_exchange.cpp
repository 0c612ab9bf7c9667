// What MPI_Comm_spawn shares through schedd (issue 16 item 2): published
// keys and lookups that wait for them, connects gathered across nodes, and
// what a step's or a job's end drops.
#include <gtest/gtest.h>

#include <stdexcept>

#include "pmix_exchange.hpp"

namespace sched::daemon {
namespace {

using Entries = std::map<std::string, std::string>;

TEST(PmixExchange, ALookupWithoutWaitIsAnsweredAtOnceWithWhatIsKnown) {
  PmixExchange x;
  x.publish(3, {{"a", "s:1"}});
  const auto answer = x.lookup(3, "n1", 9, {"a", "b"}, false);
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->node, "n1");
  EXPECT_EQ(answer->id, 9u);
  EXPECT_EQ(answer->entries, (Entries{{"a", "s:1"}}));
  EXPECT_EQ(x.waiting(), 0u);
}

TEST(PmixExchange, ALookupThatWaitsIsAnsweredByThePublishThatCompletesIt) {
  PmixExchange x;
  EXPECT_FALSE(x.lookup(3, "n2", 1, {"port:accept", "x"}, true));
  EXPECT_EQ(x.waiting(), 1u);
  EXPECT_TRUE(x.publish(3, {{"port:accept", "s:p"}}).empty());  // "x" still missing
  EXPECT_TRUE(x.publish(4, {{"x", "s:other job"}}).empty());    // another job's keys
  const auto answers = x.publish(3, {{"x", "b:4:00000"}});
  ASSERT_EQ(answers.size(), 1u);
  EXPECT_EQ(answers[0].node, "n2");
  EXPECT_EQ(answers[0].entries, (Entries{{"port:accept", "s:p"}, {"x", "b:4:00000"}}));
  EXPECT_EQ(x.waiting(), 0u);
}

TEST(PmixExchange, AConnectCompletesWithItsLastNodeAndEveryNodesEntries) {
  PmixExchange x;
  const std::set<std::string> nodes{"n1", "n3", "n4"};
  EXPECT_FALSE(x.connect(3, "1:*,2:*#1", {1, 2}, nodes, "n3", {{"2.0", "a"}}));
  EXPECT_FALSE(x.connect(3, "1:*,2:*#1", {1, 2}, nodes, "n1", {{"1.0", "b"}}));
  EXPECT_THROW(x.connect(3, "1:*,2:*#1", {1, 2}, nodes, "n1", {}), std::invalid_argument);
  EXPECT_THROW(x.connect(3, "1:*,2:*#1", {1, 2}, nodes, "n2", {}), std::invalid_argument);
  const auto done = x.connect(3, "1:*,2:*#1", {1, 2}, nodes, "n4", {{"2.2", "c"}});
  ASSERT_TRUE(done);
  EXPECT_EQ(*done, (Entries{{"1.0", "b"}, {"2.0", "a"}, {"2.2", "c"}}));
  EXPECT_EQ(x.waiting(), 0u);
}

TEST(PmixExchange, AStepsEndDropsItsConnectsAndSaysWhoWaits) {
  PmixExchange x;
  EXPECT_FALSE(x.connect(3, "c", {1, 2}, {"n1", "n2"}, "n1", {}));
  EXPECT_FALSE(x.connect(3, "d", {1}, {"n1", "n2"}, "n2", {}));
  const auto dropped = x.drop_step(3, 2);
  ASSERT_EQ(dropped.size(), 1u);
  EXPECT_EQ(dropped[0].first, "c");
  EXPECT_EQ(dropped[0].second, (std::set<std::string>{"n1"}));
  EXPECT_EQ(x.waiting(), 1u);  // "d" does not join step 2
}

TEST(PmixExchange, AJobsEndDropsItsKeysAndLookups) {
  PmixExchange x;
  x.publish(3, {{"a", "s:1"}});
  EXPECT_FALSE(x.lookup(3, "n1", 1, {"b"}, true));
  x.drop_job(3);
  EXPECT_EQ(x.waiting(), 0u);
  EXPECT_TRUE(x.lookup(3, "n1", 2, {"a"}, false)->entries.empty());
}

}  // namespace
}  // namespace sched::daemon
