#include "sched/sim/bounds.hpp"

#include <glpk.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <vector>

#include "sched/constraints.hpp"

namespace sched::sim {
namespace {

// A job's allowed sizes within its bounds (a rigid job: its request).
std::vector<int> sizes_of(const WorkloadJob &job) {
  const JobSpec &spec = job.spec;
  if (spec.kind == JobKind::Rigid) return {spec.nodes};
  const int lo = spec.min_nodes > 0 ? spec.min_nodes : spec.nodes;
  const int hi = spec.max_nodes > 0 ? spec.max_nodes : spec.nodes;
  std::vector<int> sizes = allowed_sizes(spec.constraint, lo, hi);
  if (sizes.empty()) sizes.push_back(spec.nodes);
  return sizes;
}

// Between two corridor changes: from `from` for `length` seconds (infinite
// for the last), `budget` watts above the idle cluster.
struct Segment {
  double from = 0;
  double length = 0;
  double budget = 0;
};

std::vector<Segment> segments(const Workload &workload, int nodes, double idle_w) {
  std::vector<const TimedEvent *> changes;
  for (const TimedEvent &e : workload.events)
    if (e.type == TimedEvent::Type::Corridor) changes.push_back(&e);
  std::stable_sort(changes.begin(), changes.end(),
                   [](const TimedEvent *a, const TimedEvent *b) { return a->time < b->time; });
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<Segment> out;
  // Before the first change (or without any): no corridor.
  if (changes.empty() || changes.front()->time > 0) {
    out.push_back({0, changes.empty() ? inf : changes.front()->time, inf});
  }
  for (std::size_t i = 0; i < changes.size(); ++i) {
    const TimedEvent &e = *changes[i];
    const double end = i + 1 < changes.size() ? changes[i + 1]->time : inf;
    const bool none = e.lower_w <= 0 && e.upper_w <= 0;
    // A corridor that the idle cluster already exceeds lets nothing run.
    const double budget = none ? inf : std::max(e.upper_w - nodes * idle_w, 0.0);
    if (end > e.time) out.push_back({e.time, end - e.time, budget});
  }
  return out;
}

struct Problem {
  glp_prob *lp = glp_create_prob();
  ~Problem() { glp_delete_prob(lp); }
  Problem() = default;
  Problem(const Problem &) = delete;
  Problem &operator=(const Problem &) = delete;
};

// The least τ ≥ 0 such that the work (per power class: excess watts per
// node → node-seconds) fits in segments[0..last) whole plus τ seconds of
// segment `last`; nullopt when it does not fit even in all of `last`.
std::optional<double> fit(const std::vector<Segment> &segs, std::size_t last,
                          const std::map<double, double> &work, int nodes) {
  Problem p;
  glp_set_obj_dir(p.lp, GLP_MIN);
  const int classes = static_cast<int>(work.size());
  const int used = static_cast<int>(last) + 1;
  // Columns: x(s, c) = node-seconds of class c in segment s, then τ.
  const int tau = used * classes + 1;
  glp_add_cols(p.lp, tau);
  for (int col = 1; col < tau; ++col) glp_set_col_bnds(p.lp, col, GLP_LO, 0, 0);
  const Segment &end = segs[last];
  if (std::isinf(end.length)) {
    glp_set_col_bnds(p.lp, tau, GLP_LO, 0, 0);
  } else {
    glp_set_col_bnds(p.lp, tau, GLP_DB, 0, end.length);
  }
  glp_set_obj_coef(p.lp, tau, 1);
  std::vector<int> rows{0}, cols{0};
  std::vector<double> values{0};
  auto put = [&](int row, int col, double value) {
    rows.push_back(row);
    cols.push_back(col);
    values.push_back(value);
  };
  const auto x = [&](int s, int c) { return s * classes + c + 1; };
  int row = 0;
  for (int s = 0; s < used; ++s) {
    const Segment &seg = segs[static_cast<std::size_t>(s)];
    const bool open = s == used - 1;  // its length is τ
    // Nodes: Σ_c x ≤ nodes · length.
    glp_add_rows(p.lp, 1);
    ++row;
    int c = 0;
    for (const auto &entry : work) {
      (void)entry;
      put(row, x(s, c++), 1);
    }
    if (open) {
      put(row, tau, -nodes);
      glp_set_row_bnds(p.lp, row, GLP_UP, 0, 0);
    } else {
      glp_set_row_bnds(p.lp, row, GLP_UP, 0, nodes * seg.length);
    }
    // Power: Σ_c excess_c · x ≤ budget · length.
    if (std::isinf(seg.budget)) continue;
    glp_add_rows(p.lp, 1);
    ++row;
    c = 0;
    for (const auto &[excess, node_seconds] : work) {
      (void)node_seconds;
      put(row, x(s, c++), std::max(excess, 0.0));
    }
    if (open) {
      put(row, tau, -seg.budget);
      glp_set_row_bnds(p.lp, row, GLP_UP, 0, 0);
    } else {
      glp_set_row_bnds(p.lp, row, GLP_UP, 0, seg.budget * seg.length);
    }
  }
  // Work: Σ_s x(s, c) = W_c.
  int c = 0;
  for (const auto &[excess, node_seconds] : work) {
    (void)excess;
    glp_add_rows(p.lp, 1);
    ++row;
    for (int s = 0; s < used; ++s) put(row, x(s, c), 1);
    glp_set_row_bnds(p.lp, row, GLP_FX, node_seconds, node_seconds);
    ++c;
  }
  glp_load_matrix(p.lp, static_cast<int>(values.size()) - 1, rows.data(), cols.data(),
                  values.data());
  glp_smcp params;
  glp_init_smcp(&params);
  params.msg_lev = GLP_MSG_OFF;
  if (glp_simplex(p.lp, &params) != 0 || glp_get_status(p.lp) != GLP_OPT) return std::nullopt;
  return glp_get_col_prim(p.lp, tau);
}

}  // namespace

double job_seconds_on(const WorkloadJob &job, int nodes) {
  const AppModel &model = job.model;
  const int requested = job.spec.nodes;
  if (model.phases.empty()) return job.runtime / model.rate(nodes, requested, 1);
  const double slice = job.runtime / static_cast<double>(model.phases.size());
  double seconds = 0;
  for (double phase : model.phases) seconds += slice / model.rate(nodes, requested, phase);
  return seconds;
}

double least_node_seconds(const WorkloadJob &job) {
  double least = std::numeric_limits<double>::infinity();
  for (int n : sizes_of(job)) least = std::min(least, n * job_seconds_on(job, n));
  return least;
}

double corridor_makespan_bound(const Workload &workload, double idle_w_per_node, int nodes) {
  if (nodes <= 0) nodes = workload.nodes;
  if (nodes <= 0) throw std::invalid_argument("corridor_makespan_bound: no cluster size");
  double bound = 0;
  std::map<double, double> work;  // excess watts per node → node-seconds
  for (const WorkloadJob &job : workload.jobs) {
    double fastest = std::numeric_limits<double>::infinity();
    for (int n : sizes_of(job))
      fastest = std::min(fastest, job_seconds_on(job, std::min(n, nodes)));
    bound = std::max(bound, job.submit + fastest);
    const double watts = job.spec.power_max_w > 0 ? job.spec.power_max_w : idle_w_per_node;
    work[watts - idle_w_per_node] += least_node_seconds(job);
  }
  if (work.empty()) return bound;
  const std::vector<Segment> segs = segments(workload, nodes, idle_w_per_node);
  for (std::size_t last = 0; last < segs.size(); ++last) {
    if (const auto tau = fit(segs, last, work, nodes)) {
      return std::max(bound, segs[last].from + *tau);
    }
  }
  throw std::invalid_argument(
      "corridor_makespan_bound: the last corridor leaves no power for the jobs");
}

}  // namespace sched::sim
