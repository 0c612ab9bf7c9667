// One scheduling pass of easy_backfill.lua with 10,000 pending and 1,000
// running jobs on 4,096 nodes (issue goal: under 10 ms).
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
      running.push_back(*engine.submit(spec).value);
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
    engine.submit(head);
    for (int i = 1; i < 10000; ++i) {
      JobSpec spec;
      spec.nodes = 16 + static_cast<int>(rng() % 256);
      spec.walltime = 600 + static_cast<double>(rng() % 36000);
      engine.submit(spec);
    }
    clock.advance(10);
  }
};

void run_passes(benchmark::State& state, const std::string& path, bool fresh_state) {
  Cluster4096 c;
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
    if (error) state.SkipWithError(error->c_str());
  }
  state.counters["pending"] = static_cast<double>(c.engine.pending_queue().size());
  state.counters["running"] = static_cast<double>(c.engine.running_jobs_count());
  state.counters["idle"] = c.engine.cluster().idle_count();
}

void BM_EasyBackfillPass(benchmark::State& state) {
  run_passes(state, bench::policy_path("easy_backfill"), false);
}
BENCHMARK(BM_EasyBackfillPass)->Unit(benchmark::kMillisecond);

// The first pass of a freshly loaded policy builds every job table.
void BM_EasyBackfillPassColdCache(benchmark::State& state) {
  run_passes(state, bench::policy_path("easy_backfill"), true);
}
BENCHMARK(BM_EasyBackfillPassColdCache)->Unit(benchmark::kMillisecond);

void BM_HeadOnlyPass(benchmark::State& state) {
  run_passes(state, bench::bench_policy_path("head_only"), false);
}
BENCHMARK(BM_HeadOnlyPass)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
