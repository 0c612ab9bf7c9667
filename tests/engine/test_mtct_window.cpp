// MTCT over a recent window (issue 17 item 5): the ratio of what the sums
// gained over the last window_s, and the refresh rule that passes a new MTCT
// on only when it moved.
#include <gtest/gtest.h>

#include "engine_fixture.hpp"
#include "sched/mtct_window.hpp"

namespace sched::test {
namespace {

TEST(MtctWindow, ARatioOfTheSumsUntilTheSamplesCoverAWindow) {
  MtctWindow window(10);
  EXPECT_FALSE(window.ratio());
  window.add(0, 0, 0);
  EXPECT_FALSE(window.ratio()) << "no computation yet: no data";
  window.add(2, 1, 4);
  EXPECT_DOUBLE_EQ(*window.ratio(), 0.25);
  window.add(6, 2, 8);
  EXPECT_DOUBLE_EQ(*window.ratio(), 0.25);
}

TEST(MtctWindow, APhaseChangeShowsWithinOneWindow) {
  // One second per sample: 0.1 communication per second of computation for
  // 100 s, then 0.5.
  MtctWindow window(10);
  double comm = 0, compute = 0;
  for (int t = 1; t <= 100; ++t) {
    comm += 0.1;
    compute += 1;
    window.add(t, comm, compute);
  }
  EXPECT_NEAR(*window.ratio(), 0.1, 1e-12);
  for (int t = 101; t <= 110; ++t) {
    comm += 0.5;
    compute += 1;
    window.add(t, comm, compute);
  }
  EXPECT_NEAR(*window.ratio(), 0.5, 1e-12) << "the last 10 s are all the new phase";
  EXPECT_NEAR(comm / compute, (10 + 5) / 110.0, 1e-12) << "what the running total says";

  MtctWindow whole(0);  // no window: the running total
  whole.add(100, 10, 100);
  whole.add(110, 15, 110);
  EXPECT_NEAR(*whole.ratio(), 15 / 110.0, 1e-12);
}

TEST(MtctWindow, SumsThatStartAnewClearTheWindow) {
  MtctWindow window(10);
  window.add(0, 5, 10);
  window.add(20, 10, 20);
  window.add(21, 1, 2);  // smaller: a new start
  EXPECT_DOUBLE_EQ(*window.ratio(), 0.5);
}

TEST(MtctWindow, AnMtctIsPassedOnWhenItMovedByMoreThanTheFraction) {
  EXPECT_TRUE(mtct_moved(std::nullopt, 0.3, 0.1));
  EXPECT_FALSE(mtct_moved(0.3, 0.32, 0.1));
  EXPECT_TRUE(mtct_moved(0.3, 0.34, 0.1));
  EXPECT_TRUE(mtct_moved(0.3, 0.26, 0.1));
  EXPECT_TRUE(mtct_moved(0.0, 0.01, 0.1));
  EXPECT_TRUE(mtct_moved(0.3, 0.3, 0)) << "0: every report";
}

class EngineMtct : public EngineFixture {};

TEST_F(EngineMtct, PerfTotalsReachThePolicyOverTheWindowWhenTheyMove) {
  EngineConfig config;
  config.mtct_window_s = 10;
  config.mtct_refresh_fraction = 0.1;
  init(2, config);
  const JobId m = run_job(malleable_spec(2, 1, 2));
  engine->perf_totals(m, 1, 10, false);  // recorded only
  EXPECT_FALSE(job(m).run->mtct);
  clock.advance(10);
  engine->perf_totals(m, 2, 20);
  ASSERT_TRUE(job(m).run->mtct);
  EXPECT_DOUBLE_EQ(*job(m).run->mtct, 0.1);
  EXPECT_TRUE(engine->pass_due()) << "fresh data gives a pass";
  engine->run_pass_if_due();
  clock.advance(10);
  engine->perf_totals(m, 3.05, 30);  // 0.105 over the window: within 10%
  EXPECT_DOUBLE_EQ(*job(m).run->mtct, 0.1);
  EXPECT_FALSE(engine->pass_due());
  clock.advance(10);
  engine->perf_totals(m, 8.05, 40);  // 0.5 over the last window
  EXPECT_NEAR(*job(m).run->mtct, 0.5, 1e-12);
  EXPECT_TRUE(engine->pass_due());
  // An adaptation starts the measurement anew.
  engine->run_pass_if_due();
  in_pass([&](PassContext& ctx) { EXPECT_EQ(ctx.shrink(m, 1), std::nullopt); });
  engine->adaptation_done(m, true);
  EXPECT_FALSE(job(m).run->mtct);
  clock.advance(1);
  engine->perf_totals(m, 1, 4);
  EXPECT_DOUBLE_EQ(*job(m).run->mtct, 0.25);
}

}  // namespace
}  // namespace sched::test
