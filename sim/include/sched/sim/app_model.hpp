// The simulated application of a job (docs/design.md §7, docs/app-model.md): how
// fast it progresses on n nodes, its MTCT ratio, what an adaptation costs,
// and, for an evolving job, when it asks to grow or shrink.
//
// Work is measured in seconds at the requested size: a job of runtime R
// finishes after R seconds on its requested n_req nodes whatever its model,
// so rigid replay is exact. On n nodes it progresses at S_φ(n) / S_φ(n_req)
// per second, where S is the speedup model and φ the factor of the AMR-like
// phase the job is in: the communication share n/S(n) − 1 is scaled by φ,
//   S_φ(n) = n / (1 + φ·(n/S(n) − 1)),   mtct(n) = φ·(n/S(n) − 1),
// so MTCT is exactly (1 − E)/E of the phase's efficiency E = S_φ(n)/n.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "sched/job.hpp"

namespace sched::sim {

struct SpeedupModel {
  // Linear: S(n) = n, every node fully used (an upper bound for most codes).
  enum class Kind { Amdahl, Downey, Linear };
  Kind kind = Kind::Amdahl;
  double serial_fraction = 0.01;  // Amdahl: the part of the work that never speeds up
  double downey_a = 64;           // Downey: average parallelism A
  double downey_sigma = 1;        // Downey: variance in parallelism σ

  // S(n), with S(1) = 1. n is at least 1.
  double speedup(double nodes) const;
};

// Seconds an adaptation from `from` to `to` nodes stops the job
// (docs/app-model.md). One formula with two named sets of values:
//   cost = latency + per_new_node·n_new                 (per step)
//        + (b + α)·|Δn| + β/(from + to)                 (per node changed)
// with latency, per_new_node and b taken for the direction (expand or
// shrink). per_node() is Lina et al.'s form with our values (process start
// or stop b per node, redistribution α·|Δn| + β/(from + to)): the default.
// step() is calibrated on the live bench/adapt figures: a latency per
// adaptation plus a term for handing data to every process of the new set.
struct AdaptationCost {
  double latency_expand_s = 0;       // per adaptation, growing
  double latency_shrink_s = 0;       // per adaptation, shrinking
  double per_new_node_expand_s = 0;  // × nodes after the step, growing
  double per_new_node_shrink_s = 0;  // × nodes after the step, shrinking
  double start_s_per_node = 1.0;     // b growing, × nodes changed
  double stop_s_per_node = 0.5;      // b shrinking, × nodes changed
  double alpha_s = 0.25;             // α, × nodes changed
  double beta_s = 2.0;               // β, / (from + to)

  double seconds(int from, int to) const;

  // The default: per node changed, as above.
  static AdaptationCost per_node() { return {}; }
  // The live figures' fit (bench/esp/calibrate_step_cost.py on
  // bench/adapt/results.md): expand 7.85 ms + 0.446 ms per node of the new
  // set, shrink 1.63 ms + 0.570 ms; nothing per node changed.
  static AdaptationCost step();
  // "per_node" or "step"; nullopt for any other name.
  static std::optional<AdaptationCost> named(std::string_view name);
};

// An evolving job's own request, made when `at_done` of its work is done:
// grow or shrink by `by` nodes, or to `to` nodes when `to` > 0. The size is
// then fitted to the job's bounds and constraint; a request that would not
// change the size is not made.
struct EvolvingStep {
  double at_done = 0.5;  // fraction of the work, 0..1
  ResizeRequest::Op op = ResizeRequest::Op::Expand;
  int by = 1;
  int to = 0;
};

struct AppModel {
  SpeedupModel speedup;
  // AMR-like phases: the work is cut into equal slices, one factor each.
  // Empty: one phase of factor 1.
  std::vector<double> phases;
  AdaptationCost adaptation;
  std::vector<EvolvingStep> requests;  // by at_done, ascending

  // The phase factor at a fraction `done` (0..1) of the work.
  double phase_factor(double done) const;
  // The fraction of work at which the phase containing `done` ends (1 for
  // the last phase).
  double phase_end(double done) const;
  // Progress per second (seconds of work at the requested size) on `nodes`.
  double rate(int nodes, int requested, double phase) const;
  double mtct(int nodes, double phase) const;
};

// The size an evolving step asks for from `current`, fitted to the job's
// bounds and constraint; `current` when the step changes nothing.
int evolving_target(const EvolvingStep& step, const JobSpec& spec, int current);

}  // namespace sched::sim
