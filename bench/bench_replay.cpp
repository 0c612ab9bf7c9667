// The full lublin_256.swf replay (10,000 jobs on 256 nodes) under
// easy_backfill.lua (issue goal: under 0.15 s), under a Lua policy that only
// starts the head, and under the same head-only policy written in C++ — the
// difference between the last two is the Lua host's overhead.
#include <benchmark/benchmark.h>

#include <functional>

#include "bench_common.hpp"
#include "sched/lua_policy.hpp"
#include "sched/pass_context.hpp"
#include "sched/sim/simulator.hpp"
#include "sched/sim/swf_reader.hpp"

namespace {

using namespace sched;

const sim::Workload& lublin() {
  static const sim::Workload workload =
      sim::read_swf(std::string(SCHED_SHARED_WORKLOADS_DIR) + "/lublin_256.swf", {});
  return workload;
}

class CppHeadOnly : public Policy {
 public:
  std::string name() const override { return "head_only_cpp"; }
  bool time_dependent() const override { return false; }
  std::optional<PolicyFailure> schedule(PassContext& ctx) override {
    if (const Job* head = ctx.pending_at(0); head && head->spec.nodes <= ctx.nodes_idle()) {
      (void)ctx.start(head->id);
    }
    return std::nullopt;
  }
};

void replay(benchmark::State& state, const std::function<std::shared_ptr<Policy>()>& make) {
  const sim::Workload& workload = lublin();
  double makespan = 0;
  std::uint64_t passes = 0;
  for (auto _ : state) {
    sim::Simulator simulator(workload, {});
    simulator.set_policy(make());
    sim::SimResult result = simulator.run();
    makespan = result.metrics.makespan;
    passes = result.passes.passes;
  }
  state.counters["jobs"] = static_cast<double>(workload.jobs.size());
  state.counters["passes"] = static_cast<double>(passes);
  state.counters["makespan_s"] = makespan;
}

void BM_LublinEasyBackfill(benchmark::State& state) {
  replay(state, [] {
    return std::shared_ptr<Policy>(LuaPolicy::load(bench::policy_path("easy_backfill"), {}));
  });
}
BENCHMARK(BM_LublinEasyBackfill)->Unit(benchmark::kMillisecond);

void BM_LublinFcfs(benchmark::State& state) {
  replay(state,
         [] { return std::shared_ptr<Policy>(LuaPolicy::load(bench::policy_path("fcfs"), {})); });
}
BENCHMARK(BM_LublinFcfs)->Unit(benchmark::kMillisecond);

void BM_LublinHeadOnlyLua(benchmark::State& state) {
  replay(state, [] {
    return std::shared_ptr<Policy>(LuaPolicy::load(bench::bench_policy_path("head_only"), {}));
  });
}
BENCHMARK(BM_LublinHeadOnlyLua)->Unit(benchmark::kMillisecond);

void BM_LublinHeadOnlyCpp(benchmark::State& state) {
  replay(state, [] { return std::shared_ptr<Policy>(std::make_shared<CppHeadOnly>()); });
}
BENCHMARK(BM_LublinHeadOnlyCpp)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
