// One scheduling pass of easy_backfill.lua with 10,000 pending and 1,000
// running jobs on 4,096 nodes, and one of perf_aware.lua with 5,000 pending
// and 1,000 running malleable jobs (issue goals: under 10 ms each).
#include <benchmark/benchmark.h>

#include <random>

#include "bench_common.hpp"
#include "sched/engine.hpp"
#include "sched/lua_policy.hpp"

namespace {

using namespace sched;

struct Cluster4096 {
  ManualClock clock;
  bench::NullEnactor enactor;
  Engine engine{clock, enactor};

  Cluster4096() {
    for (int i = 0; i < 4096; ++i) engine.add_node("n" + std::to_string(i));
    std::mt19937_64 rng(7);
    // 1,000 running jobs of 1-7 nodes (about 4,000 nodes busy).
    std::vector<JobId> running;
    for (int i = 0; i < 1000; ++i) {
      JobSpec spec;
      spec.nodes = 1 + static_cast<int>(rng() % 7);
      spec.walltime = 600 + static_cast<double>(rng() % 36000);
      running.push_back(*engine.submit(spec));
      clock.advance(1);
    }
    auto start_all = LuaPolicy::load(bench::policy_path("fcfs"), {});
    engine.set_policy(std::move(start_all));
    engine.run_pass(PassReason::Manual);
    for (JobId id : running) engine.job_started(id);
    // 10,000 waiting jobs; the head needs more than is idle, so the pass
    // reserves for it and scans the whole queue for backfill candidates.
    JobSpec head;
    head.nodes = 512;
    head.walltime = 3600;
    (void)engine.submit(head);  // a refused one is no setup error here
    for (int i = 1; i < 10000; ++i) {
      JobSpec spec;
      spec.nodes = 16 + static_cast<int>(rng() % 256);
      spec.walltime = 600 + static_cast<double>(rng() % 36000);
      (void)engine.submit(spec);  // a refused one is no setup error here
    }
    clock.advance(10);
  }
};

// 4,096 nodes: 1,000 running malleable jobs of 2-6 nodes (none, even or
// pof2; min 1 or 2, max 16), each with an MTCT report, and 5,000 waiting
// jobs. The head needs 1,024 nodes, several hundred more than are idle, so
// the pass sorts the malleable jobs by MTCT, plans and checks a few hundred
// shrinks, starts the head on the freed nodes and hands what is left over
// to the other jobs in increasing MTCT order.
struct MalleableCluster4096 {
  ManualClock clock;
  bench::NullEnactor enactor;
  Engine engine{clock, enactor};

  MalleableCluster4096() {
    for (int i = 0; i < 4096; ++i) engine.add_node("n" + std::to_string(i));
    std::mt19937_64 rng(11);
    std::vector<JobId> running;
    for (int i = 0; i < 1000; ++i) running.push_back(*engine.submit(malleable_job(rng)));
    engine.set_policy(LuaPolicy::load(bench::policy_path("fcfs"), {}));
    engine.run_pass(PassReason::Manual);
    std::uniform_real_distribution<double> mtct(0.05, 2.0);
    for (JobId id : running) {
      engine.job_started(id);
      engine.perf_report(id, mtct(rng));
    }
    JobSpec head;
    head.nodes = 1024;
    head.walltime = 3600;
    (void)engine.submit(head);  // a refused one is no setup error here
    for (int i = 1; i < 5000; ++i) {
      JobSpec spec;
      spec.nodes = 16 + static_cast<int>(rng() % 256);
      spec.walltime = 600 + static_cast<double>(rng() % 36000);
      (void)engine.submit(spec);  // a refused one is no setup error here
    }
    clock.advance(10);
  }

  static JobSpec malleable_job(std::mt19937_64& rng) {
    static const NodeConstraint constraints[] = {NodeConstraint::None, NodeConstraint::Even,
                                                 NodeConstraint::Pof2};
    JobSpec spec;
    spec.kind = JobKind::Malleable;
    spec.constraint = constraints[rng() % 3];
    spec.nodes = spec.constraint == NodeConstraint::Pof2 ? 2 << (rng() % 2) : 2 + 2 * (rng() % 3);
    spec.min_nodes = spec.constraint == NodeConstraint::Even ? 2 : 1;
    spec.max_nodes = 16;
    spec.walltime = 600 + static_cast<double>(rng() % 36000);
    return spec;
  }
};

// With count_actions, one real pass after the timed ones shows what the
// decision was: accepted actions and refusals.
template <typename Setup>
void run_passes(benchmark::State& state, const std::string& path, bool fresh_state,
                bool count_actions = false) {
  Setup c;
  auto policy = LuaPolicy::load(path, {});
  for (auto _ : state) {
    if (fresh_state) {
      state.PauseTiming();
      policy = LuaPolicy::load(path, {});
      state.ResumeTiming();
    }
    // A dry pass: the whole decision, checked, but nothing enacted, so
    // every iteration sees the same state.
    auto error = c.engine.dry_pass(*policy);
    if (error) state.SkipWithError(error->message.c_str());
  }
  state.counters["pending"] = static_cast<double>(c.engine.pending_queue().size());
  state.counters["running"] = static_cast<double>(c.engine.running_jobs_count());
  state.counters["idle"] = c.engine.cluster().idle_count();
  if (count_actions) {
    const PassStats before = c.engine.stats();  // the setup's passes count too
    c.engine.set_policy(std::move(policy));
    c.engine.run_pass(PassReason::Manual);
    state.counters["actions"] = static_cast<double>(c.engine.stats().actions - before.actions);
    state.counters["refusals"] = static_cast<double>(c.engine.stats().refusals - before.refusals);
  }
}

void BM_EasyBackfillPass(benchmark::State& state) {
  run_passes<Cluster4096>(state, bench::policy_path("easy_backfill"), false);
}
BENCHMARK(BM_EasyBackfillPass)->Unit(benchmark::kMillisecond);

// The first pass of a freshly loaded policy builds every job table.
void BM_EasyBackfillPassColdCache(benchmark::State& state) {
  run_passes<Cluster4096>(state, bench::policy_path("easy_backfill"), true);
}
BENCHMARK(BM_EasyBackfillPassColdCache)->Unit(benchmark::kMillisecond);

void BM_HeadOnlyPass(benchmark::State& state) {
  run_passes<Cluster4096>(state, bench::bench_policy_path("head_only"), false);
}
BENCHMARK(BM_HeadOnlyPass)->Unit(benchmark::kMicrosecond);

// The Lua host's cost per job visited: a pass that reads every job once
// (10,000 pending, 1,000 running) and decides nothing; its time divided by
// the 11,000 jobs.
void BM_WalkAllJobsPass(benchmark::State& state) {
  run_passes<Cluster4096>(state, bench::bench_policy_path("walk_pending"), false);
  state.counters["per_job"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * 11000,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_WalkAllJobsPass)->Unit(benchmark::kMillisecond);

void BM_PerfAwarePass(benchmark::State& state) {
  run_passes<MalleableCluster4096>(state, bench::policy_path("perf_aware"), false, true);
}
BENCHMARK(BM_PerfAwarePass)->Unit(benchmark::kMillisecond);

void BM_PerfAwarePassColdCache(benchmark::State& state) {
  run_passes<MalleableCluster4096>(state, bench::policy_path("perf_aware"), true);
}
BENCHMARK(BM_PerfAwarePassColdCache)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
