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

#include <vector>

#include "sched/job.hpp"

namespace sched::sim {

struct SpeedupModel {
  enum class Kind { Amdahl, Downey };
  Kind kind = Kind::Amdahl;
  double serial_fraction = 0.01;  // Amdahl: the part of the work that never speeds up
  double downey_a = 64;           // Downey: average parallelism A
  double downey_sigma = 1;        // Downey: variance in parallelism σ

  // S(n), with S(1) = 1. n is at least 1.
  double speedup(double nodes) const;
};

// Seconds an adaptation from `from` to `to` nodes stops the job (Lina et al.):
// process start (expand) or stop (shrink) per node changed, plus data
// redistribution α·|Δn| + β/(from + to).
struct AdaptationCost {
  double start_s_per_node = 1.0;
  double stop_s_per_node = 0.5;
  double alpha_s = 0.25;
  double beta_s = 2.0;

  double seconds(int from, int to) const;
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
