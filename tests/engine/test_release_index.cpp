// The engine keeps the running jobs' estimated ends sorted (ReleaseIndex,
// issue 15) so that ctx:release_profile and ctx:earliest_start read them
// instead of collecting and sorting every running job at each pass. These
// tests drive random starts, ends, resizes, suspensions, timeouts and clock
// moves and compare every pass's answers with a profile rebuilt from the
// running jobs, as the engine did before.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "engine_fixture.hpp"
#include "sched/release_index.hpp"

namespace sched::test {
namespace {

using Step = PassContext::ReleaseStep;
constexpr double kNever = std::numeric_limits<double>::infinity();

// The releases rebuilt from scratch: every running job at its tentative
// size and estimated end (a past one counts as now), every start of the pass
// at now + walltime; in time order.
std::vector<std::pair<double, int>> rebuilt_releases(PassContext& ctx) {
  const double now = ctx.now();
  std::vector<std::pair<double, int>> releases;
  for (const Job* job : ctx.running()) {
    const int size = ctx.tentative_size(*job);
    if (size <= 0) continue;
    const double end = job->est_end();
    releases.emplace_back(end >= 0 ? std::max(end, now) : kNever, size);
  }
  for (const Action& action : ctx.actions()) {
    if (action.type != Action::Type::Start) continue;
    const double walltime = ctx.job(action.job)->spec.walltime;
    releases.emplace_back(walltime > 0 ? now + walltime : kNever, action.nodes);
  }
  std::stable_sort(releases.begin(), releases.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  return releases;
}

// Summed per distinct time from the idle nodes on.
std::vector<Step> rebuilt_profile(PassContext& ctx) {
  std::vector<Step> profile{Step{ctx.now(), ctx.nodes_idle()}};
  for (const auto& [time, freed] : rebuilt_releases(ctx)) {
    if (time == profile.back().time) {
      profile.back().free += freed;
    } else {
      profile.push_back(Step{time, profile.back().free + freed});
    }
  }
  return profile;
}

// As ctx:earliest_start has always answered: the idle nodes when they are
// enough (what an end already past adds is not counted then), else the
// first time enough are free.
Step rebuilt_earliest(PassContext& ctx, int nodes) {
  int free = ctx.nodes_idle();
  if (nodes <= free) return Step{ctx.now(), free - nodes};
  const auto releases = rebuilt_releases(ctx);
  for (std::size_t i = 0; i < releases.size();) {
    // Only once every release at this time is in.
    const double time = releases[i].first;
    for (; i < releases.size() && releases[i].first == time; ++i) free += releases[i].second;
    if (free >= nodes) return Step{time, free - nodes};
  }
  return Step{kNever, 0};
}

// Every answer of this pass equals the rebuilt one, exactly (same doubles).
void expect_matches_rebuilt(PassContext& ctx, int nodes_total) {
  const std::vector<Step> expected = rebuilt_profile(ctx);
  const std::vector<Step> got = ctx.release_profile();
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].time, expected[i].time) << "step " << i;
    EXPECT_EQ(got[i].free, expected[i].free) << "step " << i;
  }
  for (int n = 1; n <= nodes_total + 1; ++n) {
    const Step want = rebuilt_earliest(ctx, n);
    const Step have = ctx.earliest_start(n);
    EXPECT_EQ(have.time, want.time) << n << " nodes";
    EXPECT_EQ(have.free, want.free) << n << " nodes";
  }
}

class ReleaseIndexRandom : public EngineFixture {
 protected:
  static constexpr int kNodes = 24;
  void SetUp() override { init(kNodes); }

