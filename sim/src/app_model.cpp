#include "sched/sim/app_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "sched/constraints.hpp"

namespace sched::sim {

double SpeedupModel::speedup(double n) const {
  n = std::max(n, 1.0);
  if (kind == Kind::Linear) return n;
  if (kind == Kind::Amdahl) {
    const double f = std::clamp(serial_fraction, 0.0, 1.0);
    return 1.0 / (f + (1.0 - f) / n);
  }
  // Downey (1997): speedup of a program of average parallelism A whose
  // parallelism varies by σ; low-variance (σ ≤ 1) and high-variance forms.
  const double a = std::max(downey_a, 1.0);
  const double s = std::max(downey_sigma, 0.0);
  if (s <= 1.0) {
    if (n <= a) return a * n / (a + s * (n - 1) / 2);
    if (n <= 2 * a - 1) return a * n / (s * (a - 0.5) + n * (1 - s / 2));
    return a;
  }
  if (n <= a + a * s - s) return n * a * (s + 1) / (s * (n + a - 1) + a);
  return a;
}

double AdaptationCost::seconds(int from, int to) const {
  const int change = std::abs(to - from);
  if (change == 0) return 0;
  const bool grow = to > from;
  const double per_step = grow ? latency_expand_s + per_new_node_expand_s * to
                               : latency_shrink_s + per_new_node_shrink_s * to;
  const double per_node = grow ? start_s_per_node : stop_s_per_node;
  // per_step first: with per_node()'s zeros the sum is bit for bit the
  // per-node form's, so runs with the default do not move.
  return per_step + ((per_node + alpha_s) * change + beta_s / (from + to));
}

AdaptationCost AdaptationCost::step() {
  AdaptationCost cost;
  cost.latency_expand_s = 0.00785;
  cost.per_new_node_expand_s = 0.000446;
  cost.latency_shrink_s = 0.00163;
  cost.per_new_node_shrink_s = 0.000570;
  cost.start_s_per_node = 0;
  cost.stop_s_per_node = 0;
  cost.alpha_s = 0;
  cost.beta_s = 0;
  return cost;
}

std::optional<AdaptationCost> AdaptationCost::named(std::string_view name) {
  if (name == "per_node") return per_node();
  if (name == "step") return step();
  return std::nullopt;
}

double AppModel::phase_factor(double done) const {
  if (phases.empty()) return 1;
  const auto count = static_cast<double>(phases.size());
  const auto index = static_cast<std::size_t>(std::clamp(done, 0.0, 1.0) * count);
  return phases[std::min(index, phases.size() - 1)];
}

double AppModel::phase_end(double done) const {
  if (phases.size() <= 1) return 1;
  const auto count = static_cast<double>(phases.size());
  const double index = std::floor(std::clamp(done, 0.0, 1.0) * count);
  return std::min(1.0, (index + 1) / count);
}

namespace {

double phase_speedup(const SpeedupModel& model, int nodes, double phase) {
  const double n = std::max(nodes, 1);
  const double comm_share = n / model.speedup(n) - 1;  // = (1 − E)/E at φ = 1
  return n / (1 + phase * comm_share);
}

}  // namespace

double AppModel::rate(int nodes, int requested, double phase) const {
  if (nodes == requested) return 1;
  return phase_speedup(speedup, nodes, phase) / phase_speedup(speedup, requested, phase);
}

double AppModel::mtct(int nodes, double phase) const {
  const double n = std::max(nodes, 1);
  return phase * (n / speedup.speedup(n) - 1);
}

int evolving_target(const EvolvingStep& step, const JobSpec& spec, int current) {
  const bool grow = step.op == ResizeRequest::Op::Expand;
  const int wanted = step.to > 0 ? step.to : grow ? current + step.by : current - step.by;
  std::optional<int> target;
  if (grow) {
    // The smallest allowed size that gives what was asked, else the most
    // the bounds allow.
    target = lowest_allowed_at_least(spec.constraint, spec.min_nodes, spec.max_nodes, wanted);
    if (!target) {
      target =
          highest_allowed_at_most(spec.constraint, spec.min_nodes, spec.max_nodes, spec.max_nodes);
    }
    return target && *target > current ? *target : current;
  }
  target = highest_allowed_at_most(spec.constraint, spec.min_nodes, spec.max_nodes, wanted);
  if (!target) target = lowest_allowed_at_least(spec.constraint, spec.min_nodes, spec.max_nodes, 1);
  return target && *target < current ? *target : current;
}

}  // namespace sched::sim
