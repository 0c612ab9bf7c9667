// The simulated application (sim/app_model.hpp): speedup models, rate and
// MTCT with phases, adaptation cost and its calibration, evolving targets.
#include <gtest/gtest.h>

#include <cmath>
#include <utility>

#include "sched/sim/app_model.hpp"

namespace sched::sim {
namespace {

TEST(AppModel, AmdahlSpeedup) {
  SpeedupModel m;
  m.serial_fraction = 0.1;
  EXPECT_DOUBLE_EQ(m.speedup(1), 1);
  EXPECT_NEAR(m.speedup(10), 1 / (0.1 + 0.09), 1e-12);
  m.serial_fraction = 0;
  EXPECT_DOUBLE_EQ(m.speedup(32), 32);
}

TEST(AppModel, DowneyLowVarianceIsLinearUpToAWhenSigmaIsZero) {
  SpeedupModel m;
  m.kind = SpeedupModel::Kind::Downey;
  m.downey_a = 8;
  m.downey_sigma = 0;
  EXPECT_DOUBLE_EQ(m.speedup(1), 1);
  EXPECT_DOUBLE_EQ(m.speedup(4), 4);
  EXPECT_DOUBLE_EQ(m.speedup(8), 8);
  EXPECT_DOUBLE_EQ(m.speedup(64), 8) << "never more than the average parallelism";
}

TEST(AppModel, DowneyCurvesAreContinuousAndFlattenAtA) {
  for (double sigma : {0.5, 1.0, 2.0}) {
    SCOPED_TRACE(sigma);
    SpeedupModel m;
    m.kind = SpeedupModel::Kind::Downey;
    m.downey_a = 10;
    m.downey_sigma = sigma;
    EXPECT_NEAR(m.speedup(1), 1, 1e-12);
    double previous = 0;
    for (int n = 1; n <= 64; ++n) {
      const double s = m.speedup(n);
      EXPECT_GE(s, previous - 1e-12) << "never slower on more nodes, n=" << n;
      EXPECT_LE(s, 10 + 1e-12);
      previous = s;
    }
    EXPECT_NEAR(m.speedup(64), 10, 1e-9);
  }
  // σ = 1: both forms give n·A·2 / (n + 2A − 1) below the knee.
  SpeedupModel m;
  m.kind = SpeedupModel::Kind::Downey;
  m.downey_a = 10;
  m.downey_sigma = 1;
  EXPECT_NEAR(m.speedup(5), 5 * 10.0 * 2 / (5 + 20 - 1), 1e-12);
}

TEST(AppModel, RateIsOneAtTheRequestedSizeWhateverThePhase) {
  AppModel model;
  model.speedup.serial_fraction = 0.2;
  model.phases = {0.5, 3};
  EXPECT_DOUBLE_EQ(model.rate(4, 4, 0.5), 1);
  EXPECT_DOUBLE_EQ(model.rate(4, 4, 3), 1);
  EXPECT_GT(model.rate(8, 4, 1), 1);
  EXPECT_LT(model.rate(8, 4, 1), 2) << "sublinear";
  EXPECT_LT(model.rate(2, 4, 1), 1);
  EXPECT_GT(model.rate(2, 4, 1), 0.5) << "shrinking loses less than the nodes taken";
}

TEST(AppModel, MtctIsTheInefficiencyOfThePhase) {
  AppModel model;
  model.speedup.serial_fraction = 0.05;
  for (int n : {1, 2, 8, 32}) {
    const double e = model.speedup.speedup(n) / n;
    EXPECT_NEAR(model.mtct(n, 1), (1 - e) / e, 1e-12) << n;
    EXPECT_NEAR(model.mtct(n, 2.5), 2.5 * (1 - e) / e, 1e-12) << n;
  }
  EXPECT_DOUBLE_EQ(model.mtct(1, 1), 0);
  // Amdahl: mtct(n) = f·(n − 1).
  EXPECT_NEAR(model.mtct(17, 1), 0.05 * 16, 1e-12);
}

TEST(AppModel, PhaseFactorAndPhaseEnd) {
  AppModel model;
  EXPECT_DOUBLE_EQ(model.phase_factor(0.3), 1);
  EXPECT_DOUBLE_EQ(model.phase_end(0.3), 1);
  model.phases = {1, 2, 4, 8};
  EXPECT_DOUBLE_EQ(model.phase_factor(0), 1);
  EXPECT_DOUBLE_EQ(model.phase_factor(0.3), 2);
  EXPECT_DOUBLE_EQ(model.phase_factor(0.5), 4);
  EXPECT_DOUBLE_EQ(model.phase_factor(1), 8);
  EXPECT_DOUBLE_EQ(model.phase_end(0.3), 0.5);
  EXPECT_DOUBLE_EQ(model.phase_end(0.5), 0.75);
  EXPECT_DOUBLE_EQ(model.phase_end(0.99), 1);
}

TEST(AppModel, AdaptationCostFollowsLinaEtAl) {
  AdaptationCost cost;
  cost.start_s_per_node = 1;
  cost.stop_s_per_node = 0.5;
  cost.alpha_s = 0.25;
  cost.beta_s = 2;
  EXPECT_DOUBLE_EQ(cost.seconds(4, 4), 0);
  EXPECT_DOUBLE_EQ(cost.seconds(1, 2), 1.25 + 2.0 / 3);
  EXPECT_DOUBLE_EQ(cost.seconds(8, 4), 4 * 0.75 + 2.0 / 12);
  EXPECT_LT(cost.seconds(8, 16), cost.seconds(4, 16)) << "fewer nodes moved, more to share";
}

TEST(AppModel, DefaultCostsStayUnderThePapersMeasuredSteps) {
  // Chadha et al., Fig. 5: at most 3.1 s per one-node expand step and 1.8 s
  // per one-node shrink step between 1 and 32 nodes.
  const AdaptationCost cost;
  for (int n = 1; n < 32; ++n) {
    EXPECT_LT(cost.seconds(n, n + 1), 3.1) << n;
    EXPECT_LT(cost.seconds(n + 1, n), 1.8) << n;
  }
}

TEST(AppModel, LinearSpeedupIsTheSizeAndHasNoCommunication) {
  SpeedupModel m;
  m.kind = SpeedupModel::Kind::Linear;
  m.serial_fraction = 0.3;  // ignored by the linear model
  EXPECT_DOUBLE_EQ(m.speedup(1), 1);
  EXPECT_DOUBLE_EQ(m.speedup(17), 17);
  AppModel app;
  app.speedup = m;
  EXPECT_DOUBLE_EQ(app.mtct(32, 1.4), 0);
  EXPECT_DOUBLE_EQ(app.rate(8, 4, 1), 2) << "twice the nodes, twice the speed";
  EXPECT_DOUBLE_EQ(app.rate(2, 4, 0.7), 0.5);
}

TEST(AppModel, PerNodeIsTheDefaultCost) {
  const AdaptationCost fresh;
  const AdaptationCost named = *AdaptationCost::named("per_node");
  for (const auto& [from, to] : {std::pair{1, 32}, std::pair{32, 1}, std::pair{5, 6}}) {
    EXPECT_EQ(named.seconds(from, to), fresh.seconds(from, to));
    EXPECT_EQ(AdaptationCost::per_node().seconds(from, to), fresh.seconds(from, to));
  }
  // The issue-21 figure: growing 1 → 32 at once under the per-node form.
  EXPECT_NEAR(fresh.seconds(1, 32), 31 * 1.25 + 2.0 / 33, 1e-12);
  EXPECT_FALSE(AdaptationCost::named("per_step"));
}

TEST(AppModel, StepCostIsALatencyPlusATermPerNodeOfTheNewSet) {
  const AdaptationCost step = *AdaptationCost::named("step");
  // bench/adapt's fit: expand 7.85 ms + 0.446 ms × n_new, shrink 1.63 ms +
  // 0.570 ms × n_new; nothing per node changed.
  EXPECT_NEAR(step.seconds(1, 2), 0.00785 + 2 * 0.000446, 1e-12);
  EXPECT_NEAR(step.seconds(32, 31), 0.00163 + 31 * 0.000570, 1e-12);
  EXPECT_NEAR(step.seconds(1, 32), 0.00785 + 32 * 0.000446, 1e-12)
      << "one step to 32 costs one latency, not 31";
  EXPECT_DOUBLE_EQ(step.seconds(7, 7), 0);
  // Within the live table's range (1.8-24.8 ms a step) at every size.
  for (int n = 1; n < 32; ++n) {
    EXPECT_GT(step.seconds(n, n + 1), 0.0018) << n;
    EXPECT_LT(step.seconds(n, n + 1), 0.0248) << n;
    EXPECT_LT(step.seconds(n + 1, n), 0.0248) << n;
  }
}

TEST(AppModel, CostTermsAdd) {
  AdaptationCost cost;
  cost.latency_expand_s = 2;
  cost.latency_shrink_s = 1;
  cost.per_new_node_expand_s = 0.5;
  cost.per_new_node_shrink_s = 0.25;
  cost.start_s_per_node = 3;
  cost.stop_s_per_node = 4;
  cost.alpha_s = 1;
  cost.beta_s = 10;
  EXPECT_DOUBLE_EQ(cost.seconds(2, 3), 2 + 0.5 * 3 + (3 + 1) * 1 + 10.0 / 5);
  EXPECT_DOUBLE_EQ(cost.seconds(6, 4), 1 + 0.25 * 4 + (4 + 1) * 2 + 10.0 / 10);
}

TEST(AppModel, EvolvingTargetsFitBoundsAndConstraint) {
  JobSpec spec;
  spec.kind = JobKind::Evolving;
  spec.nodes = 2;
  spec.min_nodes = 2;
  spec.max_nodes = 10;
  spec.constraint = NodeConstraint::Even;
  EvolvingStep grow{0.5, ResizeRequest::Op::Expand, 3, 0};
  EXPECT_EQ(evolving_target(grow, spec, 2), 6) << "2 + 3 = 5 → the next even size";
  EXPECT_EQ(evolving_target(grow, spec, 8), 10) << "capped at max";
  EXPECT_EQ(evolving_target(grow, spec, 10), 10) << "at max: no request";
  EvolvingStep shrink{0.5, ResizeRequest::Op::Shrink, 3, 0};
  EXPECT_EQ(evolving_target(shrink, spec, 8), 4) << "8 − 3 = 5 → the even size below";
  EXPECT_EQ(evolving_target(shrink, spec, 4), 2) << "floored at min";
  EXPECT_EQ(evolving_target(shrink, spec, 2), 2);
  EvolvingStep to{0.5, ResizeRequest::Op::Expand, 0, 8};
  EXPECT_EQ(evolving_target(to, spec, 4), 8);
}

}  // namespace
}  // namespace sched::sim
