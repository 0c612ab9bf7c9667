#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "sched/sim/esp_workload.hpp"

namespace sched::sim {
namespace {

std::string order_of(const Workload& workload) {
  std::string letters;
  for (const auto& job : workload.jobs) letters += job.spec.name;
  return letters;
}

TEST(EspWorkload, Has230JobsOn32Nodes) {
  const auto workload = make_esp({});
  EXPECT_EQ(workload.jobs.size(), 230u);
  EXPECT_EQ(workload.nodes, 32);
  EXPECT_EQ(workload.source, "esp");
  EXPECT_EQ(workload.skipped, 0);
  EXPECT_TRUE(workload.events.empty());
}

TEST(EspWorkload, TypeTableMatchesTableI) {
  const auto& types = esp_types();
  ASSERT_EQ(types.size(), 14u);
  int total = 0;
  std::string letters;
  for (const auto& type : types) {
    total += type.count;
    letters += type.letter;
  }
  EXPECT_EQ(total, 230);
  EXPECT_EQ(letters, "ABCDEFGHIJKLMZ");
  ASSERT_TRUE(find_esp_type('F'));
  EXPECT_EQ(find_esp_type('F')->runtime, 1846);
  EXPECT_EQ(find_esp_type('F')->constraint, NodeConstraint::Pof2);
  EXPECT_FALSE(find_esp_type('N'));
}

TEST(EspWorkload, CountsSizesRuntimesAndConstraintsPerType) {
  struct Expected {
    int count;
    int nodes;
    double runtime;
    NodeConstraint constraint;
  };
  using C = NodeConstraint;
  const std::map<std::string, Expected> expected = {
      {"A", {75, 1, 267, C::None}}, {"B", {9, 2, 322, C::Pof2}},  {"C", {3, 16, 534, C::None}},
      {"D", {3, 8, 616, C::Even}},  {"E", {3, 16, 315, C::None}}, {"F", {9, 2, 1846, C::Pof2}},
      {"G", {6, 4, 1334, C::Even}}, {"H", {6, 5, 1067, C::Odd}},  {"I", {24, 1, 1432, C::None}},
      {"J", {24, 2, 725, C::Pof2}}, {"K", {15, 3, 487, C::None}}, {"L", {36, 4, 366, C::Even}},
      {"M", {15, 8, 187, C::None}}, {"Z", {2, 32, 100, C::None}},
  };
  std::map<std::string, int> counts;
  for (const auto& job : make_esp({}).jobs) {
    ++counts[job.spec.name];
    const auto it = expected.find(job.spec.name);
    ASSERT_NE(it, expected.end()) << job.spec.name;
    EXPECT_EQ(job.spec.nodes, it->second.nodes) << job.spec.name;
    EXPECT_EQ(job.runtime, it->second.runtime) << job.spec.name;
    EXPECT_EQ(job.spec.walltime, it->second.runtime) << job.spec.name;
    EXPECT_EQ(job.spec.constraint, it->second.constraint) << job.spec.name;
    EXPECT_EQ(job.spec.kind, JobKind::Rigid);
  }
  for (const auto& [name, want] : expected) EXPECT_EQ(counts[name], want.count) << name;
}

TEST(EspWorkload, TimeLimitsAreExactRoundedUpOrFixed) {
  EspOptions options;
  options.time_limit = *EspTimeLimit::parse("round:900");
  const auto rounded = make_esp(options);
  options.time_limit = *EspTimeLimit::parse("fixed:7200");
  const auto fixed = make_esp(options);
  const auto exact = make_esp({});
  ASSERT_EQ(rounded.jobs.size(), exact.jobs.size());
  for (std::size_t i = 0; i < exact.jobs.size(); ++i) {
    const double runtime = exact.jobs[i].runtime;
    EXPECT_EQ(rounded.jobs[i].runtime, runtime) << "the limit changes, not the run";
    EXPECT_EQ(rounded.jobs[i].spec.walltime, std::ceil(runtime / 900) * 900);
    EXPECT_GE(rounded.jobs[i].spec.walltime, runtime);
    EXPECT_EQ(fixed.jobs[i].spec.walltime, 7200);
    EXPECT_EQ(exact.jobs[i].spec.walltime, runtime);
  }
  EXPECT_EQ(EspTimeLimit::parse("round:900")->limit_for(900), 900) << "a multiple stays";
  EXPECT_EQ(EspTimeLimit::parse("round:900")->limit_for(901), 1800);
}

TEST(EspWorkload, TimeLimitRulesAreParsedStrictly) {
  EXPECT_TRUE(EspTimeLimit::parse("exact"));
  for (const char* bad : {"", "round", "round:", "round:0", "round:-5", "round:9x", "fixed:nan",
                          "fixed:inf", "ceil:60", "exact:1"}) {
    EXPECT_FALSE(EspTimeLimit::parse(bad)) << bad;
  }
}

TEST(EspWorkload, SizesScaleWithTheSystem) {
  EspOptions options;
  options.nodes = 16;
  std::map<std::string, int> sizes;
  for (const auto& job : make_esp(options).jobs) sizes[job.spec.name] = job.spec.nodes;
  EXPECT_EQ(sizes["A"], 1);  // 0.5 rounds up
  EXPECT_EQ(sizes["H"], 3);  // 2.5 rounds up
  EXPECT_EQ(sizes["Z"], 16);
  options.nodes = 4;
  for (const auto& job : make_esp(options).jobs) {
    EXPECT_GE(job.spec.nodes, 1);  // never below one node
  }
}

TEST(EspWorkload, SubmitsEveryIntervalWithIdsInOrder) {
  const auto workload = make_esp({});
  for (std::size_t i = 0; i < workload.jobs.size(); ++i) {
    EXPECT_EQ(workload.jobs[i].id, static_cast<JobId>(i + 1));
    EXPECT_DOUBLE_EQ(workload.jobs[i].submit, 30.0 * static_cast<double>(i));
  }
  EspOptions options;
  options.interarrival_s = 2.5;
  const auto faster = make_esp(options);
  EXPECT_DOUBLE_EQ(faster.jobs.back().submit, 229 * 2.5);
}

TEST(EspWorkload, SameSeedSameOrder) {
  EspOptions options;
  options.seed = 42;
  EXPECT_EQ(order_of(make_esp(options)), order_of(make_esp(options)));
}

TEST(EspWorkload, DifferentSeedDifferentOrder) {
  EspOptions one;
  one.seed = 1;
  EspOptions two;
  two.seed = 2;
  EXPECT_NE(order_of(make_esp(one)), order_of(make_esp(two)));
}

// The order of a seed is part of an experiment's definition: it must not
// change between versions or standard libraries.
TEST(EspWorkload, SeedOneOrderIsPinned) {
  EXPECT_EQ(order_of(make_esp({})).substr(0, 40), "ILALLELLAAALBMIAFIAAALJAKAFIKAMJAGAMAHLE");
}

TEST(EspWorkload, OrderIsShuffled) {
  // Not the table order: some later type comes before some earlier one.
  const auto order = order_of(make_esp({}));
  EXPECT_NE(order.substr(0, 75), std::string(75, 'A'));
}

TEST(EspWorkload, RejectsBadOptions) {
  EspOptions options;
  options.nodes = 0;
  EXPECT_THROW(make_esp(options), WorkloadError);
  options.nodes = 32;
  options.interarrival_s = -1;
  EXPECT_THROW(make_esp(options), WorkloadError);
}

}  // namespace
}  // namespace sched::sim
