// sched.lp (docs/policy-api.md §10): lp.solve from a policy pass — known
// optima of small LPs and integer programs, the statuses, integer values as
// Lua integers, bad models as Lua errors, and an Equation-1 model (docs/design.md §1)
// checked against enumeration.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "lua_test_support.hpp"
#include "sched/lua_policy.hpp"

namespace sched {
namespace {

using luatest::Harness;
using luatest::LuaData;
using luatest::TempDir;
using ::testing::HasSubstr;

// A policy whose pass runs `body` with `lp` and a `seen` table in scope;
// P.save() hands `seen` back.
std::string lp_policy(const std::string& body) {
  return "local lp = require('sched.lp')\n"
         "local P = { name = 'lp_probe', api = 1 }\n"
         "local seen = {}\n"
         "function P.save() return seen end\n"
         "function P.schedule(ctx)\n" +
         body +
         "\nend\n"
         "return P\n";
}

// Runs `body` in one pass that must succeed; returns what it left in `seen`.
LuaData run_lp(const std::string& body) {
  TempDir dir;
  Harness h(1);
  h.use(dir.write("p.lua", lp_policy(body)));
  h.ok_pass();
  return LuaData::saved_by(*h.policy);
}

// ---------------------------------------------------------------- optima

TEST(LuaLp, LpWithAFractionalOptimum) {
  // max x + y, 2x + y <= 4, x + 2y <= 4: x = y = 4/3.
  LuaData seen = run_lp(
      "seen.r = lp.solve{ sense = 'max',\n"
      "  vars = { {name = 'x'}, {name = 'y'} },\n"
      "  objective = { x = 1, y = 1 },\n"
      "  constraints = { {coef = {x = 2, y = 1}, hi = 4}, {coef = {x = 1, y = 2}, hi = 4} } }\n");
  EXPECT_EQ(seen.str("r.status"), "optimal");
  EXPECT_NEAR(seen.num("r.objective"), 8.0 / 3.0, 1e-9);
  EXPECT_NEAR(seen.num("r.values.x"), 4.0 / 3.0, 1e-9);
  EXPECT_NEAR(seen.num("r.values.y"), 4.0 / 3.0, 1e-9);
  EXPECT_FALSE(seen.is_integer("r.values.x")) << "a continuous variable is a float";
}

TEST(LuaLp, IntegerOptimumDiffersFromItsRelaxation) {
  // max 5x + 4y, 6x + 4y <= 24, x + 2y <= 6: the relaxation's optimum is
  // (3, 1.5) = 21, the integer one (4, 0) = 20.
  LuaData seen = run_lp(
      "local function model(int)\n"
      "  return { sense = 'max',\n"
      "    vars = { {name = 'x', int = int}, {name = 'y', int = int} },\n"
      "    objective = { x = 5, y = 4 },\n"
      "    constraints = { {coef = {x = 6, y = 4}, hi = 24}, {coef = {x = 1, y = 2}, hi = 6} } }\n"
      "end\n"
      "seen.lp = lp.solve(model(false))\n"
      "seen.ip = lp.solve(model(true))\n");
  EXPECT_EQ(seen.str("lp.status"), "optimal");
  EXPECT_NEAR(seen.num("lp.objective"), 21, 1e-9);
  EXPECT_NEAR(seen.num("lp.values.x"), 3, 1e-9);
  EXPECT_NEAR(seen.num("lp.values.y"), 1.5, 1e-9);
  EXPECT_EQ(seen.str("ip.status"), "optimal");
  EXPECT_NEAR(seen.num("ip.objective"), 20, 1e-9);
  EXPECT_EQ(seen.integer("ip.values.x"), 4);
  EXPECT_EQ(seen.integer("ip.values.y"), 0);
}

TEST(LuaLp, MinimisesWithBoundsAndLowerRows) {
  // min 2x + 3y, x + y >= 4, 1 <= x <= 2.5, y >= 1: (2.5, 1.5) = 9.5.
  LuaData seen = run_lp(
      "seen.r = lp.solve{ sense = 'min',\n"
      "  vars = { {name = 'x', lo = 1, hi = 2.5}, {name = 'y', lo = 1} },\n"
      "  objective = { x = 2, y = 3 },\n"
      "  constraints = { {coef = {x = 1, y = 1}, lo = 4} } }\n");
  EXPECT_EQ(seen.str("r.status"), "optimal");
  EXPECT_NEAR(seen.num("r.objective"), 9.5, 1e-9);
  EXPECT_NEAR(seen.num("r.values.x"), 2.5, 1e-9);
  EXPECT_NEAR(seen.num("r.values.y"), 1.5, 1e-9);
}

TEST(LuaLp, EqualityConstraintsAndCoefficientsByPosition) {
  // min x + 2y + 3z, x + y + z = 10, y - z = 0, x <= 4: (4, 3, 3) = 19.
  // The second row and the objective name variables by position.
  LuaData seen = run_lp(
      "seen.r = lp.solve{ sense = 'min',\n"
      "  vars = { {name = 'x', hi = 4, int = true}, {name = 'y', int = true},\n"
      "           {name = 'z', int = true} },\n"
      "  objective = { 1, 2, 3 },\n"
      "  constraints = { {coef = {x = 1, y = 1, z = 1}, eq = 10},\n"
      "                  {coef = {[2] = 1, [3] = -1}, eq = 0} } }\n");
  EXPECT_EQ(seen.str("r.status"), "optimal");
  EXPECT_NEAR(seen.num("r.objective"), 19, 1e-9);
  EXPECT_EQ(seen.integer("r.values.x"), 4);
  EXPECT_EQ(seen.integer("r.values.y"), 3);
  EXPECT_EQ(seen.integer("r.values.z"), 3);
  // Values by position as well as by name.
  EXPECT_EQ(seen.length("r.values"), 3);
  EXPECT_EQ(seen.integer("r.values.1"), 4);
  EXPECT_EQ(seen.integer("r.values.3"), 3);
}

TEST(LuaLp, IntegerValuesAreLuaIntegersAndUnnamedVariablesArePositional) {
  LuaData seen = run_lp(
      "local r = lp.solve{ sense = 'max', vars = { {hi = 7.9, int = true}, {hi = 2.5} },\n"
      "  objective = { 1, 1 } }\n"
      "seen.r = r\n"
      "seen.int_type = math.type(r.values[1])\n"
      "seen.float_type = math.type(r.values[2])\n"
      "seen.same_module = rawequal(lp, require('sched.lp'))\n");
  EXPECT_EQ(seen.str("r.status"), "optimal");
  EXPECT_EQ(seen.integer("r.values.1"), 7) << "an integer variable's bound is rounded inwards";
  EXPECT_NEAR(seen.num("r.values.2"), 2.5, 1e-12);
  EXPECT_EQ(seen.str("int_type"), "integer");
  EXPECT_EQ(seen.str("float_type"), "float");
  EXPECT_TRUE(seen.boolean("same_module"));
}

TEST(LuaLp, ManyVariablesAndRows) {
  // min sum x_i, x_i >= i by one row each, half of them named: 300·301/2.
  LuaData seen = run_lp(
      "local vars, rows, objective = {}, {}, {}\n"
      "for i = 1, 300 do\n"
      "  vars[i] = {name = i % 2 == 0 and ('x' .. i) or nil, int = i % 3 == 0}\n"
      "  objective[i] = 1\n"
      "  rows[i] = {coef = {[i] = 1}, lo = i}\n"
      "end\n"
      "seen.r = lp.solve{ sense = 'min', vars = vars, objective = objective, constraints = rows "
      "}\n");
  EXPECT_EQ(seen.str("r.status"), "optimal");
  EXPECT_NEAR(seen.num("r.objective"), 300 * 301 / 2, 1e-6);
  EXPECT_EQ(seen.length("r.values"), 300);
  EXPECT_NEAR(seen.num("r.values.x200"), 200, 1e-9);
  EXPECT_EQ(seen.integer("r.values.201"), 201);
}

// The example of docs/policy-api.md §10, as printed there.
TEST(LuaLp, DocumentedExample) {
  LuaData seen = run_lp(R"(
  local r = lp.solve{
    sense = "min",
    vars = {
      {name = "k1", lo = 1, hi = 8, int = true},
      {name = "m", lo = 2, hi = 4, int = true},
      {name = "idle", lo = 0, hi = 13, int = true},
    },
    objective = {idle = 71},
    constraints = {
      {coef = {k1 = 90, m = 95, idle = 71}, lo = 1000},
      {coef = {k1 = 150, m = 160, idle = 71}, hi = 1700},
      {coef = {k1 = 1, m = 1, idle = 1}, eq = 14},
    },
    time_limit_ms = 100,
  }
  seen.r = r
)");
  // Five idle nodes leave 9 busy ones: at least 7·150 + 2·160 + 5·71 = 1725 W.
  EXPECT_EQ(seen.str("r.status"), "optimal");
  EXPECT_NEAR(seen.num("r.objective"), 6 * 71, 1e-9);
  EXPECT_EQ(seen.integer("r.values.idle"), 6);
}

// ---------------------------------------------------------------- statuses

TEST(LuaLp, InfeasibleProblems) {
  LuaData seen = run_lp(
      "seen.lp = lp.solve{ sense = 'min', vars = { {name = 'x', hi = 3}, {name = 'y', hi = 3} },\n"
      "  objective = { x = 1 }, constraints = { {coef = {x = 1, y = 1}, lo = 10} } }\n"
      // 2x = 3 has no integer solution.
      "seen.ip = lp.solve{ sense = 'min', vars = { {name = 'x', int = true} },\n"
      "  constraints = { {coef = {x = 2}, eq = 3} } }\n"
      // No integer between the bounds: decided without GLPK.
      "seen.bounds = lp.solve{ sense = 'min', vars = { {lo = 0.2, hi = 0.8, int = true} } }\n"
      // Infeasible although the objective grows without bound along y.
      "seen.ray = lp.solve{ sense = 'max', vars = { {name = 'x', hi = 1}, {name = 'y'} },\n"
      "  objective = { y = 1 }, constraints = { {coef = {x = 1}, lo = 2} } }\n");
  for (const std::string key : {"lp", "ip", "bounds", "ray"}) {
    SCOPED_TRACE(key);
    EXPECT_EQ(seen.str(key + ".status"), "infeasible");
    EXPECT_TRUE(seen.is_nil(key + ".objective"));
    EXPECT_TRUE(seen.is_nil(key + ".values"));
  }
}

TEST(LuaLp, UnboundedProblems) {
  LuaData seen = run_lp(
      "local function model(int)\n"
      "  return { sense = 'max', vars = { {name = 'x', int = int}, {name = 'y', int = int} },\n"
      "    objective = { x = 1, y = 1 }, constraints = { {coef = {x = 1, y = -1}, hi = 1} } }\n"
      "end\n"
      "seen.lp = lp.solve(model(false))\n"
      "seen.ip = lp.solve(model(true))\n"
      // Without rows, and with a free variable below.
      "seen.free = lp.solve{ sense = 'min', vars = { {lo = -math.huge} }, objective = { 1 } }\n");
  for (const std::string key : {"lp", "ip", "free"}) {
    SCOPED_TRACE(key);
    EXPECT_EQ(seen.str(key + ".status"), "unbounded");
    EXPECT_TRUE(seen.is_nil(key + ".values"));
  }
}

// Jeroslow's problem: min s, 2(x1 + ... + xn) + s = n, binaries, n odd. The
// relaxation says 0, the optimum is 1, and branch and bound needs about
// 2^(n/2) nodes to prove it; without s there is no solution at all.
TEST(LuaLp, TimeLimitGivesFeasibleOrNoSolution) {
  TempDir dir;
  Harness h(1);
  h.use(dir.write("p.lua", lp_policy(R"(
  local function jeroslow(n, with_s)
    local vars, coef = {}, {}
    for i = 1, n do vars[i] = {hi = 1, int = true}; coef[i] = 2 end
    if with_s then vars[n + 1] = {name = 's', hi = 1, int = true}; coef.s = 1 end
    return lp.solve{ sense = 'min', vars = vars, objective = with_s and {s = 1} or {},
                     constraints = { {coef = coef, eq = n} }, time_limit_ms = 100 }
  end
  seen.feasible = jeroslow(41, true)
  seen.none = jeroslow(41, false)
)")));
  const auto start = std::chrono::steady_clock::now();
  h.ok_pass();
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  LuaData seen = LuaData::saved_by(*h.policy);
  EXPECT_EQ(seen.str("feasible.status"), "feasible");
  EXPECT_NEAR(seen.num("feasible.objective"), 1, 1e-9);
  EXPECT_EQ(seen.integer("feasible.values.s"), 1);
  EXPECT_EQ(seen.str("none.status"), "no_solution");
  EXPECT_TRUE(seen.is_nil("none.values"));
  EXPECT_LT(took.count(), 2.0) << "two solves of 100 ms each";
}

// ---------------------------------------------------------------- bad models

TEST(LuaLp, BadModelsAreLuaErrorsWithClearMessages) {
  LuaData seen = run_lp(
      "local function err(...)\n"
      "  local ok, e = pcall(lp.solve, ...)\n"
      "  return ok and 'no error' or tostring(e)\n"
      "end\n"
      "local two = { {name = 'k1'}, {name = 'k2'} }\n"
      "seen.unknown = err{ sense = 'min', vars = two, constraints = {\n"
      "  {coef = {k1 = 1}, lo = 0}, {coef = {k2 = 1}, lo = 0}, {coef = {k9 = 1}, lo = 0} } }\n"
      "seen.lo_hi = err{ sense = 'min', vars = { {name = 'a'}, {name = 'b', lo = 5, hi = 3} } }\n"
      "seen.nan = err{ sense = 'min', vars = two, objective = { k1 = 0/0 } }\n"
      "seen.inf = err{ sense = 'min', vars = two,\n"
      "  constraints = { {coef = {k2 = math.huge}, hi = 1} } }\n"
      "seen.nan_bound = err{ sense = 'min', vars = two,\n"
      "  constraints = { {coef = {k2 = 1}, hi = 0/0} } }\n"
      "seen.no_sense = err{ vars = two }\n"
      "seen.bad_sense = err{ sense = 'maximise', vars = two }\n"
      "seen.number = err(42)\n"
      "seen.nothing = err()\n"
      "seen.method = err(lp, { sense = 'min', vars = two })\n"
      "seen.no_vars = err{ sense = 'min' }\n"
      "seen.empty_vars = err{ sense = 'min', vars = {} }\n"
      "seen.map_vars = err{ sense = 'min', vars = { k1 = {} } }\n"
      "seen.var_not_table = err{ sense = 'min', vars = { 'k1' } }\n"
      "seen.duplicate = err{ sense = 'min', vars = { {name = 'k1'}, {name = 'k1'} } }\n"
      "seen.typo = err{ sense = 'min', vars = two, constraint = {} }\n"
      "seen.var_typo = err{ sense = 'min', vars = { {name = 'k1', integer = true} } }\n"
      "seen.int_type = err{ sense = 'min', vars = { {name = 'k1', int = 1} } }\n"
      "seen.position = err{ sense = 'min', vars = two, objective = { [3] = 1 } }\n"
      "seen.twice = err{ sense = 'min', vars = two, objective = { k2 = 1, [2] = 1 } }\n"
      "seen.coef_type = err{ sense = 'min', vars = two, objective = { k1 = '1' } }\n"
      "seen.no_bound = err{ sense = 'min', vars = two, constraints = { {coef = {k1 = 1}} } }\n"
      "seen.eq_and_lo = err{ sense = 'min', vars = two,\n"
      "  constraints = { {coef = {k1 = 1}, eq = 1, lo = 0} } }\n"
      "seen.no_coef = err{ sense = 'min', vars = two, constraints = { {lo = 1} } }\n"
      "seen.time = err{ sense = 'min', vars = two, time_limit_ms = -5 }\n"
      // An error raised while the model is read passes through unchanged.
      "seen.meta = err(setmetatable({ sense = 'min' }, { __index = function() error('boom') end "
      "}))\n"
      "local many = {}\n"
      "for i = 1, 10001 do many[i] = {} end\n"
      "seen.too_many_vars = err{ sense = 'min', vars = many }\n"
      // One coefficient table shared by 1,001 rows of 1,000 variables.
      "local vars, coef, rows = {}, {}, {}\n"
      "for i = 1, 1000 do vars[i] = {}; coef[i] = 1 end\n"
      "for i = 1, 1001 do rows[i] = {coef = coef, lo = 0} end\n"
      "seen.too_many_nonzeros = err{ sense = 'min', vars = vars, constraints = rows }\n");
  const std::pair<const char*, const char*> cases[] = {
      {"unknown", "sched.lp: constraint 3: unknown variable 'k9'"},
      {"lo_hi", "sched.lp: var 2: lo (5) > hi (3)"},
      {"nan", "sched.lp: objective: coefficient of 'k1' is not a finite number"},
      {"inf", "sched.lp: constraint 1: coefficient of 'k2' is not a finite number (inf)"},
      {"nan_bound", "sched.lp: constraint 1: hi is NaN"},
      {"no_sense", "sched.lp: sense is missing (\"min\" or \"max\")"},
      {"bad_sense", "sched.lp: sense must be \"min\" or \"max\", got 'maximise'"},
      {"number", "sched.lp: solve takes a model table, got number"},
      {"nothing", "sched.lp: solve takes a model table, got nothing"},
      {"method", "not lp:solve{...}"},
      {"no_vars", "sched.lp: vars is missing"},
      {"empty_vars", "sched.lp: vars is empty"},
      {"map_vars", "sched.lp: vars must be a list"},
      {"var_not_table", "sched.lp: var 1: must be a table"},
      {"duplicate", "sched.lp: var 2: duplicate name 'k1' (also var 1)"},
      {"typo", "sched.lp: unknown field 'constraint'"},
      {"var_typo", "sched.lp: var 1: unknown field 'integer'"},
      {"int_type", "sched.lp: var 1: int must be a boolean, got a number"},
      {"position", "sched.lp: objective: variable position 3 is not in 1..2"},
      {"twice", "sched.lp: objective: 'k2' is given twice"},
      {"coef_type", "sched.lp: objective: coefficient of 'k1' must be a number, got a string"},
      {"no_bound", "sched.lp: constraint 1: no bound (give lo, hi or eq)"},
      {"eq_and_lo", "sched.lp: constraint 1: give eq, or lo and/or hi, not both"},
      {"no_coef", "sched.lp: constraint 1: coef is missing"},
      {"time", "sched.lp: time_limit_ms must be positive"},
      {"meta", "boom"},
      {"too_many_vars", "sched.lp: too many variables (10001 > 10000)"},
      {"too_many_nonzeros", "sched.lp: constraint 1001: too many non-zero coefficients"},
  };
  for (const auto& [key, message] : cases) {
    SCOPED_TRACE(key);
    EXPECT_THAT(seen.str(key), HasSubstr(message));
  }
}

TEST(LuaLp, ABadModelFailsThePassAndTheEngineGoesOn) {
  TempDir dir;
  Harness h(2);
  h.use(dir.write("p.lua", lp_policy(R"(
  if not seen.failed then
    seen.failed = true
    lp.solve{ sense = 'min', vars = { {name = 'k1'} }, constraints = { {coef = {k9 = 1}, lo = 1} } }
  end
  local r = lp.solve{ sense = 'max', objective = { n = 1 },
                      vars = { {name = 'n', hi = ctx.nodes_idle, int = true} } }
  for _, job in ipairs(ctx.pending) do
    if job.nodes <= r.values.n then ctx:start(job) end
  end
)")));
  h.submit(luatest::rigid(1));
  auto error = h.pass();
  ASSERT_TRUE(error) << "the pass should have failed";
  EXPECT_THAT(*error, HasSubstr("p.lua:"));
  EXPECT_THAT(*error, HasSubstr("sched.lp: constraint 1: unknown variable 'k9'"));
  EXPECT_EQ(h.job(1).state, JobState::Pending);
  h.ok_pass();
  EXPECT_EQ(h.job(1).state, JobState::Starting) << "the next pass solves and starts the job";
}

// ---------------------------------------------------------------- Equation 1

struct Eq1Job {
  int min_nodes, max_nodes, nodes;
  double pmin_w, pmax_w;
};

// Three running malleable jobs and one waiting one on 14 nodes, corridor
// [1000, 1700] W, idle nodes at 71 W. The policy builds Equation 1 from ctx
// and solves it; the test enumerates every configuration for the optimum.
TEST(LuaLp, EquationOneModelMatchesEnumeration) {
  const Eq1Job running[] = {{1, 6, 6, 90, 150}, {2, 8, 4, 100, 170}, {1, 4, 2, 80, 130}};
  const Eq1Job waiting{2, 4, 3, 95, 160};
  constexpr int kNodes = 14;
  constexpr double kLower = 1000, kUpper = 1700, kIdle = 71;

  TempDir dir;
  Harness h(kNodes);
  h.use(dir.write("p.lua", lp_policy(R"(
  local j = ctx.pending[1]
  if not j then return end
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
  seen.r = lp.solve{ sense = 'min', vars = vars, objective = {idle = idle_w},
    constraints = { {coef = low, lo = power.lower}, {coef = high, hi = power.upper},
                    {coef = nodes, eq = ctx.nodes_total} } }
)")));
  auto spec_of = [](const Eq1Job& job) {
    JobSpec spec = luatest::malleable(job.nodes, job.min_nodes, job.max_nodes);
    spec.power_min_w = job.pmin_w;
    spec.power_max_w = job.pmax_w;
    return spec;
  };
  for (const Eq1Job& job : running) h.submit(spec_of(job));
  h.start_all();
  h.submit(spec_of(waiting));
  h.engine.set_corridor(kLower, kUpper);
  h.ok_pass();
  LuaData seen = LuaData::saved_by(*h.policy);

  // Every k1, k2, k3, m in their ranges; idle takes the rest.
  double best = -1;
  int found = 0;
  int best_k[4] = {};
  for (int k1 = running[0].min_nodes; k1 <= running[0].max_nodes; ++k1) {
    for (int k2 = running[1].min_nodes; k2 <= running[1].max_nodes; ++k2) {
      for (int k3 = running[2].min_nodes; k3 <= running[2].max_nodes; ++k3) {
        for (int m = waiting.min_nodes; m <= waiting.max_nodes; ++m) {
          const int idle = kNodes - k1 - k2 - k3 - m;
          if (idle < 0 || idle > kNodes - 1) continue;
          const int k[4] = {k1, k2, k3, m};
          double low = idle * kIdle, high = idle * kIdle;
          for (int i = 0; i < 4; ++i) {
            const Eq1Job& job = i < 3 ? running[i] : waiting;
            low += k[i] * job.pmin_w;
            high += k[i] * job.pmax_w;
          }
          if (low < kLower || high > kUpper) continue;
          const double cost = idle * kIdle;
          if (best < 0 || cost < best) {
            best = cost;
            found = 1;
            std::copy(k, k + 4, best_k);
          } else if (cost == best) {
            ++found;
          }
        }
      }
    }
  }
  ASSERT_GE(best, 0) << "the example must be feasible";
  EXPECT_EQ(best, 5 * kIdle) << "worked out by hand: 5 idle nodes, k = (1, 2, 4), m = 2";
  ASSERT_EQ(found, 1) << "the example was chosen with one optimum";
  EXPECT_EQ(seen.str("r.status"), "optimal");
  EXPECT_NEAR(seen.num("r.objective"), best, 1e-9);
  EXPECT_EQ(seen.integer("r.values.k1"), best_k[0]);
  EXPECT_EQ(seen.integer("r.values.k2"), best_k[1]);
  EXPECT_EQ(seen.integer("r.values.k3"), best_k[2]);
  EXPECT_EQ(seen.integer("r.values.m"), best_k[3]);
  EXPECT_EQ(seen.integer("r.values.idle"), 5);
}

}  // namespace
}  // namespace sched
