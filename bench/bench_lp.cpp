// lp.solve (sched.lp) on the power-aware policy's Equation 1 (docs/design.md §1):
// a policy builds the integer program from ctx — the running malleable jobs'
// sizes k_i (min 1, max 14), the waiting job's size m_j and the idle nodes —
// and solves it. Two sizes: the power experiment's 14 nodes with 10 running
// jobs, and 400 nodes with 100 running jobs.
//
// Modes, each a dry pass (same state every iteration):
//   solve  lp.solve on a model built in an earlier pass (the figure asked for)
//   build  builds the model from ctx without solving (the Lua side's cost)
//   empty  a pass that does nothing (the pass's own overhead)
// The label shows the solution of the first solve.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "bench_common.hpp"
#include "sched/engine.hpp"
#include "sched/lua_policy.hpp"

namespace {

using namespace sched;

// Builds Equation 1 for ctx.pending[1] from ctx; `params.mode` picks what a
// pass does (see above).
constexpr const char* kPolicy = R"(
local lp = require('sched.lp')
local P = { name = 'bench_lp', api = 1 }
local model, first

local function equation_one(ctx)
  local j = ctx.pending[1]
  local power = ctx.power
  local idle_w = power.idle_w_per_node
  local vars = { {name = 'idle', lo = 0, hi = ctx.nodes_total - 1, int = true} }
  local low, high, nodes = {idle = idle_w}, {idle = idle_w}, {idle = 1}
  local function add(name, job)
    vars[#vars + 1] = {name = name, lo = math.max(1, job.min_nodes), hi = job.max_nodes, int = true}
    low[name], high[name], nodes[name] = job.power_min_w, job.power_max_w, 1
  end
  for _, job in ipairs(ctx.running) do add('k' .. job.id, job) end
  add('m', j)
  return { sense = 'min', vars = vars, objective = {idle = idle_w},
           constraints = { {coef = low, lo = power.lower}, {coef = high, hi = power.upper},
                           {coef = nodes, eq = ctx.nodes_total} } }
end

function P.schedule(ctx)
  local mode = ctx.params.mode
  if mode == 'empty' then return end
  if mode == 'build' or not model then model = equation_one(ctx) end
  if mode == 'solve' then
    local r = lp.solve(model)
    first = first or { status = r.status, objective = r.objective, idle = r.values and r.values.idle }
  end
end

function P.save() return first end
return P
)";

// `nodes` nodes; `running` malleable jobs (min 1, max 14) on all but a few
// of them, with per-node power drawn at random; one malleable job waiting
// for more nodes than are idle. The corridor's upper bound (150 W a node on
// average) forces some nodes idle, so the solver has to pick which jobs to
// keep small.
struct PowerCluster {
  ManualClock clock;
  bench::NullEnactor enactor;
  Engine engine{clock, enactor};

  PowerCluster(int nodes, int running) {
    for (int i = 0; i < nodes; ++i) engine.add_node(std::string(1, 'n').append(std::to_string(i)));
    std::mt19937_64 rng(5);
    std::uniform_real_distribution<double> pmin(80, 110), pmax(140, 200);
    auto job = [&](int size) {
      JobSpec spec;
      spec.kind = JobKind::Malleable;
      spec.nodes = size;
      spec.min_nodes = 1;
      spec.max_nodes = 14;
      spec.walltime = 3600;
      spec.power_min_w = pmin(rng);
      spec.power_max_w = pmax(rng);
      return spec;
    };
    // Sizes 1..(2·nodes/running - 1), so the jobs fill most of the cluster.
    const int spread = std::max(1, 2 * nodes / running - 1);
    std::vector<JobId> ids;
    int used = 0;
    for (int i = 0; i < running; ++i) {
      const int size = std::min(1 + static_cast<int>(rng() % spread), nodes - used - (running - i));
      ids.push_back(*engine.submit(job(std::max(1, size))));
      used += std::max(1, size);
    }
    engine.set_policy(LuaPolicy::load(bench::policy_path("fcfs"), {}));
    engine.run_pass(PassReason::Manual);
    for (JobId id : ids) engine.job_started(id);
    (void)engine.submit(job(engine.cluster().idle_count() + 1));
    engine.set_corridor(600.0 * nodes / 14, 2100.0 * nodes / 14);
  }
};

// A policy file for the run, removed afterwards.
class PolicyFile {
 public:
  PolicyFile() {
    std::string name = "sched-bench-lp-";
    name += std::to_string(::getpid());
    name += ".lua";
    path_ = std::filesystem::temp_directory_path() / name;
    std::ofstream(path_) << kPolicy;
  }
  ~PolicyFile() { std::filesystem::remove(path_); }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

void run(benchmark::State& state, const char* mode) {
  PowerCluster c(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  PolicyFile file;
  LuaPolicyOptions options;
  options.params["mode"] = std::string(mode);
  auto policy = LuaPolicy::load(file.path(), options);
  // The first pass builds the model.
  if (auto error = c.engine.dry_pass(*policy)) state.SkipWithError(error->message.c_str());
  for (auto _ : state) {
    if (auto error = c.engine.dry_pass(*policy)) {
      state.SkipWithError(error->message.c_str());
      break;
    }
  }
  std::optional<PolicyFailure> error;
  if (auto saved = policy->save(&error)) state.SetLabel(saved->lua_source);
  state.counters["running"] = static_cast<double>(c.engine.running_jobs_count());
  state.counters["idle_now"] = c.engine.cluster().idle_count();
}

void BM_LpEquationOneSolve(benchmark::State& state) { run(state, "solve"); }
void BM_LpEquationOneBuild(benchmark::State& state) { run(state, "build"); }
void BM_LpEmptyPass(benchmark::State& state) { run(state, "empty"); }

BENCHMARK(BM_LpEquationOneSolve)->Args({14, 10})->Args({400, 100})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_LpEquationOneBuild)->Args({14, 10})->Args({400, 100})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_LpEmptyPass)->Args({14, 10})->Args({400, 100})->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
