// sched.lp: lp.solve{...} builds a mixed-integer linear program from Lua
// tables and solves it with GLPK (the power-aware policy's Equation 1).
//
// GLPK aborts the process on a fatal error, so the model is checked here in
// full and GLPK only ever sees valid data; its error hook stays as a last
// guard that turns a fatal error into a Lua error. Lua errors and the hook's
// way out are both longjmps, which must skip no C++ destructor:
//  - the model lives in a userdata freed by __gc, so a Lua error while the
//    policy's tables are read (a bad value, a metamethod, memory) leaves it
//    to the collector; the readers hold no owning locals while calling Lua;
//  - GLPK runs in run_glpk and below, which make no Lua calls and hold only
//    trivially destructible locals;
//  - the results go to Lua after GLPK is done and its problem is freed.
#include "lua_lp.hpp"

#include <glpk.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <limits>
#include <new>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace sched {
namespace {

// Bounds on a model: GLPK's memory is not the Lua state's, so size is capped
// here instead (1,000,000 non-zeros is about 16 MB of triplets).
constexpr std::size_t kMaxVars = 10'000;
constexpr std::size_t kMaxConstraints = 10'000;
constexpr std::size_t kMaxNonzeros = 1'000'000;
constexpr double kDefaultTimeLimitMs = 1'000;
// GLPK's time is invisible to the instruction bound; this bounds it instead.
constexpr double kMaxTimeLimitMs = 10'000;
constexpr int kGlpkMemoryLimitMb = 256;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr const char* kModelMeta = "sched.lp.model";

// ---------------------------------------------------------------- the model

struct NameHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

struct LpVar {
  std::string name;  // empty: addressed by position only
  double lo = 0;
  double hi = kInf;
  bool integer = false;
};

// A checked model, then its solution.
struct LpModel {
  bool maximize = false;
  std::vector<LpVar> vars;
  std::unordered_map<std::string, int, NameHash, std::equal_to<>> by_name;  // → position - 1
  std::vector<double> objective;
  std::vector<double> row_lo, row_hi;  // ±inf: no bound on that side
  // The constraint matrix as GLPK triplets: 1-based, [0] unused.
  std::vector<int> ia{0}, ja{0};
  std::vector<double> ar{0.0};
  int time_limit_ms = static_cast<int>(kDefaultTimeLimitMs);
  bool no_integer_point = false;  // an integer variable's bounds hold no integer
  // Per variable, the coefficient table that last named it (duplicates).
  std::vector<unsigned> seen;
  unsigned table = 0;
  std::string error;
  std::vector<double> values;  // [1..n] once solved
};

// The userdata that owns a model while lp.solve runs.
struct ModelBox {
  LpModel* model;
};

int model_gc(lua_State* L) {
  auto* box = static_cast<ModelBox*>(lua_touserdata(L, 1));
  delete box->model;
  box->model = nullptr;
  return 0;
}

ModelBox& new_model(lua_State* L) {
  auto* box = static_cast<ModelBox*>(lua_newuserdatauv(L, sizeof(ModelBox), 0));
  box->model = nullptr;
  if (luaL_newmetatable(L, kModelMeta)) {
    lua_pushcfunction(L, model_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  box->model = new (std::nothrow) LpModel();
  if (!box->model) luaL_error(L, "sched.lp: out of memory");
  return *box;
}

// ---------------------------------------------------------------- GLPK

enum class Outcome {
  Optimal,
  Feasible,  // a solution, not proven optimal (time limit)
  Infeasible,
  Unbounded,
  NoSolution,             // undecided, e.g. the time limit came before any solution
  Failed,                 // GLPK gave up (numerical trouble...): see code
  GlpkError,              // a GLPK fatal error, caught by the hook: see message
  InfeasibleOrUnbounded,  // internal: resolved by a second solve
};

bool has_solution(Outcome o) { return o == Outcome::Optimal || o == Outcome::Feasible; }

// What run_glpk fills in. Plain data in the caller's frame, so it survives
// the error hook's longjmp.
struct GlpkResult {
  Outcome outcome = Outcome::Failed;
  int code = 0;  // GLPK's return code when Failed
  double objective = 0;
  double* values = nullptr;  // [1..n]
  std::jmp_buf on_error;
  char message[256] = {};  // what GLPK printed on a fatal error
  std::size_t message_len = 0;
};

// GLPK calls this on a fatal error after printing why; returning would abort.
void on_glpk_error(void* info) { std::longjmp(static_cast<GlpkResult*>(info)->on_error, 1); }

// Terminal output is off; GLPK turns it on to report a fatal error, and
// this keeps that text instead of printing it.
int capture_glpk_output(void* info, const char* text) {
  if (glp_at_error()) {
    auto* r = static_cast<GlpkResult*>(info);
    const std::size_t room = sizeof r->message - 1 - r->message_len;
    const std::size_t n = std::min(std::strlen(text), room);
    std::memcpy(r->message + r->message_len, text, n);
    r->message_len += n;
    r->message[r->message_len] = '\0';
  }
  return 1;
}

int bound_type(double lo, double hi) {
  const bool has_lo = std::isfinite(lo);
  const bool has_hi = std::isfinite(hi);
  if (has_lo && has_hi) return lo == hi ? GLP_FX : GLP_DB;
  if (has_lo) return GLP_LO;
  return has_hi ? GLP_UP : GLP_FR;
}

double finite_or_zero(double v) { return std::isfinite(v) ? v : 0.0; }

void load_problem(glp_prob* P, const LpModel& m) {
  glp_set_obj_dir(P, m.maximize ? GLP_MAX : GLP_MIN);
  const int cols = static_cast<int>(m.vars.size());
  glp_add_cols(P, cols);
  for (int j = 1; j <= cols; ++j) {
    const LpVar& v = m.vars[j - 1];
    glp_set_col_bnds(P, j, bound_type(v.lo, v.hi), finite_or_zero(v.lo), finite_or_zero(v.hi));
    if (v.integer) glp_set_col_kind(P, j, GLP_IV);
    glp_set_obj_coef(P, j, m.objective[j - 1]);
  }
  const int rows = static_cast<int>(m.row_lo.size());
  if (rows > 0) {  // GLPK refuses to add zero rows
    glp_add_rows(P, rows);
    for (int i = 1; i <= rows; ++i) {
      const double lo = m.row_lo[i - 1];
      const double hi = m.row_hi[i - 1];
      glp_set_row_bnds(P, i, bound_type(lo, hi), finite_or_zero(lo), finite_or_zero(hi));
    }
  }
  const int nonzeros = static_cast<int>(m.ar.size()) - 1;
  if (nonzeros > 0) glp_load_matrix(P, nonzeros, m.ia.data(), m.ja.data(), m.ar.data());
}

bool is_mip(const LpModel& m) {
  return std::any_of(m.vars.begin(), m.vars.end(), [](const LpVar& v) { return v.integer; });
}

Outcome solve_lp(glp_prob* P, int time_limit_ms, GlpkResult& r) {
  glp_smcp parm;
  glp_init_smcp(&parm);
  parm.msg_lev = GLP_MSG_OFF;
  parm.presolve = GLP_ON;
  parm.tm_lim = time_limit_ms;
  r.code = glp_simplex(P, &parm);
  switch (r.code) {
    case 0:
      switch (glp_get_status(P)) {
        case GLP_OPT:
          return Outcome::Optimal;
        case GLP_FEAS:
          return Outcome::Feasible;
        case GLP_NOFEAS:
          return Outcome::Infeasible;
        case GLP_UNBND:
          return Outcome::Unbounded;
        default:
          return Outcome::NoSolution;
      }
    case GLP_ENOPFS:
      return Outcome::Infeasible;
    // No dual feasible solution: unbounded, or no feasible point at all.
    case GLP_ENODFS:
      return Outcome::InfeasibleOrUnbounded;
    case GLP_ETMLIM:
    case GLP_EITLIM:
      return glp_get_status(P) == GLP_FEAS ? Outcome::Feasible : Outcome::NoSolution;
    default:
      return Outcome::Failed;
  }
}

Outcome solve_mip(glp_prob* P, int time_limit_ms, GlpkResult& r) {
  glp_iocp parm;
  glp_init_iocp(&parm);
  parm.msg_lev = GLP_MSG_OFF;
  parm.presolve = GLP_ON;  // solves the LP relaxation itself
  parm.tm_lim = time_limit_ms;
  r.code = glp_intopt(P, &parm);
  switch (r.code) {
    case 0:
      switch (glp_mip_status(P)) {
        case GLP_OPT:
          return Outcome::Optimal;
        case GLP_FEAS:
          return Outcome::Feasible;
        case GLP_NOFEAS:
          return Outcome::Infeasible;
        default:
          return Outcome::NoSolution;
      }
    case GLP_ENOPFS:
      return Outcome::Infeasible;
    case GLP_ENODFS:
      return Outcome::InfeasibleOrUnbounded;
    case GLP_ETMLIM:
    case GLP_EMIPGAP:
    case GLP_ESTOP:
      return glp_mip_status(P) == GLP_FEAS ? Outcome::Feasible : Outcome::NoSolution;
    default:
      return Outcome::Failed;
  }
}

int elapsed_ms(std::chrono::steady_clock::time_point since) {
  const auto d = std::chrono::steady_clock::now() - since;
  return static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(d).count());
}

// An unbounded relaxation means an unbounded problem only if some point is
// feasible: the same problem with a zero objective tells.
Outcome resolve_unbounded(glp_prob* P, const LpModel& m, bool mip, int time_left_ms,
                          GlpkResult& r) {
  if (time_left_ms <= 0) return Outcome::NoSolution;
  for (int j = 1; j <= static_cast<int>(m.vars.size()); ++j) glp_set_obj_coef(P, j, 0.0);
  const Outcome probe = mip ? solve_mip(P, time_left_ms, r) : solve_lp(P, time_left_ms, r);
  if (has_solution(probe)) return Outcome::Unbounded;
  if (probe == Outcome::Infeasible || probe == Outcome::Failed) return probe;
  return Outcome::NoSolution;
}

void solve_problem(glp_prob* P, const LpModel& m, GlpkResult& r) {
  const auto start = std::chrono::steady_clock::now();
  const bool mip = is_mip(m);
  r.outcome = mip ? solve_mip(P, m.time_limit_ms, r) : solve_lp(P, m.time_limit_ms, r);
  if (r.outcome == Outcome::InfeasibleOrUnbounded) {
    r.outcome = resolve_unbounded(P, m, mip, m.time_limit_ms - elapsed_ms(start), r);
    return;
  }
  if (!has_solution(r.outcome)) return;
  r.objective = mip ? glp_mip_obj_val(P) : glp_get_obj_val(P);
  for (int j = 1; j <= static_cast<int>(m.vars.size()); ++j) {
    r.values[j] = mip ? glp_mip_col_val(P, j) : glp_get_col_prim(P, j);
  }
}

// Runs GLPK on a checked model. The error hook longjmps back here, so this
// frame and everything it calls hold nothing with a destructor. The GLPK
// environment (thread-local in Debian's build) is created and freed around
// each solve: that resets the hooks, and after a fatal error it frees
// whatever GLPK still held (its problem objects are invalid by then).
void run_glpk(const LpModel& m, GlpkResult& r) {
  if (glp_init_env() > 1) {
    std::snprintf(r.message, sizeof r.message, "cannot initialise the GLPK environment");
    r.outcome = Outcome::GlpkError;
    return;
  }
  glp_term_out(GLP_OFF);
  glp_term_hook(capture_glpk_output, &r);
  glp_error_hook(on_glpk_error, &r);
  glp_mem_limit(kGlpkMemoryLimitMb);
  if (setjmp(r.on_error) != 0) {
    glp_free_env();
    r.outcome = Outcome::GlpkError;
    return;
  }
  glp_prob* P = glp_create_prob();
  load_problem(P, m);
  solve_problem(P, m, r);
  glp_delete_prob(P);
  glp_free_env();
}

void solve_model(LpModel& m, GlpkResult& r) {
  m.values.assign(m.vars.size() + 1, 0.0);
  if (m.no_integer_point) {
    r.outcome = Outcome::Infeasible;
    return;
  }
  r.values = m.values.data();
  run_glpk(m, r);
}

// ---------------------------------------------------------------- reading the model
// Each reader returns false with m.error set. The strings they build are
// temporaries of the failing return statement, after the last Lua call.

// Where a value sits, for messages: "var 3: ", "constraint 2: ".
struct Where {
  const char* what = nullptr;  // nullptr: the model table itself
  lua_Integer index = 0;
};

bool fail(LpModel& m, Where w, const std::string& message) {
  m.error.clear();
  if (w.what) {
    m.error.append(w.what);
    if (w.index > 0) m.error.append(" ").append(std::to_string(w.index));
    m.error.append(": ");
  }
  m.error.append(message);
  return false;
}

std::string number_text(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.10g", v);
  return text;
}

std::string quoted(std::string_view s) {
  std::string out(1, '\'');
  out.append(s.substr(0, 64)).push_back('\'');
  return out;
}

// "'k1'", or "var 3" for a variable without a name.
std::string var_label(const LpModel& m, int var) {
  const std::string& name = m.vars[var].name;
  return name.empty() ? "var " + std::to_string(var + 1) : quoted(name);
}

// Typos (`constraint`, `integer`, `time_limit`) would otherwise be ignored.
bool only_fields(lua_State* L, int t, std::initializer_list<std::string_view> allowed, Where w,
                 LpModel& m) {
  lua_pushnil(L);
  while (lua_next(L, t) != 0) {
    lua_pop(L, 1);
    if (lua_type(L, -1) != LUA_TSTRING) {
      return fail(m, w, std::string("unexpected ") + luaL_typename(L, -1) + " key");
    }
    const std::string_view key = lua_tostring(L, -1);
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      std::string known;
      for (std::string_view a : allowed) known += (known.empty() ? "" : ", ") + std::string(a);
      return fail(m, w, "unknown field " + quoted(key) + " (fields: " + known + ")");
    }
  }
  return true;
}

// The length of the list at `t`, which must have exactly the keys 1..n (a
// table keyed by names would otherwise read as an empty list).
bool list_length(lua_State* L, int t, const char* what, LpModel& m, std::size_t& n) {
  n = lua_rawlen(L, t);
  std::size_t keys = 0;
  lua_pushnil(L);
  while (lua_next(L, t) != 0) {
    lua_pop(L, 1);
    ++keys;
  }
  if (keys != n) {
    return fail(m, {}, std::string(what) + " must be a list {{...}, {...}} (keys 1..n)");
  }
  return true;
}

// t[key] as a number; nil leaves `out` alone and `given` false.
bool read_number(lua_State* L, int t, const char* key, Where w, LpModel& m, double& out,
                 bool& given) {
  const int type = lua_getfield(L, t, key);
  given = type != LUA_TNIL;
  if (type == LUA_TNUMBER) out = lua_tonumber(L, -1);
  lua_pop(L, 1);
  if (!given) return true;
  if (type != LUA_TNUMBER) {
    return fail(m, w, std::string(key) + " must be a number, got a " + lua_typename(L, type));
  }
  if (std::isnan(out)) return fail(m, w, std::string(key) + " is NaN");
  return true;
}

// lo and hi of a variable or constraint: ±inf means no bound on that side.
bool check_bounds(double lo, double hi, Where w, LpModel& m) {
  if (lo == kInf) return fail(m, w, "lo is +inf");
  if (hi == -kInf) return fail(m, w, "hi is -inf");
  if (lo > hi) return fail(m, w, "lo (" + number_text(lo) + ") > hi (" + number_text(hi) + ")");
  return true;
}

bool read_sense(lua_State* L, int t, LpModel& m) {
  const int type = lua_getfield(L, t, "sense");
  const std::string_view sense = type == LUA_TSTRING ? lua_tostring(L, -1) : "";
  m.maximize = sense == "max";
  if (sense == "min" || sense == "max") {
    lua_pop(L, 1);
    return true;
  }
  if (type == LUA_TNIL) return fail(m, {}, "sense is missing (\"min\" or \"max\")");
  return fail(
      m, {},
      "sense must be \"min\" or \"max\", got " +
          (type == LUA_TSTRING ? quoted(sense) : std::string("a ") + lua_typename(L, type)));
}

bool read_var_name(lua_State* L, int t, Where w, LpModel& m, LpVar& var) {
  const int type = lua_getfield(L, t, "name");
  if (type == LUA_TNIL) {
    lua_pop(L, 1);
    return true;
  }
  if (type != LUA_TSTRING) {
    return fail(m, w, std::string("name must be a string, got a ") + lua_typename(L, type));
  }
  std::size_t len = 0;
  const char* name = lua_tolstring(L, -1, &len);
  if (len == 0) return fail(m, w, "name is empty");
  var.name.assign(name, len);
  lua_pop(L, 1);
  const auto [it, added] = m.by_name.emplace(var.name, static_cast<int>(w.index - 1));
  if (!added) {
    return fail(m, w,
                "duplicate name " + quoted(var.name) + " (also var " +
                    std::to_string(it->second + 1) + ")");
  }
  return true;
}

bool read_var(lua_State* L, int t, Where w, LpModel& m) {
  if (!lua_istable(L, t)) {
    return fail(
        m, w, std::string("must be a table {name=, lo=, hi=, int=}, got a ") + luaL_typename(L, t));
  }
  if (!only_fields(L, t, {"name", "lo", "hi", "int"}, w, m)) return false;
  LpVar& var = m.vars.emplace_back();
  bool given = false;
  if (!read_var_name(L, t, w, m, var) || !read_number(L, t, "lo", w, m, var.lo, given) ||
      !read_number(L, t, "hi", w, m, var.hi, given) || !check_bounds(var.lo, var.hi, w, m)) {
    return false;
  }
  const int type = lua_getfield(L, t, "int");
  var.integer = lua_toboolean(L, -1);
  lua_pop(L, 1);
  if (type != LUA_TNIL && type != LUA_TBOOLEAN) {
    return fail(m, w, std::string("int must be a boolean, got a ") + lua_typename(L, type));
  }
  if (var.integer) {
    // GLPK wants integral bounds on integer columns.
    var.lo = std::ceil(var.lo);
    var.hi = std::floor(var.hi);
    if (var.lo > var.hi) m.no_integer_point = true;
  }
  return true;
}

bool read_vars(lua_State* L, int t, LpModel& m) {
  const int type = lua_getfield(L, t, "vars");
  if (type != LUA_TTABLE) {
    return fail(m, {},
                type == LUA_TNIL
                    ? std::string("vars is missing")
                    : std::string("vars must be a list of tables, got a ") + lua_typename(L, type));
  }
  const int list = lua_gettop(L);
  std::size_t n = 0;
  if (!list_length(L, list, "vars", m, n)) return false;
  if (n == 0) return fail(m, {}, "vars is empty (give at least one variable)");
  if (n > kMaxVars) {
    return fail(
        m, {}, "too many variables (" + std::to_string(n) + " > " + std::to_string(kMaxVars) + ")");
  }
  m.vars.reserve(n);
  for (std::size_t i = 1; i <= n; ++i) {
    lua_rawgeti(L, list, static_cast<lua_Integer>(i));
    if (!read_var(L, lua_gettop(L), {"var", static_cast<lua_Integer>(i)}, m)) return false;
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  m.objective.assign(n, 0.0);
  m.seen.assign(n, 0);
  return true;
}

// The variable a coefficient key names: a name or a position (1-based).
bool key_var(lua_State* L, int key, Where w, LpModel& m, int& var) {
  if (lua_type(L, key) == LUA_TSTRING) {
    std::size_t len = 0;
    const char* s = lua_tolstring(L, key, &len);
    const auto it = m.by_name.find(std::string_view(s, len));
    if (it == m.by_name.end()) {
      return fail(m, w, "unknown variable " + quoted(std::string_view(s, len)));
    }
    var = it->second;
    return true;
  }
  if (lua_isinteger(L, key)) {
    const lua_Integer position = lua_tointeger(L, key);
    if (position < 1 || position > static_cast<lua_Integer>(m.vars.size())) {
      return fail(m, w,
                  "variable position " + std::to_string(position) + " is not in 1.." +
                      std::to_string(m.vars.size()));
    }
    var = static_cast<int>(position - 1);
    return true;
  }
  if (lua_type(L, key) == LUA_TNUMBER) {
    return fail(m, w,
                "variable position " + number_text(lua_tonumber(L, key)) + " is not an integer");
  }
  return fail(m, w,
              std::string("coefficients are keyed by variable name or position, not by a ") +
                  luaL_typename(L, key));
}

// Reads {[name or position] = number, ...} at `t` and calls add(var, coef)
// for every non-zero coefficient.
template <typename Add>
bool read_coefs(lua_State* L, int t, Where w, LpModel& m, Add&& add) {
  const unsigned table = ++m.table;
  lua_pushnil(L);
  while (lua_next(L, t) != 0) {
    int var = 0;
    if (!key_var(L, -2, w, m, var)) return false;
    if (lua_type(L, -1) != LUA_TNUMBER) {
      return fail(m, w,
                  "coefficient of " + var_label(m, var) + " must be a number, got a " +
                      luaL_typename(L, -1));
    }
    const double coef = lua_tonumber(L, -1);
    lua_pop(L, 1);
    if (!std::isfinite(coef)) {
      return fail(m, w,
                  "coefficient of " + var_label(m, var) + " is not a finite number (" +
                      number_text(coef) + ")");
    }
    if (m.seen[var] == table) {
      return fail(m, w, var_label(m, var) + " is given twice (by name and by position)");
    }
    m.seen[var] = table;
    if (coef != 0 && !add(var, coef)) return false;
  }
  return true;
}

bool read_objective(lua_State* L, int t, LpModel& m) {
  const int type = lua_getfield(L, t, "objective");
  if (type == LUA_TNIL) {
    lua_pop(L, 1);
    return true;  // a feasibility problem
  }
  if (type != LUA_TTABLE) {
    return fail(
        m, {},
        std::string("objective must be a table of coefficients, got a ") + lua_typename(L, type));
  }
  const bool ok = read_coefs(L, lua_gettop(L), {"objective"}, m, [&m](int var, double coef) {
    m.objective[var] = coef;
    return true;
  });
  if (ok) lua_pop(L, 1);
  return ok;
}

bool read_row_bounds(lua_State* L, int t, Where w, LpModel& m) {
  double lo = -kInf, hi = kInf, eq = 0;
  bool has_lo = false, has_hi = false, has_eq = false;
  if (!read_number(L, t, "lo", w, m, lo, has_lo) || !read_number(L, t, "hi", w, m, hi, has_hi) ||
      !read_number(L, t, "eq", w, m, eq, has_eq)) {
    return false;
  }
  if (has_eq) {
    if (has_lo || has_hi) return fail(m, w, "give eq, or lo and/or hi, not both");
    if (!std::isfinite(eq)) return fail(m, w, "eq is " + number_text(eq));
    lo = hi = eq;
  } else if (!has_lo && !has_hi) {
    return fail(m, w, "no bound (give lo, hi or eq)");
  }
  if (!check_bounds(lo, hi, w, m)) return false;
  m.row_lo.push_back(lo);
  m.row_hi.push_back(hi);
  return true;
}

bool read_constraint(lua_State* L, int t, Where w, LpModel& m) {
  if (!lua_istable(L, t)) {
    return fail(
        m, w, std::string("must be a table {coef=, lo=, hi=, eq=}, got a ") + luaL_typename(L, t));
  }
  if (!only_fields(L, t, {"coef", "lo", "hi", "eq"}, w, m) || !read_row_bounds(L, t, w, m)) {
    return false;
  }
  const int type = lua_getfield(L, t, "coef");
  if (type != LUA_TTABLE) {
    return fail(m, w,
                type == LUA_TNIL
                    ? std::string("coef is missing")
                    : std::string("coef must be a table, got a ") + lua_typename(L, type));
  }
  const int row = static_cast<int>(m.row_lo.size());
  const bool ok = read_coefs(L, lua_gettop(L), w, m, [&m, row, w](int var, double coef) {
    if (m.ar.size() > kMaxNonzeros) {
      return fail(m, w,
                  "too many non-zero coefficients in all (> " + std::to_string(kMaxNonzeros) + ")");
    }
    m.ia.push_back(row);
    m.ja.push_back(var + 1);
    m.ar.push_back(coef);
    return true;
  });
  if (ok) lua_pop(L, 1);
  return ok;
}

bool read_constraints(lua_State* L, int t, LpModel& m) {
  const int type = lua_getfield(L, t, "constraints");
  if (type == LUA_TNIL) {
    lua_pop(L, 1);
    return true;
  }
  if (type != LUA_TTABLE) {
    return fail(
        m, {}, std::string("constraints must be a list of tables, got a ") + lua_typename(L, type));
  }
  const int list = lua_gettop(L);
  std::size_t n = 0;
  if (!list_length(L, list, "constraints", m, n)) return false;
  if (n > kMaxConstraints) {
    return fail(m, {},
                "too many constraints (" + std::to_string(n) + " > " +
                    std::to_string(kMaxConstraints) + ")");
  }
  for (std::size_t i = 1; i <= n; ++i) {
    lua_rawgeti(L, list, static_cast<lua_Integer>(i));
    if (!read_constraint(L, lua_gettop(L), {"constraint", static_cast<lua_Integer>(i)}, m)) {
      return false;
    }
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  return true;
}

bool read_time_limit(lua_State* L, int t, LpModel& m) {
  double ms = kDefaultTimeLimitMs;
  bool given = false;
  if (!read_number(L, t, "time_limit_ms", {}, m, ms, given)) return false;
  if (!(ms > 0)) return fail(m, {}, "time_limit_ms must be positive, got " + number_text(ms));
  m.time_limit_ms = static_cast<int>(std::ceil(std::min(ms, kMaxTimeLimitMs)));
  return true;
}

bool read_model(lua_State* L, int t, LpModel& m) {
  return only_fields(L, t, {"sense", "vars", "objective", "constraints", "time_limit_ms"}, {}, m) &&
         read_sense(L, t, m) && read_vars(L, t, m) && read_objective(L, t, m) &&
         read_constraints(L, t, m) && read_time_limit(L, t, m);
}

// ---------------------------------------------------------------- results

const char* outcome_name(Outcome o) {
  switch (o) {
    case Outcome::Optimal:
      return "optimal";
    case Outcome::Feasible:
      return "feasible";
    case Outcome::Infeasible:
      return "infeasible";
    case Outcome::Unbounded:
      return "unbounded";
    case Outcome::NoSolution:
      return "no_solution";
    default:
      return "failed";
  }
}

const char* glpk_code_text(int code) {
  switch (code) {
    case GLP_EBADB:
      return "invalid initial basis";
    case GLP_ESING:
      return "singular basis matrix";
    case GLP_ECOND:
      return "ill-conditioned basis matrix";
    case GLP_EBOUND:
      return "invalid bounds";
    case GLP_EFAIL:
      return "solver failure";
    case GLP_EROOT:
      return "no optimal basis for the LP relaxation";
    case GLP_ENOCVG:
      return "no convergence";
    case GLP_EINSTAB:
      return "numerical instability";
    default:
      return "unexpected return code";
  }
}

// An integer variable's value as a Lua integer when it is exact.
void push_value(lua_State* L, const LpVar& var, double x) {
  constexpr double kExact = 9007199254740992.0;  // 2^53
  const double rounded = std::nearbyint(x);
  if (var.integer && std::fabs(rounded) <= kExact) {
    lua_pushinteger(L, static_cast<lua_Integer>(rounded));
  } else {
    lua_pushnumber(L, x);
  }
}

// {status=, objective=, values={[position]=..., [name]=...}} or
// {status="failed", message=}.
void push_result(lua_State* L, const LpModel& m, const GlpkResult& r) {
  lua_createtable(L, 0, 3);
  lua_pushstring(L, outcome_name(r.outcome));
  lua_setfield(L, -2, "status");
  if (r.outcome == Outcome::Failed) {
    lua_pushfstring(L, "GLPK: %s (code %d)", glpk_code_text(r.code), r.code);
    lua_setfield(L, -2, "message");
  }
  if (!has_solution(r.outcome)) return;
  lua_pushnumber(L, r.objective);
  lua_setfield(L, -2, "objective");
  const int n = static_cast<int>(m.vars.size());
  lua_createtable(L, n, static_cast<int>(m.by_name.size()));
  for (int j = 1; j <= n; ++j) {
    const LpVar& var = m.vars[j - 1];
    push_value(L, var, m.values[j]);
    if (!var.name.empty()) {
      lua_pushlstring(L, var.name.data(), var.name.size());
      lua_pushvalue(L, -2);
      lua_rawset(L, -4);
    }
    lua_rawseti(L, -2, j);
  }
  lua_setfield(L, -2, "values");
}

// lp.solve(model) → result. See docs/policy-api.md §10.
int lp_solve(lua_State* L) {
  if (lua_gettop(L) > 1) {
    return luaL_error(
        L, "sched.lp: solve takes one model table (call lp.solve{...}, not lp:solve{...})");
  }
  if (!lua_istable(L, 1)) {
    return luaL_error(L, "sched.lp: solve takes a model table, got %s",
                      lua_isnone(L, 1) ? "nothing" : luaL_typename(L, 1));
  }
  ModelBox& box = new_model(L);
  LpModel& m = *box.model;
  GlpkResult r;
  bool ok = false;
  try {
    ok = read_model(L, 1, m);
    if (ok) solve_model(m, r);
  } catch (const std::bad_alloc&) {
    m.error.clear();
    ok = false;
  }
  if (!ok) {
    return luaL_error(L, "sched.lp: %s", m.error.empty() ? "out of memory" : m.error.c_str());
  }
  if (r.outcome == Outcome::GlpkError) {
    char* end = std::strchr(r.message, '\n');
    if (end) *end = '\0';
    return luaL_error(L, "sched.lp: GLPK failed: %s", r.message);
  }
  push_result(L, m, r);
  delete box.model;  // now rather than at the next collection
  box.model = nullptr;
  return 1;
}

}  // namespace

int open_lp(lua_State* L) {
  static const luaL_Reg fns[] = {{"solve", lp_solve}, {nullptr, nullptr}};
  luaL_newlib(L, fns);
  return 1;
}

}  // namespace sched
