// The PMI fences of MPI steps (issue 16 item 2): a fence completes when the
// last node of the step sent its part, with every node's entries; what does
// not belong is refused and changes nothing.
#include <gtest/gtest.h>

#include <stdexcept>

#include "pmi_fences.hpp"

namespace sched::daemon {
namespace {

using Entries = std::map<std::string, std::string>;
const std::vector<std::string> kNodes{"n1", "n2", "n3"};

TEST(PmiFences, CompletesWithTheLastNodeAndMergesEveryNodesEntries) {
  PmiFences fences;
  EXPECT_FALSE(fences.arrive(7, 1, 1, kNodes, "n2", {{"b", "2"}}));
  EXPECT_FALSE(fences.arrive(7, 1, 1, kNodes, "n1", {{"a", "1"}}));
  EXPECT_EQ(fences.open(), 1u);
  const auto done = fences.arrive(7, 1, 1, kNodes, "n3", {});
  ASSERT_TRUE(done);
  EXPECT_EQ(done->entries, (Entries{{"a", "1"}, {"b", "2"}}));
  EXPECT_EQ(fences.open(), 0u);
  // The next fence starts afresh.
  EXPECT_FALSE(fences.arrive(7, 1, 2, kNodes, "n1", {}));
}

TEST(PmiFences, StepsAndFencesAreApart) {
  PmiFences fences;
  EXPECT_FALSE(fences.arrive(7, 1, 1, {"n1", "n2"}, "n1", {}));
  EXPECT_FALSE(fences.arrive(7, 2, 1, {"n1", "n2"}, "n2", {}));
  EXPECT_FALSE(fences.arrive(7, 1, 2, {"n1", "n2"}, "n2", {}));
  EXPECT_TRUE(fences.arrive(7, 1, 1, {"n1", "n2"}, "n2", {}));
  EXPECT_TRUE(fences.arrive(7, 1, 1, {"n1"}, "n1", {}));  // a one-node step: at once
}

TEST(PmiFences, RefusesWhatDoesNotBelong) {
  PmiFences fences;
  EXPECT_THROW(fences.arrive(7, 1, 1, kNodes, "n9", {}), std::invalid_argument);
  EXPECT_THROW(fences.arrive(7, 1, 0, kNodes, "n1", {}), std::invalid_argument);
  EXPECT_FALSE(fences.arrive(7, 1, 1, kNodes, "n1", {{"a", "1"}}));
  EXPECT_THROW(fences.arrive(7, 1, 1, kNodes, "n1", {}), std::invalid_argument);  // twice
  EXPECT_THROW(fences.arrive(7, 1, 1, kNodes, "n2", {{"a", "other"}}), std::invalid_argument);
  // The refused parts changed nothing: n2 and n3 still complete it.
  EXPECT_FALSE(fences.arrive(7, 1, 1, kNodes, "n2", {{"a", "1"}}));
  const auto done = fences.arrive(7, 1, 1, kNodes, "n3", {});
  ASSERT_TRUE(done);
  EXPECT_EQ(done->entries, (Entries{{"a", "1"}}));
}

TEST(PmiFences, DropForgetsAStep) {
  PmiFences fences;
  fences.arrive(7, 1, 1, kNodes, "n1", {});
  fences.arrive(7, 2, 1, kNodes, "n1", {});
  fences.arrive(8, 1, 1, kNodes, "n1", {});
  fences.drop(7, 1);
  EXPECT_EQ(fences.open(), 2u);
  // A dropped fence starts afresh: n1 may send it again.
  EXPECT_FALSE(fences.arrive(7, 1, 1, kNodes, "n1", {}));
}

}  // namespace
}  // namespace sched::daemon
