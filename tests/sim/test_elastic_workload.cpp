// Making workloads malleable (sim/elastic_workload.hpp): ESP's malleable
// fraction as in the paper's Figure 3, and Lina et al.'s elastic traces.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
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

TEST(SwfElastic, OptionsWithDefaultsGiveTheSameWorkload) {
  Workload a = lublin(400);
  Workload b = a;
  make_swf_elastic(a, a.nodes, 0.6, 7);
  SwfElasticOptions options;
  options.fraction = 0.6;
  options.seed = 7;
  make_swf_elastic(b, b.nodes, options);
  ASSERT_EQ(a.jobs.size(), b.jobs.size());
  for (std::size_t i = 0; i < a.jobs.size(); ++i) {
    SCOPED_TRACE(a.jobs[i].id);
    EXPECT_EQ(a.jobs[i].spec.kind, b.jobs[i].spec.kind);
    EXPECT_EQ(a.jobs[i].spec.max_nodes, b.jobs[i].spec.max_nodes);
    ASSERT_EQ(a.jobs[i].model.requests.size(), b.jobs[i].model.requests.size());
    for (std::size_t r = 0; r < a.jobs[i].model.requests.size(); ++r) {
      EXPECT_EQ(a.jobs[i].model.requests[r].by, b.jobs[i].model.requests[r].by);
      EXPECT_EQ(a.jobs[i].model.requests[r].at_done, b.jobs[i].model.requests[r].at_done);
    }
    EXPECT_EQ(a.jobs[i].model.adaptation.seconds(4, 8), b.jobs[i].model.adaptation.seconds(4, 8));
  }
}

TEST(SwfElastic, AllMalleableModeAndTheMalleableShare) {
  for (const auto& [share, malleable] :
       {std::pair{1.0, 400}, std::pair{0.0, 0}, std::pair{0.75, 300}}) {
    SCOPED_TRACE(share);
    Workload workload = lublin(400);
    SwfElasticOptions options;
    options.fraction = 1;
    options.seed = 3;
    options.malleable_share = share;
    make_swf_elastic(workload, workload.nodes, options);
    int count = 0;
    for (const auto& job : workload.jobs) {
      count += job.spec.kind == JobKind::Malleable;
      if (job.spec.kind == JobKind::Malleable) {
        EXPECT_TRUE(job.model.requests.empty());
      }
    }
    EXPECT_EQ(count, malleable);
  }
}

TEST(SwfElastic, EvolvingRequestSizeIsAParameter) {
  const Workload rigid = lublin(400);
  Workload workload = rigid;
  SwfElasticOptions options;
  options.fraction = 1;
  options.request_max_fraction = 0.25;
  make_swf_elastic(workload, workload.nodes, options);
  int requests = 0;
  for (std::size_t i = 0; i < workload.jobs.size(); ++i) {
    const int most = std::max(1, static_cast<int>(std::lround(0.25 * rigid.jobs[i].spec.nodes)));
    for (const auto& step : workload.jobs[i].model.requests) {
      EXPECT_GE(step.by, 1);
      EXPECT_LE(step.by, most) << workload.jobs[i].id;
      ++requests;
    }
  }
  EXPECT_GT(requests, 200);
  options.request_max_fraction = 0;
  EXPECT_THROW(make_swf_elastic(workload, workload.nodes, options), WorkloadError);
}

TEST(SwfElastic, PerProcessorCostsAreDrawnInLinasRanges) {
  Workload workload = lublin(400);
  SwfElasticOptions options;
  options.fraction = 1;
  options.costs = SwfElasticOptions::Costs::PerProcessor;
  options.cores_per_node = 4;
  make_swf_elastic(workload, workload.nodes, options);
  std::set<double> alphas;
  for (const auto& job : workload.jobs) {
    const AdaptationCost& c = job.model.adaptation;
    EXPECT_EQ(c.start_s_per_node, 0);
    EXPECT_EQ(c.stop_s_per_node, 0);
    // α per processor in [0.005, 0.05], four processors a node.
    EXPECT_GE(c.alpha_s, 4 * 0.005);
    EXPECT_LE(c.alpha_s, 4 * 0.05);
    EXPECT_GE(c.beta_s, 0.005 / 4);
    EXPECT_LE(c.beta_s, 0.05 / 4);
    // Synchronisation [0.015, 0.1] plus negotiation [0.005, 0.05].
    EXPECT_GE(c.latency_expand_s, 0.02);
    EXPECT_LE(c.latency_expand_s, 0.15);
    EXPECT_EQ(c.latency_expand_s, c.latency_shrink_s);
    alphas.insert(c.alpha_s);
    EXPECT_NEAR(c.seconds(250, 125), c.latency_shrink_s + 125 * c.alpha_s + c.beta_s / 375, 1e-12);
  }
  EXPECT_GT(alphas.size(), 300u) << "drawn per job";
}

TEST(EspModel, SpeedupModelsAndCostsAreOptionsAndThePhasesStay) {
  EspOptions options;
  options.seed = 4;
  const Workload amdahl = make_esp(options);
  options.model.speedup = EspModelOptions::Speedup::Downey;
  options.model.adaptation = AdaptationCost::step();
  const Workload downey = make_esp(options);
  options.model.speedup = EspModelOptions::Speedup::Linear;
  const Workload linear = make_esp(options);
  ASSERT_EQ(amdahl.jobs.size(), downey.jobs.size());
  for (std::size_t i = 0; i < amdahl.jobs.size(); ++i) {
    EXPECT_EQ(amdahl.jobs[i].model.phases, downey.jobs[i].model.phases);
    EXPECT_EQ(amdahl.jobs[i].model.phases, linear.jobs[i].model.phases);
    EXPECT_EQ(amdahl.jobs[i].model.speedup.kind, SpeedupModel::Kind::Amdahl);
    const SpeedupModel& d = downey.jobs[i].model.speedup;
    EXPECT_EQ(d.kind, SpeedupModel::Kind::Downey);
    EXPECT_GE(d.downey_a, 8);
    EXPECT_LE(d.downey_a, 128);
    EXPECT_EQ(linear.jobs[i].model.speedup.kind, SpeedupModel::Kind::Linear);
    EXPECT_EQ(downey.jobs[i].model.adaptation.seconds(1, 32),
              AdaptationCost::step().seconds(1, 32));
    EXPECT_EQ(amdahl.jobs[i].model.adaptation.seconds(1, 32), AdaptationCost{}.seconds(1, 32));
  }
  EXPECT_EQ(EspModelOptions::parse_speedup("downey"), EspModelOptions::Speedup::Downey);
  EXPECT_FALSE(EspModelOptions::parse_speedup("gustafson"));
}

}  // namespace
}  // namespace sched::sim