  std::vector<JobId> in_state(JobState wanted) const {
    std::vector<JobId> out;
    for (const auto& [id, job] : engine->jobs()) {
      if (job->state == wanted) out.push_back(id);
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  template <typename T>
  T pick(std::mt19937& rng, const std::vector<T>& from) {
    return from[std::uniform_int_distribution<std::size_t>(0, from.size() - 1)(rng)];
  }
};

TEST_F(ReleaseIndexRandom, EveryPassAnswersAsTheRebuiltProfile) {
  std::mt19937 rng(20261125);
  auto chance = [&rng](int percent) {
    return std::uniform_int_distribution<int>(0, 99)(rng) < percent;
  };
  // Walltimes on a coarse grid, so that many ends fall on the same time.
  auto walltime = [&rng] { return 10.0 * std::uniform_int_distribution<int>(0, 12)(rng); };
  int passes = 0;
  int with_running = 0;
  for (int round = 0; round < 400; ++round) {
    // Submissions: rigid and malleable, some without a walltime.
    for (int i = std::uniform_int_distribution<int>(0, 3)(rng); i > 0; --i) {
      JobSpec spec = chance(60) ? rigid_spec(std::uniform_int_distribution<int>(1, 6)(rng))
                                : malleable_spec(3, 1, 8);
      spec.walltime = walltime();
      submit(spec);
    }
    // A pass: random starts, sometimes a resize, suspension or preemption;
    // the answers are checked before and after each.
    in_pass([&](PassContext& ctx) {
      ++passes;
      if (!ctx.running().empty()) ++with_running;
      expect_matches_rebuilt(ctx, kNodes);
      for (std::size_t i = 0; i < ctx.pending_count() && i < 4; ++i) {
        const Job* job = ctx.pending_at(i);
        if (chance(70) && job->spec.nodes <= ctx.nodes_idle()) {
          (void)ctx.start(job->id);
          expect_matches_rebuilt(ctx, kNodes);
        }
      }
      if (!ctx.running().empty() && chance(30)) {
        const Job* job = pick(rng, ctx.running());
        if (job->state == JobState::Running && job->spec.kind == JobKind::Malleable) {
          const int to = std::uniform_int_distribution<int>(1, 8)(rng);
          if (to > job->size()) (void)ctx.expand(job->id, to);
          if (to < job->size()) (void)ctx.shrink(job->id, to);
        } else if (job->state == JobState::Running && chance(50)) {
          (void)ctx.suspend(job->id);
        } else if (job->state == JobState::Running) {
          (void)ctx.preempt(job->id, PreemptMode::Requeue);
        }
        expect_matches_rebuilt(ctx, kNodes);
      }
      for (JobId id : in_state(JobState::Suspended)) {
        if (chance(50)) (void)ctx.resume(id);
      }
      expect_matches_rebuilt(ctx, kNodes);
    });
    // Results come back: starts, adaptations (some rolled back), ends.
    for (JobId id : in_state(JobState::Starting)) {
      if (chance(80)) engine->job_started(id);
    }
    for (JobId id : in_state(JobState::Adapting)) {
      if (chance(70)) engine->adaptation_done(id, chance(80));
    }
    for (JobId id : in_state(JobState::Running)) {
      if (chance(10)) engine->job_ended(id, 0);
    }
    for (JobId id : in_state(JobState::Completing)) {
      if (chance(80)) engine->job_ended(id, 0);
    }
    // The clock moves: some estimated ends pass (and count as now) before
    // the time limits stop their jobs.
    clock.advance(std::uniform_int_distribution<int>(0, 15)(rng));
    if (chance(50)) engine->expire_time_limits();
  }
  EXPECT_EQ(passes, 400);
  EXPECT_GT(with_running, 300) << "the random walk must keep jobs running";
}

// The index itself: entries sorted by end then id, one per member with
// nodes, following size and limit changes.
TEST(ReleaseIndex, KeepsMembersSortedByEndThenId) {
  ReleaseIndex index;
  Job a;
  a.id = 1;
  a.start_time = 0;
  a.spec.walltime = 50;
  a.allocation = {0, 1};
  Job b;
  b.id = 2;
  b.start_time = 0;
  b.spec.walltime = 0;  // no estimate
  b.allocation = {2};
  Job c;
  c.id = 3;
  c.start_time = 10;
  c.spec.walltime = 40;  // also ends at 50
  c.allocation = {3};
  index.join(b);
  index.join(c);
  index.join(a);
  ASSERT_EQ(index.entries().size(), 3u);
  EXPECT_EQ(index.entries()[0].job, 1);
  EXPECT_EQ(index.entries()[0].end, 50);
  EXPECT_EQ(index.entries()[0].size, 2);
  EXPECT_EQ(index.entries()[1].job, 3);
  EXPECT_EQ(index.entries()[2].job, 2);
  EXPECT_EQ(index.entries()[2].end, kNever);

  // A shrink, then a limit that moves past the endless one's place.
  a.allocation = {0};
  index.update(a);
  EXPECT_EQ(index.entries()[0].size, 1);
  c.run.edit().limit_extension = 100;
  index.update(c);
  EXPECT_EQ(index.entries()[1].job, 3);
  EXPECT_EQ(index.entries()[1].end, 150);
  // A job that is not a member is not listed by an update.
  Job d = a;
  d.id = 4;
  index.update(d);
  EXPECT_EQ(index.entries().size(), 3u);
  // A member holding no node has no entry, and gets one back with nodes.
  c.allocation.clear();
  index.update(c);
  EXPECT_EQ(index.entries().size(), 2u);
  c.allocation = {3, 4};
  index.update(c);
  ASSERT_EQ(index.entries().size(), 3u);
  EXPECT_EQ(index.entries()[1].size, 2);
  index.leave(1);
  index.leave(1);  // twice: nothing more
  ASSERT_EQ(index.entries().size(), 2u);
  EXPECT_EQ(index.entries()[0].job, 3);
  EXPECT_EQ(index.entries()[1].job, 2);
}

}  // namespace
}  // namespace sched::test
