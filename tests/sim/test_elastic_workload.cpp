// Making workloads malleable (sim/elastic_workload.hpp): ESP's malleable
// fraction as in the paper's Figure 3, and Lina et al.'s elastic traces.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "sched/constraints.hpp"
#include "sched/sim/elastic_workload.hpp"
#include "sched/sim/esp_workload.hpp"
#include "sched/sim/swf_reader.hpp"
#include "test_paths.hpp"

namespace sched::sim {
namespace {

Workload esp(double fraction, std::uint64_t seed = 1) {
  EspOptions options;
  options.seed = seed;
  options.malleable_fraction = fraction;
  return make_esp(options);
}

std::set<JobId> malleable_ids(const Workload& workload) {
  std::set<JobId> ids;
  for (const auto& job : workload.jobs) {
    if (job.spec.kind == JobKind::Malleable) ids.insert(job.id);
  }
  return ids;
}

TEST(EspMalleable, FractionZeroIsAllRigidAndOneAllMalleable) {
  EXPECT_TRUE(malleable_ids(esp(0)).empty());
  EXPECT_EQ(malleable_ids(esp(1)).size(), 230u);
  EXPECT_EQ(malleable_ids(esp(0.5)).size(), 115u);
  EXPECT_EQ(malleable_ids(esp(0.1)).size(), 23u);
}

TEST(EspMalleable, BoundsAreTheConstraintsExtremesWithinTheSystem) {
  for (const auto& job : esp(1).jobs) {
    SCOPED_TRACE(job.spec.name);
    const JobSpec& spec = job.spec;
    EXPECT_EQ(spec.nodes, esp_job_nodes(*find_esp_type(spec.name[0]), 32)) << "starts as asked";
    switch (spec.constraint) {
      case NodeConstraint::None:
        EXPECT_EQ(spec.min_nodes, 1);
        EXPECT_EQ(spec.max_nodes, 32);
        break;
      case NodeConstraint::Pof2:
        EXPECT_EQ(spec.min_nodes, 1);
        EXPECT_EQ(spec.max_nodes, 32);
        break;
      case NodeConstraint::Even:
        EXPECT_EQ(spec.min_nodes, 2);
        EXPECT_EQ(spec.max_nodes, 32);
        break;
      case NodeConstraint::Odd:
        EXPECT_EQ(spec.min_nodes, 1);
        EXPECT_EQ(spec.max_nodes, 31);
        break;
      case NodeConstraint::Ncube:
        ADD_FAILURE() << "ESP has no ncube type";
    }
    EXPECT_TRUE(is_allowed_size(spec.constraint, spec.nodes));
  }
}

TEST(EspMalleable, SameOrderAndModelsForEveryFractionAndNestedChoices) {
  const Workload none = esp(0);
  const Workload some = esp(0.3);
  const Workload more = esp(0.6);
  ASSERT_EQ(none.jobs.size(), more.jobs.size());
  for (std::size_t i = 0; i < none.jobs.size(); ++i) {
    EXPECT_EQ(none.jobs[i].spec.name, more.jobs[i].spec.name);
    EXPECT_EQ(none.jobs[i].submit, more.jobs[i].submit);
    EXPECT_EQ(none.jobs[i].model.speedup.serial_fraction,
              more.jobs[i].model.speedup.serial_fraction);
    EXPECT_EQ(none.jobs[i].model.phases, more.jobs[i].model.phases);
  }
  const auto a = malleable_ids(some);
  const auto b = malleable_ids(more);
  EXPECT_TRUE(std::includes(b.begin(), b.end(), a.begin(), a.end()))
      << "the malleable jobs of 30% stay malleable at 60%";
  EXPECT_NE(malleable_ids(esp(0.3, 2)), a) << "another seed chooses other jobs";
}

TEST(EspMalleable, ModelsAreDrawnInTheirDocumentedRanges) {
  std::set<double> fractions;
  for (const auto& job : esp(0).jobs) {
    const AppModel& m = job.model;
    EXPECT_EQ(m.speedup.kind, SpeedupModel::Kind::Amdahl);
    EXPECT_GE(m.speedup.serial_fraction, 0.002);
    EXPECT_LE(m.speedup.serial_fraction, 0.05);
    ASSERT_EQ(m.phases.size(), 8u);
    for (double phase : m.phases) {
      EXPECT_GE(phase, 0.5);
      EXPECT_LE(phase, 1.5);
    }
    fractions.insert(m.speedup.serial_fraction);
  }
  EXPECT_GT(fractions.size(), 200u) << "a spread of efficiencies, not one value";
}

TEST(EspMalleable, FractionOutsideZeroToOneIsAnError) {
  EXPECT_THROW(esp(-0.1), WorkloadError);
  EXPECT_THROW(esp(1.5), WorkloadError);
}

Workload lublin(int jobs) {
  SwfOptions options;
  options.max_jobs = jobs;
  return read_swf(std::string(SCHED_SHARED_WORKLOADS_DIR) + "/lublin_256.swf", options);
}

TEST(SwfElastic, HalfMalleableHalfEvolvingWithLinasBounds) {
  Workload workload = lublin(400);
  const Workload rigid = workload;
  make_swf_elastic(workload, workload.nodes, 1.0, 3);
  int malleable = 0;
  int evolving = 0;
  for (std::size_t i = 0; i < workload.jobs.size(); ++i) {
    const JobSpec& spec = workload.jobs[i].spec;
    const int asked = rigid.jobs[i].spec.nodes;
    SCOPED_TRACE(workload.jobs[i].id);
    EXPECT_EQ(spec.nodes, asked);
    EXPECT_EQ(spec.min_nodes, (asked + 1) / 2);
    EXPECT_EQ(spec.max_nodes, std::max(asked, std::min(workload.nodes, 8 * asked)));
    if (spec.kind == JobKind::Malleable) {
      ++malleable;
      EXPECT_TRUE(workload.jobs[i].model.requests.empty());
    } else {
      ASSERT_EQ(spec.kind, JobKind::Evolving);
      ++evolving;
      const auto& requests = workload.jobs[i].model.requests;
      EXPECT_GE(requests.size(), 1u);
      EXPECT_LE(requests.size(), 4u);
      for (const auto& step : requests) {
        EXPECT_GE(step.at_done, 0.4);
        EXPECT_LE(step.at_done, 0.7);
        EXPECT_GE(step.by, 1);
        EXPECT_LE(step.by, asked);
      }
    }
  }
  EXPECT_EQ(malleable, 200);
  EXPECT_EQ(evolving, 200);
}

TEST(SwfElastic, FractionChoosesThatManyJobs) {
  Workload workload = lublin(400);
  make_swf_elastic(workload, workload.nodes, 0.25, 3);
  int elastic = 0;
  for (const auto& job : workload.jobs) elastic += job.spec.kind != JobKind::Rigid;
  EXPECT_EQ(elastic, 100);
  EXPECT_THROW(make_swf_elastic(workload, workload.nodes, 2, 3), WorkloadError);
}

}  // namespace
}  // namespace sched::sim
